"""EVAL.yaml (AgentEvals) files: agentv's dialect and the reference's, run as tc-eval cases.

- :mod:`.parse`: strict parsing of both dialects into one plain model;
- :mod:`.asserts`: assertions → agentsproof graders;
- :mod:`.items`: the skill, the target and one runner item per test;
- :mod:`.providers`: the file's targets and providers;
- :mod:`.suite_files`: the files a suite names;
- :mod:`.format`: the input format ``eval``, ``tc-eval`` and ``eval-all`` read.
"""
