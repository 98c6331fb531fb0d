"""Every registry entry imports, is named as its key, and is documented; every module that
defines a grader, target, provider or format is registered.

Providers have their own test (tests/llm/test_provider_registry.py). A new grader, target
or input format is one module plus one line in its registry (CONTRIBUTING.md); these
tests fail when the line points nowhere, the module declares another name, the docs
never mention it, or the line was forgotten. No test here pins what a registry holds:
each reads the registry.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from docs_text import headings as _headings

from agentsproof.formats import registry as formats
from agentsproof.grading import registry as graders
from agentsproof.grading.base import GraderEntry
from agentsproof.targets import registry as targets
from agentsproof.targets.base import Target

PACKAGE = Path(__file__).resolve().parent.parent / "agentsproof"


def _resolve(path: str):
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", list(graders.GRADERS))
def test_grader_entry(name):
    kind = _resolve(graders.GRADERS[name])
    assert isinstance(kind, GraderEntry)
    assert kind.type == name
    assert kind.config.model_fields["type"].annotation.__args__ == (name,), "the config's type Literal must be the registry key"
    assert (kind.grade is None) == kind.per_pair, "a grader is graded per trial (grade) or per pair, not both"
    assert f"`{name}`" in _headings("eval-files.md", "agent-trials.md"), f"docs: no heading names the {name!r} grader"


def test_grader_union_is_built_from_the_registry():
    from typing import get_args

    from pydantic import TypeAdapter

    from agentsproof.grading.registry import GraderConfig

    union = get_args(GraderConfig)[0]
    assert get_args(union) == tuple(k.config for k in graders.entries())
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


@pytest.mark.parametrize("name", list(targets.KINDS))
def test_every_target_has_the_constructor_build_target_calls(name):
    from agentsproof.targets.base import TARGET_ARGS

    params = list(inspect.signature(targets.target_class(name)).parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    assert positional == list(TARGET_ARGS), f"{name}: TargetFactory's positional parameters are {TARGET_ARGS}"
    assert {"model", "source"} <= keyword, f"{name}: model and source are keyword-only (TargetFactory)"
    assert all(p.default is not p.empty for p in params if p.kind == p.KEYWORD_ONLY)


def test_builtin_targets_are_the_kinds_that_need_no_settings():
    from pydantic import ValidationError

    from agentsproof.cli.options import target_help
    from agentsproof.targets import config

    builtin = targets.builtin_names()
    assert builtin and config.BUILTIN == {kind: {"type": kind} for kind in builtin}
    for kind, cls in targets.classes().items():
        try:
            cls.spec_model.model_validate({"type": kind})
            alone = True
        except ValidationError:
            alone = False
        assert alone == (kind in builtin), kind
    assert "command" not in builtin  # a command target needs its command
    shown = target_help()
    assert all(f"'{kind}'" in shown for kind in builtin), shown


def test_the_docs_call_built_in_only_targets_that_are():
    text = (Path(__file__).resolve().parent.parent / "docs" / "agent-trials.md").read_text(encoding="utf-8")
    paragraph = text.split("Built-in targets exist without any file:", 1)[1].split("A targets.yaml may", 1)[0]
    named = [n for n in re.findall(r"`([\w-]+)`", paragraph) if n in targets.KINDS]
    assert named and set(named) <= set(targets.builtin_names()), "docs/agent-trials.md names as built-in a target that is not (--help lists them all)"


@pytest.mark.parametrize("name", list(formats.FORMATS))
def test_format_entry(name):
    fmt = _resolve(formats.FORMATS[name])
    assert fmt.name == name
    for method in ("detect", "discoverable", "load"):
        assert callable(getattr(fmt, method))
    shown = {"jsonl": "cases.jsonl"}.get(name, name)
    assert shown in _headings("eval-files.md", "interop.md"), f"docs: no heading names the {name!r} format"


def test_every_format_is_accepted_by_a_command():
    accepted = {n for command in formats.ACCEPTS for n in formats.accepts(command)}
    assert accepted == set(formats.FORMATS)


def test_a_format_no_accepts_line_places_is_tried_before_the_catch_all(tmp_path, monkeypatch):
    """A new format is one module and one FORMATS line: the commands its ``commands`` name
    (default eval, tc-eval, lint) try it before their last format."""
    (tmp_path / "agentsproof_fake_format.py").write_text(
        "from pathlib import Path\n\n"
        "class Fake:\n    name = 'fake'\n    commands = ('tc-eval',)\n"
        "    def detect(self, path):\n        return Path(path).suffix == '.fake'\n"
        "    def discoverable(self, path):\n        return False\n"
        "    def load(self, path, request):\n        raise NotImplementedError\n\n"
        "FORMAT = Fake()\n", encoding="utf-8")
    before = {command: formats.accepts(command) for command in ("tc-eval", "eval")}  # in-tree formats no ACCEPTS line places are in them already
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(formats.FORMATS, "fake", "agentsproof_fake_format:FORMAT")
    try:
        assert formats.accepts("tc-eval") == (*before["tc-eval"][:-1], "fake", formats.ACCEPTS["tc-eval"][-1])
        assert formats.accepts("eval") == before["eval"]  # not one of its commands
        (tmp_path / "cases.fake").write_text("x", encoding="utf-8")
        assert formats.detect(tmp_path / "cases.fake", "tc-eval").name == "fake"
    finally:
        formats.get.cache_clear()


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


# ------------------------------------------------ every definition is registered


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts)


def _defining_modules() -> list[str]:
    """The modules whose source defines a grader, target, provider or format (by what the
    recipes in CONTRIBUTING.md write), found by reading every module of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "sdk" in path.relative_to(PACKAGE).parts:  # the tracing SDK is a leaf with its own FORMAT string
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defines = False
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                func = node.value.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                defines |= bool(names & {"GRADER", "PROVIDER", "FORMAT"}) or called in ("GraderEntry", "ProviderEntry")
            if isinstance(node, ast.ClassDef):
                defines |= any(isinstance(b, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "spec_model" for t in b.targets) for b in node.body)
            if isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "ProviderEntry" for n in ast.walk(node)):
                defines = True  # a factory of specs (llm/byok.py): its module-level results are the specs
        if defines:
            found.append(_module_name(path))
    return found


