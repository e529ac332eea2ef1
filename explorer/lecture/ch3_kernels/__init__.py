"""Chapter 3: choosing the kernel."""
