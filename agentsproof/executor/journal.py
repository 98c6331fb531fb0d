"""The trial journal: every finished trial, appended as it completes, for ``--resume``.

One JSON object per line, beside the JSON report (``<report>.journal.jsonl``), flushed
after every line so that a run killed by SIGKILL keeps every trial that finished. The
first line is the run's *fingerprint*: everything that determines a trial's result —
command, provider and its settings, models, and per item the skill text, prompt,
graders and threshold. ``--resume`` reuses the journalled trials of a run with the same
fingerprint and runs only the missing ones; a journal written for another configuration
is refused, naming what changed. Keys and other secrets are never part of it: provider
settings come from ``describe()``, which holds none.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentsproof.core.errors import InputError
from agentsproof.core.scrub import scrub_json
from agentsproof.model.items import EvalItem
from agentsproof.model.results import TrialResult
from agentsproof.targets.registry import is_agent

JOURNAL_VERSION = 1
TrialKey = tuple[str, str, int]
"""(item id, arm, trial index)."""

_ITEM_FIELDS = {
    "system_prompt": "the skill/agent text",
    "prompt": "the prompt",
    "graders": "the graders",
    "threshold": "the threshold",
    "kind": "the item kind",
    "target": "the target",
    "workspace": "the workspace files",
    "target_settings": "the target settings",
    "cases": "the tasks",
    "max_tokens": "the reply cap (defaults.max_tokens)",
    "temperature": "the temperature (a promptfoo provider's config)",
    "body": "the request fields (a promptfoo provider's config)",
    "transform": "the output transform (promptfoo's options.transform)",
    "model": "the item's model",
    "turns": "the turns",
    "case_turns": "the tasks' turns",
    "users": "the simulated user",
}
_RUN_FIELDS = {
    "command": "the command",
    "provider": "the provider",
    "model": "the model",
    "judge_model": "the judge model",
    "provider_settings": "the provider settings",
}


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def item_fingerprint(item: EvalItem, targets: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """What determines an item's trials. Chat items keep the fields they always had (older
    journals stay resumable); agent items add their target, its settings and workspace."""
    graders = [g.model_dump(mode="json") if hasattr(g, "model_dump") else g for g in item.graders]
    out: dict[str, Any] = {
        "system_prompt": _sha(item.system_prompt),
        "prompt": _sha(item.prompt),
        "graders": _sha(graders),
        "threshold": item.threshold,
        "kind": item.kind,
    }
    if item.model:
        out["model"] = item.model
    if item.max_tokens is not None:
        out["max_tokens"] = item.max_tokens
    if item.temperature is not None:
        out["temperature"] = item.temperature
    if item.body:
        out["body"] = _sha(item.body)
    if item.transform:
        out["transform"] = _sha(list(item.transform))
    if item.cases:
        out["cases"] = _sha([[c.name, c.prompt, [g.model_dump(mode="json") for g in c.graders]] for c in item.cases])
        if any(c.turns for c in item.cases):
            out["case_turns"] = _sha([list(c.turns) for c in item.cases])
    if item.turns:
        out["turns"] = _sha(list(item.turns))
    users = [c.user for c in (item.cases or (item.case_at(0),)) if c.user is not None]
    if users:
        out["users"] = _sha([[u.persona, u.goal, u.max_turns] for u in users])
    if item.environment is not None:  # the image (by name or Dockerfile) and the container's caps
        out["environment"] = _sha(item.environment.describe())
    if is_agent(item.target):
        out["target"] = item.target
        out["workspace"] = item.workspace_sha
        out["target_settings"] = _sha((targets or {}).get(item.target, {}))
    return out


def run_fingerprint(
    command: str,
    provider: str,
    model: str,
    judge_model: str,
    provider_settings: dict[str, Any],
    items: Sequence[EvalItem],
    targets: dict[str, dict[str, Any]] | None = None,
    var_digests: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``var_digests`` (``{"salt": ..., "digests": {NAME: ...}}``) covers the values the
    run's ``${VAR}`` references expanded to: a salted hash of each, never the value."""
    out = {
        "version": JOURNAL_VERSION,
        "run": {
            "command": command,
            "provider": provider,
            "model": model,
            "judge_model": judge_model,
            "provider_settings": _sha(provider_settings),
        },
        "items": {it.id: item_fingerprint(it, targets) for it in items},
    }
    if var_digests and var_digests.get("digests"):
        out["vars"] = var_digests
    return out


