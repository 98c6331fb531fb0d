"""Values at and over every limit of ``agentsproof/data/wire_limits.json``, plus the hostile
ones (NUL, lone surrogates, a 4,300-digit integer, unknown step types), as cases both SDKs
run against the real server (``test_sdk_limits.py``). A case is plain JSON (camelCase run
options, as the TypeScript SDK takes them); ``{"$big": N}`` stands for the integer 10^N.
``CHECKS[name](stored_run)`` asserts what the server must hold afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LIMITS = json.loads((ROOT / "agentsproof" / "data" / "wire_limits.json").read_text(encoding="utf-8"))
FIT = LIMITS["fitKey"]
RUN_FIELDS = {"label": "label", "goal": "goal", "expectedBehavior": "expected_behavior", "successCriteria": "success_criteria",
              "traceAssertions": "trace_assertions", "failureModes": "failure_modes"}
R = "\ufffd"
REPLACED = "NUL or lone surrogates replaced by U+FFFD"  # the note both SDKs write for a text they had to change

CASES: list[dict[str, Any]] = []
CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {}


def case(name: str, check: Callable[[dict[str, Any]], None], *, run: dict | None = None, steps: list | None = None, output: Any = None) -> None:
    CASES.append({"name": name, "run": {"input": name, **(run or {})}, "steps": steps or [], "output": output})
    CHECKS[name] = check


def _notes(value: Any) -> list[str]:
    return list((value or {}).get(FIT) or []) if isinstance(value, dict) else []


def _text_cases() -> None:
    for key, limit in LIMITS["run"]["text"].items():
        stored = RUN_FIELDS[key]

        def at(run: dict, stored: str = stored, limit: int = limit) -> None:
            assert run[stored] == "a" * limit and FIT not in run["metadata"]

        def over(run: dict, stored: str = stored, limit: int = limit, key: str = key) -> None:
            assert len(run[stored]) == limit and run[stored].startswith("a" * 100) and run[stored].endswith("chars]")
            assert any(n.startswith(f"{key}:") for n in _notes(run["metadata"])), run["metadata"]

        case(f"run-{key}-at", at, run={key: "a" * limit})
        case(f"run-{key}-over", over, run={key: "a" * (limit * 2 + 7)})
    for key, limit in LIMITS["run"]["lists"].items():
        stored = RUN_FIELDS[key]

        def at_list(run: dict, stored: str = stored, limit: int = limit) -> None:
            assert run[stored] == [f"c{i}" for i in range(limit)]

        def over_list(run: dict, stored: str = stored, limit: int = limit, key: str = key) -> None:
            assert run[stored] == [f"c{i}" for i in range(limit)]
            assert any(n.startswith(f"{key}:") for n in _notes(run["metadata"])), run["metadata"]

        case(f"run-{key}-at", at_list, run={key: [f"c{i}" for i in range(limit)]})
        case(f"run-{key}-over", over_list, run={key: [f"c{i}" for i in range(limit + 1)]})
    name_limit = LIMITS["step"]["text"]["name"]

    def names(run: dict) -> None:
        at, over = run["steps"]
        assert at["name"] == "n" * name_limit and at["output"] == "fine"
        assert len(over["name"]) == name_limit and over["name"].endswith("chars]")
        assert any(n.startswith("name:") for n in _notes(over["output"]))

    case("step-name", names, steps=[{"type": "tool_call", "name": "n" * name_limit, "output": "fine"},
                                    {"type": "tool_call", "name": "n" * (name_limit + 1), "output": "fine"}])


def _number_cases() -> None:
    steps, expected = [], []
    for key, spec in LIMITS["step"]["numbers"].items():
        lo, hi = spec["min"], spec["max"]
        for given, want in ((lo, lo), (hi, hi), (hi * 2, hi), (-1 if spec["integer"] else -0.01, lo)) + (((12.5, 13),) if spec["integer"] else ()):
            steps.append({"type": "llm_call", "name": f"{key}={given}", key: given, "output": {"k": key}})
            expected.append((key, given, want))

    def numbers(run: dict) -> None:
        assert len(run["steps"]) == len(expected)
        for st, (key, given, want) in zip(run["steps"], expected, strict=True):
            assert st[key] == want, (key, given, st[key])
            changed = given != want
            assert bool(_notes(st["output"])) == changed, (key, given, st["output"])
            assert st["output"]["k"] == key

    case("step-numbers", numbers, steps=steps)


def _hostile_cases() -> None:
    def types(run: dict) -> None:
        got = [(s["type"], s["output"]) for s in run["steps"]]
        assert [t for t, _ in got] == ["memory_read", "llm_call", "memory_write", "tool_call"]
        assert "retrieval" in " ".join(_notes(got[0][1])) and got[0][1]["output"] == "docs"
        assert _notes(got[1][1]) == [] and got[1][1] == "plain"  # a spelling of a known type is not a change
        assert "save-memory" in " ".join(_notes(got[2][1])) and got[2][1]["kept"] is True

    case("step-types", types, steps=[{"type": "retrieval", "name": "r", "output": "docs"},
                                     {"type": "LLM-Call", "name": "l", "output": "plain"},
                                     {"type": "save-memory", "name": "w", "output": {"kept": True}},
                                     {"type": "planner", "name": "p"}])

    def nul(run: dict) -> None:
        assert run["label"] == f"l{R}" and run["goal"] == f"g{R}" and run["input"] == {"q": f"a{R}b", f"k{R}": 1}
        assert run["output"] == {"output": f"out{R}", FIT: [f"output: {REPLACED}"]} and run["metadata"]["m"] == f"{R}"
        assert sorted(_notes(run["metadata"])) == [f"{k}: {REPLACED}" for k in ("goal", "input", "label", "metadata")]
        (st,) = run["steps"]
        assert st["name"] == f"n{R}" and st["output"]["output"] == f"o{R}" and st["input"] == [f"{R}"]
        assert sorted(_notes(st["output"])) == [f"{k}: {REPLACED}" for k in ("input", "name", "output")]

    case("nul", nul, run={"label": "l\x00", "goal": "g\x00", "input": {"q": "a\x00b", "k\x00": 1}, "metadata": {"m": "\x00"}},
         steps=[{"type": "tool_call", "name": "n\x00", "input": ["\x00"], "output": "o\x00"}], output="out\x00")

    def surrogates(run: dict) -> None:
        assert run["label"] == f"x{R}y" and run["output"] == {"t": R, FIT: [f"output: {REPLACED}"]}
        assert _notes(run["metadata"]) == [f"label: {REPLACED}"]
        (st,) = run["steps"]
        assert st["input"] == f"{R}!" and st["name"] == f"s{R}"
        assert sorted(_notes(st["output"])) == [f"{k}: {REPLACED}" for k in ("input", "name")]

    case("surrogates", surrogates, run={"label": "x\ud800y"}, output={"t": "\udc00"},
         steps=[{"type": "tool_call", "name": "s\udbff", "input": "\ud83d!"}])

    def big(run: dict) -> None:
        (st,) = run["steps"]
        for value in (st["output"]["n"], run["metadata"]["n"], run["output"]["n"]):
            assert isinstance(value, str) and ("digits" in value or value.startswith("1000")), value[:50]
        for where, field in ((st["output"], "output"), (run["metadata"], "metadata"), (run["output"], "output")):
            assert _notes(where) == [f"{field}: a big integer sent as text"], where.get(FIT)

    case("big-integer", big, run={"metadata": {"n": {"$big": 4300}}}, steps=[{"type": "tool_call", "name": "b", "output": {"n": {"$big": 4300}}}],
         output={"n": {"$big": 4301}})


_text_cases()
_number_cases()
_hostile_cases()


def for_python(value: Any) -> Any:
    """A case value as the Python SDK gets it: ``{"$big": N}`` becomes 10**N."""
    if isinstance(value, dict):
        if set(value) == {"$big"}:
            return 10 ** value["$big"]
        return {k: for_python(v) for k, v in value.items()}
    if isinstance(value, list):
        return [for_python(v) for v in value]
    return value


PY_KWARGS = {"label": "label", "input": "input", "goal": "goal", "expectedBehavior": "expected_behavior",
             "successCriteria": "success_criteria", "traceAssertions": "trace_assertions", "failureModes": "failure_modes",
             "metadata": "metadata"}
