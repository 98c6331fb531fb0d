"""Input formats by name, and which ones each command takes.

Adding a format: write ``agentsproof/formats/<name>.py`` with a module-level ``FORMAT``
(see :class:`agentsproof.formats.base.InputFormat`), add its line to ``FORMATS`` and its
name to the commands in ``ACCEPTS`` that should take it.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from agentsproof.formats.base import InputFormat, ItemRequest, Loaded

FORMATS: dict[str, str] = {
    "eval.yaml": "agentsproof.formats.eval_yaml.format:FORMAT",
    "EVAL.yaml": "agentsproof.formats.agentevals.format:FORMAT",
    "evals.json": "agentsproof.formats.evals_json:FORMAT",
    "jsonl": "agentsproof.formats.dataset:FORMAT",
    "promptfoo": "agentsproof.formats.promptfoo:FORMAT",
}

ACCEPTS: dict[str, tuple[str, ...]] = {
    # in the order they are tried; the last one reads whatever the others did not claim
    # (so that a wrong file gets that format's own error message)
    "eval": ("promptfoo", "EVAL.yaml", "eval.yaml"),
    "tc-eval": ("promptfoo", "jsonl", "EVAL.yaml", "evals.json"),
    "eval-all": ("evals.json", "eval.yaml", "EVAL.yaml"),
}


@cache
def get(name: str) -> InputFormat:
    module, _, attr = FORMATS[name].partition(":")
    found: InputFormat = getattr(importlib.import_module(module), attr)
    return found


def detect(path: Path, command: str) -> InputFormat:
    """The format ``command`` reads ``path`` in."""
    names = ACCEPTS[command]
    for name in names[:-1]:
        if get(name).detect(Path(path)):
            return get(name)
    return get(names[-1])


def load(path: Path, command: str, request: ItemRequest) -> Loaded:
    """``path``'s items, as ``command`` builds them."""
    return detect(path, command).load(Path(path), request)


def discoverable(path: Path) -> bool:
    """What ``eval-all`` runs when it finds it below a folder."""
    return any(get(name).discoverable(path) for name in ACCEPTS["eval-all"])