def header_salt(path: Path) -> str | None:
    """The salt of the ``${VAR}`` digests in the journal at ``path`` (None: none readable)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            header = json.loads(fh.readline(1 << 24))
        salt = header["fingerprint"]["vars"]["salt"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return salt if isinstance(salt, str) else None


def difference(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What changed between two fingerprints, in words; None when nothing did."""
    if old.get("version") != new.get("version"):
        return f"the journal format (version {old.get('version')} → {new.get('version')})"
    o_run, n_run = old.get("run") or {}, new.get("run") or {}
    for key, words in _RUN_FIELDS.items():
        if o_run.get(key) != n_run.get(key):
            if key == "provider_settings":
                return words
            return f"{words} ({o_run.get(key)!r} → {n_run.get(key)!r})"
    o_vars = (old.get("vars") or {}).get("digests") or {}
    n_vars = (new.get("vars") or {}).get("digests") or {}
    if isinstance(o_vars, dict) and o_vars:  # journals older than the digests are not compared
        for name in sorted(set(o_vars) | set(n_vars)):
            if o_vars.get(name) != n_vars.get(name):
                return "the value of ${" + str(name) + "}"
    o_items, n_items = old.get("items") or {}, new.get("items") or {}
    for item_id, fp in n_items.items():
        before = o_items.get(item_id)
        if before is None:
            continue  # a new item: nothing of it is in the journal, it simply runs
        for key, words in _ITEM_FIELDS.items():
            if before.get(key) != fp.get(key):
                return f"{item_id}: {words}"
    return None


def _trial_line(item_id: str, arm: str, index: int, trial: TrialResult) -> str:
    record = {"type": "trial", "item": item_id, "arm": arm, "index": index, "trial": trial.model_dump(mode="json")}
    return scrub_json(record) + "\n"


@dataclass
class Journal:
    """An open journal: one line appended per finished trial (see :func:`start`)."""

    path: Path
    _fh: IO[bytes] | None = None
    offset: int = 0
    """Where the next line starts (bytes from the start of the file)."""
    prior_spans: dict[TrialKey, tuple[int, int]] | None = None
    """(offset, length) of each prior trial's line, written by :func:`start`."""

    def append(self, item_id: str, arm: str, index: int, trial: TrialResult) -> tuple[int, int] | None:
        """Journal one trial; its line's (offset, length), or None when it was not written."""
        if self._fh is None:
            return None
        try:
            line = _trial_line(item_id, arm, index, trial).encode("utf-8", "surrogateescape")
            self._fh.write(line)
            self._fh.flush()
        except (OSError, ValueError):
            # A journal that cannot be written only costs the ability to resume; the run goes on.
            self.close()
            return None
        span = (self.offset, len(line))
        self.offset += len(line)
        return span

    def close(self) -> None:
        """Close the file (once; a failing close is ignored: every line was flushed as written)."""
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.close()


def journal_path(json_report: Path) -> Path:
    """The journal beside a JSON report: ``<report>.journal.jsonl``."""
    return json_report.with_name(json_report.name.removesuffix(".json") + ".journal.jsonl")


def start(path: Path, fingerprint: dict[str, Any], prior: dict[TrialKey, TrialResult] | None = None) -> Journal:
    """A new journal at ``path`` (replacing any old one atomically), holding ``prior``;
    OutputError (one line) when it cannot be written (a full disk, a read-only folder)."""
    from agentsproof.core.errors import OutputError
    from agentsproof.core.inputs import display

    try:
        return _start(path, fingerprint, prior)
    except OSError as err:
        raise OutputError(f"{display(path)}: cannot write the journal: {err.strerror or err}") from None


def _start(path: Path, fingerprint: dict[str, Any], prior: dict[TrialKey, TrialResult] | None) -> Journal:
    """Written through :mod:`agentsproof.core.safepath` (a temporary file renamed into place:
    a link planted beside the report is never written through), then reopened to append
    without following a link."""
    from agentsproof.core.safepath import Staged

    spans: dict[TrialKey, tuple[int, int]] = {}
    staged = Staged(path.parent, path.name)
    try:
        head = (json.dumps({"type": "header", "fingerprint": fingerprint}) + "\n").encode("utf-8", "surrogateescape")
        staged.write(head)
        end = len(head)
        for (item_id, arm, index), trial in (prior or {}).items():
            line = _trial_line(item_id, arm, index, trial).encode("utf-8", "surrogateescape")
            spans[(item_id, arm, index)] = (end, len(line))
            staged.write(line)
            end += len(line)
    except BaseException:
        staged.discard()
        raise
    staged.commit()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    return Journal(path=path, _fh=os.fdopen(fd, "ab"), offset=end, prior_spans=spans)


