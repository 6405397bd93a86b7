#!/usr/bin/env bash
# Builds ccsim's wheel into dist/ (or $1) with a manylinux tag and checks it with auditwheel.
# The tag is the oldest glibc the built extension's symbols allow on this machine: manylinux_2_34
# on Debian 12 / glibc 2.36 (the engine uses glibc 2.30-2.34 symbols); an older tag needs a build
# inside a manylinux container. The build tools go into a throwaway virtualenv, never the caller's.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
tag="${CCSIM_MANYLINUX:-manylinux_2_34}"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2" "auditwheel>=6,<7"
"$tools/venv/bin/maturin" build --release --compatibility "$tag" --out "$out"
wheel="$(ls -t "$out"/ccsim-*.whl | head -1)"
"$tools/venv/bin/auditwheel" show "$wheel" | tee "$tools/show.txt"
grep -q "consistent with" "$tools/show.txt" && grep -q "\"$tag" "$tools/show.txt" \
    || { echo "build_wheel: $wheel is not $tag" >&2; exit 1; }
echo "wheel: $wheel"
