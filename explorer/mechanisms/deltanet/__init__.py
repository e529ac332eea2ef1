"""The delta rule (DeltaNet; Gated DeltaNet with a forget gate)."""
