"""skill-creator's files as they are written (anthropics/skills ``skills/skill-creator``).

Two shapes of JSON come out of skill-creator and the projects that use it:

* **trigger evals** (``run_eval.py --eval-set``, ``run_loop.py``): a list of
  ``{"query": ..., "should_trigger": true|false}``, written as a plain list or wrapped in an
  object (``{"skill_name": ..., "evals": [...]}``, ``{"queries": [...]}``). They say whether the
  skill's *description* makes the agent load it: an activation suite
  (docs/activation.md), run by ``agentsproof activation FILE``, ``tune-description FILE`` and
  ``tc-eval FILE`` (which says so).
* **evals.json** (``references/schemas.md``): ``skill_name`` and ``evals[]``. Real files carry
  more than the schema; :func:`normalise` reads what they mean and names what changes
  nothing in a note (never a refusal): a top-level list of cases (the skill is the SKILL.md
  above ``evals/``), ``expect``/``fail`` lists, ``should_trigger`` on a case (an activation
  prompt), and keys such as ``description_version``, ``command`` or ``role``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP_KEYS = ("skill_name", "evals", "description", "version", "notes", "$schema")
"""The keys of an evals.json the loader reads (TCEvalConfig)."""
CASE_KEYS = ("id", "prompt", "expected_output", "assertions", "expectations", "files", "name", "metadata", "category", "kind", "description", "tags", "notes")
"""The keys of one case the loader reads (TCEvalCase, CASE_METADATA)."""
TRIGGER_LIST_KEYS = ("evals", "queries", "eval_set", "evalset", "triggers", "trigger_evals", "cases", "items")
"""Where a wrapped trigger-eval set keeps its list (any one list of ``{query, should_trigger}`` is read)."""
CASE_READ = ("expect", "fail", "should_trigger", "query")
"""Case keys real files carry that are read with a meaning (docs/interop.md's support table)."""
TOP_NOTED = ("description_version", "quantitative_metrics", "execution_notes", "metadata")
CASE_NOTED = ("command", "role")
"""Keys seen in real files that change nothing measured: named in the support table; these
and any other key that is no typo of a real one are ignored with a note."""
FAIL_PREFIX = "The response does not do this: "
"""How a ``fail`` entry (a behaviour that fails the case) becomes an assertion the judge checks."""


@dataclass
class Normalised:
    """An evals.json as the loader's model reads it, with what was read differently."""

    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    triggers: list[tuple[int, str, bool]] = field(default_factory=list)
    """(case index, prompt, should_trigger) of the cases that carry ``should_trigger``."""
    trigger_only: set[int] = field(default_factory=set)
    """Indexes of cases that only say whether the skill should load (nothing else to grade)."""


def _is_trigger(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("query"), str) and isinstance(entry.get("should_trigger"), bool)


def trigger_entries(data: Any) -> list[dict[str, Any]] | None:
    """The ``{query, should_trigger}`` entries of a skill-creator trigger-eval set (a plain list,
    or an object with one such list); None when ``data`` is not one."""
    if isinstance(data, list):
        return data if data and all(_is_trigger(e) for e in data) else None
    if isinstance(data, dict):
        lists = [v for k, v in data.items() if k in TRIGGER_LIST_KEYS and isinstance(v, list)]
        for value in lists:
            if value and all(_is_trigger(e) for e in value):
                return value
    return None


def read_trigger_file(path: Path) -> list[dict[str, Any]] | None:
    """A ``.json`` file's trigger entries (None when it is not a trigger-eval set; a file that
    cannot be read is left to the loader that reports it)."""
    data = read_json(path)
    return None if data is None else trigger_entries(data)


def read_json(path: Path) -> Any:
    """A ``.json`` file parsed as the loaders parse it (size cap, depth bound); None when it is
    no such file or does not parse (the loader that reads it says why)."""
    from agentsproof.core.errors import InputError
    from agentsproof.core.inputs import read_json_file

    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        return read_json_file(path)
    except (InputError, OSError, ValueError, RecursionError):
        return None


def _close(key: str, known: tuple[str, ...]) -> str | None:
    found = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return found[0] if found and found[0] != key else None


def normalise(data: Any, eval_file: Path) -> Normalised:
    """``data`` (an evals.json as parsed) in the shape TCEvalConfig reads, and the notes on what
    was read differently. A key that is close to a real one (a typo) is left for the model to
    refuse by name; any other key no evals.json reader knows is ignored with a note."""
    folder = eval_file.resolve().parent
    notes: list[str] = []
    if isinstance(data, list) and all(isinstance(e, dict) for e in data):
        above = folder.parent / "SKILL.md"
        if folder.name == "evals" and above.is_file():
            notes.append("a list of cases with no skill_name: the skill is the SKILL.md above this evals/ folder")
            data = {"skill_name": "../SKILL.md", "evals": data}
        elif (folder / "SKILL.md").is_file():
            notes.append("a list of cases with no skill_name: the skill is the SKILL.md beside it")
            data = {"skill_name": "SKILL.md", "evals": data}
    if not isinstance(data, dict):
        return Normalised(data=data)  # the loader says what it expected
    data = dict(data)
    for key in [k for k in data if k not in TOP_KEYS]:
        if _close(key, TOP_KEYS) is None:
            notes.append(f"{key}: not a key skill-creator's evals.json reads; it changes nothing measured, ignored")
            data.pop(key)
    out = Normalised(data=data, notes=notes)
    evals = data.get("evals")
    if not isinstance(evals, list):
        return out
    cases = []
    for i, case in enumerate(evals):
        if not isinstance(case, dict):
            cases.append(case)
            continue
        case = dict(case)
        where = f"evals[{i}]"
        if _is_trigger(case) and "prompt" not in case:
            case["prompt"] = case.pop("query")
        if isinstance(case.get("id"), str) and case["id"].strip().isdigit():
            case["id"] = int(case["id"])
        if "expect" in case and not any(k in case for k in ("assertions", "expectations")):
            case["assertions"] = case.pop("expect")
        if "fail" in case:
            fail = case.pop("fail")
            fails = [fail] if isinstance(fail, str) else fail if isinstance(fail, list) else []
            if fails and all(isinstance(f, str) and f.strip() for f in fails):
                case.setdefault("assertions", [])
                if isinstance(case["assertions"], list):
                    case["assertions"] = [*case["assertions"], *(FAIL_PREFIX + f for f in fails)]
                    out.notes.append(f"{where}.fail: each behaviour that fails the case is judged as an assertion that it does not happen")
            else:
                case["fail"] = fail  # left for the model to refuse by name
        if "should_trigger" in case:
            st = case.pop("should_trigger")
            if isinstance(st, bool):
                out.triggers.append((i, str(case.get("prompt", "")), st))
                if not case.get("assertions") and not case.get("expectations") and case.get("expected_output") is None:
                    out.trigger_only.add(i)
            else:
                case["should_trigger"] = st  # refused by name
        for key in [k for k in case if k not in CASE_KEYS]:
            if key == "should_trigger" or key == "fail":
                continue
            if _close(key, CASE_KEYS) is None:
                out.notes.append(f"{where}.{key}: not a key skill-creator's evals.json reads; it changes nothing measured, ignored")
                case.pop(key)
        cases.append(case)
    data["evals"] = cases
    if out.triggers:
        out.notes.append(
            f"{len(out.triggers)} case(s) with should_trigger: whether the skill loads is an activation suite "
            "(docs/activation.md; run them with `agentsproof activation` on this file)"
        )
    return out


def _fold_key(note: str) -> str:
    """The same note on several cases: ``evals[3].command: ...`` and ``evals[9].command: ...``."""
    head, sep, rest = note.partition(": ")
    if sep and head.startswith("evals[") and "]" in head:
        return head[head.index("]") + 1 :] + ": " + rest
    return note


def folded_notes(notes: list[str], limit: int = 6) -> list[str]:
    """Notes on many cases folded: the same note on several cases once, with their count;
    at most ``limit`` lines."""
    counts: dict[str, int] = {}
    first: list[str] = []
    for n in notes:
        key = _fold_key(n)
        if key not in counts:
            first.append(n)
        counts[key] = counts.get(key, 0) + 1
    folded = [n + (f" (and {counts[_fold_key(n)] - 1} more case(s))" if counts[_fold_key(n)] > 1 else "") for n in first]
    return folded[:limit] + ([f"... and {len(folded) - limit} more note(s)"] if len(folded) > limit else [])


def activation_prompts(path: Path) -> list[tuple[str, bool]] | None:
    """The (prompt, should_trigger) pairs of a trigger-eval set, or of an evals.json's
    ``should_trigger`` cases; None when ``path`` holds neither."""
    entries = read_trigger_file(path)
    if entries is not None:
        return [(str(e["query"]), bool(e["should_trigger"])) for e in entries]
    data = read_json(path)
    if data is None:
        return None
    norm = normalise(data, path)
    return [(prompt, st) for _, prompt, st in norm.triggers] or None


def only_triggers(path: Path) -> bool:
    """True when ``path`` is a trigger-eval set, or an evals.json whose every case only says
    whether the skill should load: ``tc-eval`` runs it as an activation suite."""
    if read_trigger_file(path) is not None:
        return True
    data = read_json(path)
    if data is None:
        return False
    norm = normalise(data, path)
    evals = norm.data.get("evals") if isinstance(norm.data, dict) else None
    return bool(norm.triggers) and isinstance(evals, list) and len(norm.trigger_only) == len(evals)
