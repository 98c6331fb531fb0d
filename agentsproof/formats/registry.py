"""Input formats by name, and which ones each command takes.

Adding a format: write ``agentsproof/formats/<name>.py`` with a module-level ``FORMAT``
(see :class:`agentsproof.formats.base.InputFormat`) and add its line to ``FORMATS``: it is
tried before each command's last format, for the commands its ``commands`` attribute
names (default :data:`PLUGIN_COMMANDS`), as is a format of an installed package
(entry-point group ``agentsproof.formats``, :mod:`agentsproof.core.entrypoints`). Only to
give it another place in a command's order, name it in that command's ``ACCEPTS`` line.
``agentsproof lint`` detects every file through :func:`detect` too, and checks the cases of
a format with a ``lint_view`` hook (:mod:`agentsproof.formats.lint.views`; a format without
one is loaded and said to be unchecked).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from agentsproof.core import entrypoints
from agentsproof.core.registry import Registry
from agentsproof.formats.base import InputFormat, ItemRequest, Loaded

FORMATS: dict[str, str] = {
    "eval.yaml": "agentsproof.formats.eval_yaml.format:FORMAT",
    "EVAL.yaml": "agentsproof.formats.agentevals.format:FORMAT",
    "evals.json": "agentsproof.formats.evals_json:FORMAT",
    "jsonl": "agentsproof.formats.dataset:FORMAT",
    "promptfoo": "agentsproof.formats.promptfoo:FORMAT",
    "harbor": "agentsproof.formats.harbor.format:FORMAT",
    "waza": "agentsproof.formats.waza:FORMAT",
    "skillgrade": "agentsproof.formats.skillgrade:FORMAT",
}

ACCEPTS: dict[str, tuple[str, ...]] = {
    # in the order they are tried; the last one reads whatever the others did not claim
    # (so that a wrong file gets that format's own error message)
    "eval": ("harbor", "promptfoo", "EVAL.yaml", "evals.json", "waza", "skillgrade", "eval.yaml"),
    "tc-eval": ("harbor", "promptfoo", "jsonl", "EVAL.yaml", "waza", "skillgrade", "evals.json"),
    "eval-all": ("harbor", "promptfoo", "evals.json", "waza", "skillgrade", "eval.yaml", "EVAL.yaml"),
    "lint": ("harbor", "promptfoo", "evals.json", "EVAL.yaml", "waza", "skillgrade", "eval.yaml"),
}

PLUGIN_COMMANDS: tuple[str, ...] = ("eval", "tc-eval", "lint")
"""The commands a format that no ``ACCEPTS`` line places is tried by when it names none
(its ``commands`` attribute)."""


def _check(name: str, found: Any) -> str | None:
    if getattr(found, "name", None) != name:
        return f"its name is {getattr(found, 'name', None)!r}, not its entry point's name"
    missing = [m for m in ("detect", "discoverable", "load") if not callable(getattr(found, m, None))]
    return f"it has no {', '.join(missing)}" if missing else None


REGISTRY: Registry[InputFormat] = Registry("formats", FORMATS, _check)
"""Every format: :data:`FORMATS`, then the installed plugins' (:mod:`agentsproof.core.registry`)."""


@cache
def get(name: str) -> InputFormat:
    """The format named ``name`` (in-tree, else an installed plugin's); KeyError for an
    unknown one, PluginError for a plugin that does not load."""
    return REGISTRY.get(name)


def accepts(command: str) -> tuple[str, ...]:
    """The formats ``command`` tries, in order: its ``ACCEPTS`` line, with the formats no
    ``ACCEPTS`` line places (an installed plugin's, or a new one's) before the last one
    (which reads what no other claimed), for the commands their ``commands`` attribute
    names (default :data:`PLUGIN_COMMANDS`). Only those unplaced formats are imported."""
    names = ACCEPTS[command]
    placed = {name for line in ACCEPTS.values() for name in line}
    extra = []
    for name in REGISTRY.lines():
        if name in placed:
            continue
        try:
            fmt = get(name)
        except entrypoints.PluginError as err:
            entrypoints.say_once(f"{err}; skipped", "formats")
            continue
        if command in getattr(fmt, "commands", PLUGIN_COMMANDS):
            extra.append(name)
    return (*names[:-1], *extra, names[-1])


def detect(path: Path, command: str) -> InputFormat:
    """The format ``command`` reads ``path`` in."""
    names = accepts(command)
    for name in names[:-1]:
        if get(name).detect(Path(path)):
            return get(name)
    return get(names[-1])


def load(path: Path, command: str, request: ItemRequest) -> Loaded:
    """``path``'s items, as ``command`` builds them."""
    return detect(path, command).load(Path(path), request)


def discoverable(path: Path) -> bool:
    """What ``eval-all`` runs when it finds it below a folder."""
    return any(get(name).discoverable(path) for name in accepts("eval-all"))


def owned_folders(found: list[Path]) -> list[Path]:
    """The folders a discovered file owns whole (a Harbor task's ``task.toml``: its task
    folder, whose ``environment/`` and ``tests/`` are not eval files of their own): a format
    says so with ``owns_folder = True``."""
    owners = [get(name) for name in accepts("eval-all") if getattr(get(name), "owns_folder", False)]
    return [p.parent for p in found if any(fmt.discoverable(p) for fmt in owners)]
