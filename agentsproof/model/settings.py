"""What a run records of how it ran: the typed record behind ``RunResult.settings``.

A command builds a :class:`RunSettings` from its options (:mod:`agentsproof.commands.run`);
the session adds what only the run knows (``parallel``, the provider's facts, the agent
targets, the budget, the cache counts ...); :meth:`RunSettings.to_dict` gives the dict the
JSON report holds (``RunResult.settings``, docs/report-schema.md). ``--retry-errors`` and
``merge`` read a saved report's dict back with :meth:`RunSettings.from_dict`: the keys
this version does not name (and the provider's facts) are kept in ``extra``, and the saved
key order is kept, so the report they write keeps the saved run's keys where they were.

Keys whose value is None (``all_tasks``: False) are left out of the dict, never written
as null. The dict's keys come in the order of the fields below, which is the order every
command has always written them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_FLAT = ("extra", "client")
"""Fields whose keys are written into the dict itself (not under their own name)."""


@dataclass(frozen=True)
class RunSettings:
    """How a run ran, as its report's ``settings`` records it (see the module docstring)."""

    parallel: int | None = None
    """``--parallel``: trials at a time (set by the session; a retry keeps the saved run's)."""
    abort_after: int | None = None
    """``--abort-after``: consecutive failed calls that stop the run (as ``parallel``)."""
    trials: int | None = None
    """Trials per arm given on the command line (eval, eval-all: only when given; tc-eval: always)."""
    threshold: float | None = None
    """Pass threshold given on the command line (tc-eval and EVAL.yaml: always)."""
    timeout: float | None = None
    """tc-eval's per-trial timeout in seconds (read back by ``--retry-errors``)."""
    eval_yaml: str | None = None
    """The EVAL.yaml a tc-eval run was made from (as shown to the user)."""
    dataset: str | None = None
    """The JSONL dataset a tc-eval run was made from (as shown to the user)."""
    shard: str | None = None
    """``--shard I/N`` of an eval-all run (dropped by ``merge``)."""
    all_tasks: bool = False
    """``--all-tasks``: every task of a version 1 ``tasks`` list was a case (written only when true)."""
    max_cost: float | None = None
    """``--max-cost USD`` (eval, eval-all)."""
    max_calls: int | None = None
    """``--max-calls N`` (eval, eval-all)."""
    baseline: str | None = None
    """``"none"`` for a single-arm run (``--baseline none``, or nothing to compare against)."""
    config: dict[str, str] | None = None
    """``--config key=value`` pairs (secret-looking values redacted), read by ``compare``."""
    source_format: str | None = None
    """A run read from another tool's results (``compare``): ``agentprobe`` or ``agentv``."""
    run_id: str | None = None
    """That tool's run id (agentprobe)."""
    p_adjust: str | None = None
    """eval-all: how the items' p-values were adjusted (holm, bh, none)."""
    refused: list[dict[str, str]] | None = None
    """eval-all: the eval files found but not run, each ``{file, error}`` (its one error line)."""
    ci_rule: str | None = None
    """``--ci-rule interval``: items failed only on a shown harm or a shown low pass rate (the default rule is not recorded)."""
    adaptive: dict[str, Any] | None = None
    """``--adaptive``: the stopping rule (alpha, planned looks, correction, interval)."""
    aa: dict[str, Any] | None = None
    """``--aa``: an A/A run (the baseline against itself) and its noise floor (``stats.aa``)."""
    retried_errors_from: str | None = None
    """``--retry-errors``: the report whose errored trials this run ran again."""
    retried_trials: int | None = None
    """``--retry-errors``: how many trials were run again."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys this version does not name, as read from a saved report (older versions'
    keys, the saved run's provider facts), written back as they were."""
    client: dict[str, Any] = field(default_factory=dict)
    """The provider client's facts (its ``describe()`` less ``provider``: ``base_url``,
    ``prompt_cache``, ...), written as keys of their own; they replace equal keys of ``extra``."""
    targets: dict[str, Any] | None = None
    """The agent targets the run used, by name (each target's ``describe()``)."""
    workspaces: str | None = None
    """``--keep-workspaces``: the folder the trials' workspaces were kept in."""
    reused_trials: int | None = None
    """Finished trials kept rather than run (``--resume``, ``--retry-errors``)."""
    budget: dict[str, Any] | None = None
    """``--max-calls`` / ``--max-cost``: calls made, money spent, whether the budget stopped the run."""
    throttle: dict[str, Any] | None = None
    """The adaptive concurrency limit, when the provider made it back off."""
    cache: dict[str, Any] | None = None
    """Response cache counts: cached trials, hits, calls."""
    merged_from: list[str] | None = None
    """``merge``: the shard reports this run was joined from."""
    key_order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The key order of the dict this record was read from (keys still set keep their place)."""

    def observed(self, run: RunSettings) -> RunSettings:
        """This record (what the command recorded, or a retried run's saved settings) with
        what a run observed, merged by one rule: the options a command records
        (``parallel``, ``abort_after``) keep a value already set; the facts of the run
        (targets, workspaces, reused trials, budget, throttle, cache) replace the recorded
        ones where the run has one; the client's facts are joined, the run's winning."""
        merged = {name: getattr(run, name) if getattr(run, name) is not None else getattr(self, name) for name in _OBSERVED}
        kept = {name: getattr(self, name) if getattr(self, name) is not None else getattr(run, name) for name in _KEPT}
        return dataclasses.replace(self, **merged, **kept, client={**self.client, **run.client})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSettings:
        """A saved report's ``settings`` (``RunResult.settings``) as a record."""
        names = {f.name for f in dataclasses.fields(cls)} - {*_FLAT, "key_order"}
        known = {k: v for k, v in data.items() if k in names and v is not None}
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**known, extra=extra, key_order=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        """The dict ``RunResult.settings`` holds: set fields in field order (or the order
        the record was read in), None and False left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in _FLAT:
                out.update(value)
            elif f.name != "key_order" and value is not None and value is not False:
                out[f.name] = value
        if not self.key_order:
            return out
        ordered = {k: out[k] for k in self.key_order if k in out}
        ordered.update(out)
        return ordered


_OBSERVED = ("targets", "workspaces", "reused_trials", "budget", "throttle", "cache")
"""What a run observes of itself (:meth:`RunSettings.observed`): the run's value wins."""
_KEPT = ("parallel", "abort_after")
"""Options a retry keeps from the saved run (:meth:`RunSettings.observed`)."""

__all__ = ["RunSettings"]
