"""A matrix run (``--target a,b``) in the HTML and Markdown reports: a "By agent" table with
each item's grade and delta interval per agent, and where the skill helps or hurts; a
run on one target has none. Two real command agents: on ``follows`` the skill makes the
answer right, on ``contrary`` it makes it wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from conftest import make_plugin, read_json, run_cli, simple_eval

AGENT = """\
import os, sys
skill = os.environ.get("AGENTSPROOF_SKILL_FILE")
contrary = sys.argv[1] == "contrary"
print("hello there" if bool(skill) != contrary else "no greeting")
"""


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    targets = tmp_path / "targets.yaml"
    targets.write_text(yaml.safe_dump({
        name: {"type": "command", "command": [sys.executable, str(agent), name], "sandbox": False} for name in ("follows", "contrary")
    }))
    ev = simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=6, instruction="Greet me.")
    ev["execution"] = {"mode": "agent", "target": "follows"}
    root = make_plugin(tmp_path, skills={"greeter": {"prompt": "Always greet with hello.\n", "eval": ev}})
    return root / "skills" / "greeter", targets


def test_the_reports_show_the_agents_side_by_side(tmp_path: Path) -> None:
    d, targets = _setup(tmp_path)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", d, "--output", out, "--target", "follows,contrary", "--targets", targets])
    assert code in (0, 1), stderr
    report = read_json(next(out.rglob("*.json")))
    grades = {it["target"]: it["grade"] for it in report["items"]}
    assert grades == {"follows": "A", "contrary": "F"}, grades
    md = next(out.rglob("*.md")).read_text()
    section = md.split("## By agent", 1)[1].split("\n## ", 1)[0]
    assert "| item | follows | contrary |" in section
    row = next(line for line in section.splitlines() if line.startswith("| greeter |"))
    follows, contrary = [c.strip() for c in row.strip("|").split("|")][1:]
    assert follows.startswith("A +1.00 [") and follows.endswith("(helps)"), row
    assert contrary.startswith("F -1.00 [") and contrary.endswith("(hurts)"), row
    assert "| **the skill helps** | greeter | — |" in section and "| **the skill hurts** | — | greeter |" in section
    html = next(out.rglob("*.html")).read_text()
    table = html.split('id="by-agent"', 1)[1].split("</section>", 1)[0]
    assert "<th>follows</th><th>contrary</th>" in table
    assert 'href="#item-skills-greeter-follows"' in table and 'href="#item-skills-greeter-contrary"' in table
    assert 'id="item-skills-greeter-follows"' in html  # the cells link to the items' drill-downs
    assert ">helps</b>" in table and ">hurts</b>" in table and "+1.00" in table and "-1.00" in table
    assert "by agent:" in stdout


def test_a_run_on_one_target_has_no_by_agent_section(tmp_path: Path) -> None:
    d, targets = _setup(tmp_path)
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", d, "--output", out, "--target", "follows", "--targets", targets])
    assert code == 0, stderr
    assert "## By agent" not in next(out.rglob("*.md")).read_text()
    assert 'id="by-agent"' not in next(out.rglob("*.html")).read_text()
