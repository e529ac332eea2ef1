#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine: the pinned Python
# packages, Debian's chromium for the browser tests (playwright drives it; it never
# downloads a browser of its own), a CJK font, so Chinese pages and PNG exports show
# characters instead of boxes, a math font (DejaVu Math TeX Gyre) for the slides' formulas, and the causal model SmolLM2-135M-Instruct (Q4_1, de-quantised to float32 once). Safe to run again: it
# installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
dpkg -s fonts-dejavu-extra >/dev/null 2>&1 || missing+=(fonts-dejavu-extra)   # a math font: the slides' formulas
if [ ${#missing[@]} -gt 0 ]; then
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The app's packages and SmolLM2, converted once (scripts/install.sh: about 45 s the first
# time, its progress printed), then what only the tests need.
bash scripts/install.sh
python -m pip install -q -r requirements-test.txt -c constraints.txt
# The tests that read SmolLM2 run on it instead of being skipped: this fails when install.sh
# could not convert it (and converts it, should a second try succeed).
python -c "from explorer.sources import packaged; print('SmolLM2-135M-Instruct (Q4_1, de-quantised to float32) ready in', packaged.ready_folder(packaged.SMOLLM2))"
