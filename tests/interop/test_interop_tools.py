"""The published tools beside ours, for real: agentv (npm) and `agentsproof eval` run the
same EVAL.yaml against the same scripted server, and the two agree per test;
`agentsproof compare` reads agentv's index.jsonl and agentprobe's own reports and its
verdicts agree with `agentprobe-compare`.

`make interop-tools` installs them (tests/interop/node_modules, .venv-interop); in CI a
missing tool is a failure, elsewhere the test is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import Rule, run_cli

ROOT = Path(__file__).resolve().parents[2]
AGENTV = Path(os.environ.get("AGENTSPROOF_AGENTV") or ROOT / "tests" / "interop" / "node_modules" / ".bin" / "agentv")
AGENTPROBE_PY = Path(os.environ.get("AGENTSPROOF_AGENTPROBE_PYTHON") or ROOT / ".venv-interop" / "bin" / "python")


def _need(path: Path, what: str) -> None:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{what} is not installed at {path}; `make interop-tools` installs it")
        pytest.skip(f"{what} not installed ({path}); run `make interop-tools`")


TESTS = [
    ("says-ok", "Say OK please", "OK", "contains"),
    ("says-banana", "Say banana please", "banana", "contains"),
    ("says-42", "Compute 6*7", "42", "contains"),
    ("says-done", "Are you done", "DONE", "icontains"),
    ("says-41", "Give the number", "41\\\\.$", "regex"),
    ("equals-ok", "Say exactly OK", "OK", "equals"),
]


def _eval_yaml(work: Path) -> Path:
    """One EVAL.yaml for both tools (test-level input: the installed agentv 4.42 reads no
    prompts/vars yet), one typed assertion per test."""
    work.mkdir(parents=True, exist_ok=True)
    tests = "".join(
        f"  - id: {tid}\n    input: {inp}\n    assert:\n      - type: {kind}\n        value: \"{val}\"\n"
        for tid, inp, val, kind in TESTS
    )
    path = work / "demo.eval.yaml"
    path.write_text(f"name: demo\ndescription: deterministic\ntests:\n{tests}", encoding="utf-8")
    return path


def _agentv_run(srv, work: Path, name: str) -> Path:
    (work / ".agentv").mkdir(parents=True, exist_ok=True)
    (work / ".agentv" / "targets.yaml").write_text(textwrap.dedent(f"""\
        targets:
          - name: default
            provider: openai
            endpoint: {srv.base_url}
            api_key: ${{{{ OPENAI_API_KEY }}}}
            model: ${{{{ AV_MODEL }}}}
            api_format: chat
        """), encoding="utf-8")
    _eval_yaml(work)
    env = {**os.environ, "OPENAI_API_KEY": "sk-interop", "AV_MODEL": "test-model", "NO_COLOR": "1"}
    proc = subprocess.run([str(AGENTV), "eval", "demo.eval.yaml", "--output", name], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    index = work / name / "index.jsonl"
    assert index.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return index


def test_agentv_and_agentsproof_agree_per_test_and_compare_reads_agentv(byok_env, tmp_path):
    _need(AGENTV, "agentv")
    srv = byok_env
    srv.add(Rule(reply="OK, done. The answer is 41."))
    # the SAME EVAL.yaml through our EVAL.yaml engine: no skill, so one arm; the same scripted answers
    ours_file = _eval_yaml(tmp_path / "ours-src")
    code, _, err = run_cli(["eval", ours_file, "--model", "test-model", "--output", tmp_path / "ours"])
    ours = {i["name"]: i["passed"] for i in json.loads((tmp_path / "ours" / "demo" / "demo-tc-eval.json").read_text())["items"]}
    assert code == 0, err  # no --ci: failing cases do not change the exit code

    first = _agentv_run(srv, tmp_path / "av", "run1")
    theirs = {r["test_id"]: r["execution_status"] == "ok" for r in map(json.loads, first.read_text().splitlines())}
    assert theirs == ours == {
        "says-ok": True, "says-banana": False, "says-42": False, "says-done": True, "says-41": True, "equals-ok": False,
    }

    srv.add(Rule(reply="banana, and the answer is 42"))  # the "fix" for two tests, a regression for one
    second = _agentv_run(srv, tmp_path / "av", "run2")
    code, stdout, err = run_cli(["compare", first, second.parent, "--json"])
    assert code == 0, err
    items = {i["id"]: i for i in json.loads(stdout)["items"]}
    assert (items["case-says-ok"]["before_rate"], items["case-says-ok"]["after_rate"]) == (1.0, 0.0)
    assert (items["case-says-banana"]["before_rate"], items["case-says-banana"]["after_rate"]) == (0.0, 1.0)
    code, stdout, _ = run_cli(["compare", first, second])
    assert any(line.strip().startswith("case-says-banana") and "↑" in line for line in stdout.splitlines())
    assert any(line.strip().startswith("case-says-ok") and "↓" in line for line in stdout.splitlines())


AGENTPROBE_SCRIPT = """
import json, sys
from agentprobe.schemas import CaseResult
from agentprobe.storage import build_report, save_report

spec = json.loads(sys.argv[1])
for name, runs, config in spec:
    results = [CaseResult(case_id=c, passed=p, answer="x", errored=e, error="HTTP 429" if e else None,
                          failure_reasons=[] if p else ["wrong answer"]) for c, p, e in runs]
    report = build_report("nova", "http", results, repeats=10, agent_config=config)
    report.run_id = name
    print(save_report(report, sys.argv[2]))
"""


def test_compare_reads_real_agentprobe_reports_and_agrees_with_agentprobe_compare(tmp_path):
    _need(AGENTPROBE_PY, "agentprobe-eval")
    before = [("calc-1", True, False)] * 10 + [("calc-2", True, False)] * 9 + [("calc-2", False, True)] + [("files-1", True, False)] * 10
    after = [("calc-1", False, False)] * 10 + [("calc-2", True, False)] * 8 + [("calc-2", False, False)] * 2 + [("files-1", True, False)] * 10
    spec = [["before", before, {"prompt": "plain"}], ["after", after, {"prompt": "no-tools"}]]
    proc = subprocess.run([str(AGENTPROBE_PY), "-c", AGENTPROBE_SCRIPT, json.dumps(spec), str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    theirs_out = subprocess.run([str(AGENTPROBE_PY.parent / "agentprobe-compare"), str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert theirs_out.returncode == 0, theirs_out.stderr
    theirs = {}
    for line in theirs_out.stdout.splitlines():
        parts = line.split()
        if line.startswith("  ") and len(parts) >= 2 and parts[0] in ("SAME", "BETTER", "WORSE", "NOISE", "NEW", "REMOVED", "INCONCLUSIVE"):
            theirs[parts[1].rstrip(":")] = parts[0]
    code, stdout, err = run_cli(["compare", a, b, "--json"])
    assert code == 0, err
    data = json.loads(stdout)
    ours = {i["name"]: i["verdict"] for i in data["items"]}
    assert ours == theirs == {"calc-1": "WORSE", "calc-2": "NOISE", "files-1": "SAME"}
    assert "configuration differs: prompt: 'plain' before, 'no-tools' after" in data["warnings"]
    calc2 = next(i for i in data["items"] if i["name"] == "calc-2")
    assert calc2["before_errored"] == 1 and calc2["before_scored"] == 9  # errored runs left out, as agentprobe does
