"""skill-creator files as real projects write them (copies under tests/data/skill-creator-wild,
each project's licence beside it): a top-level list of cases with ``expect``/``fail``, keys
that change nothing (``description_version``, ``command``, ``role``), a ``skill_name`` that is
only a label, a fixture that is a folder, one written from the repository's parent, a missing
fixture (that case errors, the others run), ``should_trigger`` cases and skill-creator's
trigger evals (``[{query, should_trigger}]``), which run as an activation suite. Every run is
end to end on the scripted server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Rule, only_report, read_json, run_cli
from openai_server import skill_loader

DATA = Path(__file__).resolve().parents[1] / "data" / "skill-creator-wild"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def _tc_eval(path: Path, out: Path, codes: tuple[int, ...] = (0, 1)) -> tuple[dict, str]:
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in codes, err
    assert "Traceback" not in err
    return only_report(out), err


def test_licence_notices_are_kept_beside_the_copies():
    """Each project's licence sits at the top of its copy."""
    for folder in DATA.iterdir():
        if folder.is_dir():
            text = (folder / "LICENSE").read_text()
            assert "MIT License" in text or "Apache License" in text, folder


def test_a_list_of_cases_with_expect_and_fail_runs(byok_env, tmp_path):
    """0vulns/ad-takeover-skill: no skill_name, string ids, ``expect`` and ``fail`` lists."""
    root = _copy(tmp_path, "0vulns__ad-takeover-skill")
    data, err = _tc_eval(root / "evals" / "evals.json", tmp_path / "out")
    assert sorted(it["name"] for it in data["items"]) == ["case blank-htb", "case mcp-first"]
    assert all(it["with_arm"]["scored"] == 1 for it in data["items"])
    assert "a list of cases with no skill_name: the skill is the SKILL.md above this evals/ folder" in err
    judged = "\n".join(str(r["messages"]) for r in byok_env.judge_requests())
    cases = json.loads((root / "evals" / "evals.json").read_text())
    assert cases[0]["expect"][0] in judged  # an expect entry is judged as an assertion
    assert "The response does not do this: " + cases[0]["fail"][0] in judged  # a fail entry, as its negation


def test_keys_that_change_nothing_are_notes_and_object_checks_are_judged(byok_env, tmp_path):
    """4i7/knowledge-distiller: description_version, quantitative_metrics, execution_notes;
    assertions written as ``{name, check}``."""
    root = _copy(tmp_path, "4i7__knowledge-distiller")
    data, err = _tc_eval(root / "evals" / "evals.json", tmp_path / "out")
    assert len(data["items"]) == 2
    for key in ("description_version", "quantitative_metrics", "execution_notes"):
        assert f"{key}: not a key skill-creator's evals.json reads; it changes nothing measured, ignored" in err
    judged = "\n".join(str(r["messages"]) for r in byok_env.judge_requests())
    first = json.loads((root / "evals" / "evals.json").read_text())["evals"][0]["assertions"][0]
    assert first["check"] in judged
    code, out, err = run_cli(["lint", root / "evals" / "evals.json"])
    assert code == 0, out + err  # warnings only
    assert "description_version" in out and "[read-as]" in out


def test_a_skill_name_that_is_a_label_and_a_fixture_that_is_a_folder(byok_env, tmp_path):
    """1273984347/deep-review-loop: the folder's files are attached, each by its path."""
    root = _copy(tmp_path, "1273984347__deep-review-loop")
    data, err = _tc_eval(root / "evals" / "evals.json", tmp_path / "out")
    assert data["items"][0]["with_arm"]["scored"] == 1
    sent = "\n".join(str(r["messages"]) for r in byok_env.trial_requests())
    for name in ("plan.md", "server.ts", "src/api.ts"):
        assert f"--- evals/fixtures/eval-1-false-convergence/{name} ---" in sent, name
    api = (root / "evals" / "fixtures" / "eval-1-false-convergence" / "src" / "api.ts").read_text().strip().splitlines()[0]
    assert api in sent


