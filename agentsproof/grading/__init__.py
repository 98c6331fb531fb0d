"""Layer 3: graders. One registry by type, one async signature."""
