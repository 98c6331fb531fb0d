"""A missing extra is one line naming it (server commands without uvicorn/SQLAlchemy);
reports are written with the user's umask, not 0600; an impossible --output / --junit path
is one line before any call; push --help names a file a command writes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Rule, make_plugin, run_cli

ROOT = Path(__file__).resolve().parents[2]
BLOCK = "import sys\nfor m in ('uvicorn', 'fastapi', 'sqlalchemy', 'alembic', 'psycopg', 'starlette'): sys.modules[m] = None\n"


@pytest.mark.parametrize("args", [["serve"], ["keys", "create", "--project", "p"], ["golden", "list"], ["push", "x.json"]])
def test_server_commands_without_the_server_extra_say_which_extra(args, tmp_path):
    code = BLOCK + f"from agentsproof.cli import main\nsys.argv = ['agentsproof', *{args!r}]\nmain()\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("AGENTSPROOF_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 30, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], proc.stderr
    assert lines[0].startswith("error: this command needs the 'server' extra (") and "pip install -e '.[server]'" in lines[0]


def _plugin(tmp_path):
    ev = {"version": "2", "defaults": {"trials": 1, "timeout": 30, "threshold": 0.6},
          "task": {"name": "t", "instruction": "greet", "graders": [{"type": "deterministic", "checks": {"mustContain": ["hello"]}}]}}
    return make_plugin(tmp_path / "p", skills={"greeter": {"prompt": "Say hello.", "eval": ev}}) / "skills" / "greeter"


def test_reports_follow_the_umask(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))
    old = os.umask(0o022)
    try:
        code, _, err = run_cli(["eval", _plugin(tmp_path), "--model", "m", "--output", tmp_path / "runs", "--junit", tmp_path / "j.xml"])
    finally:
        os.umask(old)
    assert code == 0, err
    written = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]
    assert written
    for p in written:
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, (p, oct(p.stat().st_mode))


@pytest.mark.parametrize("flag", ["--output", "--junit"])
def test_an_impossible_output_path_is_one_line_before_any_call(byok_env, tmp_path, flag):
    target = "/proc/agentsproof-no/x" if flag == "--output" else "/proc/agentsproof-no/j.xml"
    args = ["eval", _plugin(tmp_path), "--model", "m", "--output", tmp_path / "runs"]
    args = [*args[:-2], "--output", target] if flag == "--output" else [*args, "--junit", target]
    code, _, err = run_cli(args)
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: command line: {flag}: cannot create ") and "internal error" not in err
    assert byok_env.requests == []


def test_push_help_names_a_file_a_command_writes():
    code, out, _ = run_cli(["push", "--help"])
    assert code == 0 and "runs/my-plugin/eval-all-summary.json" in out and "-tc-eval.json" in out
