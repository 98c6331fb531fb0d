"""Where an agent trial runs, kept apart: below ``targets/`` and ``executor/``, above ``core``/``model``.

Five modules: per-trial workspaces and their seeds (``workspace``), bubblewrap
(``sandbox``), the container engine with the images it builds and the relay every trial
container runs (``engine``: the ``docker`` CLI, never blocking the event loop), one trial's
container (``container``) and a run's containers (``environments``). It imports only
``core`` and ``model``; no module holds state of its own.
"""
