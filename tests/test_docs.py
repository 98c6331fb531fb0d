"""Every command has --help with an example and appears in the README; the README stays
short; docs/cli.md is the current --help; every relative link in the docs resolves."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from agentsproof.cli import main
from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMMANDS = sorted(main.commands)


def test_the_spec_commands_exist():
    assert {"eval", "eval-all", "tc-eval", "eval-generate"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_an_example(command):
    code, out, err = run_cli([command, "--help"])
    assert code == 0, err
    assert "Example" in out, f"`agentsproof {command} --help` shows no example"
    assert f"agentsproof {command}" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_documents_command(command):
    text = README.read_text(encoding="utf-8")
    assert f"agentsproof {command}" in text, f"README.md never shows `agentsproof {command}`"


def test_top_level_help_lists_every_command():
    code, out, _ = run_cli(["--help"])
    assert code == 0
    for command in COMMANDS:
        assert command in out


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into docs/ (at most 200)"


def _cli_docs():
    spec = importlib.util.spec_from_file_location("cli_docs", ROOT / "scripts" / "cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_md_is_the_current_help():
    cli_docs = _cli_docs()
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == cli_docs.render(), "docs/cli.md is stale: run python scripts/cli_docs.py"
    for command in COMMANDS:
        assert f"## agentsproof {command}\n" in current


def test_cli_md_ignores_the_terminal_width(monkeypatch):
    cli_docs = _cli_docs()
    expected = cli_docs.render()
    monkeypatch.setenv("COLUMNS", "40")
    assert cli_docs.render() == expected


_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\S\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _doc_files() -> list[Path]:
    return [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_links(text: str) -> list[str]:
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    targets = _LINK.findall(text) + _REF_LINK.findall(text)
    return [t for t in targets if not _SCHEME.match(t) and not t.startswith("#")]


def test_link_finder_sees_links_but_not_code():
    text = (
        "[a](docs/x.md#y) ![i](img.png) [w](https://e.org) [s](#top)\n"
        "`[c](no.md)`\n```\n[d](no.md)\n```\n[r]: ref.md\n"
    )
    assert _relative_links(text) == ["docs/x.md#y", "img.png", "ref.md"]


@pytest.mark.parametrize("doc", _doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    if not doc.is_file():
        pytest.skip(f"{doc.name} does not exist")
    broken = []
    for target in _relative_links(doc.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not (doc.parent / path).exists():
            broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)} links to missing files: {broken}"


def test_headings_are_read_outside_code_fences():
    from docs_text import markdown_headings

    text = (
        "# Title\n\n```yaml\n# a comment, not a heading\ngraders: []\n```\n"
        "## `real`\n~~~~\n# inside a tilde fence\n```\n# still inside (a shorter fence of another kind)\n~~~~\n"
        "#not-a-heading (no space)\n### Last\n"
    )
    assert markdown_headings(text) == ["# Title", "## `real`", "### Last"]
