"""What a trial runs: the chat call, or a real agent in a per-trial workspace.

The shared contract is at the top: :mod:`agentsproof.targets.base` (the interface),
:mod:`agentsproof.targets.base` (what every targets.yaml entry shares),
:mod:`agentsproof.targets.config` (targets.yaml) and :mod:`agentsproof.targets.registry`
(the kinds). Each kind is a sub-package holding its target, its event reader and its
in-container adapter: ``chat/``, ``command/``, ``http/``, ``copilot/``, ``agents/`` (the
agent CLIs and the kit every agent target uses, ACP included) and ``acp/``. Where a trial
runs (workspaces, bubblewrap, containers) is the layer below, :mod:`agentsproof.isolation`.
Nothing is imported here eagerly: a chat-only run never loads an agent module.
"""
