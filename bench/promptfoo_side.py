"""promptfoo on the workload of bench/throughput.py, for a side-by-side wall time.

The same calls: every skill's prompt as a chat prompt with its SKILL.md as the system
message, and the baseline prompt without it (10 skills -> 20 prompts), one test with the
same three checks (contains OK, not-contains ERROR, regex ^O), ``--repeat`` trials, cache
off, ``-j`` at the harness's --parallel, against the same scripted server, writing a JSON
output file as the harness writes its reports. promptfoo and the Node.js runtime it needs
(the npm package ``node@22``) are installed from npm into bench/.promptfoo/ (gitignored)
the first time; PROMPTFOO_VERSION picks the version.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = HERE / ".promptfoo"
VERSION = os.environ.get("PROMPTFOO_VERSION", "0.123.1")
NODE = os.environ.get("PROMPTFOO_NODE", "22")
"""promptfoo needs Node >= 22.22: the npm package ``node@22`` puts that runtime beside it."""
BASELINE_SYSTEM = "You are a helpful assistant."


def ensure_promptfoo() -> Path:
    binary = PREFIX / "node_modules" / ".bin" / "promptfoo"
    installed = PREFIX / "node_modules" / "promptfoo" / "package.json"
    if binary.exists() and json.loads(installed.read_text()).get("version") == VERSION:
        return binary
    if not shutil.which("npm"):
        raise SystemExit("--with-promptfoo needs node and npm on PATH")
    PREFIX.mkdir(exist_ok=True)
    if not (PREFIX / "package.json").exists():
        (PREFIX / "package.json").write_text('{"private": true}\n')
    print(f"installing promptfoo@{VERSION} into {PREFIX} (once) ...", flush=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"promptfoo@{VERSION}", f"node@{NODE}"], cwd=PREFIX, check=True)
    return binary


def write_config(work: Path, plugin: Path, port: int) -> Path:
    folder = work / "promptfoo"
    folder.mkdir(exist_ok=True)
    prompts = []
    for skill in sorted((plugin / "skills").iterdir()):
        system = (skill / "SKILL.md").read_text()
        for arm, text in (("with", system), ("without", BASELINE_SYSTEM)):
            p = folder / f"{skill.name}-{arm}.json"
            p.write_text(json.dumps([{"role": "system", "content": text}, {"role": "user", "content": "Reply with OK."}]))
            prompts.append(f"file://{p}")
    config = {
        "description": "agentsproof throughput bench",
        "prompts": prompts,
        "providers": [{"id": "openai:chat:bench-model", "config": {"apiBaseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "sk-bench"}}],
        "tests": [
            {
                "assert": [
                    {"type": "contains", "value": "OK"},
                    {"type": "not-contains", "value": "ERROR"},
                    {"type": "regex", "value": "^O"},
                ]
            }
        ],
    }
    path = folder / "promptfooconfig.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def promptfoo_run(work: Path, plugin: Path, port: int, args: argparse.Namespace, rep: int) -> dict[str, float]:
    """(wall s, CPU s) of one ``promptfoo eval`` of the workload; checks every call was made."""
    binary = ensure_promptfoo()
    config = write_config(work, plugin, port)
    repeat = args.calls // (2 * args.items)
    out = work / f"promptfoo-{rep}.json"
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo" / f"home-{rep}"),
        "PROMPTFOO_CACHE_ENABLED": "false",
        "OPENAI_API_KEY": "sk-bench",
        "PATH": str(binary.parent) + os.pathsep + os.environ.get("PATH", ""),  # node@22 from bench/.promptfoo
    }
    cmd = [
        str(binary), "eval", "-c", str(config), "--repeat", str(repeat), "--no-cache",
        "-j", str(args.parallel), "--no-table", "--no-progress-bar", "-o", str(out),
    ]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=work / "promptfoo", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    stats = json.loads(out.read_text())["results"]["stats"] if out.exists() else {}
    done = stats.get("successes", 0) + stats.get("failures", 0)
    if stats.get("errors", 0) or done != args.calls:
        raise SystemExit(f"promptfoo exited {code} with {stats}: {stderr.decode(errors='replace')[-2000:]}")
    # CPU of node and anything it waited for (RUSAGE of the waited child)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}
