"""skill-creator evals.json files as they are found in public repositories: per-eval
``name``/``category``/``kind``, assertions written as objects (``{"text"}``, ``{"id", "text"}``,
``{"name", "description"}``), top-level ``description``/``version``/``notes``, and the evals kept
apart from the skill (``evals/<skill>/evals.json`` beside ``skills/<skill>/SKILL.md``); each runs
end to end on the scripted server, through ``tc-eval`` and ``eval`` alike."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule, read_json, run_cli

SKILL = (
    "---\nname: invoice-reader\ndescription: Read totals and due dates from invoices\n---\n\n"
    "Read the invoice; answer 'TOTAL <amount> DUE <date>'.\n"
)
INVOICE = "ACME Corp\nInvoice 1042\nTotal: 118.40 EUR\nDue: 2026-01-31\n"


def _real_file(skill_name: str = "invoice-reader", files: str = "evals/files/invoice.txt") -> dict:
    """Written as the public ones are: several evals, extra keys, object assertions."""
    return {
        "skill_name": skill_name,
        "description": "Evals for the invoice reader",
        "version": "1.2",
        "notes": "run with skill-creator's eval loop",
        "evals": [
            {
                "id": 1,
                "name": "total-and-due-date",
                "category": "extraction",
                "kind": "happy-path",
                "prompt": "What is the total and the due date of the attached invoice?",
                "expected_output": "TOTAL 118.40 EUR DUE 2026-01-31",
                "files": [files],
                "expectations": [{"id": "a1", "text": "The output gives the total 118.40 EUR"}, {"text": "The output gives the due date 2026-01-31"}],
            },
            {
                "id": 2,
                "name": "no-invoice",
                "category": "edge",
                "prompt": "Read this invoice: (nothing attached)",
                "assertions": [{"name": "asks", "description": "The output says no invoice was given"}],
            },
            {"id": 3, "prompt": "Total of: 3 items at 2 EUR", "kind": "arithmetic", "expectations": ["The output says 6 EUR"]},
        ],
    }


def _beside(root: Path, **kw) -> Path:
    skill = root / "invoice-reader"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "evals" / "files" / "invoice.txt").write_text(INVOICE)
    (skill / "evals" / "evals.json").write_text(json.dumps(_real_file(**kw)))
    return skill / "evals" / "evals.json"


def _apart(root: Path, **kw) -> Path:
    """The evals in a sibling folder: ``evals/invoice-reader/evals.json``, the skill in
    ``skills/invoice-reader/`` with its files (paths relative to the skill root)."""
    skill = root / "skills" / "invoice-reader"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "evals" / "files" / "invoice.txt").write_text(INVOICE)
    evals = root / "evals" / "invoice-reader"
    evals.mkdir(parents=True)
    (evals / "evals.json").write_text(json.dumps(_real_file(**kw)))
    return evals / "evals.json"


def _rules(server) -> None:
    server.add(Rule(reply="TOTAL 118.40 EUR DUE 2026-01-31", system_contains="Read the invoice", judge=False))


def _checks(server) -> None:
    trials = [r for r in server.trial_requests() if "Read the invoice" in str(r["messages"])]
    assert trials, "the with-arm got the skill"
    assert any("Invoice 1042" in str(r["messages"]) for r in trials), "the attached file reached the prompt"
    judged = "\n".join(str(r["messages"]) for r in server.judge_requests())
    for text in ("The output gives the total 118.40 EUR", "The output gives the due date 2026-01-31", "The output says no invoice was given", "The output says 6 EUR"):
        assert text in judged, text  # every object assertion is judged by its statement
    assert "'id': 'a1'" not in judged and "happy-path" not in judged  # metadata is not graded


def test_a_real_file_beside_its_skill_runs_with_tc_eval(byok_env, tmp_path):
    path = _beside(tmp_path)
    _rules(byok_env)
    out = tmp_path / "out"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    data = read_json(out / "invoice-reader" / "invoice-reader-tc-eval.json")
    names = sorted(it["name"] for it in data["items"])
    assert names == ["case 3", "no-invoice", "total-and-due-date"]  # a case's name labels it
    _checks(byok_env)


def test_evals_in_a_sibling_folder_find_the_skill_by_its_name(byok_env, tmp_path):
    path = _apart(tmp_path)
    _rules(byok_env)
    out = tmp_path / "out"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    assert len(read_json(out / "invoice-reader" / "invoice-reader-tc-eval.json")["items"]) == 3
    _checks(byok_env)


def test_a_repo_level_evals_folder_finds_skills_name(byok_env, tmp_path):
    skill = tmp_path / "skills" / "invoice-reader"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "evals" / "files" / "invoice.txt").write_text(INVOICE)
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "evals.json"
    path.write_text(json.dumps(_real_file()))
    _rules(byok_env)
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    _checks(byok_env)


def test_eval_runs_an_evals_json_as_tc_eval_does(byok_env, tmp_path):
    path = _apart(tmp_path)
    _rules(byok_env)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    assert "unknown key" not in err
    reports = list(out.glob("*/*-tc-eval.json"))  # the report, not its copy in the run's own folder
    assert len(reports) == 1 and len(read_json(reports[0])["items"]) == 3
    _checks(byok_env)


def test_lint_accepts_what_runs(tmp_path):
    for path in (_beside(tmp_path / "a"), _apart(tmp_path / "b")):
        code, out, err = run_cli(["lint", path])
        assert code in (0, 1) and " 0 error(s)" in out + err, out + err  # 3 cases: only the too-few-cases warning
        assert "[too-few-cases]" in out + err and "1 problem(s)" in out + err, out + err


def test_eval_all_runs_the_sibling_layout(byok_env, tmp_path):
    _apart(tmp_path)
    _rules(byok_env)
    code, _, err = run_cli(["eval-all", tmp_path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    _checks(byok_env)


def _one_line(path: Path, tmp_path: Path) -> str:
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    return err


def test_an_assertion_object_without_its_statement_is_one_line(tmp_path):
    path = _beside(tmp_path)
    data = json.loads(path.read_text())
    data["evals"][1]["assertions"] = [{"id": "x"}]
    path.write_text(json.dumps(data))
    err = _one_line(path, tmp_path)
    assert "evals[1].assertions[0]" in err and "'text'" in err


def test_a_misspelt_key_is_still_refused(tmp_path):
    path = _beside(tmp_path)
    data = json.loads(path.read_text())
    data["evals"][2]["expecations"] = ["typo"]
    path.write_text(json.dumps(data))
    err = _one_line(path, tmp_path)
    assert "evals[2].expecations: unknown key" in err


def test_a_case_with_only_metadata_has_nothing_to_check_and_lint_says_so(tmp_path):
    path = _beside(tmp_path)
    data = json.loads(path.read_text())
    data["evals"][2] = {"id": 3, "name": "just-a-prompt", "category": "x", "prompt": "Hello"}
    path.write_text(json.dumps(data))
    code, out, err = run_cli(["lint", path])
    assert "evals[2]: warning: has nothing to check" in out + err and "[nothing-to-check]" in out + err, out + err


def test_a_name_found_nowhere_says_where_it_looked(tmp_path):
    path = _apart(tmp_path, skill_name="no-such-skill")
    err = _one_line(path, tmp_path)
    assert "skill_name: file 'no-such-skill' not found" in err


def test_files_of_a_skill_found_by_name_stay_in_its_folder(tmp_path):
    path = _apart(tmp_path, files="../../secret.txt")
    (tmp_path / "secret.txt").write_text("do not read")
    err = _one_line(path, tmp_path)
    assert "evals[0].files[0]" in err and "outside" in err


def test_convert_keeps_name_and_metadata_and_the_output_loads(byok_env, tmp_path):
    import yaml

    path = _beside(tmp_path)
    out = tmp_path / "invoice-reader" / "evals" / "EVAL.yaml"
    code, stdout, err = run_cli(["convert", path, "--to", "EVAL.yaml", "--out", out])
    assert code == 0, stdout + err
    tests = {t["id"]: t for t in yaml.safe_load(out.read_text())["tests"]}
    assert tests[1]["metadata"] == {"name": "total-and-due-date", "category": "extraction", "kind": "happy-path"}
    assert tests[3]["metadata"] == {"kind": "arithmetic"}
    assert tests[1]["rubrics"] == ["The output gives the total 118.40 EUR", "The output gives the due date 2026-01-31"]
    code, stdout, err = run_cli(["lint", out])
    assert " 0 error(s)" in stdout + err, stdout + err


def test_an_evals_json_beside_its_skill_md_named_by_frontmatter(byok_env, tmp_path):
    skill = tmp_path / "skill-v2"  # the folder is not the skill's name; the frontmatter is
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "evals" / "files" / "invoice.txt").write_text(INVOICE)
    path = skill / "evals.json"
    path.write_text(json.dumps(_real_file()))
    _rules(byok_env)
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    _checks(byok_env)
