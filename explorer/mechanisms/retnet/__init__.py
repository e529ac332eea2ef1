"""RetNet's fixed per-head decay."""
