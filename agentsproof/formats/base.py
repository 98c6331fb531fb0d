"""One interface for every input format: detect a file, find it in a folder, turn it into items.

A format is one module under ``agentsproof/formats/`` with a module-level ``FORMAT`` (an
object with the :class:`InputFormat` shape) and one line in
:mod:`agentsproof.formats.registry`. Commands never ask which format a file is in: they
ask the registry for the file's items with an :class:`ItemRequest` (the options that
shape them) and get one :class:`Loaded` back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentsproof.model.items import DEFAULT_THRESHOLD, DEFAULT_TIMEOUT, EvalItem
from agentsproof.model.results import RunResult

if TYPE_CHECKING:
    from agentsproof.executor.oracle import OraclePlan
    from agentsproof.formats.eval_yaml.models import LoadedEval


@dataclass(frozen=True)
class ItemRequest:
    """The command-line options that shape a file's items. None: the file's own value
    (eval.yaml) or the case formats' default (trials 1, threshold 0.6, timeout 300 s)."""

    trials: int | None = None
    threshold: float | None = None
    timeout: float | None = None
    target: str | None = None
    """``--target``: run the items on this agent instead of the file's choice."""
    targets_file: Path | None = None
    all_tasks: bool = False
    skill: Path | None = None
    """``--skill``: the skill of a file that does not name one (EVAL.yaml, a JSONL dataset)."""
    live_source: bool = False
    """``--live-source``: an eval.yaml whose skill/agent file eval-generate copied runs that file's source."""
    in_plugin: bool = False
    """Part of an ``eval-all`` run: case ids are prefixed with the file's name so that two
    skills' cases stay apart."""

    def case_trials(self) -> int:
        """``--trials``, else 1."""
        return self.trials or 1

    def case_threshold(self) -> float:
        """``--threshold``, else the case formats' default pass rate."""
        return self.threshold if self.threshold is not None else DEFAULT_THRESHOLD

    def case_timeout(self) -> float:
        """``--timeout``, else the case formats' default, in seconds."""
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT


@dataclass
class Loaded:
    """A file's items, and what the run records and does about that file."""

    format: str
    path: Path
    items: list[EvalItem]
    name: str
    """What a one-file run's reports are called (``<name>-eval.json``, ``<name>-tc-eval.json``)."""
    report: str = "tc-eval"
    """The kind of report a one-file run writes: ``eval`` (one skill or agent) or
    ``tc-eval`` (cases)."""
    plugin: str = ""
    """The report folder of a one-file run (``runs/<plugin>/``); default: ``name``."""
    settings: dict[str, Any] = field(default_factory=dict)
    """What a one-file tc-eval run records of the format (trials, threshold, timeout, the file)."""
    skill_path: Path | None = None
    """The skill the items were built with, when the format finds one by layout or is given one."""
    single_arm: bool = False
    """Nothing to compare against (no skill): the model or the target alone."""
    after: Callable[[RunResult], None] | None = None
    """Applied to the run's result before reports are written (check labels, failure reasons)."""
    eval_file: LoadedEval | None = None
    """An eval.yaml as read and validated by the load: the lint gate and the oracle
    preflight use it instead of reading the file again."""
    oracle_plan: OraclePlan | None = None
    """A format's own oracle preflight (a Harbor task's ``solution/solve.sh``), checked
    before any trial as an eval.yaml's ``oracle:`` is."""

    def __post_init__(self) -> None:
        if not self.plugin:
            self.plugin = self.name


class InputFormat(Protocol):
    """What the registry needs of a format."""

    @property
    def name(self) -> str:
        """The format's name, as the registry, ``ACCEPTS`` and ``Loaded.format`` spell it."""
        ...

    def detect(self, path: Path) -> bool:
        """True when ``path`` is a file of this format."""
        ...

    def discoverable(self, path: Path) -> bool:
        """True when ``eval-all`` runs this file when it finds it in a plugin's folders."""
        ...

    def load(self, path: Path, request: ItemRequest) -> Loaded:
        """Read and validate the file (every problem an InputError naming file and field)
        and build its items."""
        ...
