"""eval.yaml models and loader (pure logic, real files)."""

from __future__ import annotations

import pytest

from agentsproof.formats.eval_yaml.models import DEFAULT_THRESHOLD, DEFAULT_TIMEOUT, DEFAULT_TRIALS, load_eval, parse_eval_config
from agentsproof.formats.layout import discover_evals
from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.core.errors import InputError
from conftest import make_plugin, simple_eval


def test_defaults_match_the_spec():
    cfg = parse_eval_config({"skill": "S.md", "task": simple_eval()["task"]}, "x.yaml")
    assert cfg.version == "2"
    assert (cfg.defaults.trials, cfg.defaults.timeout, cfg.defaults.threshold) == (DEFAULT_TRIALS, DEFAULT_TIMEOUT, DEFAULT_THRESHOLD)
    assert (DEFAULT_TRIALS, DEFAULT_TIMEOUT, DEFAULT_THRESHOLD) == (1, 300.0, 0.6)
    assert cfg.kind == "skill" and cfg.source == "S.md"


def test_list_shorthand_is_must_contain():
    g = parse_eval_config({"skill": "S.md", "task": simple_eval([{"type": "deterministic", "checks": ["a", "b"]}])["task"]}, "x").primary_task.graders[0]
    assert isinstance(g, DeterministicGrader)
    assert g.checks.mustContain == ["a", "b"] and g.checks.mustNotContain == [] and g.checks.regexMatch == []
    assert g.checks.caseSensitive is False and g.weight == 1.0


def test_v1_first_task_is_primary():
    data = {"version": 1, "agent": "a.md", "tasks": [dict(simple_eval()["task"], name="first"), dict(simple_eval()["task"], name="second")]}
    cfg = parse_eval_config(data, "x")
    assert cfg.version == "1" and cfg.kind == "agent" and cfg.primary_task.name == "first"


def test_weights_and_grader_types():
    graders = [
        {"type": "deterministic", "checks": {"regexMatch": [r"\d+"]}, "weight": 0.7},
        {"type": "llm_rubric", "rubric": "good", "weight": 0.3},
        {"type": "assertions", "assertions": ["x"], "weight": 2},
    ]
    gs = parse_eval_config({"skill": "S.md", "task": simple_eval(graders)["task"]}, "x").primary_task.graders
    assert [type(g).__name__ for g in gs] == ["DeterministicGrader", "LLMRubricGrader", "AssertionsGrader"]
    assert [g.weight for g in gs] == [0.7, 0.3, 2.0]
    assert isinstance(gs[1], LLMRubricGrader)


@pytest.mark.parametrize("weight", [0, -1, -0.0001])
def test_non_positive_weights_rejected(weight):
    with pytest.raises(InputError) as err:
        parse_eval_config({"skill": "S.md", "task": simple_eval([{"type": "llm_rubric", "rubric": "r", "weight": weight}])["task"]}, "f.yaml")
    assert err.value.source == "f.yaml" and err.value.field == "task.graders[0].weight"


def test_load_eval_reads_source_and_names(tmp_path):
    plugin = make_plugin(tmp_path, skills={"my-skill": {"prompt": "Be precise.\n", "eval": simple_eval()}})
    ev = load_eval(plugin / "skills/my-skill/eval.yaml")
    assert ev.name == "my-skill" and ev.kind == "skill"
    assert ev.source_text == "Be precise.\n"
    assert ev.source_path == (plugin / "skills/my-skill/SKILL.md").resolve()


def test_name_key_overrides_folder(tmp_path):
    plugin = make_plugin(tmp_path, skills={"folder": {"eval": simple_eval(name="Display")}})
    assert load_eval(plugin / "skills/folder/eval.yaml").name == "Display"


def test_discover_finds_skills_and_agents_sorted_and_skips_runs(tmp_path):
    plugin = make_plugin(tmp_path, skills={"b": {"eval": simple_eval()}, "a": {"eval": simple_eval()}}, agents={"z": {"eval": simple_eval()}})
    (plugin / "runs" / "old").mkdir(parents=True)
    (plugin / "runs" / "old" / "eval.yaml").write_text("not: valid")
    found = discover_evals(plugin)
    assert [p.parent.name for p in found] == ["z", "a", "b"]  # agents/ sorts before skills/


def test_skill_path_relative_to_yaml(tmp_path):
    d = tmp_path / "e"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "shared.md").write_text("shared skill\n")
    (d / "eval.yaml").write_text("skill: sub/../sub/shared.md\ntask:\n  name: t\n  instruction: i\n  graders:\n    - type: deterministic\n      checks: [x]\n")
    assert load_eval(d / "eval.yaml").source_text == "shared skill\n"


def test_skill_path_may_not_leave_the_eval_folder(tmp_path):
    d = tmp_path / "e"
    d.mkdir()
    (tmp_path / "shared.md").write_text("shared skill\n")
    (d / "eval.yaml").write_text("skill: ../shared.md\ntask:\n  name: t\n  instruction: i\n  graders:\n    - type: deterministic\n      checks: [x]\n")
    with pytest.raises(InputError, match=r"skill: '../shared.md' is outside the eval's folder"):
        load_eval(d / "eval.yaml")


def test_eval_in_a_skills_evals_folder_may_name_the_skill_above(tmp_path):
    skill = tmp_path / "skills" / "s"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("the skill\n")
    (skill / "evals" / "eval.yaml").write_text("skill: ../SKILL.md\ntask:\n  name: t\n  instruction: i\n  graders:\n    - type: deterministic\n      checks: [x]\n")
    assert load_eval(skill / "evals" / "eval.yaml").source_text == "the skill\n"
