#!/usr/bin/env bash
# Installs ccsim with its test extras and runs every test: the Rust crates (cargo) and the Python
# package (pytest). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Headless Chromium + chromedriver for the report's browser test (tests/test_report.py). Installed
# when we can (root with apt-get, as on CI); elsewhere that test is skipped unless CI=true, where a
# missing browser fails it.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v chromedriver >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
fi
# The kernel testbed's toolchain (tests/test_kernel.py, docs/kernel.md): clang and libbpf to build the
# BPF twins against this kernel, bpftool for its BTF, iproute2/ethtool for the namespaces. Installed as
# root with apt-get; elsewhere those tests skip unless CI=true, where they fail.
KERNEL_PACKAGES="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev gcc iproute2 ethtool util-linux procps"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    for pkg in $KERNEL_PACKAGES; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
    done
    if [ -n "$missing" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
fi
# The `quick` profile (Cargo.toml): release optimisation without fat LTO, half the build's CPU time;
# the engine's results do not depend on it (tests/test_release_files.py's fingerprint checks them).
MATURIN_PEP517_ARGS="--profile quick" python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
cargo test --profile quick --quiet -p ccsim-cc -p ccsim-core
python3 -m pytest -q
