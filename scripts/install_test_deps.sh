#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine: the pinned Python
# packages and Debian's chromium for the browser tests (playwright drives it; it never
# downloads a browser of its own).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v chromium >/dev/null 2>&1; then
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
fi
python -m pip install -q -r requirements-test.txt
