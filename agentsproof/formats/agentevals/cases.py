"""agentv's tests kept outside the EVAL.yaml: a folder of cases and a CSV file
(``tests: ./cases/``, ``tests: [file://cases/magic.csv]``), read as agentv reads them.

A *cases folder* holds one folder per test, each with a ``case.yaml`` (or ``case.yml``)
holding one test; the folder's name is its ``id`` unless it gives one; folders without a
case file are skipped, as agentv skips them (said once). A ``workspace/`` folder in a case
is refused by name: one workspace seeds every trial of a file here (``environment.workdir``).

A *CSV file* has a row per test: ``id``, ``input``, ``__expected`` (``__expected2`` …) an
assertion written as promptfoo writes it (``icontains:hello``, ``llm-rubric: …``; a bare
value means ``equals``), ``__description`` (the criteria), ``__metric`` (the assertions'
name), ``__threshold`` (noted: the run's pass mark is --threshold), ``__prefix`` /
``__suffix`` around the input, ``__metadata:NAME`` (not graded), ``__config:__expectedN:threshold``
(that assertion's ``min_score``); any other column is a var (``vars.a.b`` into nested vars).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

MAX_CASES = 1000
"""Case folders one ``tests:`` folder may hold."""


def _note(src: str, note: str) -> None:
    from agentsproof.formats.agentevals.providers import say_once

    say_once(src, note)


def case_folder(src: str, folder: Path) -> list[dict[str, Any]]:
    """The tests of a cases folder, in the order of the folders' names."""
    from agentsproof.core.validation import read_yaml

    tests: list[dict[str, Any]] = []
    skipped: list[str] = []
    subdirs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    if len(subdirs) > MAX_CASES:
        raise InputError(src, "tests", f"{folder.name}/ holds {len(subdirs)} case folders; at most {MAX_CASES} are read")
    for sub in subdirs:
        found = next((sub / n for n in ("case.yaml", "case.yml") if (sub / n).is_file() and not (sub / n).is_symlink()), None)
        if found is None:
            skipped.append(sub.name)
            continue
        case = read_yaml(found)
        if not isinstance(case, dict):
            raise InputError(src, "tests", f"{sub.name}/{found.name} must hold one test (a mapping)")
        if (sub / "workspace").is_dir():
            raise InputError(src, "tests", f"{sub.name}/workspace: a workspace per case is not seeded; one environment.workdir seeds every trial of a file")
        tests.append({"id": sub.name, **case} if case.get("id") is None else case)
    if skipped:
        _note(src, f"tests: {', '.join(skipped)} in {folder.name}/ have no case.yaml and are skipped, as agentv skips them")
    if not tests:
        raise InputError(src, "tests", f"{folder.name}/ holds no case folder with a case.yaml")
    return tests


def _assertion(src: str, at: str, value: str) -> dict[str, Any]:
    from agentsproof.formats.promptfoo_tests import CSV_ASSERTS

    kind, sep, rest = value.partition(":")
    kind = kind.strip()
    atype = CSV_ASSERTS.get(kind) or (f"not-{CSV_ASSERTS[kind[4:]]}" if kind.startswith("not-") and kind[4:] in CSV_ASSERTS else None)
    if not sep or atype is None:
        if sep and kind and " " not in kind:
            raise InputError(src, at, f"assertion {kind!r} is not graded by agentsproof")
        return {"type": "equals", "value": value}
    entry: dict[str, Any] = {"type": atype}
    if atype.removeprefix("not-") != "is-json":
        entry["value"] = [v.strip() for v in rest.split(",")] if atype.endswith(("-any", "-all")) else rest.strip()
    return entry


def _put(variables: dict[str, Any], key: str, value: str) -> None:
    parts = [p.strip() for p in (key[5:] if key.startswith("vars.") else key).split(".") if p.strip()]
    here = variables
    for part in parts[:-1]:
        if not isinstance(here.get(part), dict):
            here[part] = {}
        here = here[part]
    if parts:
        here[parts[-1]] = value


