"""`agentsproof convert` writes only what agentsproof itself loads: the output is read back by
our own loader (from a temporary copy in the output's folder) before it is written; anything
that cannot be carried is named, and `--strict` makes that an error. Inputs shaped like real
agentv, promptfoo and skill-creator files."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import run_cli


def _skill(tmp_path: Path) -> Path:
    """skills/report/ with a SKILL.md, an evals/ folder and fixtures/ beside it (agentv's layout)."""
    evals = tmp_path / "skills" / "report" / "evals"
    evals.mkdir(parents=True)
    (evals.parent / "SKILL.md").write_text("---\nname: report\n---\nWrite short reports.\n")
    (evals.parent / "fixtures").mkdir()
    (evals.parent / "fixtures" / "sales.csv").write_text("region,total\nnorth,10\n")
    return evals


def _left_as_it_was(folder: Path, names: set[str]) -> None:
    assert {p.name for p in folder.iterdir()} == names  # nothing written, no temporary file left


def test_assertion_options_copied_verbatim_are_refused_not_written(tmp_path):
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(
        "description: Greeting checks\nprompts: ['Reply to: {{message}}']\n"
        "tests:\n  - vars: {message: hello}\n    assert:\n"
        "      - type: contains\n        value: hello\n        contextTransform: output.toLowerCase()\n"
    )  # (an assertion's own transform now runs, as a javascript check: see tests/formats/test_promptfoo_runs.py)
    out = tmp_path / "evals" / "EVAL.yaml"
    out.parent.mkdir()
    code, stdout, err = run_cli(["convert", cfg, "--to", "EVAL.yaml", "--out", out])
    assert code == 30 and "wrote" not in err, err
    assert err.count("\n") == 1 and "would not load" in err and "tests[0].assert[0].contextTransform" in err and str(cfg) in err
    _left_as_it_was(out.parent, set())
    code, stdout, err = run_cli(["convert", cfg, "--to", "EVAL.yaml"])  # to stdout: checked all the same
    assert code == 30 and stdout == "" and "contextTransform" in err, err
    _left_as_it_was(tmp_path, {"promptfooconfig.yaml", "evals"})


def test_a_path_that_leads_out_of_the_outputs_folder_is_refused(tmp_path):
    evals = _skill(tmp_path)
    (evals / "EVAL.yaml").write_text(
        "name: report\ntests:\n  - id: '1'\n    input:\n      - role: user\n        content:\n"
        "          - {type: text, value: Summarise the sales}\n          - {type: file, value: ../fixtures/sales.csv}\n"
        "    rubrics: [Names the north region]\n"
    )
    # beside the EVAL.yaml it loads (the folder above evals/ is the skill's) and is written
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", evals / "evals.json"])
    assert code == 0 and f"wrote {evals / 'evals.json'}" in err, err
    assert json.loads((evals / "evals.json").read_text())["evals"][0]["files"] == ["../fixtures/sales.csv"]
    # in a folder of its own, its skill and files are ../ paths out of that folder: refused, nothing written
    other = tmp_path / "elsewhere"
    other.mkdir()
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", other / "evals.json"])
    assert code == 30 and err.count("\n") == 1 and "would not load" in err and "skill_name" in err, err
    _left_as_it_was(other, set())


def test_file_parts_that_do_not_resolve_where_the_output_goes_are_refused(tmp_path):
    evals = _skill(tmp_path)
    (evals / "notes.txt").write_text("deadline friday\n")
    (evals / "evals.json").write_text(json.dumps({"skill_name": "report", "evals": [
        {"id": 1, "prompt": "Read the notes", "files": ["notes.txt"], "assertions": ["Mentions friday"]}]}))
    code, _, err = run_cli(["convert", evals / "evals.json", "--to", "EVAL.yaml", "--out", tmp_path / "EVAL.yaml"])
    assert code == 30 and "would not load" in err and "notes.txt" in err, err
    assert not (tmp_path / "EVAL.yaml").exists()
    code, _, err = run_cli(["convert", evals / "evals.json", "--to", "EVAL.yaml", "--out", evals / "EVAL.yaml"])
    assert code == 0, err
    assert yaml.safe_load((evals / "EVAL.yaml").read_text())["tests"][0]["input"][0]["content"][1]["path"] == "notes.txt"


def test_a_test_left_with_nothing_to_check_is_written_and_named(tmp_path):
    evals = _skill(tmp_path)
    (evals / "EVAL.yaml").write_text(
        "name: report\ntests:\n  - id: '1'\n    input: Write the weekly report\n    rubrics: [Has a title]\n"
        "  - id: '2'\n    input: Say hello\n    assert:\n      - {type: contains, value: hello}\n"
    )
    code, stdout, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json"])
    lines = err.splitlines()
    assert code == 0, err  # a case with nothing to check runs (score 1.0), so it loads; the lossy line names what went
    assert lines[0].endswith("lossy: tests[1].assert[0]: a 'contains' assertion has no evals.json form; it is left out")
    case = json.loads(stdout)["evals"][1]
    assert case["prompt"] == "Say hello" and not case.get("assertions") and "expected_output" not in case, case


def test_output_over_the_input_cap_is_refused(tmp_path):
    # 10 prompts x 60 tests of a 1.8 kB var: a 120 kB config that converts to ~1.2 MB of EVAL.yaml
    cfg = tmp_path / "promptfooconfig.yaml"
    body = "lorem ipsum dolor sit amet " * 66
    doc = {
        "prompts": [f"Variant {i}: summarise {{{{text}}}}" for i in range(10)],
        "tests": [{"vars": {"text": f"{i} {body}"}, "assert": [{"type": "icontains", "value": "summary"}]} for i in range(60)],
    }
    cfg.write_text(yaml.safe_dump(doc))
    assert cfg.stat().st_size < 1_000_000
    code, stdout, err = run_cli(["convert", cfg, "--to", "EVAL.yaml", "--out", tmp_path / "EVAL.yaml"])
    assert code == 30 and err.count("\n") == 1 and "over the 1,000,000-byte cap" in err, err
    assert not (tmp_path / "EVAL.yaml").exists()


EVAL = """\
version: "2"
skill: SKILL.md
defaults: {trials: 3}
task:
  name: weekly
  instruction: Write the weekly report
  graders:
    - type: assertions
      assertions: [Has a title]
"""


def test_dropped_keys_are_named_and_strict_refuses_them(tmp_path):
    folder = tmp_path / "skills" / "report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("Write short reports.\n")
    (folder / "eval.yaml").write_text(EVAL)
    code, _, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "EVAL.yaml"])
    assert code == 0 and f"warning: {folder / 'eval.yaml'}: lossy: defaults: EVAL.yaml has no such field" in err, err
    (folder / "EVAL.yaml").unlink()
    code, stdout, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "EVAL.yaml", "--strict"])
    lines = err.splitlines()
    assert code == 30 and stdout == "" and "lossy: defaults:" in lines[0], err
    assert lines[-1] == f"error: {folder / 'eval.yaml'}: defaults: cannot be carried over; --strict: nothing written"
    _left_as_it_was(folder, {"SKILL.md", "eval.yaml"})
    # with nothing dropped, --strict writes as usual
    evals = _skill(tmp_path)
    (evals / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 1, "prompt": "Weekly report", "assertions": ["Has a title"]}]}))
    code, _, err = run_cli(["convert", evals / "evals.json", "--to", "EVAL.yaml", "--strict", "--out", evals / "EVAL.yaml"])
    assert code == 0 and "lossy" not in err and (evals / "EVAL.yaml").is_file(), err


