"""``agentsproof.plugin`` is the one module a plugin imports (issue 47, item 4): the example
plugin and docs/plugins.md use only it, and every name it promises is there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import agentsproof.plugin as api

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugin"


def foreign_imports(source: str, where: str) -> list[str]:
    """The imports of agentsproof in ``source`` other than ``agentsproof.plugin``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] if node.module != "agentsproof" else [f"agentsproof.{a.name}" for a in node.names]
        found += [f"{where}:{node.lineno}: {n}" for n in names if (n == "agentsproof" or n.startswith("agentsproof.")) and n != "agentsproof.plugin"]
    return found


def test_the_example_plugin_imports_only_the_plugin_api():
    files = sorted(EXAMPLE.rglob("*.py"))
    assert files, "examples/plugin has no Python modules"
    found = [f for path in files for f in foreign_imports(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not found, "examples/plugin imports agentsproof's internals (use agentsproof.plugin):\n" + "\n".join(found)
    assert any("agentsproof.plugin" in path.read_text(encoding="utf-8") for path in files)


def test_docs_plugins_names_only_the_plugin_api():
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    assert not foreign_imports(code, "docs/plugins.md") if code else True
    # the module paths a plugin would import: only agentsproof.plugin (the registries' files are named as files)
    named = set(re.findall(r"`(agentsproof\.[\w.]+)`", text))
    assert named == {"agentsproof.plugin"} | {n for n in named if n.startswith(("agentsproof.providers", "agentsproof.graders", "agentsproof.targets", "agentsproof.formats"))}, named


def test_the_check_sees_each_spelling():
    assert foreign_imports("from agentsproof.plugin import GraderEntry\nimport agentsproof.plugin\n", "m") == []
    assert foreign_imports("from agentsproof.grading.base import GraderEntry\n", "m") == ["m:1: agentsproof.grading.base"]
    assert foreign_imports("import agentsproof.model.results as r\n", "m") == ["m:1: agentsproof.model.results"]
    assert foreign_imports("from agentsproof import plugin, targets\n", "m") == ["m:1: agentsproof.targets"]
    assert foreign_imports("def f():\n    from agentsproof.core.errors import InputError\n", "m") == ["m:2: agentsproof.core.errors"]


def test_every_promised_name_is_there():
    assert api.__all__ and len(set(api.__all__)) == len(api.__all__)
    missing = [n for n in api.__all__ if not hasattr(api, n)]
    assert not missing
    public = {n for n in vars(api) if not n.startswith("_") and n != "annotations"}
    assert public == set(api.__all__), public ^ set(api.__all__)
    # what each kind of plugin builds on
    for name in ("GraderEntry", "GradeInput", "GraderResult", "CheckResult", "Strict", "Target", "TrialInput", "TrialRecord",
                 "ProviderEntry", "LLMClient", "InputFormat", "ItemRequest", "Loaded", "EvalItem", "Finding", "LintCase"):
        assert name in api.__all__, name
    assert set(api.ENTRY_POINT_GROUPS.values()) == {"agentsproof.providers", "agentsproof.graders", "agentsproof.targets", "agentsproof.formats"}
