"""``agentsproof verify`` and the numbers a run adds from outside its trials (docs/verify.md):
the A/A summary, the oracle's score, a judge panel's disagreement rate and the gold-agreement
warnings verify as written and fail, with the field named, when edited. Real runs on the
scripted server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval


def _tampered(report: Path, tmp_path: Path, edit) -> Path:
    data = read_json(report)
    edit(data)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _verify(report: Path) -> tuple[int, str]:
    code, out, err = run_cli(["verify", report])
    return code, out + err


def test_the_aa_summary_is_derived_again(byok_env, tmp_path):
    byok_env.add(Rule(reply="HELLO", judge=False))
    byok_env.add(Rule(reply="bye", judge=False, times=3))
    evals = {n: {"prompt": f"{n}: greet.\n", "eval": simple_eval([{"type": "deterministic", "checks": ["HELLO"]}], trials=4)} for n in ("a", "b")}
    plugin = make_plugin(tmp_path, skills=evals)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out", "--aa"])
    report = tmp_path / "out" / "demo-plugin" / "eval-all-summary.json"
    aa = read_json(report)["settings"]["aa"]
    assert aa["items"] == 2 and len(aa["rows"]) == 2, err
    code, out = _verify(report)
    assert code == 0, out

    def edit(d: dict[str, Any]) -> None:
        d["settings"]["aa"]["rows"][0]["delta"] = 0.5

    code, out = _verify(_tampered(report, tmp_path, edit))
    assert code == 1 and "DIFFERS settings.aa.rows[0].delta: the report states 0.5" in out, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["settings"]["aa"].update(within_alpha=not d["settings"]["aa"]["within_alpha"])))
    assert code == 1 and "DIFFERS settings.aa.within_alpha" in out, out


def test_the_oracle_score_is_derived_from_its_tasks(byok_env, tmp_path):
    d = tmp_path / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Report totals with a thousands separator.\n")
    ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 2, "timeout": 30}, "oracle": {"answer": "Total revenue: 3,500"},
          "task": {"name": "total", "instruction": "What is the total revenue?", "graders": [{"type": "deterministic", "checks": ["3,500"]}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    byok_env.add(Rule(reply="Total revenue: 3,500", judge=False))
    code, _, err = run_cli(["eval", d / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    report = next((tmp_path / "runs").rglob("*-eval.json"))
    assert read_json(report)["items"][0]["oracle"]["score"] == 1.0, err
    code, out = _verify(report)
    assert code == 0, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["items"][0]["oracle"].update(score=0.5)))
    assert code == 1 and "DIFFERS items[0].oracle.score: the report states 0.5, derived 1.0" in out, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["items"][0]["oracle"]["tasks"][0].update(failing=["graders[0]: made up"])))
    assert code == 1 and "DIFFERS items[0].oracle.tasks[0].passed: the report states True, derived False" in out, out


def _judged(tmp_path: Path, extra: dict[str, Any]) -> Path:
    ev = {"version": "2", **extra, "defaults": {"trials": 2, "timeout": 30, "threshold": 0.5},
          "task": {"name": "t", "instruction": "Say hello.", "graders": [{"type": "assertions", "assertions": ["The reply contains 'hello'."]}]}}
    make_plugin(tmp_path, skills={"greeter": {"prompt": "PMARK: say hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter"


def test_a_judge_panels_rate_is_derived_from_its_tally(byok_env, tmp_path):
    byok_env.add(
        Rule(reply=json.dumps({"evidence": "no", "passed": False}), model="j3", judge=True),
        Rule(reply="hello", system_contains="PMARK", judge=False), Rule(reply="hi", judge=False),
    )  # fmt: skip
    folder = _judged(tmp_path, {"judge_models": ["j1", "j2", "j3"]})
    code, _, err = run_cli(["eval", folder / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    report = tmp_path / "runs" / "demo-plugin" / "greeter-eval.json"
    panel = read_json(report)["items"][0]["stats"]["judge_panel"]
    assert panel["verdicts"] == 4 and panel["disagreements"] == 2, err
    code, out = _verify(report)
    assert code == 0, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["items"][0]["stats"]["judge_panel"].update(disagreement_rate=0.1)))
    assert code == 1 and "DIFFERS items[0].stats.judge_panel.disagreement_rate: the report states 0.1, derived 0.5" in out, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["items"][0]["stats"]["judge_panel"].update(disagreements=9)))
    assert code == 1 and "items[0].stats.judge_panel.disagreements" in out, out


def test_a_gold_agreement_below_the_floor_must_be_warned(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", system_contains="PMARK", judge=False), Rule(reply="hi", judge=False))
    folder = _judged(tmp_path, {"judge": {"gold": "gold.jsonl"}})
    rows = [{"task": "t", "answer": "hello there" if i % 2 == 0 else "good day", "assertion": "The reply contains 'hello'.",
             "label": (i % 2 == 0) if i >= 3 else (i % 2 != 0)} for i in range(8)]  # fmt: skip
    (folder / "gold.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, _, err = run_cli(["eval", folder / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    report = tmp_path / "runs" / "demo-plugin" / "greeter-eval.json"
    it = read_json(report)["items"][0]
    assert it["stats"]["judge_agreement"]["kinds"]["assertion"]["kappa"]["value"] < 0.6 and it["warnings"], err
    code, out = _verify(report)
    assert code == 0, out
    code, out = _verify(_tampered(report, tmp_path, lambda d: d["items"][0].update(warnings=[])))
    assert code == 1 and "DIFFERS items[0].warnings" in out and "below 0.6" in out, out


def test_a_signed_regrade_with_ci_records_the_exit_code_it_ends_with(byok_env, tmp_path):
    """``regrade --ci --sign KEY``: the manifest's options and exit code are the command's own, and the signature checks."""
    byok_env.add(Rule(reply="bye", judge=False))  # every trial fails its check: --ci exits 1
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "GREET.\n", "eval": simple_eval([{"type": "deterministic", "checks": ["HELLO"]}], trials=3)}})
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out"])
    report = tmp_path / "out" / "demo-plugin" / "eval-all-summary.json"
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "k@test", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text("k@test " + key.with_suffix(".pub").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = run_cli(["regrade", report, "--ci", "--sign", key])
    regraded = report.with_name("eval-all-summary-regraded.json")
    m = read_json(regraded)["manifest"]
    assert code == 1 and m["exit_code"] == 1 and m["options"]["ci"] is True and m["signature"]["key"].startswith("SHA256:"), err
    code, out = _verify_signed(regraded, allowed)
    assert code == 0 and "good signature by k@test" in out, out


def _verify_signed(report: Path, allowed: Path) -> tuple[int, str]:
    code, out, err = run_cli(["verify", report, "--allowed-signers", allowed])
    return code, out + err


def test_a_signed_merge_verifies_and_a_tampered_one_fails(byok_env, tmp_path):
    """``merge --sign KEY`` of two shards: the merged report verifies with its signature; a trial removed fails on the digest."""
    byok_env.add(Rule(reply="HELLO", judge=False))
    evals = {n: {"prompt": f"{n}: greet.\n", "eval": simple_eval([{"type": "deterministic", "checks": ["HELLO"]}], trials=2)} for n in ("a", "b", "c")}
    plugin = make_plugin(tmp_path, skills=evals)
    reps = []
    for i in (1, 2):
        code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / f"s{i}", "--shard", f"{i}/2"])
        assert code == 0, err
        reps.append(tmp_path / f"s{i}" / "demo-plugin" / "eval-all-summary.json")
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "k@test", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text("k@test " + key.with_suffix(".pub").read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = run_cli(["merge", *reps, "--output", tmp_path / "m", "--sign", key])
    merged = tmp_path / "m" / "demo-plugin" / "eval-all-summary.json"
    assert code == 0 and merged.with_name("eval-all-summary.json.sig").is_file(), err
    code, out = _verify_signed(merged, allowed)
    assert code == 0 and "good signature by k@test" in out, out

    def drop(d: dict[str, Any]) -> None:
        d["items"][0]["with_arm"]["trials"].pop()

    code, out = _verify(_tampered(merged, tmp_path, drop))
    assert code == 1 and "DIFFERS manifest.trials.count" in out, out
