"""The docs' Python examples that say they run (``<!-- runs: tests/test_doc_examples.py -->``
on the line before a ```python fence) are executed here, as a reader would paste them.

Each runs in a fresh folder in which ``agentsproof eval-all demo-plugin`` has just written
its reports to ``runs/`` (a quick eval on the scripted server), so an example may read
``runs/demo-plugin/...``. A renamed module or field then fails here instead of in a
reader's terminal.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- runs: tests/test_doc_examples.py -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
# Docs every ```python block of which must run (the other docs' examples need a server, a key or an agent).
ALL_RUN = ("docs/report-schema.md",)


def _blocks(text: str) -> list[tuple[int, bool, str]]:
    """Every ```python block of a Markdown text: (line, marked to run, code)."""
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        out.append((text.count("\n", 0, m.start()) + 1, before == MARK, m.group(1)))
    return out


def _docs() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


EXAMPLES = [
    pytest.param(doc, code, id=f"{doc.relative_to(ROOT)}:{line}")
    for doc in _docs()
    for line, marked, code in _blocks(doc.read_text(encoding="utf-8"))
    if marked
]


def test_the_block_finder_reads_marks_and_fences():
    text = f"intro\n\n{MARK}\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n```bash\nls\n```\n"
    assert _blocks(text) == [(4, True, "x = 1\n"), (8, False, "y = 2\n")]


def test_docs_that_must_run_mark_every_python_block():
    for rel in ALL_RUN:
        blocks = _blocks((ROOT / rel).read_text(encoding="utf-8"))
        assert blocks, f"{rel} has no ```python block"
        unmarked = [line for line, marked, _ in blocks if not marked]
        assert not unmarked, f"{rel}: the ```python blocks at lines {unmarked} are not marked {MARK}"
    assert len(EXAMPLES) >= 2


@pytest.fixture
def run_folder(byok_env, tmp_path, monkeypatch) -> Path:
    """A folder holding ``demo-plugin/`` and the ``runs/`` its eval-all just wrote."""
    byok_env.add(Rule(reply="hello from the skill", system_contains="You are the"), Rule(reply="no greeting"))
    monkeypatch.chdir(tmp_path)
    make_plugin(tmp_path, skills={f"s{i}": {"eval": simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=2)} for i in range(2)})
    code, _, err = run_cli(["eval-all", "demo-plugin", "--model", "m"])
    assert code == 0, err
    assert (tmp_path / "runs" / "demo-plugin" / "eval-all-summary.json").is_file()
    return tmp_path


@pytest.mark.parametrize(("doc", "code"), EXAMPLES)
def test_doc_example_runs(doc: Path, code: str, run_folder: Path):
    out = io.StringIO()
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(doc), "exec"), namespace)  # noqa: S102 - the docs' own examples
    # what the examples say they give
    printed = out.getvalue()
    if "RunResult.model_validate_json" in code:
        report = read_json(run_folder / "runs" / "demo-plugin" / "eval-all-summary.json")
        for item in report["items"]:
            assert f"{item['id']} {item['grade']} {item['delta']} 2 2" in printed, printed
        assert printed.rstrip().endswith(f"{report['verdict']} {report['overall']['avg_delta']}")
    if "render_json_schema" in code:
        assert isinstance(namespace["schema"], dict) and namespace["schema"]["title"] == "RunResult"
        assert json.loads(str(namespace["text"])) == namespace["schema"]
