"""Agent graders: files, script, tool_calls and skill_used, on real workspaces and real
processes; and the trace matching they share with the server."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentsproof.grading import tracecheck
from agentsproof.formats.eval_yaml.models import parse_eval_config
from agentsproof.grading.skill_used import SkillUsedGrader
from agentsproof.grading.tool_calls import ToolCallsGrader
from agentsproof.grading.script import ScriptGrader
from agentsproof.grading.files import FilesGrader
from agentsproof.core.errors import InputError
from agentsproof.grading.grade import TrialContext, combine, grade_all
from agentsproof.grading import files as files_mod
from agentsproof.grading.files import grade_files
from agentsproof.grading.script import grade_script
from agentsproof.grading.skill_used import grade_skill_used
from agentsproof.grading.tool_calls import grade_tool_calls
from agentsproof.model.results import ToolCall
from agentsproof.server.grading import check_assertions

PY = sys.executable


def eval_dict(*graders: dict[str, Any]) -> dict[str, Any]:
    return {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "x"},
        "task": {"name": "t", "instruction": "do it", "graders": list(graders)},
    }


def parse_grader(grader: dict[str, Any]) -> Any:
    return parse_eval_config(eval_dict(grader), "eval.yaml").primary_task.graders[0]


def load_error(grader: dict[str, Any]) -> str:
    with pytest.raises(InputError) as err:
        parse_eval_config(eval_dict(grader), "eval.yaml")
    return str(err.value)


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def files(ws: Path, **spec: Any):
    return grade_files(FilesGrader.model_validate({"type": "files", **spec}), TrialContext(answer="", workspace=ws))


def by_check(result) -> dict[tuple[str, str], Any]:
    return {(c.kind, c.target): c for c in result.checks}


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


# ------------------------------------------------------------------ files


def test_files_every_check_kind_passes_and_fails_with_evidence(ws: Path):
    write(ws, "chart.png", b"\x89PNG" + b"\0" * 46_000)
    write(ws, "summary.md", "Revenue grew 12% in Q3.\nTODO: none\n")
    write(ws, "out/result.json", '{"total": 3}')
    write(ws, "out/broken.json", '{"total": ')
    res = files(
        ws,
        exists=["chart.png", "out/*.csv"],
        absent=["*.tmp", "out/*.json"],
        mustContain={"summary.md": ["revenue", "profit"]},
        mustNotContain={"summary.md": ["lorem", "TODO"]},
        regexMatch={"summary.md": [r"\d+%", r"Q[5-9]"]},
        json=["out/result.json", "out/broken.json"],
        weight=2.0,
    )
    assert not res.errored and res.type == "files" and res.weight == 2.0
    by = by_check(res)
    assert [c.passed for c in res.checks] == [True, False] * 6
    assert res.score == pytest.approx(0.5)
    assert by[("exists", "chart.png")].evidence == "found chart.png (45 KB)"
    assert by[("exists", "out/*.csv")].evidence == "no file matches out/*.csv"
    assert by[("absent", "*.tmp")].evidence == "no file matches *.tmp"
    assert "found out/broken.json" in by[("absent", "out/*.json")].evidence
    assert by[("mustContain", "summary.md: revenue")].evidence.startswith("summary.md contains 'revenue': Revenue grew")
    assert by[("mustContain", "summary.md: profit")].evidence == "summary.md does not contain 'profit'"
    assert by[("mustNotContain", "summary.md: lorem")].evidence == "summary.md does not contain 'lorem'"
    assert "TODO: none" in by[("mustNotContain", "summary.md: TODO")].evidence
    assert "12%" in by[("regexMatch", r"summary.md: \d+%")].evidence
    assert by[("regexMatch", "summary.md: Q[5-9]")].evidence == "summary.md has no match"
    assert by[("json", "out/result.json")].evidence.startswith("out/result.json is valid JSON")
    assert by[("json", "out/broken.json")].evidence.startswith("out/broken.json is not valid JSON: ")


def test_globs_star_stays_in_a_folder_double_star_spans_and_dotfiles_count(ws: Path):
    write(ws, "top.csv", "a")
    write(ws, "out/deep/nested.csv", "a")
    write(ws, ".superlint-passed", "")
    res = files(ws, exists=["**/nested.csv", "out/**", ".superlint-passed", "*passed"], absent=["*/nested.csv", "out/*.csv"])
    assert [c.passed for c in res.checks] == [True] * 6, [c.evidence for c in res.checks]
    res = files(ws, exists=["*.csv"], absent=["**/*.csv"])
    by = by_check(res)
    assert by[("exists", "*.csv")].evidence == "found top.csv (1 B)"
    assert by[("absent", "**/*.csv")].evidence == "found out/deep/nested.csv (1 B), top.csv (1 B)"
    assert res.score == 0.5


def test_a_content_check_on_a_glob_holds_for_every_file(ws: Path):
    write(ws, "reports/a.md", "revenue up")
    write(ws, "reports/b.md", "costs down")
    check = by_check(files(ws, mustContain={"reports/*.md": ["revenue"]}))[("mustContain", "reports/*.md: revenue")]
    assert not check.passed and check.evidence.startswith("1 of 2 files fail: reports/b.md does not contain 'revenue'")
    write(ws, "reports/b.md", "revenue flat")
    check = by_check(files(ws, mustContain={"reports/*.md": ["revenue"]}))[("mustContain", "reports/*.md: revenue")]
    assert check.passed and check.evidence.startswith("all 2 files pass")
    check = files(ws, mustContain={"reports/*.txt": ["revenue"]}).checks[0]
    assert not check.passed and check.evidence == "no file matches reports/*.txt"
    check = files(ws, mustContain={"reports": ["revenue"]}).checks[0]
    assert not check.passed and check.evidence == "reports matches only folders"


def test_case_sensitivity_of_contains_checks(ws: Path):
    write(ws, "a.txt", "Straße HELLO")
    assert files(ws, mustContain={"a.txt": ["hello", "STRASSE"]}).score == 1.0
    assert files(ws, mustContain={"a.txt": ["hello"]}, caseSensitive=True).score == 0.0
    assert files(ws, mustNotContain={"a.txt": ["hello"]}, caseSensitive=True).score == 1.0


def test_symlinks_leading_outside_the_workspace_are_refused(ws: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "TOP-SECRET-VALUE")
    os.symlink(outside / "secret.txt", ws / "leak.txt")
    os.symlink(outside, ws / "leakdir")
    os.symlink(ws / "missing", ws / "dangling")
    res = files(
        ws,
        exists=["leak.txt", "leakdir/secret.txt", "**/secret.txt", "dangling"],
        mustContain={"leak.txt": ["TOP-SECRET"]},
        json=["leak.txt"],
    )
    by = by_check(res)
    assert res.score == 0.0
    for target in ("leak.txt", "leakdir/secret.txt"):
        assert by[("exists", target)].evidence == f"{target} is a symlink leading outside the workspace, refused"
    assert by[("exists", "**/secret.txt")].evidence == "no file matches **/secret.txt"  # linked folders are not walked
    assert by[("exists", "dangling")].evidence == "dangling is a broken symlink"
    assert "refused" in by[("mustContain", "leak.txt: TOP-SECRET")].evidence and "refused" in by[("json", "leak.txt")].evidence
    assert all("TOP-SECRET-VALUE" not in c.evidence for c in res.checks)
    # a link that stays inside is followed, and a refused one is still not "absent"
    os.symlink(ws / "real.txt", ws / "alias.txt")
    write(ws, "real.txt", "fine")
    res = files(ws, exists=["alias.txt"], mustContain={"alias.txt": ["fine"]}, absent=["leak.txt"])
    assert [c.passed for c in res.checks] == [True, False, True]


def test_a_pipe_is_refused_without_blocking(ws: Path):
    os.mkfifo(ws / "out.txt")
    res = files(ws, exists=["out.txt"], mustContain={"out.txt": ["x"]})
    assert res.score == 0.0 and all("not a regular file" in c.evidence for c in res.checks)


def test_files_over_the_read_limit_are_read_only_in_part(ws: Path):
    limit = files_mod.MAX_READ_BYTES
    write(ws, "big.log", b"a" * limit + b"NEEDLE")
    write(ws, "big.json", b"[" + b"1," * (limit // 2) + b"1]")
    res = files(ws, mustContain={"big.log": ["NEEDLE"]}, mustNotContain={"big.log": ["NEEDLE"]}, json=["big.json"])
    by = by_check(res)
    assert not by[("mustContain", "big.log: NEEDLE")].passed
    assert "(only its first 10.0 MB of 10.0 MB were read)" in by[("mustContain", "big.log: NEEDLE")].evidence
    assert "only its first 10.0 MB" in by[("mustNotContain", "big.log: NEEDLE")].evidence
    assert by[("json", "big.json")].evidence.startswith("big.json is too big to check")


def test_json_check_is_strict(ws: Path):
    write(ws, "nan.json", '{"x": NaN}')
    write(ws, "latin.json", b'{"x": "\xe9"}')
    write(ws, "bom.json", "\ufeff[1, 2]")
    res = files(ws, json=["nan.json", "latin.json", "bom.json"])
    assert [c.passed for c in res.checks] == [False, False, True]
    assert "NaN is not JSON" in res.checks[0].evidence


def test_files_grader_needs_a_workspace():
    spec = FilesGrader.model_validate({"type": "files", "exists": ["a"]})
    res = grade_files(spec, TrialContext(answer="hi"))
    assert res.errored and res.score is None and res.error == "the files grader needs an agent trial with a workspace"


# ------------------------------------------------------------------ config


def test_globs_leaving_the_workspace_are_refused_at_load():
    assert load_error({"type": "files", "exists": ["out/../../x"]}) == (
        "eval.yaml: task.graders[0].exists[0]: 'out/../../x' leaves the workspace ('..')"
    )
    assert load_error({"type": "files", "exists": ["ok", "/etc/passwd"]}) == (
        "eval.yaml: task.graders[0].exists[1]: '/etc/passwd' is an absolute path; give it relative to the workspace"
    )
    assert load_error({"type": "files", "mustContain": {"../x.md": ["a"]}}) == (
        "eval.yaml: task.graders[0].mustContain['../x.md']: '../x.md' leaves the workspace ('..')"
    )
    assert load_error({"type": "files", "json": ["a.json", "../b.json"]}) == (
        "eval.yaml: task.graders[0].json[1]: '../b.json' leaves the workspace ('..')"
    )
    assert load_error({"type": "script", "script": "../check.py"}) == (
        "eval.yaml: task.graders[0].script: '../check.py' leaves the workspace ('..')"
    )


def test_other_agent_grader_errors_name_the_field():
    assert load_error({"type": "files", "regexMatch": {"a.md": ["ok", "("]}}).startswith(
        "eval.yaml: task.graders[0].regexMatch['a.md'][1]: '(' is not a valid regex"
    )
    assert load_error({"type": "files", "mustContain": {"a.md": []}}) == "eval.yaml: task.graders[0].mustContain['a.md']: is empty; give at least one string"
    assert load_error({"type": "files"}).startswith("eval.yaml: task.graders[0].exists: a files grader needs at least one check")
    assert load_error({"type": "script", "run": "a", "command": "b"}) == "eval.yaml: task.graders[0].command: is the same as 'run'; keep one"
    assert load_error({"type": "script", "run": "a", "script": "b.py"}) == "eval.yaml: task.graders[0].script: give 'run' or 'script', not both"
    assert load_error({"type": "script"}).startswith("eval.yaml: task.graders[0].run: required field is missing")
    assert load_error({"type": "deterministic", "run": "x", "setup": "npm i"}) == "eval.yaml: task.graders[0].setup: unknown key"
    assert load_error({"type": "tool_calls", "min_steps": 3, "max_steps": 2}) == "eval.yaml: task.graders[0].min_steps: 3 is more than max_steps (2)"
    assert load_error({"type": "skill_used", "expected": "yes"}).startswith("eval.yaml: task.graders[0].expected:")


def test_agent_grader_forms_parse():
    g = parse_grader({"type": "files", "exists": "out.csv", "mustContain": {"./a.md": "x"}, "json": {"r.json": "valid"}})
    assert isinstance(g, FilesGrader) and g.exists == ["out.csv"] and g.mustContain == {"./a.md": ["x"]} and g.json_valid == ["r.json"]
    skillgrade = parse_grader({"type": "deterministic", "run": "bash graders/check.sh", "weight": 0.7})
    assert isinstance(skillgrade, ScriptGrader) and skillgrade.argv() == ["sh", "-c", "bash graders/check.sh"] and skillgrade.weight == 0.7
    assert parse_grader({"type": "script", "command": ["node", "c.js"]}).argv() == ["node", "c.js"]
    assert parse_grader({"type": "script", "script": "checks/v.py"}).argv() == ["python3", "checks/v.py"]
    assert parse_grader({"type": "script", "script": "v.sh"}).argv() == ["sh", "v.sh"]
    assert parse_grader({"type": "script", "script": "bin/verify"}).argv() == ["./bin/verify"]
    tc = parse_grader({"type": "tool_calls", "must_call": "search", "sequence": ["a", "b"]})
    assert isinstance(tc, ToolCallsGrader) and tc.must_call == ["search"]
    assert isinstance(parse_grader({"type": "skill_used", "expected": False}), SkillUsedGrader)


# ------------------------------------------------------------------ script


def script(run: Any = None, **extra: Any) -> ScriptGrader:
    data = {"type": "script", **({"run": run} if run is not None else {}), **extra}
    return ScriptGrader.model_validate(data)


async def test_exit_code_decides_and_the_output_tail_is_evidence(ws: Path):
    ctx = TrialContext(answer="a", workspace=ws)
    ok = await grade_script(script("echo all good"), ctx)
    assert (ok.score, ok.errored, ok.checks[0].passed, ok.checks[0].evidence) == (1.0, False, True, "exit 0: all good")
    bad = await grade_script(script("echo noise; for i in 1 2 3; do echo line$i >&2; done; exit 3"), ctx)
    assert bad.score == 0.0 and not bad.errored and not bad.checks[0].passed
    assert bad.checks[0].evidence == "exit 3: line1\nline2\nline3" and bad.checks[0].target == "echo noise; for i in 1 2 3; do echo line$i >&2; done; exit 3"
    argv = await grade_script(script([PY, "-c", "import sys; print('from argv'); sys.exit(1)"]), ctx)
    assert argv.score == 0.0 and argv.checks[0].evidence == "exit 1: from argv"


async def test_a_json_last_line_sets_the_score_with_checks(ws: Path):
    ctx = TrialContext(answer="a", workspace=ws)
    line = json.dumps({"score": 0.5, "details": "1/2 checks passed", "checks": [
        {"name": "file-created", "passed": True, "message": "exists"},
        {"name": "content", "passed": False, "message": "wrong"},
    ]})
    res = await grade_script(script(f"echo progress; echo '{line}'; exit 1"), ctx)
    assert res.score == 0.5 and not res.errored and res.reasoning == "1/2 checks passed"
    assert [(c.target, c.passed, c.evidence) for c in res.checks] == [("file-created", True, "exists"), ("content", False, "wrong")]
    plain = await grade_script(script("""echo '{"score": 1, "details": "ok"}'"""), ctx)
    assert plain.score == 1.0 and plain.checks[0].passed and plain.checks[0].evidence == "score 1: ok (exit 0)"
    pretty = await grade_script(script([PY, "-c", "import json; print(json.dumps({'score': 0.25}, indent=2))"]), ctx)
    assert pretty.score == 0.25
    no_score = await grade_script(script("""echo '{"status": "fine"}'; exit 2"""), ctx)
    assert no_score.score == 0.0 and no_score.checks[0].evidence.startswith("exit 2")


@pytest.mark.parametrize("bad", ["1.5", "-0.1", '"high"', "true", "null"])
async def test_a_score_outside_0_to_1_errors_the_grader(ws: Path, bad: str):
    res = await grade_script(script(f"""echo '{{"score": {bad}}}'"""), TrialContext(answer="a", workspace=ws))
    assert res.errored and res.score is None and "a score must be a number from 0 to 1" in (res.error or "")
    assert combine([res]) is None


async def test_a_timeout_errors_and_kills_the_whole_process_group(ws: Path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_UNCONFINED_PROGRAMS", "1")  # host PIDs: the process group's own stop (in the sandbox its PID namespace ends them)
    run = "sleep 60 & echo $! > grandchild.pid; sleep 60"
    res = await grade_script(script(run, timeout=60), TrialContext(answer="a", workspace=ws, timeout=2))  # how soon: bench/timings.py
    assert res.errored and res.error == "timed out after 2s; the command and every process it started were stopped"
    pid = int((ws / "grandchild.pid").read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


async def test_processes_left_running_after_a_normal_exit_are_stopped(ws: Path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_UNCONFINED_PROGRAMS", "1")  # host PIDs, as above
    res = await grade_script(script("sleep 60 & echo $! > left.pid; echo done"), TrialContext(answer="a", workspace=ws))
    assert res.score == 1.0 and res.checks[0].evidence == "exit 0: done"
    pid = int((ws / "left.pid").read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


CHECK_ENV = """
import json, os, sys
answer = os.environ["AGENTSPROOF_ANSWER_FILE"]
ws = os.environ["AGENTSPROOF_WORKSPACE"]
print(json.dumps({"score": 1, "details": json.dumps({
    "answer": open(answer, encoding="utf-8").read(), "answer_in_ws": os.path.realpath(answer).startswith(os.path.realpath(ws) + os.sep),
    "cwd": os.getcwd(), "ws": ws, "listing": sorted(os.listdir("."))})}))
