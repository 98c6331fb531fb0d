"""What a trial runs: the chat call, or a real agent in a per-trial workspace.

See :mod:`agentsproof.targets.base` for the interface, :mod:`agentsproof.targets.config`
for targets.yaml and :mod:`agentsproof.targets.registry` for the kinds. Nothing is
imported here eagerly: a chat-only run never loads an agent module.
"""
