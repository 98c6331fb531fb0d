"""How much of an agent trial is the agent and how much is ours, per built-in agent CLI.

For each of Copilot, Claude Code and Codex, on the scripted servers (bench/agent_setup.py:
0 ms model, one tool call that writes a file, then the answer), interleaved per round:

* **direct**: the CLI alone, its own floor. Claude Code and Codex are started exactly as
  agentsproof starts them (the same argv, environment and hermetic config folder, built by
  the target's own hooks), by ``subprocess`` with nothing else around them. Copilot: one
  session per trial through its SDK on a warm CLI process (what the target does), with
  the same model, provider, tools and working folder, every permission approved.
* **agentsproof**: ``agentsproof eval --target KIND`` on the same prompt and servers, with
  ``AGENTSPROOF_PHASES_FILE`` (agentsproof/core/phases.py): each trial's total time and its
  phases — ``seed`` (workspace seed copy), ``snapshot`` (before/after, the produced files'
  diff), ``prepare``, ``setup`` (hermetic home and config, skills staged), ``sandbox``,
  ``agent`` (the CLI process, or Copilot's session), ``events`` (reading and parsing the
  stream), ``cleanup``, ``graders``, ``journal``, ``finish`` (workspace deleted).

Both at ``--parallel 1`` and ``4`` (direct: that many at a time). Per trial it prints the
agent's own time (direct), agentsproof's agent phase, and ours = trial total − agent phase,
split by phase, with the targets: ours ≤ 0.25 s per trial at --parallel 4 and ≤ 15 % of
the agent's own time. Process start-up and the reports (once per run) are printed per run.

    python bench/agent_overhead.py [--trials 4] [--rounds 2] [--agents copilot,claude-code,codex] [--parallel 1,4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_setup import PROMPT, SKILL, Servers, child_env, eval_argv, trial_statuses, write_plugin  # noqa: E402

TARGET_OURS_S = 0.25
TARGET_SHARE = 0.15
PHASES = ("seed", "snapshot", "prepare", "setup", "sandbox", "events", "cleanup", "graders", "journal", "finish")


# -- the CLIs directly ---------------------------------------------------------------------


def direct_cli(kind: str, work: Path, trials: int, parallel: int) -> list[float]:
    """Seconds per run of the CLI alone, started as the target starts it (argv, env, config)."""
    from agent_clis import agent_trial, make_target

    from agentsproof.targets.agents.kit import Harness

    target = make_target(kind, "test-model")

    def one(i: int) -> float:
        trial = agent_trial(work / f"direct-{kind}-{parallel}-{i}", "with", SKILL, prompt=PROMPT, name=str(i))
        harness = Harness.create("agentsproof-bench-")
        try:
            staged = target._install(trial, harness)
            argv = target._turns(trial, staged, Path(os.path.realpath(trial.workspace))).argv(0)
            env = target._env(harness)
            with open(harness.stream, "wb") as out:
                t0 = time.perf_counter()
                subprocess.run(argv, cwd=trial.workspace, env=env, input=PROMPT.encode(), stdout=out, stderr=subprocess.DEVNULL, timeout=300, check=False)
                took = time.perf_counter() - t0
            if not (Path(trial.workspace) / "report.txt").exists():
                raise SystemExit(f"{kind} run directly did not write report.txt: {harness.stream.read_text()[-1000:]}")
            return took
        finally:
            harness.remove()

    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(one, range(trials)))


async def _copilot_sessions(work: Path, trials: int, parallel: int) -> list[float]:
    from copilot import CopilotClient, RuntimeConnection
    from copilot.generated.rpc import PermissionDecisionApproveOnce

    client = CopilotClient(connection=RuntimeConnection.for_stdio(path=os.environ["COPILOT_CLI_PATH"]), log_level="error", use_logged_in_user=False)
    await client.start()
    provider = {"type": "openai", "base_url": os.environ["AGENTSPROOF_COPILOT_PROVIDER_URL"], "api_key": os.environ["AGENTSPROOF_COPILOT_PROVIDER_KEY"]}
    sem = asyncio.Semaphore(parallel)

    async def one(i: int) -> float:
        folder = work / f"direct-copilot-{parallel}-{i}"
        folder.mkdir(parents=True)
        config = Path(tempfile.mkdtemp(prefix="agentsproof-bench-copilot-"))
        done = asyncio.Event()

        def on_event(event: Any) -> None:
            if type(getattr(event, "data", None)).__name__ in ("SessionIdleData", "SessionErrorData"):
                done.set()

        async with sem:
            t0 = time.perf_counter()
            session = await client.create_session(
                session_id=f"bench-{i}-{time.time_ns()}",
                model="test-model",
                provider=provider,
                system_message={"mode": "replace", "content": SKILL},
                available_tools=["bash", "view", "create"],
                on_permission_request=lambda request, invocation: PermissionDecisionApproveOnce(),
                working_directory=str(folder),
                infinite_sessions={"enabled": False},
                config_directory=str(config),
                enable_config_discovery=False,
                on_event=on_event,
            )
            await session.send(PROMPT)
            await done.wait()
            await session.disconnect()
            with contextlib.suppress(Exception):  # as the target does: a session may have no file to delete
                await client.delete_session(session.session_id)
            took = time.perf_counter() - t0
        if not (folder / "report.txt").exists():
            raise SystemExit("Copilot run directly did not write report.txt")
        return took

    try:
        await one(-1)  # the CLI's first session warms it up, as the target's first trial does (not counted)
        return list(await asyncio.gather(*(one(i) for i in range(trials))))
    finally:
        await client.stop()


def direct(kind: str, work: Path, trials: int, parallel: int) -> list[float]:
    """The agent's own time per trial, run directly."""
    if kind == "copilot":
        return asyncio.run(_copilot_sessions(work, trials, parallel))
    return direct_cli(kind, work, trials, parallel)


