"""Chapter 2: associativity."""