def test_promptfoo_provider_and_its_config_are_named_never_dropped_silently(tmp_path):
    cfg = tmp_path / "promptfooconfig.yaml"
    cfg.write_text(
        "description: JSON replies\nprompts: ['Return JSON for {{item}}']\n"
        "providers:\n  - id: openai:gpt-4o-mini\n    config:\n      temperature: 0\n      max_tokens: 200\n"
        "tests:\n  - vars: {item: apple}\n    metadata: {owner: data-team}\n    assert:\n      - {type: is-json}\n"
        "      - {type: not-icontains, value: error}\n"
    )
    code, stdout, err = run_cli(["convert", cfg, "--to", "EVAL.yaml"])
    assert code == 0, err
    doc = yaml.safe_load(stdout)
    assert [a["type"] for a in doc["tests"][0]["assert"]] == ["is-json", "not-icontains"]
    for field in ("providers[0]: 'openai:gpt-4o-mini' is left out", "providers[0].config.temperature:",
                  "providers[0].config.max_tokens:", "tests[0].metadata:"):
        assert f"warning: {cfg}: lossy: {field}" in err, err
    code, stdout, err = run_cli(["convert", cfg, "--to", "EVAL.yaml", "--strict", "--out", tmp_path / "EVAL.yaml"])
    assert code == 30 and stdout == "" and err.splitlines()[-1] == (
        f"error: {cfg}: providers[0]: cannot be carried over (and 3 more, named above); --strict: nothing written"), err
    assert not (tmp_path / "EVAL.yaml").exists()


def test_the_later_turns_of_an_agentv_conversation_are_named_and_strict_refuses_them(tmp_path):
    evals = _skill(tmp_path)
    (evals / "EVAL.yaml").write_text(
        "tests:\n  - id: '1'\n    expected_output: 60\n    turns:\n      - input: What is 15% of 200?\n      - input: Now double that.\n"
    )
    out = tmp_path / "evals.json"
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", out])
    assert code == 0 and "lossy: tests[0].turns: evals.json has one prompt per case; the 1 later turn(s) are left out" in err, err
    assert json.loads(out.read_text())["evals"][0]["prompt"] == "What is 15% of 200?"
    out.unlink()
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", out, "--strict"])
    assert code == 30 and not out.exists() and "--strict: nothing written" in err, err
