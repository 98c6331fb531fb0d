"""One run plan (agentsproof.commands.plan.plan_run): targets.yaml resolved once, no loaded
item edited, every run command through the same public functions."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
import yaml
from conftest import simple_eval

from agentsproof.commands.plan import item_request, plan_run, run_settings
from agentsproof.commands.run import load_file
from agentsproof.core.errors import InputError
from agentsproof.model.options import RunFlags

ROOT = Path(__file__).resolve().parents[2] / "agentsproof"


def _agent_eval(folder: Path, *, environment: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: counting\ndescription: counts\n---\nCount.\n")
    box = {"image": "agentsproof-test/plan:never", "workdir": "/srv/work"}
    (folder / "targets.yaml").write_text(yaml.safe_dump({"boxed": {"type": "command", "command": ["true"], "timeout": 60, "environment": box}}))
    data = simple_eval(skill="SKILL.md", execution={"mode": "agent", "target": "boxed"}, trials=2)
    if environment is not None:
        data["environment"] = environment
    (folder / "eval.yaml").write_text(yaml.safe_dump(data))
    return folder / "eval.yaml"


def test_the_plan_resolves_the_target_once_and_edits_no_loaded_item(tmp_path: Path) -> None:
    path = _agent_eval(tmp_path / "ev")
    cfg = RunFlags(output=tmp_path / "runs", trials_per_item=3, baseline="none")
    loaded = load_file(path, "eval", item_request(cfg))
    before = [dataclasses.replace(it) for it in loaded.items]
    plan = plan_run("eval", loaded.plugin, loaded.items, cfg, loaded.name, run_settings(cfg))
    assert loaded.items == before and all(it.environment is None for it in loaded.items)  # the loaded items are as loaded
    (item,) = plan.items
    assert item.environment is not None and item.environment.image == "agentsproof-test/plan:never"  # the target's default image
    assert item.arms == ("with",) and item.trials == 3  # --baseline none, --smoke-style trials per item
    assert set(plan.target_defs) == {"boxed"} and plan.target_defs["boxed"].source.endswith("targets.yaml")
    assert plan.reports["json"].is_relative_to(tmp_path / "runs") and plan.journal is not None
    assert not (tmp_path / "runs").exists()  # checked writable, nothing made before the first trial
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.items = ()  # type: ignore[misc]


def test_an_evals_own_environment_wins_and_plan_mode_settles_items_only(tmp_path: Path) -> None:
    path = _agent_eval(tmp_path / "ev", environment={"image": "own:1"})
    cfg = RunFlags(output=tmp_path / "runs")
    loaded = load_file(path, "eval", item_request(cfg))
    plan = plan_run("eval", loaded.plugin, loaded.items, cfg, loaded.name, run_settings(cfg))
    assert plan.items[0].environment is not None and plan.items[0].environment.image == "own:1"
    shown = plan_run("eval", loaded.plugin, loaded.items, cfg.replace(plan=True, target="boxed,other"), loaded.name, run_settings(cfg))
    assert [it.id.rsplit("@", 1)[1] for it in shown.items] == ["boxed", "other"] and shown.reports == {} and shown.target_defs == {}


def test_an_unknown_target_is_one_line_naming_the_eval_file(tmp_path: Path) -> None:
    path = _agent_eval(tmp_path / "ev")
    cfg = RunFlags(output=tmp_path / "runs")
    loaded = load_file(path, "eval", item_request(cfg))
    items = [dataclasses.replace(it, target="nowhere") for it in loaded.items]
    with pytest.raises(InputError) as err:
        plan_run("eval", loaded.plugin, items, cfg, loaded.name, run_settings(cfg))
    assert err.value.field == "execution.target" and "eval.yaml" in str(err.value.source)


def test_no_command_reaches_into_another_commands_private_names() -> None:
    """eval-all, ablate, rerun ... use the public functions of commands.run / commands.plan."""
    offenders = []
    for path in sorted((ROOT / "commands").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentsproof.commands."):
                offenders += [f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert offenders == []


def test_an_environment_for_a_target_that_cannot_run_in_one_is_refused_not_run_on_the_host(tmp_path: Path) -> None:
    """An http target's kind says it does not run in a container (``runs_in_environment``):
    an eval asking for one is one line naming the file and ``environment``; a command target
    (which does) plans the same eval."""
    folder = tmp_path / "ev"
    path = _agent_eval(folder, environment={"image": "own:1"})
    targets = yaml.safe_load((folder / "targets.yaml").read_text())
    targets["remote"] = {"type": "http", "url": "http://127.0.0.1:9/run", "skill_field": "skill", "timeout": 60}
    (folder / "targets.yaml").write_text(yaml.safe_dump(targets))
    cfg = RunFlags(output=tmp_path / "runs")
    loaded = load_file(path, "eval", item_request(cfg))
    assert plan_run("eval", loaded.plugin, loaded.items, cfg, loaded.name, run_settings(cfg)).items[0].environment is not None
    items = [dataclasses.replace(it, target="remote") for it in loaded.items]
    with pytest.raises(InputError) as err:
        plan_run("eval", loaded.plugin, items, cfg, loaded.name, run_settings(cfg))
    assert err.value.field == "environment" and str(err.value.source).endswith("eval.yaml")
    assert "'remote' (type http) does not run in a container" in err.value.message
