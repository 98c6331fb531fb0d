"""Where an agent trial runs, kept apart: below ``targets/`` and ``executor/``, above ``core``/``model``.

Per-trial workspaces and their seeds (``workspace``, ``seed``), bubblewrap (``sandbox``),
the container engine (``engine``: the ``docker`` CLI, never blocking the event loop), an
environment's image (``images``), one trial's container (``container``), a run's containers
(``environments``) and the model endpoint's relay into a ``--network none`` container
(``relay``). It imports only ``core`` and ``model``; no module holds state of its own.
"""
