"""Layer 5: every input format behind one interface (:mod:`agentsproof.formats.base`):
detect a path, find it in a folder, turn a file into items; the formats each command
takes are in :mod:`agentsproof.formats.registry`. Plugin layouts: :mod:`.layout`."""
