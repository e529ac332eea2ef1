"""The scalar gate (simple GLA, Mamba-2's form): linear attention whose state decays by one
data-dependent gate per token, S_t = alpha_t S_{t-1} + phi(k_t) v_t^T."""

from .. import WRITES_FEATURES

STATE_KIND = "scalar_gate"
WRITES = WRITES_FEATURES
YEAR = 2024  # the paper: Dao & Gu, Transformers are SSMs (Mamba-2)
