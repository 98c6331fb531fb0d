"""The project, not the eval's folder, is the boundary (core/project.py): on a copy of
agentv's red-team suite (tests/data/agentv-real, MIT) whose judge prompt is
``../graders/refusal.md``, and agentv's ``/plugins/...`` paths, end to end on the scripted
server; never outside the project, never through a symlink that leads out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from agentsproof.core.project import project_root, resolve_ref, set_root
from conftest import Rule, run_cli

REDTEAM = Path(__file__).resolve().parents[1] / "data" / "agentv-real" / "examples" / "red-team"


@pytest.fixture(autouse=True)
def _no_root_left():
    set_root(None)  # --root lasts for one command; these tests also call the functions directly
    yield
    set_root(None)


def _redteam(tmp_path: Path) -> Path:
    root = tmp_path / "red-team"
    shutil.copytree(REDTEAM / "suites", root / "suites")
    shutil.copytree(REDTEAM / "graders", root / "graders")
    return root / "suites" / "llm08-vector-embedding.eval.yaml"


def _run(byok_env, suite: Path, out: Path, *extra: str) -> tuple[int, str]:
    byok_env.add(Rule(reply="I will not share keys; rotate them in the dashboard.", judge=False))
    byok_env.add(Rule(reply='{"reasoning": "refused", "passed": true, "score": 1.0}', judge=True))
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache", *extra])
    return code, err


@pytest.mark.parametrize("marker", [".git", ".agentv", "promptfooconfig.yaml"])
def test_a_judge_prompt_beside_the_suites_folder_is_read_inside_a_marked_project(byok_env, tmp_path, marker):
    suite = _redteam(tmp_path)
    target = tmp_path / marker
    target.mkdir() if marker != "promptfooconfig.yaml" else target.write_text("prompts: []\n")
    code, err = _run(byok_env, suite, tmp_path / "out")
    assert code in (0, 1), err
    assert any("grading whether an AI agent **refused**" in json.dumps(r["messages"]) for r in byok_env.judge_requests())


def test_root_and_the_current_folder_make_a_project_and_nothing_leaves_it(byok_env, tmp_path, monkeypatch):
    suite = _redteam(tmp_path)
    code, err = _run(byok_env, suite, tmp_path / "out0")  # no marker, run from elsewhere: the eval's own folder
    assert code == 30 and "tests[0].assert[1].prompt: '../graders/refusal.md' is outside the eval's folder" in err, err
    code, err = _run(byok_env, suite, tmp_path / "out1", "--root", str(tmp_path / "red-team"))
    assert code in (0, 1), err
    monkeypatch.chdir(tmp_path / "red-team")  # agentv's fallback: the folder it runs in
    code, err = _run(byok_env, suite, tmp_path / "out2")
    assert code in (0, 1), err
    code, err = _run(byok_env, suite, tmp_path / "out3", "--root", str(tmp_path / "red-team" / "suites"))
    assert code == 30 and "is outside the project root" in err and "(--root / AGENTSPROOF_ROOT)" in err, err


def test_agentvs_slash_paths_are_read_from_the_project_root_never_the_file_systems(tmp_path):
    """agentv's skill-selection evals name ``/plugins/agentv-dev/skills/x/SKILL.md``."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "plugins" / "demo").mkdir(parents=True)
    (tmp_path / "plugins" / "demo" / "SKILL.md").write_text("# demo\n")
    evals = tmp_path / "evals" / "skills"
    evals.mkdir(parents=True)
    suite = evals / "skill-selection.eval.yaml"
    suite.write_text("x")
    assert project_root(suite) == tmp_path.resolve()
    assert resolve_ref("/plugins/demo/SKILL.md", suite, "f", search_up=True) == (tmp_path / "plugins" / "demo" / "SKILL.md").resolve()
    assert resolve_ref("../../plugins/demo/SKILL.md", suite, "f", search_up=True).name == "SKILL.md"
    with pytest.raises(InputError, match="'/etc/hostname' not found"):  # never the file system's /etc
        resolve_ref("/etc/hostname", suite, "f", search_up=True)
    with pytest.raises(InputError, match="is an absolute path"):  # other formats: an absolute path is refused
        resolve_ref("/plugins/demo/SKILL.md", suite, "f")


def test_a_symlink_leading_out_of_the_project_is_refused(tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (tmp_path / "secret.md").write_text("secret")
    (project / "graders").mkdir()
    (project / "graders" / "judge.md").symlink_to(tmp_path / "secret.md")
    suite = project / "suites" / "x.eval.yaml"
    suite.parent.mkdir()
    suite.write_text("x")
    with pytest.raises(InputError) as err:
        resolve_ref("../graders/judge.md", suite, "tests[0].assert[0].prompt", search_up=True)
    assert "a symlink leads out of it" in err.value.message and err.value.field == "tests[0].assert[0].prompt"
    with pytest.raises(InputError, match="it leads out of it"):
        resolve_ref("../../secret.md", suite, "f", search_up=True)


def test_the_root_setting_names_the_project(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    suite = tmp_path / "a" / "b" / "x.eval.yaml"
    monkeypatch.setenv("AGENTSPROOF_ROOT", str(tmp_path / "a"))
    assert project_root(suite) == (tmp_path / "a").resolve()
    monkeypatch.setenv("AGENTSPROOF_ROOT", str(tmp_path / "missing"))
    with pytest.raises(InputError, match="AGENTSPROOF_ROOT: folder"):
        project_root(suite)


def test_the_home_folder_is_never_a_project_by_being_the_current_folder(tmp_path, monkeypatch):
    """Run from home with no repository around: a suite cannot reach ``~/.ssh`` through ``..``."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("key")
    suite = tmp_path / "work" / "suites" / "x.eval.yaml"
    suite.parent.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert project_root(suite) == suite.parent.resolve()
    with pytest.raises(InputError, match="outside the eval's folder"):
        resolve_ref("../../.ssh/id_rsa", suite, "f", search_up=True)
    monkeypatch.chdir(tmp_path / "work")  # a folder below home: that one is the project
    assert project_root(suite) == (tmp_path / "work").resolve()
