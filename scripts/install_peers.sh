#!/usr/bin/env bash
# The public implementations `python -m explorer bench --peers` compares against, in a venv of
# their own: performer-pytorch and fla-core are never dependencies of the app or its tests.
#   bash scripts/install_peers.sh            # venv at $PEERS_VENV, default ~/.cache/peers-venv
#   ~/.cache/peers-venv/bin/python -m explorer bench --peers
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${PEERS_VENV:-$HOME/.cache/peers-venv}"
torch_pin="$(grep -E '^torch==' requirements.txt)"
numpy_pin="$(grep -E '^numpy==' pre-requirements.txt)"
python3 -m venv "$venv"
# The same torch and numpy as the app, then the peers at the versions the benchmark docs were
# measured with. The command imports only torch and numpy of the explorer's dependencies.
"$venv/bin/pip" install -q "$torch_pin" "$numpy_pin" performer-pytorch==1.1.4 fla-core==0.6.0 triton==3.9.0 packaging
"$venv/bin/python" -c "import torch, performer_pytorch, fla; print('peers ready beside torch', torch.__version__)"
