"""Bad input refused at load, round 3 (issue 30, item 5): each case is exit 30, one line on
stderr naming the file and the field, no traceback, no call to the provider (or, for a
model's proposals and recordings, nothing unsafe written).

The runs go through the real CLI (click's runner, or a subprocess where the terminal
output itself is the point) against the scripted OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SECRET_KEY, Rule, assert_refused, make_plugin, read_json, run_cli, simple_eval, write_tc_eval

CHECKS = [{"type": "deterministic", "checks": ["hello"]}]


def _skill_eval(tmp: Path, ev: dict[str, Any] | str) -> Path:
    d = tmp / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: s\ndescription: Greets people.\n---\nYou help.\n")
    if isinstance(ev, dict):
        ev = yaml.safe_dump({**ev, "skill": "SKILL.md"}, sort_keys=False)
    (d / "eval.yaml").write_text(ev)
    return d / "eval.yaml"


# ---------------------------------------------------------------- the journal on --resume


def _journalled_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    plugin = make_plugin(tmp_path, skills={"s0": {"eval": simple_eval(CHECKS, trials=2)}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    assert code == 0, err
    journal = out / "demo-plugin" / "eval-all-summary.journal.jsonl"
    assert journal.is_file()
    return plugin, out, journal


def _tamper(journal: Path, change) -> int:
    """Apply ``change`` to the first trial line's record; returns that line's number."""
    lines = journal.read_text().splitlines()
    rec = json.loads(lines[1])
    change(rec["trial"])
    lines[1] = json.dumps(rec)
    journal.write_text("\n".join(lines) + "\n")
    return 2


def _set(key: str, value: Any):
    def change(trial: dict[str, Any]) -> None:
        trial[key] = value

    return change


def _grader_score(value: Any):
    def change(trial: dict[str, Any]) -> None:
        trial["graders"][0]["score"] = value

    return change


JOURNAL_CASES = {
    "score 1e308": (_set("score", 1e308), "trial.score", "1e+308"),
    "score negative": (_set("score", -0.5), "trial.score", "-0.5"),
    "scored without a score": (_set("score", None), "trial.score", "no score"),
    "grader score 7": (_grader_score(7), "trial.graders[0].score", "outside 0..1"),
    "negative latency": (_set("latency_s", -3.0), "trial.latency_s", "negative"),
}


@pytest.mark.parametrize("name", list(JOURNAL_CASES))
def test_resume_validates_the_journals_scores(name, byok_env, tmp_path):
    plugin, out, journal = _journalled_run(tmp_path)
    change, field, words = JOURNAL_CASES[name]
    n = _tamper(journal, change)
    calls = len(byok_env.requests)
    line = assert_refused(["eval-all", plugin, "--model", "m", "--output", out, "--resume"], ["journal.jsonl", f"line {n}: {field}", words, "--resume"])
    assert "Traceback" not in line
    assert len(byok_env.requests) == calls, "nothing ran"


def test_resume_still_reuses_an_untouched_journal(byok_env, tmp_path):
    plugin, out, _ = _journalled_run(tmp_path)
    calls = len(byok_env.requests)
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"])
    assert code == 0, err
    assert len(byok_env.requests) == calls and "4 trials from the journal" in stdout


# ---------------------------------------------------------------- ${VAR} URLs, once expanded


def _target_eval(tmp: Path, spec: dict[str, Any]) -> Path:
    root = make_plugin(tmp, skills={"greeter": {"eval": simple_eval(execution={"mode": "agent", "target": "agent"})}})
    folder = root / "skills" / "greeter"
    (folder / "targets.yaml").write_text(yaml.safe_dump({"agent": spec}))
    return folder / "eval.yaml"


URL_CASES = {
    "port 99999": ("http://127.0.0.1:99999/agent", ["port", "1..65535"]),
    "port 0": ("http://127.0.0.1:0/agent", ["port 0"]),
    "port not a number": ("http://127.0.0.1:http/agent", ["not a valid URL"]),
    "ftp scheme": ("ftp://127.0.0.1/agent", ["http:// or https://"]),
    "no host": ("http:///agent", ["no host"]),
    "a space": ("http://127.0.0.1/a gent", ["space"]),
}


@pytest.mark.parametrize("name", list(URL_CASES))
def test_an_expanded_url_is_checked(name, byok_env, tmp_path, monkeypatch):
    url, words = URL_CASES[name]
    monkeypatch.setenv("AGENT_URL", url)
    path = _target_eval(tmp_path, {"type": "http", "url": "${AGENT_URL}", "skill_field": "skill"})
    line = assert_refused(["eval", path, "--output", tmp_path / "runs"], ["targets.yaml", "agent.url", "${AGENT_URL}", *words], byok_env)
    assert url not in line, "the expanded value is not shown"


def test_a_written_url_is_checked_at_load(byok_env, tmp_path):
    path = _target_eval(tmp_path, {"type": "http", "url": "http://127.0.0.1:70000/", "skill_field": "skill"})
    assert_refused(["eval", path, "--output", tmp_path / "runs"], ["targets.yaml", "agent.url", "1..65535"], byok_env)


def test_a_codex_base_url_is_checked_once_expanded(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_URL", "http://127.0.0.1:123456/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = _target_eval(tmp_path, {"type": "codex", "base_url": "${CODEX_URL}"})
    assert_refused(["eval", path, "--output", tmp_path / "runs"], ["targets.yaml", "agent.base_url", "${CODEX_URL}", "1..65535"], byok_env)


# ---------------------------------------------------------------- agent target specs


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
@pytest.mark.parametrize(("env", "field"), [
    ({"A=B": "x"}, "agent.env.A=B"),
    ({"A\x00B": "x"}, "agent.env.A\\0B"),
    ({"GOOD": "va\x00lue"}, "agent.env.GOOD"),
])
def test_an_agent_cli_env_is_checked_at_load(kind, env, field, byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = _target_eval(tmp_path, {"type": kind, "env": env})
    line = assert_refused(["eval", path, "--output", tmp_path / "runs"], ["targets.yaml", field], byok_env)
    assert "va\x00lue" not in line and "va\\x00lue" not in line


@pytest.mark.parametrize(("key_env", "state"), [("CODEX_TEST_KEY_UNSET", "is not set"), ("CODEX_TEST_KEY_EMPTY", "is empty")])
def test_codex_api_key_env_unset_is_refused_before_any_trial(key_env, state, byok_env, tmp_path, monkeypatch):
    monkeypatch.delenv("CODEX_TEST_KEY_UNSET", raising=False)
    monkeypatch.setenv("CODEX_TEST_KEY_EMPTY", "")
    path = _target_eval(tmp_path, {"type": "codex", "api_key_env": key_env})
    assert_refused(["eval", path, "--output", tmp_path / "runs"], ["targets.yaml", "agent.api_key_env", key_env, state], byok_env)
    assert not (tmp_path / "runs").exists(), "no trial started"


def test_a_codex_target_defined_but_not_used_does_not_need_its_key(byok_env, tmp_path, monkeypatch):
    monkeypatch.delenv("CODEX_TEST_KEY_UNSET", raising=False)
    path = _skill_eval(tmp_path, simple_eval(CHECKS))
    (path.parent / "targets.yaml").write_text(yaml.safe_dump({"other": {"type": "codex", "api_key_env": "CODEX_TEST_KEY_UNSET"}}))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code in (0, 1), err


# ---------------------------------------------------------------- NUL in instructions and prompts


def _activation(**kw: Any) -> dict[str, Any]:
    ev = simple_eval(CHECKS)
    ev["activation"] = {"should": ["Greet me", "Say hi to Bob"], "should_not": ["Sum 2+2", "Sort a list"], **kw}
    return ev


NUL_CASES = {
    "instruction": (lambda tmp: _skill_eval(tmp, simple_eval(CHECKS, instruction="Say hello\x00 now")), "eval", "task.instruction"),
    "a follow-up turn": (lambda tmp: _skill_eval(tmp, {**simple_eval(CHECKS), "task": {**simple_eval(CHECKS)["task"], "turns": ["ok\x00"]}}),
                         "eval", "task.turns[0]"),
    "activation prompt": (lambda tmp: _skill_eval(tmp, _activation(should=["Greet me\x00", "Say hi"])), "eval", "activation.should[0]"),
    "evals.json prompt": (lambda tmp: write_tc_eval(tmp / "tc", [{"id": 1, "prompt": "p\x00q"}]), "tc-eval", "evals[0].prompt"),
}


@pytest.mark.parametrize("name", list(NUL_CASES))
def test_a_nul_in_a_prompt_is_refused_at_load(name, byok_env, tmp_path):
    make, command, field = NUL_CASES[name]
    path = make(tmp_path)
    assert_refused([command, path, "--model", "m", "--output", tmp_path / "runs"], [str(path), field, "NUL"], byok_env)


def test_a_nul_in_an_activation_prompt_is_refused_by_activation(byok_env, tmp_path):
    path = _skill_eval(tmp_path, _activation(should_not=["Sum 2+2", "So\x00rt"]))
    assert_refused(["activation", path.parent.parent.parent, "--model", "m"], [str(path), "activation.should_not[1]", "NUL"], byok_env)


def test_a_nul_in_a_jsonl_dataset_input(byok_env, tmp_path):
    p = tmp_path / "cases.jsonl"
    p.write_text(json.dumps({"id": "a", "input": "what\x00", "expected_answer": "x"}) + "\n")
    assert_refused(["tc-eval", p, "--model", "m", "--output", tmp_path / "runs"], [str(p), "line 1:", "input", "NUL"], byok_env)


def _promptfoo(tmp: Path, csv_text: str) -> Path:
    folder = tmp / "pf"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: t\ndescription: t\n---\nTranslate.\n")
    (folder / "promptfooconfig.yaml").write_text("prompts: ['Translate to {{language}}: {{input}}']\ntests: file://tests.csv\n")
    (folder / "tests.csv").write_text(csv_text)
    return folder / "promptfooconfig.yaml"


@pytest.mark.parametrize(("csv_text", "field"), [
    ("language,input,__expected\nFrench,Hel\x00lo,icontains: bonjour\n", "tests (tests.csv row 2): input"),
    ("language,input,__expected\nFrench,Hello,icontains: bon\x00jour\n", "tests (tests.csv row 2): __expected"),
    ("language,in\x00put,__expected\nFrench,Hello,icontains: bonjour\n", "tests (tests.csv row 2): in\\0put"),
])
def test_a_nul_in_promptfoo_csv_tests(csv_text, field, byok_env, tmp_path):
    path = _promptfoo(tmp_path, csv_text)
    line = assert_refused(["eval", path, "--model", "m", "--output", tmp_path / "runs"], [str(path), field, "NUL"], byok_env)
    assert "ReaderError" not in line


# ---------------------------------------------------------------- judge-check gold lines


@pytest.mark.parametrize(("line", "key"), [
    ({"task": "t", "answer": "a", "rubric": "r", "score": 0.5, "scroe": 1}, "scroe"),
    ({"task": "t", "answer": "a", "assertion": "c", "label": True, "notes": "x"}, "notes"),
    ({"task": "t", "answer_a": "a", "answer_b": "b", "preference": "A", "answer": "c"}, "answer"),
    ({"task": "t", "answer": "a", "rubric": "r", "score": 1, "label": True}, "label"),
])
def test_an_unknown_key_in_a_gold_line_is_refused(line, key, byok_env, tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"task": "t", "answer": "a", "assertion": "c", "label": False}) + "\n" + json.dumps(line) + "\n")
    assert_refused(["judge-check", gold, "--model", "m"], [f"{gold}:2", key, "unknown key"], byok_env)


# ---------------------------------------------------------------- terminal escapes


ESC_KEY = "tasc\x1b]0;pwned\x07\x1b[31m"


def _cli_subprocess(args: list, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentsproof", *map(str, args)], capture_output=True, text=True, timeout=120,
        env={**os.environ, **(env_extra or {})}, stdin=subprocess.DEVNULL,
    )


def test_lint_shows_escapes_in_a_key_escaped(tmp_path):
    path = _skill_eval(tmp_path, {**simple_eval(CHECKS), ESC_KEY: 1})
    proc = _cli_subprocess(["lint", path])
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    assert "tasc\\x1b]0;pwned\\x07\\x1b[31m" in proc.stdout, proc.stdout
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_eval_shows_escapes_in_a_key_escaped(byok_env, tmp_path):
    path = _skill_eval(tmp_path, {**simple_eval(CHECKS), ESC_KEY: 1})
    env = {"AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": byok_env.base_url, "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY}
    proc = _cli_subprocess(["eval", path, "--model", "m", "--output", tmp_path / "runs"], env)
    assert proc.returncode == 30 and "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "tasc\\x1b]0;pwned\\x07\\x1b[31m" in lines[0], proc.stderr
    assert "\x1b" not in proc.stderr + proc.stdout and not byok_env.requests


def test_eval_output_shows_an_input_derived_name_escaped(byok_env, tmp_path):
    """Every line the console prints passes one filter: a model name from the command line
    (or AGENTSPROOF_MODEL) with an escape sequence is shown escaped in the run's summary."""
    byok_env.add(Rule(reply="hello"))
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval(CHECKS)}})
    env = {"AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": byok_env.base_url, "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY}
    proc = _cli_subprocess(["eval-all", plugin, "--model", "m\x1b[2J\x1b]0;x\x07", "--output", tmp_path / "runs"], env)
    assert proc.returncode in (0, 1), proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    assert "model m\\x1b]0;x\\x07" in proc.stdout, proc.stdout  # (the run's identity drops CSI sequences itself)


# ---------------------------------------------------------------- tampered recordings


def _agent_eval(tmp: Path) -> Path:
    d = tmp / "plug" / "skills" / "csv"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Write a summary.\n")
    agent = d / "agent.py"
    agent.write_text("open('summary.md', 'w').write('# Summary\\nTotal revenue: 3,500\\n')\nprint('done')\n")
    (d / "targets.yaml").write_text(yaml.safe_dump({"writer": {"type": "command", "command": [sys.executable, "{here}/agent.py"], "sandbox": False}}))
    ev = {"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "writer"}, "defaults": {"trials": 1, "timeout": 60},
          "task": {"name": "summary", "instruction": "Summarise.", "graders": [{"type": "files", "mustContain": {"summary.md": ["3,500"]}}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml"


def _recorded_run(tmp: Path) -> tuple[Path, dict[str, Any]]:
    path = _agent_eval(tmp)
    code, out, err = run_cli(["eval", path, "--output", tmp / "runs"])
    assert code in (0, 1), out + err
    run_json = next(p for p in (tmp / "runs").rglob("*-eval.json"))
    return run_json, read_json(run_json)


def _rec(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["items"][0]["with_arm"]["trials"][0]["files"] if f["path"] == "summary.md")


def test_regrade_refuses_a_file_record_outside_the_workspace(tmp_path):
    run_json, report = _recorded_run(tmp_path)
    _rec(report)["path"] = "../../outside.md"
    run_json.write_text(json.dumps(report))
    line = assert_refused(["regrade", run_json], [str(run_json), "items[0]", "cannot re-grade", "'../../outside.md'", "not a path inside its workspace"])
    assert "NotRecorded" not in line and "internal error" not in line
    assert not (tmp_path / "outside.md").exists()


def test_regrade_refuses_altered_stored_content(tmp_path):
    run_json, report = _recorded_run(tmp_path)
    sha = _rec(report)["sha256"]
    stored = run_json.with_name(run_json.stem + ".files") / sha[:2] / sha
    stored.chmod(0o600)
    stored.write_text("# Summary\nTotal revenue: 9,999\n")
    line = assert_refused(["regrade", run_json], [str(run_json), "items[0]", "cannot re-grade", "'summary.md'", "does not match its digest"])
    assert "NotRecorded" not in line


def test_regrade_refuses_a_digest_that_is_not_one(tmp_path):
    run_json, report = _recorded_run(tmp_path)
    _rec(report)["sha256"] = "../../../../etc/passwd"
    run_json.write_text(json.dumps(report))
    assert_refused(["regrade", run_json], [str(run_json), "items[0]", "not a SHA-256"])


def _atif_export(tmp: Path) -> tuple[Path, Path]:
    path = _agent_eval(tmp)
    code, out, err = run_cli(["eval", path, "--output", tmp / "runs", "--atif", tmp / "atif"])
    assert code in (0, 1), out + err
    return path, next(p for p in (tmp / "atif").rglob("with-*.json"))


def test_import_atif_refuses_a_tampered_file_record(tmp_path):
    path, traj = _atif_export(tmp_path)
    data = json.loads(traj.read_text())
    files = data["extra"]["agentsproof"]["files"]
    next(f for f in files if f["path"] == "summary.md")["path"] = "/etc/passwd"
    traj.write_text(json.dumps(data))
    line = assert_refused(["import", "atif", tmp_path / "atif", "--eval", path, "--output", tmp_path / "imported"],
                          [str(tmp_path / "atif"), "cannot grade", "'/etc/passwd'", "not a path inside its workspace"])
    assert "NotRecorded" not in line and "internal error" not in line


def test_import_atif_refuses_altered_stored_content(tmp_path):
    path, traj = _atif_export(tmp_path)
    sha = next(f for f in json.loads(traj.read_text())["extra"]["agentsproof"]["files"] if f["path"] == "summary.md")["sha256"]
    stored = tmp_path / "atif" / "files" / sha[:2] / sha
    stored.chmod(0o600)
    stored.write_text("tampered\n")
    assert_refused(["import", "atif", tmp_path / "atif", "--eval", path, "--output", tmp_path / "imported"],
                   [str(tmp_path / "atif"), "cannot grade", "does not match its digest"])
