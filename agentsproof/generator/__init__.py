"""eval-generate: LLM-written eval.yaml files for a plugin's skills and agents.

- :mod:`.plugin` finds the items and their output folders,
- :mod:`.prompt` builds the messages (system prompt: skills/suite-generator/SKILL.md),
- :mod:`.validate` turns a reply into a normalized, valid eval.yaml,
- :mod:`.core` runs the calls (one retry with the validation error) and writes the files.
"""
