"""``agentsproof lint``: structural problems of eval files knowable without a model.

:mod:`.problems` the one-line problem; :mod:`.regexes` regexes that can never match;
:mod:`.checks` checks on a file's cases and graders; :mod:`.lint` one path's problems
(every format); :mod:`.judge` the optional LLM review (overfitting, tasks not needing the skill).
"""
