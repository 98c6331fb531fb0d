"""The trial journal and --resume (after SIGKILL), and --shard + merge = one machine's run.

Trial calls are counted at the scripted server: a resumed run must not redo a single
finished trial.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import SECRET_KEY, Rule, make_plugin, read_json, run_cli, simple_eval

CHECKS = [{"type": "deterministic", "checks": ["hello"]}]


def _plugin(tmp_path: Path, n: int = 3, trials: int = 2) -> Path:
    return make_plugin(tmp_path, skills={f"s{i}": {"eval": simple_eval(CHECKS, trials=trials, timeout=120)} for i in range(n)})


def _env(srv) -> dict[str, str]:
    env = {
        **os.environ,
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": srv.base_url,
        "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
        "AGENTSPROOF_RETRY_BASE_DELAY": "0",
    }
    env.pop("CI", None)
    return env


def test_sigkill_then_resume_redoes_no_finished_trial(scripted_server, tmp_path):
    plugin = _plugin(tmp_path, n=3, trials=2)  # 12 trial calls in all
    scripted_server.add(Rule(reply="hello", times=5), Rule(reply="hello, slowly", delay=60))
    out = tmp_path / "runs"
    args = [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--model", "m", "--parallel", "1", "--output", str(out)]
    proc = subprocess.Popen(args, env=_env(scripted_server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(scripted_server.requests) < 6:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    journal = out / "demo-plugin" / "eval-all-summary.journal.jsonl"
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header"
    finished = [json.loads(ln) for ln in lines[1:]]
    assert len(finished) == 5, "every finished trial is in the journal, flushed before the kill"
    assert not (out / "demo-plugin" / "eval-all-summary.json").exists()

    scripted_server.rules.clear()
    before = len(scripted_server.requests)
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"], env=_env(scripted_server))
    assert code == 0, err
    assert len(scripted_server.requests) - before == 12 - 5, "only the missing trials ran"
    report = read_json(out / "demo-plugin" / "eval-all-summary.json")
    assert report["incomplete"] is False and report["settings"]["reused_trials"] == 5
    assert "5 trials from the journal (--resume)" in stdout  # a resumed run says so, in the JSON's numbers
    assert all(it["with_arm"]["scored"] == 2 and it["without_arm"]["scored"] == 2 for it in report["items"])
    # an unchanged re-run with --resume makes no call at all
    again = len(scripted_server.requests)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"], env=_env(scripted_server))
    assert code == 0, err
    assert len(scripted_server.requests) == again


def test_resume_refuses_a_journal_of_another_configuration(byok_env, tmp_path):
    plugin = _plugin(tmp_path, n=1)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    assert code == 0, err
    code, _, err = run_cli(["eval-all", plugin, "--model", "m2", "--output", out, "--resume"])
    assert code == 30
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "journal.jsonl: --resume:" in lines[0] and "the model ('m' → 'm2')" in lines[0]
    (plugin / "skills" / "s0" / "SKILL.md").write_text("A different skill.\n")
    calls = len(byok_env.requests)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--resume"])
    assert code == 30 and "skills/s0: the skill/agent text changed" in err
    assert len(byok_env.requests) == calls


def test_resume_conflicts_with_retry_errors(byok_env, tmp_path):
    plugin = _plugin(tmp_path, n=1)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--resume", "--retry-errors", tmp_path / "x.json"])
    assert code == 30 and "--resume" in err and "--retry-errors" in err


def _comparable(report: dict) -> dict:
    """A report without what differs between any two runs (times, dates, run settings, and of
    the manifest the command line, the trials' digest (their times differ) and the merged
    report's list of its shards)."""
    drop = {"latency_s", "created_at", "duration_s", "t", "mean_latency_s", "settings"}

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in drop}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    out = clean(report)
    out["manifest"] = {k: v for k, v in out["manifest"].items() if k not in ("command_line", "trials", "shards")}
    return out


def test_shards_merged_equal_a_single_run(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello from the skill", system_contains="You are the"), Rule(reply="no greeting"))
    plugin = _plugin(tmp_path, n=5, trials=2)
    single = tmp_path / "single"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", single])
    assert code == 0, err
    shard_reports = []
    counts = []
    for i in (1, 2, 3):
        out = tmp_path / f"shard-{i}"
        code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--shard", f"{i}/3"])
        assert code == 0, err
        rep = out / "demo-plugin" / "eval-all-summary.json"
        shard_reports.append(rep)
        counts.append(len(read_json(rep)["items"]))
    assert sum(counts) == 5 and max(counts) < 5
    merged = tmp_path / "merged"
    code, stdout, err = run_cli(["merge", *shard_reports, "--output", merged])
    assert code == 0, err
    a = read_json(single / "demo-plugin" / "eval-all-summary.json")
    b = read_json(merged / "demo-plugin" / "eval-all-summary.json")
    assert _comparable(a) == _comparable(b)  # the manifest too: the same files, models, seeds and exit code
    assert b["manifest"]["trials"]["count"] == a["manifest"]["trials"]["count"] and b["manifest"]["command_line"][:2] == ["agentsproof", "merge"]
    assert [row["trials"] for row in b["manifest"]["shards"]] == [read_json(r)["manifest"]["trials"] for r in shard_reports]
    assert (merged / "demo-plugin" / "demo-plugin-eval.html").is_file()
    code, out, err = run_cli(["verify", merged / "demo-plugin" / "eval-all-summary.json"])
    assert code == 0 and "verified" in out, out + err
    # the same item always lands in the same shard
    code, _, _ = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "again", "--shard", "1/3"])
    again = read_json(tmp_path / "again" / "demo-plugin" / "eval-all-summary.json")
    assert [it["id"] for it in again["items"]] == [it["id"] for it in read_json(shard_reports[0])["items"]]


