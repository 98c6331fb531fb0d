"""Flat memory at scale: finished trials live in the journal, not in memory.

Every trial is journalled as it finishes (:mod:`agentsproof.executor.journal`). Once an
item is finished and graded (its statistics computed while its trials are at hand), its
arms' trial lists can be *spilled*: replaced by a :class:`JournalTrials`, a read-only
sequence of (offset, length) pairs into the journal that reads a trial back when it is
iterated. Reports then read the trials item by item, so a run of 100,000 trials holds
about one item's trials at a time.

Small runs are not spilled: :class:`Spiller` keeps finished items in memory until they
hold more than ``AGENTSPROOF_SPILL_AFTER`` trials (default 1,000), then spills the oldest.
"""

from __future__ import annotations

import json
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentsproof.model.results import ArmResult, TrialResult


class _Line(BaseModel):
    """A journal line, read for its trial alone (parsed and validated in one step)."""

    model_config = ConfigDict(extra="ignore")
    trial: TrialResult


SPILL_ENV = "AGENTSPROOF_SPILL_AFTER"
DEFAULT_SPILL_AFTER = 1000
_RECENT_ARMS = 2
"""Arms whose trials stay read back (a report reads an item's two arms several times in a row)."""

_recent: OrderedDict[int, list[TrialResult]] = OrderedDict()


def spill_after() -> int:
    """Trials held in memory before finished items are spilled (``AGENTSPROOF_SPILL_AFTER``, default 1,000; 0: every finished item is spilled)."""
    from agentsproof.core.envcfg import env_int

    return env_int(SPILL_ENV, DEFAULT_SPILL_AFTER, lo=0)


class JournalFile:
    """The journal, opened once when the run starts: trials are read back through this
    descriptor, so a journal replaced or removed meanwhile (by another run, by hand) cannot
    hand back another run's lines."""

    def __init__(self, path: Path):
        import os

        self.path = path
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes of the journal from byte ``offset``."""
        import os

        return os.pread(self.fd, length, offset)

    def __del__(self) -> None:
        import os

        try:  # noqa: SIM105 - in __del__ at interpreter exit a module global may be None already; a plain try needs none
            os.close(self.fd)
        except (OSError, AttributeError, TypeError):
            pass


class JournalTrials:
    """An arm's trials as stored in the journal: a read-only sequence in index order."""

    __slots__ = ("path", "source", "offsets", "lengths", "__weakref__")

    def __init__(self, path: Path | JournalFile, spans: list[tuple[int, int]]):
        self.source = path if isinstance(path, JournalFile) else JournalFile(path)
        self.path = self.source.path
        self.offsets = array("q", (s[0] for s in spans))
        self.lengths = array("q", (s[1] for s in spans))

    def __len__(self) -> int:
        return len(self.offsets)

    def __bool__(self) -> bool:
        return len(self.offsets) > 0

    def _load(self) -> list[TrialResult]:
        key = id(self)
        hit = _recent.get(key)
        if hit is not None:
            _recent.move_to_end(key)
            return hit
        out: list[TrialResult] = []
        for offset, length in zip(self.offsets, self.lengths, strict=True):
            try:
                raw = self.source.read(offset, length)
            except OSError as err:
                raise _changed(self.path, f"cannot be read: {err.strerror or err}") from None
            try:
                out.append(_Line.model_validate_json(raw).trial)
            except ValueError:  # e.g. an escaped surrogate pydantic refuses: the slower way
                try:
                    out.append(TrialResult.model_validate(json.loads(raw.decode("utf-8", "surrogateescape"))["trial"]))
                except (ValueError, KeyError, TypeError):
                    raise _changed(self.path, f"has no trial at byte {offset} any more (changed while the run read it)") from None
        _recent[key] = out
        while len(_recent) > _RECENT_ARMS:
            _recent.popitem(last=False)
        return out

    def __iter__(self) -> Iterator[TrialResult]:
        return iter(self._load())

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __add__(self, other: Any) -> list[TrialResult]:
        return list(self) + list(other)

    def __radd__(self, other: Any) -> list[TrialResult]:
        return list(other) + list(self)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, JournalTrials)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def sort(self, key: Callable[[TrialResult], Any] | None = None) -> None:
        """Already in index order (spilled trials are sorted before they are spilled)."""

    def append(self, trial: TrialResult) -> None:
        """Refused (TypeError): spilled trials are read-only."""
        raise TypeError("spilled trials are read-only")

    def __del__(self) -> None:
        _recent.pop(id(self), None)

    def __repr__(self) -> str:
        return f"<{len(self)} trials in {self.path.name}>"


def _changed(path: Path, why: str) -> Exception:
    from agentsproof.core.errors import OutputError
    from agentsproof.core.inputs import display

    return OutputError(f"{display(path)}: the journal {why}; run again without --resume")


class Spiller:
    """Notes where each trial went in the journal; spills finished items beyond the limit."""

    def __init__(self, path: Path, limit: int, prior: dict[tuple[str, str, int], tuple[int, int]] | None = None):
        self.path = path
        self.source = JournalFile(path)
        self.limit = limit
        self.spans: dict[tuple[str, str, int], tuple[int, int]] = dict(prior or {})
        self._held: OrderedDict[int, tuple[str, list[ArmResult]]] = OrderedDict()
        self._held_trials = 0
        self.spilled_trials = 0

    def note(self, item_id: str, arm: str, index: int, span: tuple[int, int] | None) -> None:
        """Note where trial ``index`` of ``item_id``'s ``arm`` went in the journal (``span``: offset, length; None: not written)."""
        if span is not None:
            self.spans[(item_id, arm, index)] = span

    def item_done(self, item_id: str, arms: list[ArmResult]) -> None:
        """A finished, graded item: held in memory, and the oldest held ones spilled while
        more than ``limit`` trials are held."""
        self._held[id(arms[0])] = (item_id, arms)
        self._held_trials += sum(len(a.trials) for a in arms)
        while self._held_trials > self.limit and self._held:
            _, (oldest_id, oldest_arms) = self._held.popitem(last=False)
            self._held_trials -= sum(len(a.trials) for a in oldest_arms)
            for arm in oldest_arms:
                self._spill(oldest_id, arm)

    def _spill(self, item_id: str, arm: ArmResult) -> None:
        if isinstance(arm.trials, JournalTrials) or not arm.trials:
            return
        spans = [self.spans.get((item_id, t.arm, t.index)) for t in arm.trials]
        if any(s is None for s in spans):
            return  # a trial the journal could not take: this arm stays in memory
        for t in arm.trials:
            self.spans.pop((item_id, t.arm, t.index), None)
        self.spilled_trials += len(spans)
        arm.trials = JournalTrials(self.source, spans)  # type: ignore[arg-type,assignment]
