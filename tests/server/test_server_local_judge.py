"""The default judge: the embedded local model (SmolLM2 via llama.cpp), no key, no network.

Slow-ish (one grading on CPU). The verdict schema is exact enough for llama.cpp's grammar
to force its shape, so the grade is done with five axes; if the tiny model still fails it
must be errored with a reason, never a silent score."""

from __future__ import annotations


import pytest
from server_helpers import api, new_run, wait_grade

from serverkit import running_server

pytestmark = pytest.mark.local_model

from conftest import require_local_model  # noqa: E402

require_local_model()


def test_default_local_judge_grades_a_run(tmp_path):
    env = {"AGENTSPROOF_PROVIDER_URL": "", "AGENTSPROOF_PROVIDER_KEY": "", "AGENTSPROOF_MODEL": "", "AGENTSPROOF_PROVIDER_TYPE": ""}
    with running_server(tmp_path, env=env) as srv:  # no --provider: serve defaults to the local model
        key = srv.create_key("p")
        with api(srv, key) as c:
            run_id = new_run(c, "p", input="What is 2+2?", goal="answer correctly", successCriteria=["says 4"])
            c.post(f"runs/{run_id}/complete", json={"output": "4"})
            grade = wait_grade(c, run_id, "done", timeout=400)
    assert set(grade["axes"]) == {"goal_completion", "output_quality", "tool_accuracy", "step_efficiency", "safety"}
    assert 0 <= grade["overall_score"] <= 1
    assert [r["criterion"] for r in grade["criteria_results"]] == ["says 4"]
