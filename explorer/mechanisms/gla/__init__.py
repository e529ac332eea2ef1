"""GLA (gated linear attention): linear attention whose state decays by data-dependent gates,
one per key feature."""

from .. import WRITES_FEATURES

STATE_KIND = "gla"
WRITES = WRITES_FEATURES
YEAR = 2024  # the paper: Yang et al., Gated Linear Attention (ICML)
