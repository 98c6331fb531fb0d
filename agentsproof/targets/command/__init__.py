"""The command target: any CLI agent in a workspace (``target``), the JSONL trace it may
write (``trace``), its run inside a trial's container (``container``), and agentv's ``cli``
providers run as command targets (``agentv``, whose program inside the sandbox is
``agentv_run``)."""
