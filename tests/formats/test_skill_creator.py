"""skill-creator's layout (anthropics/skills, skills/skill-creator/references/schemas.md):
``<skill>/evals/evals.json`` with ``skill_name`` the skill's *name*, ``expectations``, and
``files`` relative to the skill folder; it runs against the SKILL.md above it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule, read_json, run_cli

SKILL = "---\nname: parrot-count\ndescription: Count the parrots in a list\n---\n\nCount every line that names a parrot; answer 'N parrots'.\n"


def _layout(root: Path, skill_name: str = "parrot-count") -> Path:
    skill = root / "skills" / "parrot-count"
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (skill / "evals" / "files" / "birds.txt").write_text("macaw\nrobin\ncockatoo\n")
    evals = {
        "skill_name": skill_name,
        "evals": [
            {"id": 1, "prompt": "How many parrots are in the attached list?", "expected_output": "2 parrots",
             "files": ["evals/files/birds.txt"], "expectations": ["The output says there are 2 parrots"]},
            {"id": 2, "prompt": "Count the parrots: kea, sparrow", "expectations": ["The output says 1 parrot"]},
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    return skill / "evals" / "evals.json"


def test_skill_name_as_a_name_runs_against_the_skill_md_above(byok_env, tmp_path):
    path = _layout(tmp_path)
    byok_env.add(Rule(reply="2 parrots", system_contains="Count every line", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--no-cache"])
    assert code in (0, 1), err
    data = read_json(out / "parrot-count" / "parrot-count-tc-eval.json")
    assert len(data["items"]) == 2
    trials = [r for r in byok_env.trial_requests() if "Count every line" in str(r["messages"])]
    assert trials, "the with-arm got the SKILL.md above evals/"
    assert any("macaw" in str(r["messages"]) for r in trials)  # files relative to the skill folder
    judged = "\n".join(str(r["messages"]) for r in byok_env.judge_requests())
    assert "The output says there are 2 parrots" in judged  # expectations are the assertions


def test_eval_all_finds_the_layout(byok_env, tmp_path):
    _layout(tmp_path)
    code, _, err = run_cli(["eval-all", tmp_path / "skills", "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    assert "not found" not in err


def test_a_name_that_is_not_the_skill_above_is_a_label_with_a_note(byok_env, tmp_path):
    """skill-creator's layout: the SKILL.md above evals/ is the skill whatever skill_name says."""
    path = _layout(tmp_path, skill_name="other-skill")
    byok_env.add(Rule(reply="2 parrots", system_contains="Count every line", judge=False))
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    assert "skill_name: 'other-skill' is a label here; the skill is the SKILL.md above this evals/ folder" in err and "'parrot-count'" in err
    assert any("Count every line" in str(r["messages"]) for r in byok_env.trial_requests())  # the skill above was the with-arm's
