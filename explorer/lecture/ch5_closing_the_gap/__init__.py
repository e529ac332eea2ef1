"""Chapter 5: closing the gap."""
