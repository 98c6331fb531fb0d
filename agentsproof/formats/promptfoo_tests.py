"""promptfoo's tests and prompts from files: ``file://x.yaml`` (``.json``), CSV with its
``__expected`` / ``__description`` / ``__metadata:NAME`` columns, JSON Lines (one test a
line), and globs (``file://tests/*.yaml``), alone or in a list beside inline tests; every
file confined to the config's folder as input files are."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

MAX_GLOB_FILES = 200
"""Files one ``tests:`` glob may match."""


def _err(src: str, where: str | None, message: str) -> InputError:
    return InputError(src, where, message)


def file_ref(src: str, where: str, ref: str, path: Path) -> Path:
    """``file://PATH`` relative to the config, confined to its folder; an error when it is not a file."""
    from agentsproof.core.inputs import confined

    target = confined(ref.removeprefix("file://"), path, where)
    if not target.is_file():
        raise _err(src, where, f"file {ref.removeprefix('file://')!r} not found")
    return target


CSV_ASSERTS = {
    # promptfoo's __expected prefixes → an assertion type
    "contains": "contains",
    "icontains": "icontains",
    "not-contains": "not-contains",
    "not-icontains": "not-icontains",
    "regex": "regex",
    "starts-with": "starts-with",
    "equals": "equals",
    "is-json": "is-json",
    "llm-rubric": "llm-rubric",
    "grade": "llm-rubric",
    "contains-any": "icontains-any",
    "contains-all": "contains-all",
    "javascript": "javascript",
    "fn": "javascript",
    "eval": "javascript",
    "python": "python",
    "similar": "similar",
}


def csv_tests(src: str, where: str, target: Path) -> list[dict[str, Any]]:
    """promptfoo's CSV tests: a column per var; ``__expected`` (``__expected1`` …) an assertion
    (``contains: x``, ``regex: …``, ``grade: …``; a bare value means ``equals``); ``__description``."""
    import csv
    import io

    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, read_text

    text = read_text(target, source=src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="tests file")
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as err:
        raise _err(src, where, f"{target.name} is not CSV: {err}") from None
    tests: list[dict[str, Any]] = []
    for n, row in enumerate(rows):
        at = f"{where} ({target.name} row {n + 2})"
        test: dict[str, Any] = {"vars": {}, "assert": []}
        metric = ""
        columns: dict[str, int] = {}  # an __expected column → its assertion's index
        configs: list[tuple[str, str, str, str]] = []  # (column, target column, key, value) of __config:COLUMN:KEY
        for key, value in row.items():
            if key is None or value is None:
                raise _err(src, at, "has more cells than the header has columns")
            if "\x00" in key or "\x00" in value:
                column = key.replace("\x00", "\\0")
                raise _err(src, f"{at}: {column}", "holds a NUL character (no prompt or check can)")
            if key.startswith("__config:"):
                target_col, _, option = key[len("__config:") :].partition(":")
                if not target_col.startswith("__expected") or not option:
                    raise _err(src, at, f"column {key!r}: promptfoo's __config columns are __config:__expected[N]:KEY")
                if value.strip():
                    configs.append((key, target_col, option, value.strip()))
                continue
            if key.startswith("__expected"):
                if not value.strip():
                    continue
                columns[key] = len(test["assert"])
                kind, sep, rest = value.partition(":")
                kind = kind.strip()
                base = kind.removeprefix("not-")  # promptfoo's not- prefix, on any type
                limit = re.fullmatch(r"((?:not-)?similar)\((\d*\.?\d+)\)", kind)  # promptfoo's similar(0.8): its threshold
                kind, base = (limit.group(1), "similar") if limit else (kind, base)
                atype = CSV_ASSERTS.get(kind) or (f"not-{CSV_ASSERTS[base]}" if base in CSV_ASSERTS else None)
                if sep and atype is not None:
                    entry: dict[str, Any] = {"type": atype, **({"threshold": float(limit.group(2))} if limit else {})}
                    if atype.removeprefix("not-") != "is-json":
                        values = [v.strip() for v in rest.split(",")] if atype.endswith(("-any", "-all")) else rest.strip()
                        entry["value"] = values
                    test["assert"].append(entry)
                elif sep and kind.strip() and " " not in kind.strip():
                    raise _err(src, at, f"{key}: promptfoo assertion {kind.strip()!r} is not graded by agentsproof")
                else:
                    test["assert"].append({"type": "equals", "value": value})
            elif key == "__description":
                test["description"] = value
            elif key in ("__prefix", "__suffix"):  # promptfoo: text around the rendered prompt
                if value:
                    test.setdefault("options", {})[key[2:]] = value
            elif key == "__threshold":  # promptfoo: the test's pass mark
                if value.strip():
                    try:
                        test["threshold"] = float(value)
                    except ValueError:
                        raise _err(src, f"{at}: {key}", f"{value!r} is not a number") from None
            elif key == "__metric":  # promptfoo: the metric of the row's assertions
                metric = value.strip()
            elif key.startswith("__metadata:") and key[len("__metadata:") :].strip():  # promptfoo: the test's metadata, not graded
                test.setdefault("metadata", {})[key[len("__metadata:") :].strip()] = value
            elif key.startswith("__"):
                raise _err(src, at, f"column {key!r} is not read by agentsproof (vars, __expected, __description, __metadata:NAME, __config:__expected:KEY)")
            else:
                test["vars"][key] = value
        if metric:
            for entry in test["assert"]:
                entry.setdefault("metric", metric)
        for column, target_col, option, value in configs:
            _csv_config(src, f"{at}: {column}", test, columns, target_col, option, value)
        tests.append(test)
    return tests


