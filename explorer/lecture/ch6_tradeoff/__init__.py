"""Chapter 6: the trade-off."""
