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
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
cargo test --release --quiet -p ccsim-cc -p ccsim-core
python3 -m pytest -q