def test_merge_refuses_overlapping_or_mismatched_shards(byok_env, tmp_path):
    from agentsproof.executor.shard import shard_of

    plugin = _plugin(tmp_path, n=4, trials=1)
    # skills/s0..s2 land on shard 1 of 2 and skills/s3 on shard 2: both shards below hold items
    assert {shard_of(f"skills/s{i}", 2) for i in range(4)} == {1, 2}
    out = tmp_path / "a"
    run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    rep = out / "demo-plugin" / "eval-all-summary.json"
    code, _, err = run_cli(["merge", rep, rep, "--output", tmp_path / "m"])
    assert code == 30 and "one shard only" in err and len(err.strip().splitlines()) == 1
    other = tmp_path / "b"
    code, _, err = run_cli(["eval-all", plugin, "--model", "other-model", "--output", other, "--shard", "1/2"])
    assert code == 0, err
    first = tmp_path / "c"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", first, "--shard", "2/2"])
    assert code == 0, err
    first_rep, other_rep = first / "demo-plugin" / "eval-all-summary.json", other / "demo-plugin" / "eval-all-summary.json"
    assert [it["id"] for it in read_json(first_rep)["items"]] == ["skills/s3"]
    assert len(read_json(other_rep)["items"]) == 3
    code, _, err = run_cli(["merge", first_rep, other_rep, "--output", tmp_path / "m"])
    assert code == 30 and "model" in err and len(err.strip().splitlines()) == 1


def test_bad_shard_values(byok_env, tmp_path):
    plugin = _plugin(tmp_path, n=1)
    for bad in ("0/2", "3/2", "x", "1/0", "1/2/3"):
        code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--shard", bad])
        assert code == 30 and "--shard" in err, (bad, err)
    assert not byok_env.requests


def test_an_empty_shard_writes_an_empty_report_without_calls(byok_env, tmp_path):
    plugin = _plugin(tmp_path, n=1)
    from agentsproof.executor.shard import shard_of

    empty = 1 if shard_of("skills/s0", 2) == 2 else 2
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--shard", f"{empty}/2"])
    assert code == 0, err
    assert read_json(out / "demo-plugin" / "eval-all-summary.json")["items"] == []
    assert not byok_env.requests


def test_merge_refuses_shards_whose_files_differ(byok_env, tmp_path):
    """Two shards naming one file with different digests (it changed between the shard runs): refused, the file named."""
    plugin = _plugin(tmp_path, n=4, trials=1)
    reps = []
    for i in (1, 2):
        out = tmp_path / f"s{i}"
        code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--shard", f"{i}/2"])
        assert code == 0, err
        reps.append(out / "demo-plugin" / "eval-all-summary.json")
    first, second = read_json(reps[0]), read_json(reps[1])
    name, row = next(iter(first["manifest"]["files"].items()))
    second["manifest"]["files"][name] = {**row, "sha256": "0" * 64}
    reps[1].write_text(json.dumps(second), encoding="utf-8")
    code, _, err = run_cli(["merge", *reps, "--output", tmp_path / "m"])
    assert code == 30 and f"manifest.files.{name}" in err and "changed between the shard runs" in err, err


def test_merge_of_shards_with_broken_manifests_is_never_a_crash(byok_env, tmp_path):
    """A shard whose manifest is malformed (edited by hand): the merge still writes a report that verifies, or exits 30 in one line."""
    plugin = _plugin(tmp_path, n=4, trials=1)
    reps = []
    for i in (1, 2):
        out = tmp_path / f"s{i}"
        code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--shard", f"{i}/2"])
        assert code == 0, err
        reps.append(out / "demo-plugin" / "eval-all-summary.json")
    second = read_json(reps[1])
    second["manifest"].update(files={"a": "b", "c": None}, environments="x", agents=[1], models={"served": {"m": "nope"}}, seeds=3, options=None)
    reps[1].write_text(json.dumps(second), encoding="utf-8")
    code, _, err = run_cli(["merge", *reps, "--output", tmp_path / "m"])
    assert code == 0, err
    code, out, err = run_cli(["verify", tmp_path / "m" / "demo-plugin" / "eval-all-summary.json"])
    assert code == 0, out + err
