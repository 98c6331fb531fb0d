"""docs/interop.md's support table, held against the loaders: every key and assertion type
each loader knows has its row (and no row names one it does not), and every row's example
loads as its status says — a refused one is one InputError naming the field (an assertion
type: with its reason), any other loads."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentsproof.core.errors import InputError
from agentsproof.formats import promptfoo, registry
from agentsproof.formats.agentevals import parse
from agentsproof.formats.agentevals.assert_set import SET_TYPES
from agentsproof.formats.agentevals.asserts import EXTRA
from agentsproof.formats.agentevals.negation import REFUSED
from agentsproof.formats.agentevals.trajectory import TRAJECTORY_TYPES
from agentsproof.formats.base import ItemRequest
from agentsproof.model.tc_eval import CASE_METADATA, TCEvalCase, TCEvalConfig

DOC = Path(__file__).resolve().parents[2] / "docs" / "interop.md"
STATUSES = {"supported", "differently", "ignored", "refused"}


@dataclass(frozen=True)
class Row:
    """One row of a support table."""

    table: str
    key: str
    status: str
    example: Any  # None: no example

    def __str__(self) -> str:
        return f"{self.table}: {self.key}"


def _tables() -> dict[str, list[Row]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Support table\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[Row]] = {}
    title = ""
    for line in section.splitlines():
        if line.startswith("### "):
            title = line[4:].strip()
            out[title] = []
        elif line.startswith("| `") and title:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            assert len(cells) == 4, line
            key, status, example = cells[0].strip("`"), cells[1], cells[2]
            assert status in STATUSES, line
            out[title].append(Row(title, key, status, None if example == "—" else yaml.safe_load(example.strip("`"))))
    return out


TABLES = _tables()
ALL_ROWS = [row for rows in TABLES.values() for row in rows]


def _keys(table: str, *statuses: str) -> set[str]:
    return {r.key for r in TABLES[table] if r.status in statuses}


KNOWN = ("supported", "differently", "ignored")


def test_the_tables_are_there_and_each_key_has_one_row() -> None:
    assert set(TABLES) == {
        "EVAL.yaml: top-level keys",
        "EVAL.yaml: test keys",
        "promptfoo: top-level keys",
        "promptfoo: test keys",
        "promptfoo: provider keys",
        "promptfoo: prompt keys",
        "promptfoo: options keys",
        "evals.json: top-level keys",
        "evals.json: eval keys",
        "waza: top-level keys",
        "waza: grader types",
        "skillgrade: keys",
        "Assertion types (EVAL.yaml and promptfoo)",
    }
    for title, rows in TABLES.items():
        keys = [r.key for r in rows]
        assert len(keys) == len(set(keys)), f"{title}: a key listed twice"


def test_eval_yaml_rows_are_the_loaders_keys() -> None:
    assert _keys("EVAL.yaml: top-level keys", *KNOWN) == parse.SUITE_KEYS
    assert not _keys("EVAL.yaml: top-level keys", "refused") & parse.SUITE_KEYS
    assert _keys("EVAL.yaml: test keys", *KNOWN) == parse.TEST_KEYS
    assert not _keys("EVAL.yaml: test keys", "refused") & parse.TEST_KEYS


def test_promptfoo_rows_are_the_loaders_keys() -> None:
    assert _keys("promptfoo: top-level keys", "supported", "differently") == promptfoo.SUITE_KEYS
    assert _keys("promptfoo: top-level keys", "ignored") == promptfoo.IGNORED_KEYS | set(promptfoo.NOTED_KEYS)
    assert _keys("promptfoo: test keys", *KNOWN) == promptfoo.TEST_KEYS
    assert _keys("promptfoo: provider keys", *KNOWN) == promptfoo.PROVIDER_KEYS
    assert _keys("promptfoo: prompt keys", *KNOWN) == promptfoo.PROMPT_KEYS
    assert _keys("promptfoo: options keys", *KNOWN) == promptfoo.OPTION_KEYS
    tables = ("promptfoo: top-level keys", "promptfoo: test keys", "promptfoo: provider keys", "promptfoo: prompt keys", "promptfoo: options keys")
    refused = set().union(*(_keys(t, "refused") for t in tables))
    assert refused == set(promptfoo.REFUSED_KEYS)


def test_waza_and_skillgrade_rows_are_the_loaders_keys() -> None:
    from agentsproof.formats import skillgrade, waza

    assert _keys("waza: top-level keys", *KNOWN) == waza.TOP_KEYS
    assert _keys("waza: grader types", *KNOWN) == set(waza.GRADER_TYPES)
    assert _keys("waza: grader types", "refused") == set(waza.ERRORED_TYPES)
    keys = _keys("skillgrade: keys", *KNOWN)
    assert keys >= skillgrade.TOP_KEYS and {k.removeprefix("tasks[].") for k in keys if k.startswith("tasks[].")} <= skillgrade.TASK_KEYS


def test_evals_json_rows_are_the_models_keys() -> None:
    from agentsproof.formats.skill_creator import CASE_NOTED, CASE_READ, TOP_NOTED

    assert _keys("evals.json: top-level keys", *KNOWN) == {f.alias or n for n, f in TCEvalConfig.model_fields.items()} | set(TOP_NOTED)
    case = {f.alias or n for n, f in TCEvalCase.model_fields.items()} | set(CASE_METADATA) | {"expectations"} | set(CASE_READ) | set(CASE_NOTED)
    assert _keys("evals.json: eval keys", *KNOWN) == case


def test_assertion_rows_are_the_graded_and_the_refused_types() -> None:
    table = "Assertion types (EVAL.yaml and promptfoo)"
    assert _keys(table, "supported", "differently") == set(EXTRA) | set(SET_TYPES) | set(TRAJECTORY_TYPES)
    assert _keys(table, "refused") == set(REFUSED)
    assert not _keys(table, "ignored")  # an assertion is graded or refused, never dropped


# ------------------------------------------------------------------------ loading the rows


def _eval_yaml(tmp: Path, row: Row) -> Path:
    data: dict[str, Any] = {"tests": [{"id": "t1", "input": "Say hi", "assert": [{"type": "contains", "value": "hi"}]}]}
    if row.table.startswith("Assertion"):
        data["tests"][0]["assert"] = [row.example]
    elif row.table == "EVAL.yaml: test keys":
        data["tests"][0].update(row.example)
    else:
        data.update(row.example)
    path = tmp / "suite.eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _promptfoo(tmp: Path, row: Row) -> Path:
    data: dict[str, Any] = {"prompts": ["Say {{input}}"], "tests": [{"vars": {"input": "hi"}, "assert": [{"type": "contains", "value": "hi"}]}]}
    if row.table.startswith("Assertion"):
        data["tests"][0]["assert"] = [row.example]
    elif row.table == "promptfoo: test keys":
        data["tests"][0].update(row.example)
    elif row.table == "promptfoo: provider keys":
        data["providers"] = [{"id": "openai:gpt-4o-mini", **row.example}]
    elif row.table == "promptfoo: options keys":
        data["tests"][0]["options"] = row.example
        data["tests"][0]["assert"] = [{"type": "llm-rubric", "value": "Greets"}]
    elif row.table == "promptfoo: prompt keys":
        data["prompts"] = [{"raw": "Say {{input}}", **row.example}]
    else:
        data.update(row.example)
    path = tmp / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _evals_json(tmp: Path, row: Row) -> Path:
    (tmp / "SKILL.md").write_text("---\nname: s\ndescription: Greets.\n---\nGreet warmly.\n")
    data: dict[str, Any] = {"skill_name": "SKILL.md", "evals": [{"id": 1, "prompt": "Say hi", "expected_output": "Hi"}]}
    if row.table == "evals.json: eval keys":
        data["evals"][0].update(row.example)
    else:
        data.update(row.example)
    path = tmp / "evals.json"
    path.write_text(json.dumps(data))
    return path


def _cases() -> list[tuple[Row, str]]:
    out = []
    for row in ALL_ROWS:
        if row.table.startswith("Assertion"):
            example = row.example if row.example is not None else ({"type": row.key, "value": "x"} if row.status == "refused" else None)
            if example is not None:
                out += [(Row(row.table, row.key, row.status, example), fmt) for fmt in ("EVAL.yaml", "promptfoo")]
        elif row.example is not None:
            out.append((row, row.table.split(":", 1)[0]))
    return out


def _waza(tmp: Path, row: Row) -> Path:
    (tmp / "SKILL.md").write_text("---\nname: s\ndescription: Greets.\n---\nGreet warmly.\n")
    data = {"name": "w", "skill": "s", "config": {"trials_per_task": 1}, "tasks": [{"id": "t", "inputs": {"prompt": "Say hi"}, "graders": [row.example]}]}
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


WRITERS = {"EVAL.yaml": _eval_yaml, "promptfoo": _promptfoo, "evals.json": _evals_json, "waza": _waza}


@pytest.mark.parametrize(("row", "fmt"), _cases(), ids=lambda v: str(v))
def test_each_rows_example_loads_as_its_status_says(tmp_path: Path, row: Row, fmt: str) -> None:
    path = WRITERS[fmt](tmp_path, row)
    try:
        loaded = registry.get(fmt).load(path, ItemRequest())
    except InputError as err:
        assert row.status == "refused", f"{row} ({fmt}) is {row.status} in the table, but the loader refuses it: {err}"
        if row.table.startswith("Assertion"):
            assert err.field is not None and err.field.endswith(".type") and REFUSED[row.key] in err.message, err
        else:
            assert err.field is not None and re.search(rf"(^|\.){re.escape(row.key)}$", err.field), err
        return
    if fmt == "waza":  # a waza grader agentsproof cannot run errors its task, the others run
        assert bool(loaded.items[0].load_error) is (row.status == "refused"), (row, loaded.items[0].load_error)
        return
    assert row.status != "refused", f"{row} ({fmt}) is refused in the table, but it loads"
    assert loaded.items
