"""eval.yaml (versions 1 and 2), agentsproof's own eval file: one skill or agent, its tasks and graders.

- :mod:`.models`: the strict models of the file and its loader;
- :mod:`.items`: how a loaded file becomes a runner item;
- :mod:`.format`: the input format (detect, discover, load).
"""
