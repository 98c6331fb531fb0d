"""The first hour's waits (issue 46): how soon a CI log shows progress, and how soon a run
with a wrong port or a wrong key stops — each measured from the moment the command is
started, as a user would time it, with the start-up of the same command (``--plan``, which
makes no call) beside it as the reference.

| case | measured | target |
|---|---|---|
| `progress` | `agentsproof eval` against a 400 ms model, stderr a pipe: the first `progress:` line | < 5 s |
| `unreachable` | `agentsproof eval` with ``AGENTSPROOF_PROVIDER_URL`` on a closed port: the line naming the URL and its variable; the exit (30) after the report | < 5 s |
| `refused-key` | `agentsproof eval` against a server answering 401: the line naming it, calls made; the exit (30) | < 5 s, 1 call |
| `parallel` | 10 trials per arm against the 400 ms model at ``--parallel 1`` and ``--parallel 8`` | none (the ``--parallel`` hint speaks only when more at once would save 20 s or more, ``HINT_SAVES_S``; these 20 trials cannot) |

    python bench/first_hour.py [--json]

Exit status 1 when a case misses its target.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from openai_server import Rule, ScriptedServer  # noqa: E402

EVAL = """version: "2"
skill: SKILL.md
defaults: {trials: %d, threshold: 0.6, timeout: 60}
task: {name: t, instruction: "Say hello.", graders: [{type: deterministic, checks: [hello]}]}
"""


def _plugin(tmp: Path, trials: int) -> Path:
    skill = tmp / "plug" / "skills" / "s"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text("Say hello.\n")
    (skill / "eval.yaml").write_text(EVAL % trials)
    return skill / "eval.yaml"


def _env(url: str, key: str = "k") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTSPROOF_", "CI"))}
    env.update(
        AGENTSPROOF_PROVIDER_TYPE="openai",
        AGENTSPROOF_PROVIDER_URL=url,
        AGENTSPROOF_PROVIDER_KEY=key,
        AGENTSPROOF_NO_CACHE="1",
        PYTHONPATH=str(ROOT),
    )
    return env


def _cmd(eval_file: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "agentsproof", "eval", str(eval_file), "--model", "m", "--output", str(out), *extra]


def startup(tmp: Path, url: str) -> float:
    """The reference: the same command with --plan (start-up, load, plan; no call)."""
    t0 = time.perf_counter()
    subprocess.run(_cmd(_plugin(tmp, 5), tmp / "runs", "--plan"), env=_env(url), capture_output=True, check=True)
    return time.perf_counter() - t0


def first_progress(tmp: Path, url: str) -> float:
    """Seconds from start to the first ``progress:`` line on stderr (a pipe, as in CI)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(_cmd(_plugin(tmp, 10), tmp / "runs"), env=_env(url), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = float("inf")
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip().startswith("progress:"):
            took = time.perf_counter() - t0
            break
    proc.kill()
    proc.wait()
    return took


def stop_time(tmp: Path, url: str, key: str = "k") -> tuple[float, float, int, str]:
    """(seconds to the line naming the cause, seconds to exit, exit status, that line) of an eval run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        _cmd(_plugin(tmp, 5), tmp / "runs", "--parallel", "1"), env=_env(url, key), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    said, line = float("inf"), ""
    assert proc.stderr is not None
    for ln in proc.stderr:
        if "stopping the run" in ln and said == float("inf"):
            said, line = time.perf_counter() - t0, ln.strip()
    code = proc.wait()
    return said, time.perf_counter() - t0, code, line


def wall(tmp: Path, url: str, parallel: int) -> tuple[float, bool]:
    """(seconds of a 10-trials-per-arm run, whether the --parallel hint was printed)."""
    t0 = time.perf_counter()
    done = subprocess.run(_cmd(_plugin(tmp, 10), tmp / "runs", "--parallel", str(parallel)), env=_env(url), capture_output=True, text=True)
    return time.perf_counter() - t0, "hint: " in done.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with ScriptedServer([Rule(reply="hello", delay=0.4)]) as slow, ScriptedServer([Rule(status=401, message="bad key")]) as refusing:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            ref = startup(tmp / "a", slow.base_url)
            rows.append(("startup (--plan, no call)", ref, None, ""))
            rows.append(("progress: first line in a log", first_progress(tmp / "b", slow.base_url), 5.0, "400 ms model"))
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            said, took, code, line = stop_time(tmp / "c", f"http://127.0.0.1:{port}/v1")
            rows.append(("unreachable: the cause said", said, 5.0, line[:150]))
            rows.append(("unreachable: exit (report written)", took, None, f"exit {code}"))
            before = len(refusing.requests)
            said, took, code, line = stop_time(tmp / "d", refusing.base_url, key="wrong")
            rows.append(("refused key (401): the cause said", said, 5.0, f"{len(refusing.requests) - before} call(s): {line[:110]}"))
            rows.append(("refused key (401): exit", took, None, f"exit {code}"))
            one, hinted = wall(tmp / "e", slow.base_url, 1)
            eight, _ = wall(tmp / "f", slow.base_url, 8)
            rows.append(("20 trials at --parallel 1", one, None, f"hint printed: {hinted}"))
            rows.append(("20 trials at --parallel 8", eight, None, ""))
    failed = [r for r in rows if r[2] is not None and r[1] >= r[2]]
    if args.json:
        print(json.dumps([{"case": c, "seconds": round(s, 2), "target": t, "note": n} for c, s, t, n in rows], indent=2))
    else:
        for case, secs, target, note in rows:
            print(f"{case:<34} {secs:6.2f} s" + (f"  (target < {target:g} s)" if target else "") + (f"  {note}" if note else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
