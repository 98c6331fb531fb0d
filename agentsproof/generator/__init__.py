"""eval-generate: LLM-written eval.yaml files for a plugin's skills and agents.

- :mod:`agentsproof.formats.layout` finds the items of a plugin in any layout (plain, awesome-copilot, Claude Code),
- :mod:`.plugin` names them and their output folders,
- :mod:`.prompt` builds the messages (system prompt: skills/suite-generator/SKILL.md),
- :mod:`.validate` turns a reply into a normalized, valid eval.yaml,
- :mod:`.cases` reviews its cases: at least five, distinct, none copied from the file,
- :mod:`.check` proves a valid eval (relevance judge, a short real run of both arms),
- :mod:`.core` runs one item's conversation (validation retry, regeneration with evidence),
- :mod:`.files` copies the item's files and keeps rejected replies,
- :mod:`.command` is the command: discovery, progress lines, writing, summary.
"""