def _definitions(module_name: str) -> list[tuple[str, str]]:
    """``(registry, "module:ATTR")`` for every grader, target, provider and format ``module_name`` defines."""
    from agentsproof.llm.provider_entry import ProviderEntry

    module = importlib.import_module(module_name)
    out = []
    for attr, value in vars(module).items():
        where = f"{module_name}:{attr}"
        if isinstance(value, GraderEntry):
            out.append(("graders", where))
        elif isinstance(value, ProviderEntry):
            out.append(("providers", where))
        elif attr == "FORMAT" and all(callable(getattr(value, m, None)) for m in ("detect", "discoverable", "load")):
            out.append(("formats", where))
        elif (isinstance(value, type) and issubclass(value, Target) and value.__module__ == module_name
              and getattr(value, "spec_model", None) is not None and not inspect.isabstract(value)):
            out.append(("targets", where))
    return out


def test_the_module_walk_finds_every_kind_of_definition():
    modules = set(_defining_modules())
    for table in (graders.GRADERS, targets.KINDS, formats.FORMATS):
        assert {v.partition(":")[0] for v in table.values()} <= modules
    from agentsproof.llm.registry import ENTRIES

    assert {v.partition(":")[0] for v in ENTRIES.values()} <= modules


def _tables() -> dict[str, dict[str, str]]:
    from agentsproof.llm.registry import ENTRIES

    return {"graders": dict(graders.GRADERS), "targets": dict(targets.KINDS), "formats": dict(formats.FORMATS), "providers": dict(ENTRIES)}


def _unregistered(module_name: str, tables: dict[str, dict[str, str]]) -> list[str]:
    return [f"{where} (add its line to the {registry} registry)" for registry, where in _definitions(module_name) if where not in tables[registry].values()]


@pytest.mark.parametrize("module_name", _defining_modules())
def test_every_definition_is_registered(module_name):
    missing = _unregistered(module_name, _tables())
    assert not missing, f"{module_name} defines what no registry names: {missing}"


@pytest.mark.parametrize(
    ("registry", "name", "module_name"),
    [("graders", "skill_used", "agentsproof.grading.skill_used"), ("targets", "http", "agentsproof.targets.http.target"),
     ("providers", "azure", "agentsproof.llm.byok"), ("formats", "promptfoo", "agentsproof.formats.promptfoo")],
)
def test_a_module_left_out_of_its_registry_is_found(registry, name, module_name):
    tables = _tables()
    line = tables[registry].pop(name)
    assert module_name in _defining_modules()
    assert _unregistered(module_name, tables) == [f"{line} (add its line to the {registry} registry)"]


# ---------------------------------------------------------------- the raw tables stay inside
RAW_TABLES: dict[str, frozenset[str]] = {
    "agentsproof.llm.registry": frozenset({"ENTRIES"}),
    "agentsproof.grading.registry": frozenset({"GRADERS"}),
    "agentsproof.targets.registry": frozenset({"KINDS"}),
    "agentsproof.formats.registry": frozenset({"FORMATS", "ACCEPTS"}),
}
"""Each registry module's in-tree table: ``name in GRADERS`` misses every installed plugin
(the bug that left a plugin grader's lint hook uncalled and its ``logged=False`` ignored)."""


def raw_table_reads(source: str, module_name: str) -> list[str]:
    """Where ``source`` (the module ``module_name``) reads a registry's raw table."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # a local name -> the registry module it is bound to
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if node.module in RAW_TABLES and a.name in RAW_TABLES[node.module]:
                    found.append(f"{module_name}:{node.lineno}: from {node.module} import {a.name}")
                if f"{node.module}.{a.name}" in RAW_TABLES:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in RAW_TABLES and a.asname:
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            module = aliases.get(owner, owner)
            if node.attr in RAW_TABLES.get(module, ()):
                found.append(f"{module_name}:{node.lineno}: {owner}.{node.attr}")
    return found


def test_no_code_outside_a_registry_reads_its_raw_table():
    """Code asks a registry (its ``REGISTRY`` or its functions), which holds the installed
    plugins too; only the registry module itself reads its table."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if name in RAW_TABLES:
            continue
        found += raw_table_reads(path.read_text(encoding="utf-8"), name)
    assert not found, "raw registry tables read outside their registry (ask the registry instead):\n" + "\n".join(found)


def test_the_raw_table_check_sees_each_spelling():
    assert raw_table_reads("from agentsproof.grading.registry import GRADERS, kind\n", "m") == ["m:1: from agentsproof.grading.registry import GRADERS"]
    assert raw_table_reads("from agentsproof.targets import registry as t\nx = 'a' in t.KINDS\n", "m") == ["m:2: t.KINDS"]
    assert raw_table_reads("import agentsproof.llm.registry\nagentsproof.llm.registry.ENTRIES\n", "m") == ["m:2: agentsproof.llm.registry.ENTRIES"]
    assert raw_table_reads("import agentsproof.formats.registry as f\nf.ACCEPTS['eval']\n", "m") == ["m:2: f.ACCEPTS"]
    assert raw_table_reads("from agentsproof.grading import registry\nregistry.kind('x')\nregistry.REGISTRY.has('x')\n", "m") == []
