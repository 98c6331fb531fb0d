"""Layer 7: what each CLI command does, as plain functions the CLI (and tests) call."""
