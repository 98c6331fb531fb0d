"""Layer 5: every input format behind one interface: detect a path, discover in a folder, turn a file into items."""
