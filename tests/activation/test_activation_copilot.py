"""``agentsproof activation --target copilot``: the real Copilot CLI (BYOK) on the scripted
server, every skill of the plugin staged as a skill directory; the scripted model calls
Copilot's ``skill`` tool for each skill whose trigger words the prompt names, and the
``skill.invoked`` events say which loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from conftest import Rule, ScriptedServer, read_json
from copilot_cli import cli_cache, copilot_byok  # noqa: F401 - cli_cache is a fixture the module uses
from openai_server import available_skills, skill_loader
from plugins import write_plugin

SECRET = "sk-activation-copilot-secret"


@pytest.fixture
def copilot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_cache: Path) -> Iterator[ScriptedServer]:
    yield from copilot_byok(monkeypatch, tmp_path, cli_cache, SECRET)


def test_copilot_loads_skills_and_the_planted_collision_shows(copilot_env, cli, tmp_path):
    copilot_env.add(Rule(reply=skill_loader(final="done", only_best=False)))
    plugin = write_plugin(tmp_path, planted=True)
    out_dir = tmp_path / "runs"
    code, out, err = cli(["activation", plugin, "--target", "copilot", "--model", "test-model", "--parallel", "2",
                          "--output", out_dir, "--ci"])
    report = read_json(out_dir / "tables-plugin" / "tables-plugin-activation.json")
    assert report["errored"] == 0, [t["error"] for t in report["trial_log"] if t["error"]]
    # Copilot offered all four skills through its skill tool
    offered = [n for n, _ in available_skills(copilot_env.requests[0])]
    assert sorted(offered) == ["chart-builder", "csv-cleanup", "csv-summary", "table-digest"]
    by = {s["skill"]: s for s in report["skills"]}
    fired = {(t["skill"], t["prompt"]["text"]): t["fired"] for t in report["trial_log"]}
    # hand count of the scripted rule: "Describe this dataset." names no skill's trigger words
    assert fired[("csv-summary", "Describe this dataset.")] == []
    assert (by["csv-summary"]["tp"], by["csv-summary"]["fn"], by["csv-summary"]["fp"]) == (2, 1, 0)
    assert (by["chart-builder"]["tp"], by["chart-builder"]["fn"], by["chart-builder"]["fp"]) == (2, 0, 0)
    assert (by["csv-cleanup"]["tp"], by["csv-cleanup"]["fn"], by["csv-cleanup"]["fp"]) == (1, 0, 0)
    # the planted skill loads beside csv-summary on its prompts: a matrix column and the worst pair
    assert sorted(fired[("csv-summary", "Give me a short report of the missing values and outliers in this table.")]) == ["csv-summary", "table-digest"]
    assert report["matrix"]["csv-summary"]["table-digest"] == 2
    worst = report["collisions"][0]
    assert (worst["a"], worst["b"], worst["b_on_a"], worst["a_prompts"]) == ("csv-summary", "table-digest", 2, 3)
    assert "csv-summary ↔ table-digest" in out
    assert code == 1 and "FAILED csv-summary: recall 0.67 < 0.80" in err  # --ci
    assert SECRET not in out + err
