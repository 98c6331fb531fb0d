"""EVAL.yaml (AgentEvals) files: agentv's dialect and the reference's, run as tc-eval cases.

- :mod:`.parse`: strict parsing of both dialects into one plain model;
- :mod:`.asserts`: assertions → agentsproof graders;
- :mod:`.items`: the skill, the target and one runner item per test;
- :mod:`.command`: ``eval`` / ``tc-eval`` / ``eval-all`` on EVAL.yaml files.
"""

from agentsproof.formats.evalyaml.items import is_eval_yaml, load_suite, suite_items

__all__ = ["is_eval_yaml", "load_suite", "suite_items"]
