"""Chapter 1: attention is kernel regression."""