def load(path: Path, fingerprint: dict[str, Any]) -> dict[TrialKey, TrialResult]:
    """The trials of a journal written for this fingerprint; InputError naming what changed.

    A last line cut off by a kill is ignored; so are trials of items no longer run."""
    from agentsproof.core.inputs import display

    src = display(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except OSError as err:
        raise InputError(src, "--resume", f"cannot read the journal: {err.strerror or err}") from None
    if not lines:
        raise InputError(src, "--resume", "the journal is empty; run without --resume")
    try:
        header = json.loads(lines[0])
        old = header["fingerprint"]
    except (ValueError, KeyError, TypeError):
        raise InputError(src, "--resume", "not a journal of this version of agentsproof; run without --resume") from None
    changed = difference(old, fingerprint)
    if changed:
        raise InputError(src, "--resume", f"the journal was written for another configuration: {changed} changed; run without --resume to start over")
    wanted = set(fingerprint.get("items") or {})
    out: dict[TrialKey, TrialResult] = {}
    for n, line in enumerate(lines[1:], start=2):
        try:
            record = _record(line)
        except _BadValue as err:
            raise InputError(src, f"line {n}: {err.field}", f"{err}; run without --resume to start over") from None
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            if n == len(lines) and isinstance(err, json.JSONDecodeError):
                break  # the line being written when the run was killed (cut off: not JSON)
            raise InputError(src, None, f"line {n} is not a journal record; run without --resume to start over") from None
        if record is not None and record[0][0] in wanted:
            out[record[0]] = record[1]
    return out


def _record(line: str) -> tuple[TrialKey, TrialResult] | None:
    """A trial line's key and trial (None for a line of another type); ValueError when the
    line is not a journal record: not JSON, a field of the wrong type, a number that is NaN
    or infinite, a trial whose own arm or index disagrees with the line's."""
    from agentsproof.core.jsonfinite import loads_finite

    rec = loads_finite(line)
    if not isinstance(rec, dict):
        raise ValueError("not an object")
    if rec.get("type") != "trial":
        return None
    item, arm, index = rec["item"], rec["arm"], rec["index"]
    if not isinstance(item, str) or arm not in ("with", "without") or type(index) is not int or index < 0:
        raise ValueError("item, arm or index of the wrong type")
    trial = TrialResult.model_validate(rec["trial"])
    if trial.arm != arm or trial.index != index:
        raise ValueError("the trial's arm or index is not the line's")
    check_trial(trial)
    return (item, arm, index), trial


class _BadValue(ValueError):
    """A journalled trial holds a value no run could have written (``field`` names it)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _score(value: float | None, field: str, *, required: bool = False) -> None:
    if value is None:
        if required:
            raise _BadValue(field, "a scored trial has no score")
        return
    if not 0.0 <= value <= 1.0:  # every grader scores 0..1, and so does their weighted mean
        raise _BadValue(field, f"{value!r} is outside 0..1, the range of a score")


def check_trial(trial: TrialResult) -> None:
    """_BadValue unless every number of ``trial`` is one a run can write: its score and
    each grader's within 0..1 (a scored trial has one), weights, latency and cost not
    negative. (NaN and infinities are refused by the JSON reader before this.)"""
    _score(trial.score, "trial.score", required=trial.status == "scored")
    for i, g in enumerate(trial.graders):
        _score(g.score, f"trial.graders[{i}].score")
        if g.weight < 0:
            raise _BadValue(f"trial.graders[{i}].weight", f"{g.weight!r} is negative")
    if trial.latency_s < 0:
        raise _BadValue("trial.latency_s", f"{trial.latency_s!r} is negative")
    if trial.cost_usd is not None and trial.cost_usd < 0:
        raise _BadValue("trial.cost_usd", f"{trial.cost_usd!r} is negative")
