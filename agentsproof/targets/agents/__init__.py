"""The agent CLIs (``claude_code``, ``codex``: their targets and event readers), the one trial
step they share (``cli_trial``), what every agent target shares (``base``), the kit every
agent target is built from, ACP ones included (``kit``: ``CliCall``, one call of an agent
CLI), the CLIs inside a trial's container (``container``) and an item's set-up commands
run around any agent trial in its workspace (``setup``)."""
