"""The acp target: any agent that speaks the Agent Client Protocol (``target``), the
built-in ACP agents (``agents``), one agent process and session (``session``), the client
side of it (``client``), its ``terminal/*`` requests (``terminal``) and an ACP agent inside
a trial's container (``container``)."""
