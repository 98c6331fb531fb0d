"""A fixed eval's JSON report stays byte-identical (timestamps, durations and paths aside).

Refactors promise "behaviour unchanged": this holds them to it. The eval (one task, four trials
per arm, two deterministic graders, one of them a regex) runs on the
scripted server, whose replies are fixed per arm, so every score, interval, grade and
count in the report is determined. When a change means the report *should* change,
regenerate the golden file on purpose:
``AGENTSPROOF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/report/test_report_stable.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from conftest import Rule, make_plugin, read_json, run_cli

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "eval-report.json"
MARK = "SKILLMARK"
VOLATILE_KEYS = {"started_at", "finished_at", "created_at", "timestamp", "generated_at", "date", "run_id", "version", "t"}
PORT = re.compile(r"127\.0\.0\.1:\d+")
TIME_KEY = re.compile(r"(_s|_ms|_seconds|duration|elapsed|wall|latency)$")


def _eval() -> dict[str, Any]:
    return {
        "version": "2",
        "defaults": {"trials": 4, "timeout": 30, "threshold": 0.6},
        "task": {
            "name": "greet",
            "instruction": "Say hello to the user and count to three.",
            "graders": [
                {"type": "deterministic", "checks": {"mustContain": ["hello"], "mustNotContain": ["TODO"]}, "weight": 0.5},
                {"type": "deterministic", "checks": {"regexMatch": ["-- bot$"]}, "weight": 0.5},
            ],
        },
    }


def _normalise(value: Any, root: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in VOLATILE_KEYS or TIME_KEY.search(k):
                out[k] = "<volatile>"
            else:
                out[k] = _normalise(v, root)
        return out
    if isinstance(value, list):
        return [_normalise(v, root) for v in value]
    if isinstance(value, str):
        return PORT.sub("127.0.0.1:<port>", value.replace(root, "<tmp>"))
    return value


def test_fixed_eval_report_is_unchanged(byok_env, tmp_path):
    srv = byok_env
    srv.add(
        Rule(reply="HELLO there, three -- bot", system_contains=MARK, judge=False),
        Rule(reply="hello, one two three", system_contains="You are a helpful assistant.", judge=False),
    )
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet and sign with -- bot.\n", "eval": _eval()}})
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml",
                            "--model", "test-model", "--output", out])
    assert code == 0, err
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    manifest = data.pop("manifest")  # its digest of the trials covers their latencies: checked by `agentsproof verify` (tests/commands/test_verify.py)
    assert manifest["trials"]["count"] == 8 and manifest["exit_code"] == 0
    got = _normalise(data, str(tmp_path))
    text = json.dumps(got, indent=1) + "\n"
    if os.environ.get("AGENTSPROOF_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
