"""The command target: any CLI agent in a workspace (``target``), the JSONL trace it may
write (``trace``) and its run inside a trial's container (``container``)."""
