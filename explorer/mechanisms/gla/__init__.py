"""GLA (gated linear attention): linear attention whose state decays by data-dependent gates,
one per key feature."""

STATE_KIND = "gla"
WRITES = "features"