def _csv_config(src: str, at: str, test: dict[str, Any], columns: dict[str, int], target: str, option: str, value: str) -> None:
    """promptfoo's ``__config:__expected:threshold`` (every assertion of the row) or ``__config:__expectedN:threshold``
    (that column's): the assertion's pass mark (an LLM assertion's ``threshold``, another's ``min_score``)."""
    if option != "threshold":
        raise _err(src, at, f"{option!r}: promptfoo's __config columns set an assertion's threshold")
    try:
        mark = float(value)
    except ValueError:
        raise _err(src, at, f"{value!r} is not a number") from None
    if not 0 <= mark <= 1:
        raise _err(src, at, f"{value!r}: a threshold is from 0 to 1")
    if target == "__expected":
        picked = list(range(len(test["assert"])))
    elif target in columns:
        picked = [columns[target]]
    else:
        picked = []  # that column is empty in this row: nothing to set
    for i in picked:
        entry = test["assert"][i]
        base = str(entry.get("type", "")).removeprefix("not-")
        entry["threshold" if base in ("llm-rubric", "similar", "python", "javascript") else "min_score"] = mark


def list_or_file(src: str, where: str, value: Any, path: Path) -> list[Any]:
    """A list, one item, or ``file://x.yaml`` (``.json``, ``.csv``) holding the list."""
    from agentsproof.core.validation import read_yaml

    if isinstance(value, str) and value.startswith("file://") and value.lower().endswith(".csv"):
        return csv_tests(src, where, file_ref(src, where, value, path))

    if isinstance(value, str) and value.startswith("file://") and value.lower().endswith((".yaml", ".yml", ".json")):
        value = read_yaml(file_ref(src, where, value, path))
        if not isinstance(value, list):
            raise _err(src, where, "the file must hold a list")
        return value
    if isinstance(value, list):
        return value
    return [value]


def tests_from(src: str, where: str, value: Any, path: Path) -> list[Any]:
    """promptfoo's ``tests``: a list of tests and ``file://`` references (files or globs:
    ``.yaml``/``.yml``/``.json`` a list or one test, ``.jsonl`` one test a line, ``.csv``), or one reference."""
    items = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        if isinstance(item, str) and item.startswith(("huggingface://", "http://", "https://")):
            raise _err(
                src, at, f"{item[:80]!r} is a hosted dataset (Hugging Face, Google Sheets, a URL): it is not fetched; save it as a file and give file://PATH"
            )
        if not (isinstance(item, str) and item.startswith("file://")):
            out.append(item)
            continue
        for ref in expand_refs(src, at, item, path):
            out.extend(_tests_file(src, at, ref, path))
    return out


def expand_refs(src: str, where: str, ref: str, path: Path) -> list[str]:
    """``file://PATH``, or each file a glob in it matches (inside the config's folder, sorted)."""
    rel = ref.removeprefix("file://")
    if not any(c in rel for c in "*?["):
        return [ref]
    if rel.startswith("/") or ".." in Path(rel).parts:
        raise _err(src, where, f"{rel!r}: a glob must stay inside the config's folder")
    base = path.resolve().parent
    found = sorted(str(p.relative_to(base)) for p in base.glob(rel) if p.is_file())
    if not found:
        raise _err(src, where, f"{rel!r} matches no file")
    if len(found) > MAX_GLOB_FILES:
        raise _err(src, where, f"{rel!r} matches {len(found)} files (at most {MAX_GLOB_FILES})")
    return [f"file://{f}" for f in found]


def _tests_file(src: str, where: str, ref: str, path: Path) -> list[Any]:
    from agentsproof.core.inputs import MAX_EVAL_FILE_BYTES, check_values, load_json_text, read_text
    from agentsproof.core.validation import read_yaml

    name = ref.lower()
    if name.endswith(".jsonl"):
        target = file_ref(src, where, ref, path)
        text = read_text(target, source=src, field=where, max_bytes=MAX_EVAL_FILE_BYTES, what="tests file")
        tests: list[Any] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                test = load_json_text(line, f"{src}: {where} ({target.name} line {n})")
                check_values(test, src, f"{where} ({target.name} line {n})")
                tests.append(test)
        return tests
    if name.endswith(".csv"):
        return csv_tests(src, where, file_ref(src, where, ref, path))
    if name.endswith((".yaml", ".yml", ".json")):
        data = read_yaml(file_ref(src, where, ref, path))
        return data if isinstance(data, list) else [data]
    raise _err(
        src, where, f"{ref!r}: tests are read from .yaml, .yml, .json, .jsonl or .csv files (promptfoo's python and javascript test generators are not run)"
    )
