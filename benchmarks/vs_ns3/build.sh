#!/usr/bin/env bash
# Build ns3_single_flow against the ns-3 that `pip install ns3` ships (headers + shared libraries
# inside site-packages/ns3/). Output: benchmarks/vs_ns3/build/ns3_single_flow (gitignored).
#
#   pip install ns3 && bash benchmarks/vs_ns3/build.sh
#
# Environment: PYTHON (default: python3, else python) picks the interpreter whose site-packages
# hold ns3; NS3_DIR overrides the search (a directory with include/ns3/ and lib64/ or lib/);
# CXX (default g++). Not part of CI: nothing in the test suite needs ns-3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
CXX="${CXX:-g++}"
PYTHON="${PYTHON:-$(command -v python3 || command -v python)}"

if [[ -z "${NS3_DIR:-}" ]]; then
    # Look for <entry>/ns3/include/ns3/core-module.h on the interpreter's sys.path, without
    # importing the `ns` Python bindings (that starts cppyy, which is slow and not needed here).
    NS3_DIR="$("$PYTHON" - <<'EOF'
import os, site, sys, sysconfig
cands = list(sys.path) + [sysconfig.get_paths()["platlib"], sysconfig.get_paths()["purelib"]]
try:
    cands += site.getsitepackages() + [site.getusersitepackages()]
except Exception:
    pass
for entry in cands:
    d = os.path.join(entry or ".", "ns3")
    if os.path.isfile(os.path.join(d, "include", "ns3", "core-module.h")):
        print(os.path.abspath(d))
        break
EOF
)"
fi
if [[ -z "$NS3_DIR" || ! -f "$NS3_DIR/include/ns3/core-module.h" ]]; then
    echo "build.sh: ns-3 headers not found; run 'pip install ns3' (for $PYTHON) or set NS3_DIR" >&2
    exit 1
fi

libdir=""
for d in "$NS3_DIR/lib64" "$NS3_DIR/lib"; do
    if compgen -G "$d/libns3*-core*.so" >/dev/null; then libdir="$d"; break; fi
done
if [[ -z "$libdir" ]]; then
    echo "build.sh: no libns3*-core*.so under $NS3_DIR/lib64 or $NS3_DIR/lib" >&2
    exit 1
fi

# Library names carry the version (libns3.44-core.so, maybe with a -release/-optimized suffix).
core="$(basename "$(ls "$libdir"/libns3*-core*.so | head -n1)")"   # e.g. libns3.44-core.so
prefix="${core%%-core*}"                           # libns3.44
suffix="${core#*-core}"; suffix="${suffix%.so}"    # "" (or e.g. "-optimized")
if [[ "$prefix" =~ ^libns3\.([0-9.]+)$ ]]; then version="3.${BASH_REMATCH[1]}"; else version="unknown"; fi
libs=()
for m in applications internet point-to-point traffic-control network core; do
    libs+=("-l${prefix#lib}-$m$suffix")
done

mkdir -p "$out"
echo "build.sh: ns-3 $version from $NS3_DIR" >&2
# -DNS3_* match the definitions the wheel was built with (release profile, logging and asserts
# compiled in; see lib64/cmake/ns3/ns3Targets.cmake). -O2 only: the machine is shared.
cmd=("$CXX" -std=c++20 -O2 -Wall
    -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE
    "-DCCSIM_NS3_VERSION=\"$version\""
    -I"$NS3_DIR/include"
    "$here/ns3_single_flow.cc" -o "$out/ns3_single_flow"
    -L"$libdir" -Wl,-rpath,"$libdir" -Wl,-rpath-link,"$libdir" "${libs[@]}")
echo "+ ${cmd[*]}" >&2
"${cmd[@]}"
echo "build.sh: built $out/ns3_single_flow" >&2
