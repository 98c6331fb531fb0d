"""Layer 4: running items — the dual-arm runner, one command's session, the journal and
resume, spill to disk, shards and merge, the cost plan, the pairwise pass."""