def test_a_fixture_written_from_the_repositorys_parent_is_read_below_the_eval(byok_env, tmp_path):
    """3shn/skill-sysml: ``sysml/evals/fixtures/x`` from a repository checked out as ``sysml``;
    the skill is ``skills/sysml-copilot`` beside the evals/ folder."""
    root = _copy(tmp_path, "3shn__skill-sysml")
    data, err = _tc_eval(root / "evals" / "evals.json", tmp_path / "out")
    assert all(it["with_arm"]["scored"] == 1 for it in data["items"])
    assert "'sysml/evals/fixtures/broken_vehicle.sysml' is not there; read" in err
    sent = "\n".join(str(r["messages"]) for r in byok_env.trial_requests())
    assert "part deff" in sent  # the fixture's text reached the prompt


def test_a_missing_fixture_errors_that_case_and_the_others_run(byok_env, tmp_path):
    """Adityaraj0421/design-studio: case 72 names commands/email-audit.md, which the
    repository does not have; case 80 carries skill-creator-unknown ``command`` and ``role``."""
    root = _copy(tmp_path, "Adityaraj0421__design-studio")
    data, err = _tc_eval(root / "evals" / "evals.json", tmp_path / "out", codes=(30,))  # a run with errored trials exits 30
    by = {it["id"]: it for it in data["items"]}
    missing = by["case-72"]
    assert missing["with_arm"]["scored"] == 0 and missing["with_arm"]["errored"] == 1
    reasons = json.dumps(missing)
    assert "evals[0].files[0]" in reasons and "commands/email-audit.md" in reasons and "not found" in reasons
    assert by["case-80"]["with_arm"]["scored"] == 1
    assert "evals[1].command: not a key skill-creator's evals.json reads" in err and "evals[1].role" in err
    assert not any("Lumina Beauty" in str(r["messages"]) for r in byok_env.trial_requests())  # the errored case never ran


def test_should_trigger_cases_and_a_skill_in_an_agent_folder(byok_env, tmp_path):
    """agentv's csv-analyzer.evals.json: the skill is in workspace/.claude/skills/; case 2 only
    says the skill should not load: an activation prompt, not a graded case."""
    root = _copy(tmp_path, "agentv-agent-skills-evals")
    byok_env.add(Rule(reply=skill_loader(), judge=False))
    data, err = _tc_eval(root / "csv-analyzer.evals.json", tmp_path / "out")
    assert [it["id"] for it in data["items"]] == ["case-1"]
    assert "2 case(s) with should_trigger: whether the skill loads is an activation suite" in err
    assert "has should_trigger cases: tc-eval runs them as an activation suite" in err  # and it does, before the cases
    assert read_json(tmp_path / "out" / "csv-analyzer" / "csv-analyzer-activation.json")["trials"] == 2
    code, out, err = run_cli(["activation", root / "csv-analyzer.evals.json", "--model", "m", "--output", tmp_path / "act"])
    assert code == 0, err
    report = read_json(tmp_path / "act" / "csv-analyzer" / "csv-analyzer-activation.json")
    assert report["trials"] == 2 and report["errored"] == 0
    offered = [r for r in byok_env.requests if "<available_skills>" in str(r["messages"])]
    assert any("What time is it?" in str(r["messages"]) for r in offered)


TRIGGERS = [
    {"query": "Summarise the revenue columns of sales.csv for me", "should_trigger": True},
    {"query": "Which month had the highest revenue in this CSV?", "should_trigger": True},
    {"query": "Find the top 3 months by revenue in the sales data", "should_trigger": True},
    {"query": "What time is it?", "should_trigger": False},
    {"query": "Write a haiku about autumn", "should_trigger": False},
    {"query": "Translate 'good morning' into French", "should_trigger": False},
]


