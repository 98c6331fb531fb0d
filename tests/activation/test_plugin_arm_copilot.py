"""The plugin arm with the real Copilot CLI (BYOK, scripted server): every skill of the
plugin is staged as a skill directory; the planted collider is what Copilot invokes on
csv-summary's task, and the interference verdict says so."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from conftest import Rule, ScriptedServer, read_json
from copilot_cli import cli_cache, copilot_byok  # noqa: F401 - cli_cache is a fixture the module uses
from openai_server import available_skills, skill_loader
from test_plugin_arm import answer, plugin_with_task

SECRET = "sk-plugin-arm-copilot-secret"


@pytest.fixture
def copilot_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_cache: Path) -> Iterator[ScriptedServer]:
    yield from copilot_byok(monkeypatch, tmp_path, cli_cache, SECRET)


def test_copilot_plugin_arm_shows_the_collider(copilot_env, cli, tmp_path):
    copilot_env.add(Rule(reply=skill_loader(final=answer)))
    plugin = plugin_with_task(tmp_path, planted=True)
    out_dir = tmp_path / "runs"
    code, out, err = cli(["eval", plugin / "skills" / "csv-summary" / "eval.yaml", "--target", "copilot", "--model", "test-model",
                          "--trials", "4", "--parallel", "3", "--arms", "baseline,skill,plugin", "--output", out_dir])
    assert code == 0, err
    item = read_json(next(out_dir.rglob("*-eval.json")))["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0
    plugin_trials = item["plugin_arm"]["trials"]
    assert [t["status"] for t in plugin_trials] == ["scored"] * 4
    assert all(t["skills_invoked"] == ["table-digest"] and t["skill_used"] is False for t in plugin_trials)
    inf = item["interference"]
    assert inf["difference"] == -1.0 and inf["siblings_loaded"] == {"table-digest": 4} and inf["verdict"] == "interferes"
    offered = {n for req in copilot_env.requests for n, _ in available_skills(req)}
    assert offered == {"chart-builder", "csv-cleanup", "csv-summary", "table-digest"}
    assert SECRET not in out + err