def csv_cases(src: str, target: Path) -> list[dict[str, Any]]:
    """The tests of an agentv CSV file."""
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text

    text = read_text(target, source=src, field="tests", max_bytes=MAX_EVAL_FILE_BYTES, what="tests file")
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as err:
        raise InputError(src, "tests", f"{target.name} is not CSV: {err}") from None
    tests: list[dict[str, Any]] = []
    for n, row in enumerate(rows):
        at = f"tests ({target.name} row {n + 2})"
        variables: dict[str, Any] = {}
        asserts: list[dict[str, Any]] = []
        gates: dict[int, float] = {}
        test: dict[str, Any] = {}
        prefix = suffix = ""
        metric = None
        for raw_key, value in row.items():
            if raw_key is None or value is None:
                raise InputError(src, at, "has more cells than the header has columns")
            key = raw_key.strip()
            if key == "id":
                test["id"] = value
            elif key == "input":
                test["input"] = value
            elif key.startswith("__expected"):
                if value.strip():
                    asserts.append(_assertion(src, f"{at}: {key}", value.strip()))
            elif key == "__prefix":
                prefix = value
            elif key == "__suffix":
                suffix = value
            elif key == "__description":
                test["criteria"] = value
            elif key == "__metric":
                metric = value.strip() or None
            elif key == "__threshold":
                if value.strip():
                    _note(src, f"tests ({target.name}): __threshold, a row's own pass mark, is not used; the run's is --threshold")
            elif key.startswith("__metadata:"):
                test.setdefault("metadata", {})[key[len("__metadata:") :]] = value
            elif key.startswith("__config:"):
                expected, _, option = key[len("__config:") :].partition(":")
                index = 0 if expected == "__expected" else int(expected[10:]) - 1 if expected[10:].isdigit() else -1
                if option != "threshold" or index < 0:
                    raise InputError(src, f"{at}: {key}", "must be __config:__expectedN:threshold")
                try:
                    gates[index] = float(value)
                except ValueError:
                    raise InputError(src, f"{at}: {key}", f"{value!r} is not a number") from None
            elif key.startswith("__"):
                raise InputError(
                    src,
                    f"{at}: {key}",
                    "is not one of agentv's CSV columns (__expected, __description, __metric, __threshold, __prefix, __suffix, __metadata:, __config:)",
                )
            elif key:
                _put(variables, key, value)
        for i, entry in enumerate(asserts):
            if metric:
                entry["metric"] = metric if len(asserts) == 1 else f"{metric}-{i + 1}"
            if i in gates:
                entry["min_score"] = gates[i]
        if "input" in test:
            test["input"] = prefix + test["input"] + suffix
        elif "input" in variables and isinstance(variables["input"], str):
            variables["input"] = prefix + variables["input"] + suffix
        test.setdefault("id", f"row-{n + 1}")
        tests.append({**test, **({"vars": variables} if variables else {}), **({"assert": asserts} if asserts else {})})
    return tests


AGENTV_ROW_KEYS = {
    "assert",
    "assertions",
    "vars",
    "criteria",
    "expected_output",
    "input_messages",
    "expected_messages",
    "rubrics",
    "conversation_id",
    "execution",
}
"""Keys of an agentv JSONL test that a plain dataset row (``agentsproof.formats.dataset``) never has."""


def is_agentv_jsonl(path: Path) -> bool:
    """A ``.jsonl`` file whose first row is an agentv test (``{"id", "vars", "assert"}``), which runs as an EVAL.yaml."""
    import json

    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
        row = json.loads(first) if len(first) < 1_000_000 else None
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(row, dict) and bool(AGENTV_ROW_KEYS & row.keys())


def jsonl_suite(path: Path) -> dict[str, Any]:
    """An agentv JSONL file run on its own: a suite of its tests, with its sidecar ``<name>.yaml``'s settings when there is one (agentv's)."""
    from agentsproof.core.validation import read_yaml

    sidecar = next((path.with_suffix(s) for s in (".yaml", ".yml") if path.with_suffix(s).is_file()), None)
    data = read_yaml(sidecar) if sidecar is not None else {}
    if not isinstance(data, dict):
        data = {}
    return {**{k: v for k, v in data.items() if k not in ("tests", "evalcases")}, "tests": f"file://{path.name}"}