@pytest.mark.parametrize("wrapped", [False, True])
def test_trigger_evals_run_as_an_activation_suite(byok_env, tmp_path, wrapped):
    """skill-creator's trigger evals (SKILL.md "Generate trigger eval queries"), as a plain list
    and wrapped in an object: tc-eval says it runs them as an activation suite and does."""
    root = _copy(tmp_path, "agentv-agent-skills-evals")
    skill = root / "workspace" / ".claude" / "skills" / "csv-analyzer"
    (skill / "evals").mkdir()
    path = skill / "evals" / "trigger-evals.json"
    path.write_text(json.dumps({"skill_name": "csv-analyzer", "evals": TRIGGERS} if wrapped else TRIGGERS))
    byok_env.add(Rule(reply=skill_loader()))
    code, out, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    assert "is skill-creator trigger evals ({query, should_trigger}): tc-eval runs them as an activation suite" in err
    report = read_json(tmp_path / "runs" / "csv-analyzer" / "csv-analyzer-activation.json")
    assert report["trials"] == len(TRIGGERS) and report["errored"] == 0
    asked = [str(r["messages"]) for r in byok_env.requests if "<available_skills>" in str(r["messages"])]
    assert all(any(t["query"] in a for a in asked) for t in TRIGGERS)


def test_tune_description_reads_trigger_evals(tmp_path):
    """tune-description FILE (and a SKILL_DIR whose evals/ holds trigger evals) finds the suite."""
    from agentsproof.commands.tune import find_suite

    root = _copy(tmp_path, "agentv-agent-skills-evals")
    skill = root / "workspace" / ".claude" / "skills" / "csv-analyzer"
    (skill / "evals").mkdir()
    path = skill / "evals" / "trigger-evals.json"
    path.write_text(json.dumps(TRIGGERS))
    for given in (path, skill):
        suite, skills, source = find_suite(given)
        assert source.resolve() == (skill / "SKILL.md").resolve()
        assert [p.text for p in suite.should] == [t["query"] for t in TRIGGERS if t["should_trigger"]]
        assert len(suite.should_not) == 3 and suite.skill.name == "csv-analyzer"


def test_a_trigger_eval_file_is_not_read_as_cases(tmp_path):
    """convert and the evals.json loader say what the file is instead of refusing its shape."""
    root = _copy(tmp_path, "agentv-agent-skills-evals")
    path = root / "triggers.json"
    path.write_text(json.dumps(TRIGGERS))
    code, out, err = run_cli(["convert", path, "--to", "EVAL.yaml"])
    assert code == 30 and "skill-creator trigger-eval set" in err and "agentsproof activation" in err


def test_convert_round_trip_names_what_it_leaves_out(tmp_path):
    """csv-analyzer.evals.json → EVAL.yaml → evals.json: the should_trigger prompts are named
    as left out, and the way back finds the skill by the suite's name."""
    root = _copy(tmp_path, "agentv-agent-skills-evals")
    code, _, err = run_cli(["convert", root / "csv-analyzer.evals.json", "--to", "EVAL.yaml", "--out", root / "c.eval.yaml"])
    assert code == 0, err
    assert "should_trigger" in err and "activation prompt; it is left out" in err
    code, _, err = run_cli(["convert", root / "c.eval.yaml", "--to", "evals-json", "--out", root / "back.evals.json"])
    assert code == 0, err
    assert json.loads((root / "back.evals.json").read_text())["skill_name"] == "csv-analyzer"


def test_lint_reads_trigger_evals_as_an_activation_suite(tmp_path):
    """lint on trigger evals: a warning saying what runs them (exit 0); with no skill to find, an error."""
    root = _copy(tmp_path, "agentv-agent-skills-evals")
    skill = root / "workspace" / ".claude" / "skills" / "csv-analyzer"
    (skill / "evals").mkdir()
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(TRIGGERS))
    code, out, err = run_cli(["lint", skill / "evals" / "trigger-evals.json"])
    assert code == 0 and "activation suite of 'csv-analyzer' (3 should, 3 should not)" in out, out + err
    (root / "lonely.json").write_text(json.dumps(TRIGGERS))
    code, out, err = run_cli(["lint", root / "lonely.json"])
    assert code == 1 and "no skill for these trigger evals" in out + err, out + err
