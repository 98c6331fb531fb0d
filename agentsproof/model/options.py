"""The options of one run command, as one typed, frozen object built at the CLI edge.

``eval``, ``eval-all``, ``tc-eval`` and ``ablate`` parse their flags into a :class:`RunFlags`
once; the command's plan (:class:`agentsproof.executor.plan.RunPlan`) carries it to the
session, and nothing below reads a loose dict of options. What a run records of them is
``model.settings.RunSettings``; how the runner schedules trials, ``executor.runner.Scheduling``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|bearer|^key$|_key$|token$)", re.I)
_KEY = re.compile(r"^[A-Za-z0-9_.\-/]{1,64}$")


def parse_config_pairs(raw: tuple[str, ...] | tuple[tuple[str, str], ...] | list[str]) -> tuple[tuple[str, str], ...]:
    """``("prompt=pirate", "temperature=0")`` → pairs, in order (``--config``). A key that
    looks like a secret keeps its place but not its value, so no report ever holds it."""
    out: dict[str, str] = {}
    for text in raw:
        if isinstance(text, tuple):  # already parsed (RunFlags.replace)
            key, value = text
        else:
            key, sep, value = str(text).partition("=")
            key = key.strip()
            if not sep:
                raise InputError("command line", "--config", f"{text!r} is not KEY=VALUE")
        if not _KEY.match(key):
            raise InputError("command line", "--config", f"key {key!r} must be 1-64 letters, digits or . _ - /")
        if key in out:
            raise InputError("command line", "--config", f"key {key!r} is given twice")
        if len(value) > 1000:
            raise InputError("command line", "--config", f"the value of {key!r} is over 1,000 characters")
        out[key] = "(redacted)" if _SECRET_KEY.search(key) else value
    return tuple(out.items())


@dataclass(frozen=True)
class Shard:
    """``--shard I/N``: this machine runs slice I (1-based) of N."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N`` as a shard; InputError (``--shard``) when it is not one."""
        parts = text.split("/")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise InputError("command line", "--shard", f"{text!r} is not I/N (e.g. 2/4)")
        index, count = int(parts[0]), int(parts[1])
        if count < 1 or not 1 <= index <= count:
            raise InputError("command line", "--shard", f"{text!r}: I must be between 1 and N, and N at least 1")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class RunFlags:
    """A run command's options (``eval``, ``eval-all``, ``tc-eval``), parsed once at the CLI edge."""

    trials: int | None = None
    """Trials per arm (None: from the eval file; tc-eval: 1)."""
    trials_per_item: int | None = None
    """``--smoke/--reliable/--regression``: trials per arm per item, spread round robin over
    its cases (at least one each); ``trials`` is then None."""
    threshold: float | None = None
    timeout: float | None = None
    """tc-eval's per-trial timeout (eval files carry their own)."""
    provider: str | None = None
    model: str | None = None
    judge_model: str | None = None
    parallel: int = 1
    ci: bool = False
    output: Path = Path("runs")
    abort_after: int = 5
    adaptive: bool = False
    aa: bool = False
    """``--aa``: run the baseline against itself (an A/A run: the noise floor)."""
    retry_errors: Path | None = None
    resume: bool = False
    cache: bool = True
    cache_dir: Path | None = None
    shard: Shard | None = None
    prompt_cache: bool = True
    """Mark the system prompt for the provider's prompt cache (--no-prompt-cache: off)."""
    target: str | None = None
    """``--target NAME``: run the trials with this agent target (overrides eval.yaml's ``execution``)."""
    targets_file: Path | None = None
    """``--targets FILE``: a targets.yaml looked at before the usual places."""
    keep_workspaces: bool = False
    """Keep every agent trial's workspace beside the report instead of deleting it."""
    junit: Path | None = None
    """``--junit FILE``: also write the run as JUnit XML (agentsproof.report.exports)."""
    jsonl: Path | None = None
    """``--jsonl FILE``: also write one JSON line per trial."""
    baseline: str = "default"
    """``--baseline none``: run only the with-arm (single-arm regression run, no grades)."""
    arms: str | None = None
    """``--arms baseline,skill,plugin``: also run the plugin arm (None: the two arms)."""
    skill: Path | None = None
    """tc-eval ``--skill FILE``: the with-arm's skill for a JSONL dataset."""
    config: tuple[tuple[str, str], ...] = ()
    """``--config key=value`` pairs, recorded in the report for ``compare``."""
    all_tasks: bool = False
    """``--all-tasks``: every task of a version 1 ``tasks`` list is a case (default: the first only)."""
    fail_on_underpowered: bool = False
    """With ``--ci``, an underpowered item also fails the run (exit 1)."""
    live_source: bool = False
    """``--live-source``: a generated eval runs the skill/agent files it was copied from, not its copies."""
    ci_rule: str = "point"
    """``--ci-rule``: ``point`` (an item with a point grade F fails) or ``interval`` (an item
    fails only when its delta interval lies below 0 or its pass rate's below the threshold)."""
    plan: bool = False
    """``--plan``: print the calls, tokens and cost of the run, call nothing."""
    max_cost: float | None = None
    """``--max-cost USD``: stop before a call would take the run's cost past this."""
    max_calls: int | None = None
    """``--max-calls N``: stop before the N+1-th LLM call."""
    atif: Path | None = None
    """``--atif DIR``: also write each agent trial as an ATIF trajectory (agentsproof.interop.atif)."""
    no_oracle: bool = False
    """``--no-oracle``: skip the oracle preflight (agentsproof.executor.oracle)."""
    p_adjust: str = "holm"
    """eval-all: how the items' p-values are adjusted (holm, bh, none)."""
    sign: Path | None = None
    """``--sign KEY``: sign the JSON report with this SSH key (``ssh-keygen -Y sign``; docs/verify.md)."""
    # --- issue 48: trials on a Ray cluster (agentsproof.executor.ray_trials) ---
    executor: str = "local"
    """``--executor``: ``local`` (this machine) or ``ray`` (each trial a task on a Ray cluster's node)."""
    ray_address: str | None = None
    """``--ray-address`` / ``RAY_ADDRESS``: the cluster (``auto``: the one running here); None: a one-node Ray on loopback."""

    @classmethod
    def from_cli(cls, opts: dict[str, Any]) -> RunFlags:
        """From a Click command's keyword arguments (unknown keys are a programming error)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(opts) - names
        if unknown:
            raise TypeError(f"RunFlags: unknown options {sorted(unknown)}")
        values = {k: v for k, v in opts.items() if v is not None}
        if isinstance(values.get("shard"), str):
            values["shard"] = Shard.parse(values["shard"])
        if "config" in values:
            values["config"] = parse_config_pairs(values["config"])
        if values.get("resume") and values.get("retry_errors"):
            raise InputError("command line", "--resume", "conflicts with --retry-errors; give one of them")
        return cls(**values)

    def replace(self, **changes: Any) -> RunFlags:
        """A copy with ``changes`` made."""
        return dataclasses.replace(self, **changes)
