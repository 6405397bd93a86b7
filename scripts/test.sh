#!/usr/bin/env bash
# Installs ccsim with its test extras and runs every test: the Rust crates (cargo) and the Python
# package (pytest). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
cargo test --release --quiet -p ccsim-cc -p ccsim-core
python3 -m pytest -q