"""


async def test_the_script_gets_the_answer_file_outside_the_workspace(ws: Path):
    write(ws, "made.txt", "x")
    res = await grade_script(script([PY, "-c", CHECK_ENV]), TrialContext(answer="the answer ✓\nline 2", workspace=ws))
    seen = json.loads(res.reasoning or "")
    assert seen["answer"] == "the answer ✓\nline 2" and seen["answer_in_ws"] is False
    assert Path(seen["cwd"]) == ws.resolve() == Path(seen["ws"]) and seen["listing"] == ["made.txt"]
    assert sorted(p.name for p in ws.iterdir()) == ["made.txt"]


async def test_a_chat_trial_script_runs_in_a_folder_holding_only_the_answer():
    res = await grade_script(script([PY, "-c", CHECK_ENV]), TrialContext(answer="chat answer"))
    seen = json.loads(res.reasoning or "")
    assert seen["answer"] == "chat answer" and seen["listing"] == ["answer.txt"] and seen["cwd"] == seen["ws"]
    assert not Path(seen["ws"]).exists()  # removed afterwards


async def test_script_files_run_by_extension_and_unstartable_commands_error(ws: Path):
    write(ws, "checks/verify.py", "import os, sys\nsys.exit(0 if os.path.exists('out.txt') else 4)\n")
    write(ws, "checks/verify.sh", "test -f out.txt\n")
    ctx = TrialContext(answer="", workspace=ws)
    assert (await grade_script(script(script="checks/verify.py"), ctx)).checks[0].evidence == "exit 4 (no output)"
    assert (await grade_script(script(script="checks/verify.sh"), ctx)).score == 0.0
    write(ws, "out.txt", "")
    assert (await grade_script(script(script="checks/verify.py"), ctx)).score == 1.0
    assert (await grade_script(script(script="checks/verify.sh"), ctx)).score == 1.0
    missing = await grade_script(script(["no-such-program-here"]), ctx)
    assert missing.errored and "cannot run 'no-such-program-here'" in (missing.error or "")


async def test_skillgrade_script_grader_runs_through_grade_all(ws: Path):
    write(ws, ".superlint-passed", "")
    run = (
        "passed=0\nif test -f .superlint-passed; then passed=$((passed + 1)); fi\n"
        'score=$(awk "BEGIN {printf \\"%.2f\\", $passed/2}")\n'
        'echo "{\\"score\\":$score,\\"details\\":\\"$passed/2 checks passed\\"}"\n'
    )
    spec = parse_grader({"type": "deterministic", "run": run, "weight": 0.7})
    ctx = TrialContext(answer="done", workspace=ws, trajectory=[ToolCall(name="bash")], skill_used=True)
    tools = parse_grader({"type": "tool_calls", "must_call": ["bash"], "weight": 0.3})
    results = await grade_all("done", [spec, tools], None, "task", context=ctx)
    assert [(r.type, r.score) for r in results] == [("script", 0.5), ("tool_calls", 1.0)]
    assert results[0].reasoning == "1/2 checks passed"
    assert combine(results) == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)


# ------------------------------------------------------------------ tool_calls


def trial(*names: str, workspace: Path | None = None) -> TrialContext:
    return TrialContext(answer="", workspace=workspace, trajectory=[ToolCall(name=n) for n in names])


def tool_calls(ctx: TrialContext, **spec: Any):
    return grade_tool_calls(ToolCallsGrader.model_validate({"type": "tool_calls", **spec}), ctx)


def test_tool_calls_each_check_passes_and_fails():
    ctx = trial("view", "mcp__github__search", "bash", "create", "bash")
    res = tool_calls(ctx, must_call=["mcp__*", "web_fetch"], must_not_call=["rm_*", "b*"], max_steps=5, min_steps=5)
    assert [(c.kind, c.target, c.passed) for c in res.checks] == [
        ("must_call", "mcp__*", True), ("must_call", "web_fetch", False),
        ("must_not_call", "rm_*", True), ("must_not_call", "b*", False),
        ("max_steps", "5", True), ("min_steps", "5", True),
    ]
    ev = [c.evidence for c in res.checks]
    assert ev[0] == "called 1 time(s), at step 2"
    assert ev[1] == "never called 'web_fetch' (calls: view, mcp__github__search, bash, create)"
    assert ev[2] == "never called 'rm_*'"
    assert ev[3] == "called 2 time(s) (bash), at step 3, 5"
    assert ev[4] == "5 step(s), at most 5 allowed" and ev[5] == "5 step(s), at least 5 required"
    assert res.score == pytest.approx(4 / 6) and res.type == "tool_calls"
    too_many = tool_calls(ctx, max_steps=4).checks[0]
    assert not too_many.passed and too_many.evidence == "5 step(s), at most 4 allowed"
    too_few = tool_calls(ctx, min_steps=6).checks[0]
    assert not too_few.passed and too_few.evidence == "5 step(s), at least 6 required"


def test_sequence_in_order_with_other_calls_between():
    ctx = trial("search", "view", "search", "create", "bash")
    ok = tool_calls(ctx, sequence=["search", "create", "bash"]).checks[0]
    assert ok.passed and ok.evidence == "in order: search (step 1) → create (step 4) → bash (step 5)"
    assert ok.target == "search → create → bash"
    late = tool_calls(ctx, sequence=["create", "search"]).checks[0]
    assert not late.passed and late.evidence.startswith("create (step 4), then no call to 'search' after step 4")
    assert tool_calls(ctx, sequence=["search", "search"]).score == 1.0
    assert tool_calls(ctx, sequence=["search", "search", "search"]).score == 0.0
    assert tool_calls(ctx, sequence=["*", "c*"]).score == 1.0


def test_only_star_is_a_wildcard_and_names_match_whole():
    ctx = trial("read_file", "a?b", "abc")
    assert tool_calls(ctx, must_call=["a?b"]).score == 1.0
    assert tool_calls(ctx, must_call=["a?c"]).score == 0.0
    assert tool_calls(ctx, must_call=["[a]bc"]).score == 0.0
    assert tool_calls(ctx, must_call=["read"]).score == 0.0
    assert tool_calls(ctx, must_call=["*_file"]).score == 1.0
    assert tool_calls(ctx, must_call=["READ_FILE"]).score == 0.0


def test_tool_calls_of_a_chat_trial_without_tools():
    res = tool_calls(trial(), must_not_call=["*"], max_steps=0, must_call=["search"])
    assert [c.passed for c in res.checks] == [False, True, True]
    assert res.checks[0].evidence == "never called 'search' (no tool was called)"


def test_server_trace_assertions_and_the_grader_agree():
    names = ["book_flight", "search", "delete_cart", "book_hotel", "pay"]
    steps = [{"step_index": i, "type": "tool_call", "name": n} for i, n in enumerate(names)]
    pairs = [("must_call", "book_*"), ("must_call", "refund"), ("must_not_call", "delete_*"), ("must_not_call", "cancel*"),
             ("max_steps", "5"), ("max_steps", "4"), ("min_steps", "5"), ("min_steps", "6"), ("must_call", "b?ok*")]
    server, free = check_assertions([f"{k}:{a}" for k, a in pairs] + ["asks before paying"], steps)
    assert free == ["asks before paying"]
    grader = []
    for kind, arg in pairs:
        value: Any = int(arg) if kind.endswith("steps") else [arg]
        grader.append(tool_calls(trial(*names), **{kind: value}).checks[0])
    assert [r["passed"] for r in server] == [c.passed for c in grader] == [True, False, False, True, True, False, True, False, False]
    assert [r["detail"] for r in server] == [c.evidence for c in grader]
    assert tracecheck.check("max_steps", "many", names) == tracecheck.Verdict(False, "'many' is not a whole number")


# ------------------------------------------------------------------ skill_used


@pytest.mark.parametrize(
    ("used", "expected", "passed", "evidence"),
    [
        (True, True, True, "the agent used 'pdf-tools'"),
        (False, True, False, "the agent did not use 'pdf-tools'"),
        (False, False, True, "the agent did not use 'pdf-tools'"),
        (True, False, False, "the agent used 'pdf-tools'"),
    ],
)
def test_skill_used_against_expected(used: bool, expected: bool, passed: bool, evidence: str):
    spec = SkillUsedGrader.model_validate({"type": "skill_used", "expected": expected})
    res = grade_skill_used(spec, TrialContext(answer="", skill_used=used, skill_name="pdf-tools"))
    assert not res.errored and res.score == (1.0 if passed else 0.0)
    assert res.checks[0].passed is passed and res.checks[0].evidence == evidence


def test_skill_used_unknown_errors():
    res = grade_skill_used(SkillUsedGrader.model_validate({"type": "skill_used"}), TrialContext(answer="", skill_used=None))
    assert res.errored and res.score is None and res.error == "the target cannot tell whether the skill was used"


def test_a_script_beside_the_eval_file_runs_from_there(tmp_path: Path) -> None:
    """``script:`` found in the eval's folder runs from there (the agent never sees it); one
    that is not there is looked up in the workspace."""
    import asyncio

    from agentsproof.grading.context import TrialContext
    from agentsproof.grading.script import grade_script

    eval_dir, ws = tmp_path / "eval", tmp_path / "ws"
    eval_dir.mkdir()
    ws.mkdir()
    (eval_dir / "check.py").write_text("import os, sys\nprint(os.environ['AGENTSPROOF_EVAL_DIR'])\nsys.exit(0 if os.path.exists('out.txt') else 1)\n")
    spec = parse_grader({"type": "script", "script": "check.py"})
    assert spec.argv(eval_dir) == ["python3", str((eval_dir / "check.py").resolve())]
    assert spec.argv(None) == ["python3", "check.py"]
    ctx = TrialContext(answer="a", workspace=ws, eval_dir=eval_dir, timeout=30)
    assert asyncio.run(grade_script(spec, ctx)).score == 0.0
    (ws / "out.txt").write_text("x")
    assert asyncio.run(grade_script(spec, ctx)).score == 1.0
