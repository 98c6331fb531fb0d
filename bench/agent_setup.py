"""What bench/loop_debug.py and bench/agent_overhead.py share: the real agent CLIs on the
scripted servers, a plugin whose skill makes the agent write a file, and the environment.

The scripted servers (tests/openai_server.py for Copilot, Codex and the chat target,
tests/anthropic_server.py for Claude Code) run in the bench's own process, on their own
threads; agentsproof and the CLIs run as child processes, so the servers' CPU never holds
their event loops. Every model reply is instant (0 ms): what is left is the agents' and ours.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from anthropic_server import AnthropicServer, tool_results, tool_use  # noqa: E402
from openai_server import Rule, ScriptedServer, response_outputs, tool_call, tool_reply  # noqa: E402
from openai_server import tool_results as chat_tool_results  # noqa: E402

VENV = ROOT / ".venv"
CLIS = {
    "copilot": ("COPILOT_CLI_PATH", VENV / "copilot-cli" / "node_modules" / ".bin" / "copilot"),
    "claude-code": ("CLAUDE_CLI_PATH", VENV / "claude-cli" / "node_modules" / ".bin" / "claude"),
    "codex": ("CODEX_CLI_PATH", VENV / "codex-cli" / "node_modules" / ".bin" / "codex"),
}
MARK = "WRITEMARK"
SKILL = f"---\nname: writer\ndescription: Writes the report file.\n---\n{MARK}: always write report.txt with the word done.\n"
PROMPT = "Do the job."
WRITE = "echo done > report.txt"
TARGETS = {
    "copilot": {"type": "copilot", "inject": "system"},
    "claude-code": {"type": "claude-code", "inject": "system"},
    "codex": {"type": "codex", "inject": "system"},
    "picker": {
        "type": "command",
        "command": [sys.executable, "-c", "import sys, pathlib; pathlib.Path('report.txt').write_text('done'); print('OK')", "{prompt}"],
    },
}
"""Every agent target of the workload (``picker``: a command target, the cheapest agent)."""


def cli_path(kind: str) -> str:
    """The pinned CLI (``make copilot-cli claude-cli codex-cli``), else SystemExit naming it."""
    env, default = CLIS[kind]
    path = os.environ.get(env) or str(default)
    if not Path(path).is_file():
        raise SystemExit(f"the {kind} CLI is not installed at {path}: run `make {kind.split('-')[0]}-cli` or set {env}")
    return path


def openai_reply(req: dict[str, Any]) -> Any:
    """Copilot (chat completions with tools), Codex (Responses API) and the chat target."""
    text = json.dumps(req)
    if PROMPT not in text:  # both arms do the same work: the overhead is measured, not the skill
        return "OK nothing to do"
    if "input" in req:  # Codex
        return tool_reply(tool_call("exec_command", {"cmd": WRITE})) if not response_outputs(req) else "OK wrote it"
    if req.get("tools") and not chat_tool_results(req):  # Copilot
        return tool_reply(tool_call("bash", {"command": WRITE, "description": "write"}))
    return "OK wrote it"


def anthropic_reply(req: dict[str, Any]) -> Any:
    """Claude Code: one Bash call that writes the file, then the answer."""
    if "tools" not in req or PROMPT not in json.dumps(req):
        return "OK nothing to do"
    return tool_use("Bash", {"command": WRITE, "description": "write"}) if not tool_results(req) else "OK wrote it"


class Servers:
    """Both scripted servers, started and stopped together."""

    def __enter__(self) -> Servers:
        self.openai = ScriptedServer([Rule(reply=openai_reply)])
        self.openai.start()
        self.anthropic = AnthropicServer([Rule(reply=anthropic_reply)])
        self.anthropic.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.anthropic.__exit__(None, None, None)
        self.openai.stop()


def write_plugin(root: Path, trials: int, targets: list[str], regex: bool = True) -> tuple[Path, Path]:
    """(the skill's folder with its eval.yaml, targets.yaml): graded by the files grader, a
    deterministic check (with a back-reference: the Python-``re`` helper) and skill_used."""
    d = root / "bench-plugin" / "skills" / "writer"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(SKILL)
    (d / "seed").mkdir()
    for i in range(20):  # a small seed, as an eval's workspace: folder has
        (d / "seed" / f"data-{i}.csv").write_text("region,revenue\n" + "north,1000\n" * 50)
    checks: dict[str, Any] = {"mustContain": ["OK"]}
    if regex:
        checks["regexMatch"] = [r"(O)K|\1"]  # a back-reference: not RE2, so the time-limited helper runs it
    ev = {
        "version": "2",
        "skill": "SKILL.md",
        "workspace": "seed/",
        "defaults": {"trials": trials, "timeout": 120, "threshold": 0.5},
        "task": {
            "name": "write",
            "instruction": PROMPT,
            "graders": [{"type": "files", "exists": ["report.txt"], "mustContain": {"report.txt": ["done"]}}, {"type": "deterministic", "checks": checks}],
        },
    }
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    tf = root / "targets.yaml"
    tf.write_text(yaml.safe_dump({t: TARGETS[t] for t in targets}))
    return d, tf


def child_env(servers: Servers, home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of agentsproof's child (and of a CLI run directly): every CLI pinned,
    BYOK for Copilot, the scripted servers' URLs, an empty HOME, no cache."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_HOME", "XDG_CACHE_HOME")}
    cache = Path(os.environ.get("COPILOT_CACHE_HOME") or Path.home() / ".cache" / "copilot")
    env.update(
        HOME=str(home),
        COPILOT_CACHE_HOME=str(cache),
        AGENTSPROOF_COPILOT_PROVIDER_URL=servers.openai.base_url,
        AGENTSPROOF_COPILOT_PROVIDER_KEY="sk-bench",
        ANTHROPIC_BASE_URL=servers.anthropic.base_url,
        ANTHROPIC_API_KEY="sk-ant-bench",
        OPENAI_BASE_URL=servers.openai.base_url,
        OPENAI_API_KEY="sk-bench",
        AGENTSPROOF_PROVIDER_TYPE="openai",
        AGENTSPROOF_PROVIDER_URL=servers.openai.base_url,
        AGENTSPROOF_PROVIDER_KEY="sk-bench",
        AGENTSPROOF_NO_CACHE="1",
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    for kind, (name, _) in CLIS.items():
        env[name] = cli_path(kind)
    env.update(extra or {})
    return env


def eval_argv(skill_dir: Path, targets_file: Path, targets: list[str], parallel: int, trials: int, out: Path) -> list[str]:
    """``python -m agentsproof eval`` over every target, side by side."""
    return [
        sys.executable, "-m", "agentsproof", "eval", str(skill_dir), "--targets", str(targets_file), "--target", ",".join(targets),
        "--parallel", str(parallel), "--trials", str(trials), "--model", "test-model", "--output", str(out), "--abort-after", "0",
    ]  # fmt: skip


def trial_statuses(out: Path) -> dict[str, dict[str, int]]:
    """Per target: how many trials scored and errored, and the errors' reasons."""
    report = json.loads(next(p for p in out.rglob("*.json") if not p.name.endswith(".journal.jsonl")).read_text())
    table: dict[str, dict[str, int]] = {}
    for item in report["items"]:
        row = table.setdefault(item["target"], {})
        for arm in ("with_arm", "without_arm"):
            for t in item[arm]["trials"]:
                key = t["status"] if t["status"] != "errored" else f"errored: {str(t.get('error'))[:120]}"
                row[key] = row.get(key, 0) + 1
    return table
