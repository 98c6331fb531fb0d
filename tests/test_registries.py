"""Every registry entry imports, is named as its key, and is documented.

Providers have their own test (tests/llm/test_provider_registry.py). A new grader, target
or input format is one module plus one line in its registry (CONTRIBUTING.md); these
tests fail when the line points nowhere, the module declares another name, or the docs
never mention it.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from agentsproof.formats import registry as formats
from agentsproof.grading import registry as graders
from agentsproof.grading.base import GraderKind
from agentsproof.targets import registry as targets
from agentsproof.targets.base import Target

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _headings(*pages: str) -> str:
    return "\n".join(line for page in pages for line in (DOCS / page).read_text(encoding="utf-8").splitlines() if line.startswith("#"))


def _resolve(path: str):
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", list(graders.GRADERS))
def test_grader_entry(name):
    kind = _resolve(graders.GRADERS[name])
    assert isinstance(kind, GraderKind)
    assert kind.type == name
    assert kind.config.model_fields["type"].annotation.__args__ == (name,), "the config's type Literal must be the registry key"
    assert (kind.grade is None) == kind.per_pair, "a grader is graded per trial (grade) or per pair, not both"
    assert f"`{name}`" in _headings("eval-files.md", "agent-trials.md"), f"docs: no heading names the {name!r} grader"


def test_grader_union_is_built_from_the_registry():
    from typing import get_args

    from pydantic import TypeAdapter

    from agentsproof.grading.registry import GraderConfig

    union = get_args(GraderConfig)[0]
    assert get_args(union) == tuple(k.config for k in graders.kinds())
    adapter = TypeAdapter(GraderConfig)
    assert type(adapter.validate_python({"type": "deterministic", "checks": ["x"]})).__name__ == "DeterministicGrader"
    with pytest.raises(Exception, match="'pairwise'"):  # the message lists every registered type
        adapter.validate_python({"type": "nope"})


@pytest.mark.parametrize("name", list(targets.KINDS))
def test_target_entry(name):
    cls = _resolve(targets.KINDS[name])
    assert issubclass(cls, Target)
    assert cls.kind == name
    assert cls.spec_model is not None and cls.spec_model.model_fields["type"].annotation.__args__ == (name,)
    assert re.search(rf"^#+ `{re.escape(name)}`", _headings("agent-trials.md"), re.M), f"docs/agent-trials.md: no section for the {name!r} target"


@pytest.mark.parametrize("name", list(formats.FORMATS))
def test_format_entry(name):
    fmt = _resolve(formats.FORMATS[name])
    assert fmt.name == name
    for method in ("detect", "discoverable", "load"):
        assert callable(getattr(fmt, method))
    shown = {"jsonl": "cases.jsonl"}.get(name, name)
    assert shown in _headings("eval-files.md", "interop.md"), f"docs: no heading names the {name!r} format"


def test_every_format_is_accepted_by_a_command():
    accepted = {n for names in formats.ACCEPTS.values() for n in names}
    assert accepted == set(formats.FORMATS)


@pytest.mark.parametrize(
    ("command", "file", "expected"),
    [
        ("eval", "eval.yaml", "eval.yaml"),
        ("eval", "EVAL.yaml", "EVAL.yaml"),
        ("eval", "notes.txt", "eval.yaml"),  # the last one reads what no other claims, with its own error
        ("tc-eval", "cases.jsonl", "jsonl"),
        ("tc-eval", "EVAL.yaml", "EVAL.yaml"),
        ("tc-eval", "evals.json", "evals.json"),
        ("eval-all", "evals.json", "evals.json"),
        ("eval-all", "eval.yaml", "eval.yaml"),
        ("eval-all", "EVAL.yaml", "EVAL.yaml"),
    ],
)
def test_detect(tmp_path, command, file, expected):
    path = tmp_path / file
    path.write_text("tests: []\n" if file == "EVAL.yaml" else "{}\n")
    assert formats.detect(path, command).name == expected
