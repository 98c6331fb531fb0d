"""The replay target: agentv's recorded outputs and transcripts replayed offline (``target``)."""
