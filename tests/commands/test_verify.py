"""``agentsproof verify``, ``bundle`` and ``--sign``, end to end on the scripted server: every
report eval, eval-all, tc-eval and activation write verifies; every kind of tampering is
caught with its reason; signatures are made and checked by the real ssh-keygen."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval, write_tc_eval
from openai_server import skill_loader

PLUGIN = Path(__file__).resolve().parents[2] / "evals" / "csv-plugin"
SKILL = "SKILLMARK: say hello in uppercase.\n"


def _graders() -> list[dict]:
    return [{"type": "deterministic", "checks": ["HELLO"]}]


def _eval_all(tmp_path: Path, srv, *extra) -> Path:
    srv.add(Rule(reply="HELLO", judge=False))  # newest rules take precedence: the baseline says bye 3 times, then HELLO
    srv.add(Rule(reply="bye there", judge=False, times=3))
    srv.add(Rule(reply="HELLO there", system_contains="SKILLMARK", judge=False))
    evals = {
        "greeter": {"prompt": SKILL, "eval": simple_eval(_graders(), trials=4)},
        "waver": {"prompt": "SKILLMARK: wave.\n", "eval": simple_eval(_graders(), trials=3)},
    }
    plugin = make_plugin(tmp_path, skills=evals)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, *extra])
    assert code in (0, 1), err
    return out / "demo-plugin" / "eval-all-summary.json"


def _verify(*args) -> tuple[int, str, str]:
    return run_cli(["verify", *args])


def test_eval_all_report_verifies_and_holds_its_manifest(byok_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = _eval_all(tmp_path, byok_env, "--ci")
    data = read_json(report)
    m = data["manifest"]
    roles = {row["role"] for row in m["files"].values()}
    assert {"eval", "skill"} <= roles
    assert m["trials"]["count"] == 14 and len(m["trials"]["sha256"]) == 64
    assert m["command_line"][:2] == ["agentsproof", "eval-all"] and m["options"]["ci"] is True
    assert m["signature"] is None and m["agentsproof"] == data["tool_version"]
    assert m["models"]["model"] == "m" and m["models"]["served"] == {"m": ["m"]}  # the model the scripted server's replies name
    code, out, err = _verify(report, "--files", tmp_path)
    assert code == 0, out + err
    assert "verified" in out and "NOT" not in out and "files: 4 checked, 0 differ" in out
    html = report.with_name("demo-plugin-eval.html").read_text(encoding="utf-8")
    assert "Manifest" in html and m["trials"]["sha256"] in html and "not signed" in html


def test_eval_and_tc_eval_reports_verify(byok_env, tmp_path):
    byok_env.add(Rule(reply="hi", judge=False))
    byok_env.add(Rule(reply="HELLO", system_contains="SKILLMARK", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL, "eval": simple_eval(_graders(), trials=3)}})
    code, _, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", tmp_path / "o1"])
    assert code == 0, err
    code, out, err = _verify(tmp_path / "o1" / "demo-plugin" / "greeter-eval.json")
    assert code == 0, out + err
    cases = write_tc_eval(tmp_path / "tc", [{"id": 1, "prompt": "task one", "expected_output": "HELLO", "assertions": ["Says 'HELLO'"]}], skill_text=SKILL)
    code, _, err = run_cli(["tc-eval", cases, "--model", "m", "--output", tmp_path / "o2", "--trials", "2"])
    assert code == 0, err
    code, out, err = _verify(tmp_path / "o2" / "tc" / "tc-tc-eval.json")
    assert code == 0, out + err


def test_activation_report_verifies_and_an_edit_is_caught(byok_env, tmp_path):
    key, allowed = _keys(tmp_path)
    byok_env.add(Rule(reply=skill_loader()))
    code, _, err = run_cli(["activation", PLUGIN, "--model", "m", "--output", tmp_path / "runs", "--sign", key])
    assert code == 0, err
    report = next((tmp_path / "runs").glob("*/*-activation.json"))
    data = read_json(report)
    assert data["manifest"]["trials"]["count"] == len(data["trial_log"]) > 0
    assert {"eval", "skill"} <= {row["role"] for row in data["manifest"]["files"].values()}
    html = report.with_suffix(".html").read_text(encoding="utf-8")
    assert "Manifest" in html and "signed with SSH key SHA256:" in html
    code, out, err = _verify(report, "--allowed-signers", allowed, "--files", PLUGIN.parents[1])  # paths relative to where the run ran
    assert code == 0 and "good signature by k@test" in out, out + err
    assert data["manifest"]["exit_code"] == 0
    data["skills"][0]["tp"] += 1
    data["manifest"]["exit_code"] = 1
    bad = tmp_path / "bad-activation.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _verify(bad)
    assert code == 1 and "skills[0].tp" in out and "DIFFERS manifest.exit_code" in out


def _tampered(report: Path, tmp_path: Path, edit) -> Path:
    data = read_json(report)
    edit(data)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return out


def _first_scored(data: dict) -> dict:
    return next(t for it in data["items"] for t in it["with_arm"]["trials"] if t["status"] == "scored")


def _set_delta(d: dict) -> None:
    d["items"][0]["delta"] = 0.99


def _set_p(d: dict) -> None:
    d["items"][0]["stats"]["p_value"] = 0.0001


def _set_mean(d: dict) -> None:
    d["items"][0]["with_arm"]["mean_score"] = 0.123


def _set_score(d: dict) -> None:
    _first_scored(d)["score"] = 0.5


def _drop_trial(d: dict) -> None:
    d["items"][0]["without_arm"]["trials"].pop()


def _add_trial(d: dict) -> None:
    arm = d["items"][0]["with_arm"]
    arm["trials"].append(dict(arm["trials"][0], index=99))


def _consistent_edit(d: dict) -> None:  # a grader's score and the trial's changed together
    t = _first_scored(d)
    t["graders"][0]["score"] = t["score"] = 0.0 if t["score"] else 1.0


def _set_verdict(d: dict) -> None:
    d["verdict"] = "PASS" if d["verdict"] != "PASS" else "FAIL"


def _set_exit(d: dict) -> None:
    d["manifest"]["exit_code"] = 0 if d["manifest"]["exit_code"] else 1


def _drop_manifest(d: dict) -> None:
    d["manifest"] = None


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (_set_delta, "items[0].delta"),
        (_set_p, "items[0].stats.p_value"),
        (_set_mean, "items[0].with_arm.mean_score"),
        (_set_score, ".score"),
        (_drop_trial, "manifest.trials.count"),
        (_add_trial, "manifest.trials.count"),
        (_consistent_edit, "manifest.trials.sha256"),
        (_set_verdict, "verdict"),
        (_set_exit, "manifest.exit_code"),
        (_drop_manifest, "manifest:"),
    ],
)
def test_tampering_is_caught_with_its_reason(byok_env, tmp_path, edit, reason):
    report = _eval_all(tmp_path, byok_env, "--ci")
    code, out, _ = _verify(_tampered(report, tmp_path, edit))
    assert code == 1, out
    assert f"DIFFERS {reason}" in out or reason in out, out
    assert "NOT verified" in out


def test_a_changed_or_missing_file_of_the_manifest_is_named(byok_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = _eval_all(tmp_path, byok_env)
    skill = tmp_path / "demo-plugin" / "skills" / "greeter" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "edited after the run\n", encoding="utf-8")
    (tmp_path / "demo-plugin" / "skills" / "waver" / "eval.yaml").unlink()
    code, out, _ = _verify(report, "--files", tmp_path)
    assert code == 1
    assert "FILE demo-plugin/skills/greeter/SKILL.md: changed since the run" in out
    assert "FILE demo-plugin/skills/waver/eval.yaml: missing" in out


def test_unreadable_input_is_exit_30(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = _verify(bad)
    assert code == 30 and "x.json" in err and "Traceback" not in err
    code, _, err = _verify(tmp_path / "missing.json")
    assert code == 30 and "file not found" in err
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8bnot a gzip")
    code, _, err = _verify(junk)
    assert code == 30 and "Traceback" not in err


def _keys(tmp_path: Path, name: str = "k") -> tuple[Path, Path]:
    if not shutil.which("ssh-keygen"):
        pytest.fail("ssh-keygen is not installed (openssh-client)")
    key = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    allowed = tmp_path / f"{name}.allowed"
    allowed.write_text(f"{name}@test {(tmp_path / (name + '.pub')).read_text().strip()}\n", encoding="utf-8")
    return key, allowed


def test_signed_report_verifies_and_an_edit_after_signing_fails(byok_env, tmp_path):
    key, allowed = _keys(tmp_path)
    _other, other_allowed = _keys(tmp_path, "other")
    report = _eval_all(tmp_path, byok_env, "--sign", key)
    sig = report.with_name(report.name + ".sig")
    assert sig.read_text().startswith("-----BEGIN SSH SIGNATURE-----")
    assert read_json(report)["manifest"]["signature"]["key"].startswith("SHA256:")
    assert "signed with SSH key SHA256:" in report.with_name("demo-plugin-eval.html").read_text(encoding="utf-8")
    code, out, err = _verify(report, "--allowed-signers", allowed)
    assert code == 0 and "good signature by k@test" in out, out + err
    code, out, _ = _verify(report, "--allowed-signers", other_allowed)
    assert code == 1 and "not in the allowed signers" in out
    report.write_text(report.read_text(encoding="utf-8").replace('"duration_s": ', '"duration_s": 1'), encoding="utf-8")
    code, out, _ = _verify(report, "--allowed-signers", allowed)
    assert code == 1 and "BAD SIGNATURE: the signature does not match the report" in out


def test_bad_sign_key_is_refused_before_any_trial(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL, "eval": simple_eval(_graders())}})
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out", "--sign", tmp_path / "nokey"])
    assert code == 30 and "--sign" in err and "nokey" in err
    assert byok_env.trial_requests() == []


def test_bundle_moved_to_another_folder_verifies(byok_env, tmp_path, monkeypatch):
    key, allowed = _keys(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    report = _eval_all(work, byok_env, "--sign", key)
    monkeypatch.chdir(tmp_path)  # bundled from another folder: the manifest's root finds the files
    code, out, err = run_cli(["bundle", report, "--sign", key])
    assert code == 0, err
    bundle = report.with_name("eval-all-summary.bundle.tar.gz")
    assert bundle.is_file() and bundle.with_name(bundle.name + ".sig").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = elsewhere / bundle.name
    shutil.move(bundle, moved)
    shutil.rmtree(work)  # nothing of the run is left on this "machine"
    monkeypatch.chdir(elsewhere)
    code, out, err = _verify(moved, "--allowed-signers", allowed)
    assert code == 0, out + err
    assert "good signature by k@test" in out and "files: 4 checked, 0 differ" in out


@pytest.mark.parametrize(
    "extra",
    [
        ["--baseline", "none"],
        ["--ci-rule", "interval", "--ci"],
        ["--aa"],
        ["--adaptive", "--trials", "6"],
        ["--arms", "baseline,skill,plugin"],
        ["--p-adjust", "bh", "--ci", "--fail-on-underpowered"],
    ],
    ids=lambda a: " ".join(a),
)
def test_reports_of_other_run_modes_verify(byok_env, tmp_path, extra):
    report = _eval_all(tmp_path, byok_env, *extra)
    code, out, err = _verify(report)
    assert code == 0, out + err


def test_a_report_with_errored_trials_and_several_tasks_verifies(byok_env, tmp_path):
    byok_env.add(Rule(reply="nope", judge=False))
    byok_env.add(Rule(reply="HELLO", system_contains="SKILLMARK", judge=False))
    byok_env.add(Rule(status=400, message="scripted refusal", user_contains="BROKEN", judge=False))
    tasks = [{"name": f"t{n}", "instruction": f"task {n}" + (" BROKEN" if n == 2 else ""), "graders": _graders()} for n in range(4)]
    ev = {"version": "2", "defaults": {"trials": 8}, "tasks": tasks}
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL, "eval": ev}})
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out", "--ci"])
    report = tmp_path / "out" / "demo-plugin" / "eval-all-summary.json"
    assert read_json(report)["items"][0]["with_arm"]["errored"] > 0, err
    code, out, err = _verify(report)
    assert code == 0, out + err


def test_the_command_line_is_recorded_with_its_secrets_masked(byok_env, tmp_path):
    report = _eval_all(tmp_path, byok_env, "--config", "api_key=sk-verysecret-123", "--config", "prompt=v2")
    line = read_json(report)["manifest"]["command_line"]
    assert "api_key=***" in line and "prompt=v2" in line
    for path in report.parent.rglob("*"):
        if path.is_file():
            assert "sk-verysecret-123" not in path.read_text(encoding="utf-8", errors="replace"), path


def test_regrade_runs_the_deterministic_graders_again(byok_env, tmp_path):
    report = _eval_all(tmp_path, byok_env)
    code, out, err = _verify(report, "--regrade")
    assert code == 0, out + err
    ev = tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"
    ev.write_text(ev.read_text(encoding="utf-8").replace("HELLO", "BYE"), encoding="utf-8")
    code, out, _ = _verify(report, "--regrade")
    assert code == 1 and "REGRADE items[0].with_arm.trials[0].graders[0].score: the report states 1.0, derived 0.0" in out


def test_a_regraded_report_verifies(byok_env, tmp_path):
    report = _eval_all(tmp_path, byok_env)
    code, _, err = run_cli(["regrade", report])
    assert code == 0, err
    code, out, err = _verify(report.with_name("eval-all-summary-regraded.json"))
    assert code == 0, out + err


def test_hostile_reports_are_one_line_never_a_crash(byok_env, tmp_path):
    report = _eval_all(tmp_path, byok_env)
    edits = [
        lambda d: d.update(items="nope"),
        lambda d: d["items"][0].update(with_arm={"trials": 3}),
        lambda d: d.update(manifest={"trials": "x", "options": 5, "files": ["a"]}),
        lambda d: d["items"][0]["with_arm"]["trials"][0].update(score="high"),
        lambda d: d["items"][0]["with_arm"]["trials"][0]["graders"][0].update(weight=None),
        lambda d: d.update(verdict=7),
    ]
    for n, edit in enumerate(edits):
        data = read_json(report)
        edit(data)
        bad = tmp_path / f"hostile-{n}.json"
        bad.write_text(json.dumps(data), encoding="utf-8")
        code, out, err = _verify(bad, "--files", tmp_path)
        assert code in (1, 30), (n, out, err)
        assert "Traceback" not in err and "internal error" not in err, (n, err)
    activation = {"title": "t", "skills": [5], "trial_log": [{"prompt": {"text": "x"}, "skill": "s"}], "matrix": {}}
    bad = tmp_path / "hostile-activation.json"
    bad.write_text(json.dumps(activation), encoding="utf-8")
    code, _, err = _verify(bad)
    assert code == 30 and "trial_log" in err and "internal error" not in err