# -- through agentsproof ----------------------------------------------------------------------


def through_agentsproof(kind: str, work: Path, servers: Servers, trials: int, parallel: int, tag: str) -> dict[str, Any]:
    """Run ``agentsproof eval --target KIND``; its trials' phase lines and the run's wall time."""
    skill, targets_file = write_plugin(work / f"plugin-{tag}", max(1, trials // 2), [kind], regex=False)
    phases_file = work / f"phases-{tag}.jsonl"
    env = child_env(servers, work / "home", {"AGENTSPROOF_PHASES_FILE": str(phases_file)})
    out = work / f"runs-{tag}"
    t0 = time.time()
    proc = subprocess.run(eval_argv(skill, targets_file, [kind], parallel, max(1, trials // 2), out), env=env, capture_output=True, text=True, timeout=3600)
    t1 = time.time()
    if proc.returncode not in (0, 1) or not list(out.rglob("*.json")):
        raise SystemExit(f"agentsproof ({kind}) exited {proc.returncode}: {proc.stderr[-2000:]}")
    statuses = trial_statuses(out)
    bad = {k: v for row in statuses.values() for k, v in row.items() if k != "scored"}
    if bad:
        raise SystemExit(f"agentsproof ({kind}): trials not scored: {bad}")
    lines = [json.loads(line) for line in phases_file.read_text().splitlines()]
    first = min(r["started_at"] for r in lines)
    last = max(r["started_at"] + r["total"] for r in lines)
    return {"trials": lines, "wall_s": t1 - t0, "before_trials_s": first - t0, "after_trials_s": t1 - last}


# -- the table ------------------------------------------------------------------------------


def summarize(kind: str, parallel: int, own: list[float], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per trial over every round."""
    trials = [t for r in runs for t in r["trials"]]
    # Copilot's CLI process starts once per run, inside its first trial's session ("cli_start"): the agent's, shown apart
    agent = [t["phases"].get("agent", 0.0) - t["phases"].get("cli_start", 0.0) for t in trials]
    cli_start = sum(t["phases"].get("cli_start", 0.0) for t in trials) / len(runs)
    ours = [t["total"] - t["phases"].get("agent", 0.0) for t in trials]
    split = {p: statistics.median(t["phases"].get(p, 0.0) for t in trials) for p in PHASES}
    # what the target's run spends outside its own named phases (its bookkeeping)
    split["target (rest)"] = statistics.median(
        t["phases"].get("target", 0.0) - sum(t["phases"].get(p, 0.0) for p in ("agent", "setup", "sandbox", "events", "cleanup")) for t in trials
    )
    own_s = statistics.median(own)
    ours_s = statistics.median(ours)
    return {
        "agent": kind,
        "parallel": parallel,
        "direct_s": round(own_s, 3),
        "agent_phase_s": round(statistics.median(agent), 3),
        "cli_start_per_run_s": round(cli_start, 3),
        "ours_s": round(ours_s, 3),
        "ours_share": round(ours_s / own_s, 3) if own_s else None,
        "phases_s": {k: round(v, 4) for k, v in split.items() if v > 0.00005},
        "per_run": {
            "wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
            "start_up_s": round(statistics.median(r["before_trials_s"] for r in runs), 2),
            "reports_and_exit_s": round(statistics.median(r["after_trials_s"] for r in runs), 2),
        },
        "ok": ours_s <= TARGET_OURS_S and (own_s == 0 or ours_s / own_s <= TARGET_SHARE) if parallel > 1 else ours_s / own_s <= TARGET_SHARE,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=4, help="trials per run (both arms together; even)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (direct, then agentsproof, per agent)")
    ap.add_argument("--agents", default="copilot,claude-code,codex")
    ap.add_argument("--parallel", default="1,4")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    levels = [int(p) for p in args.parallel.split(",")]
    own: dict[tuple[str, int], list[float]] = {}
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="agentsproof-overhead-") as tmp, Servers() as servers:
        work = Path(tmp)
        os.environ.update(child_env(servers, work / "home"))  # the targets built here for the direct runs read it
        for rnd in range(args.rounds):
            for kind in agents:
                for p in levels:
                    tag = f"{kind}-{p}-{rnd}"
                    own.setdefault((kind, p), []).extend(direct(kind, work / f"d-{tag}", args.trials, p))
                    runs.setdefault((kind, p), []).append(through_agentsproof(kind, work / f"a-{tag}", servers, args.trials, p, tag))
    rows = [summarize(kind, p, own[(kind, p)], runs[(kind, p)]) for kind in agents for p in levels]
    if args.json:
        print(json.dumps(rows))
        return 0 if all(r["ok"] for r in rows) else 1
    print(f"{args.trials} trials per run, {args.rounds} interleaved rounds; medians per trial (s)")
    print(f"{'agent':12s} {'par':>3s} {'direct':>7s} {'agent':>7s} {'ours':>6s} {'share':>6s}  ours by phase")
    for r in rows:
        split = ", ".join(f"{k} {v:.3f}" for k, v in sorted(r["phases_s"].items(), key=lambda kv: -kv[1]))
        share = f"{r['ours_share'] * 100:5.1f}%" if r["ours_share"] is not None else "   —"
        print(f"{r['agent']:12s} {r['parallel']:3d} {r['direct_s']:7.3f} {r['agent_phase_s']:7.3f} {r['ours_s']:6.3f} {share}  {split}")
        pr = r["per_run"]
        start = f", the CLI's own start {r['cli_start_per_run_s']:.2f} s" if r["cli_start_per_run_s"] else ""
        print(
            f"{'':12s}     per run: wall {pr['wall_s']:.2f} s, start-up to the first trial {pr['start_up_s']:.2f} s, "
            f"last trial to exit {pr['reports_and_exit_s']:.2f} s{start}"
        )
    print(f"targets: ours <= {TARGET_OURS_S} s per trial at --parallel > 1, <= {TARGET_SHARE:.0%} of the agent's own time: "
          + ", ".join(f"{r['agent']}@{r['parallel']} {'ok' if r['ok'] else 'MISSED'}" for r in rows))  # fmt: skip
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
