"""agentv's replay provider (tests/data/i45-rest/agentv/replay: copies of agentv's
trace-evaluation and copilot-transcript-replay examples, MIT): a recorded run replayed
offline as the trial, graders run fresh on it, and nothing reaches the model server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import only_report, run_cli

DATA = Path(__file__).parent.parent / "data" / "i45-rest" / "agentv" / "replay"


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "trace-evaluation"
    shutil.copytree(DATA, dst)
    return dst


def test_fixtures_are_replayed_and_graded(tmp_path, byok_env):
    root = _copy(tmp_path)
    code, _, err = run_cli(["eval", root / "evals" / "coding-agent-replay.eval.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert code == 0 and "Traceback" not in err, err
    assert "'replay_coding_agent' is agentv's replay provider" in err
    items = {i["name"]: i["with_arm"]["trials"][0] for i in only_report(tmp_path / "out")["items"]}
    first = items["inspect-and-fix-config"]
    assert [s["name"] for s in first["trajectory"]] == ["Read", "Grep", "Edit"]
    assert "default request timeout is 5000ms" in first["response"] and first["passed"], first
    assert first["usage"]["total_tokens"] > 0
    second = items["recover-from-tool-error"]
    assert [s["name"] for s in second["trajectory"]] == ["Read", "Read", "Edit"] and second["trajectory"][0]["ok"] is False
    assert byok_env.trial_requests() == []  # replayed, not asked


def test_transcripts_are_replayed_with_the_skills_they_loaded(tmp_path, byok_env):
    root = _copy(tmp_path)
    code, _, err = run_cli(["eval", root / "evals" / "skill-use.EVAL.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert code == 0 and "Traceback" not in err, err
    trial = only_report(tmp_path / "out")["items"][0]["with_arm"]["trials"][0]
    assert trial["response"].startswith("The top revenue months are November")
    assert trial["skills_invoked"] == [] and trial["graders"][0]["score"] == 1.0  # not-skill-used: the transcript loaded none
    assert byok_env.trial_requests() == []


def test_a_test_with_no_recording_errors_naming_the_key(tmp_path, byok_env):
    root = _copy(tmp_path)
    suite = root / "evals" / "coding-agent-replay.eval.yaml"
    suite.write_text(suite.read_text().replace("id: recover-from-tool-error", "id: never-recorded"))
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "Traceback" not in err, err
    items = {i["name"]: i["with_arm"]["trials"][0] for i in only_report(tmp_path / "out")["items"]}
    assert items["never-recorded"]["status"] == "errored"
    assert "no record(s) for test_id=never-recorded source_target=live_coding_agent" in json.dumps(items["never-recorded"]["error"])
    assert items["inspect-and-fix-config"]["status"] == "scored"


def test_a_recording_outside_the_project_is_refused(tmp_path, byok_env):
    root = _copy(tmp_path)
    (root / ".git").mkdir()  # the project root
    providers = root / ".agentv" / "providers.yaml"
    providers.write_text(providers.read_text().replace("../fixtures/replay-target-output.jsonl", "../../outside.jsonl"))
    (tmp_path / "outside.jsonl").write_text("{}\n")
    code, _, err = run_cli(["eval", root / "evals" / "coding-agent-replay.eval.yaml", "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and err.count("\n") == 1 and "[0].fixtures" in err, err
