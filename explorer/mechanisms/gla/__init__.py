"""GLA's data-dependent gates."""
