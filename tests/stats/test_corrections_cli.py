"""eval-all adjusts the items' p-values across the plugin and marks grades that rely on chance."""

from __future__ import annotations

from conftest import Rule, make_plugin, read_json, run_cli


def _skill(mark: str, tasks: int, trials: int) -> dict:
    ev = {"version": "2", "defaults": {"trials": trials}}
    ts = [{"name": f"t{k}", "instruction": f"TASK-{k} say hi", "graders": [{"type": "deterministic", "checks": ["hello"]}]} for k in range(tasks)]
    if tasks == 1:
        ev["task"] = ts[0]
    else:
        ev["tasks"] = ts
    return {"prompt": f"{mark}: say hello.\n", "eval": ev}


def test_eval_all_holm_by_default_bh_on_request_and_the_dagger(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="nothing here", judge=False))
    srv.add(Rule(reply="hello there", system_contains="STRONG", judge=False))
    srv.add(Rule(reply="hello there", system_contains="LUCKY", judge=False))
    make_plugin(tmp_path, skills={"strong": _skill("STRONG", 6, 3), "lucky": _skill("LUCKY", 1, 2), "flat": _skill("FLAT", 1, 2)})
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval-all", tmp_path / "demo-plugin", "--model", "m", "--output", out])
    assert code == 0, err
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    assert data["settings"]["p_adjust"] == "holm"
    items = {i["name"]: i for i in data["items"]}
    strong, lucky = items["strong"]["stats"], items["lucky"]["stats"]
    assert strong["p_adjust_method"] == "holm" and strong["significant"] is True and "grade_mark" not in strong
    # an A from 2 trials per arm: exact p = 1/6, never significant, so the A is marked
    assert items["lucky"]["grade"] == "A" and lucky["p_value"] > 0.1 and lucky["grade_mark"] == "†"
    assert lucky["p_adjusted"] >= lucky["p_value"]
    row = next(line for line in stdout.splitlines() if line.lstrip().startswith("lucky"))
    assert " A†  " in row and not row.endswith("†")  # the dagger marks the grade, not the label's end
    assert "†" in stdout and "A†" in (out / "demo-plugin" / "eval-all-summary.md").read_text()
    html = (out / "demo-plugin" / "demo-plugin-eval.html").read_text()
    assert "Holm" in html and "†" in html

    code, _, err = run_cli(["eval-all", tmp_path / "demo-plugin", "--model", "m", "--output", out, "--p-adjust", "bh"])
    assert code == 0, err
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    assert data["settings"]["p_adjust"] == "bh"
    assert {i["stats"]["p_adjust_method"] for i in data["items"]} == {"bh"}
    html = (out / "demo-plugin" / "demo-plugin-eval.html").read_text()
    assert "Benjamini–Hochberg" in html


def test_bad_p_adjust_is_one_line_exit_30(byok_env, tmp_path):
    make_plugin(tmp_path, skills={"flat": _skill("FLAT", 1, 1)})
    code, _, err = run_cli(["eval-all", tmp_path / "demo-plugin", "--model", "m", "--p-adjust", "bonferroni"])
    assert code == 30 and err.startswith("error:") and len(err.strip().splitlines()) == 1
