"""Per-trial overhead of a container trial, against the engine's own floor.

One trial of the command target whose agent is ``true``, four ways, on the same engine:

- ``floor``: ``docker run --rm IMAGE true`` (what any container costs on this engine);
- ``container``: an agentsproof container trial: a fresh labelled container with the relay
  as its main process (from the second trial on, started ahead while the previous trial
  ran), the workspace seed unpacked by the agent's own ``docker exec`` (or copied in), the
  workdir carried back out by that same exec (a tar of it on its stdout once the command
  ends; else ``docker cp``), extracted into the host workspace, the container removed in the
  background (``docker rm`` of the containers done meanwhile, together) (``Environments.start``
  → ``CommandTarget.run`` → ``Environments.collect`` → ``Environments.remove``): engine calls
  per trial, ``run -d`` (ahead), one ``exec``, a share of one ``rm``;
- ``bubblewrap``: the same target on the host under the bubblewrap sandbox;
- ``unconfined``: the same target with ``sandbox: false``.

Each at ``--parallel 1`` and ``4`` (trials started together, at most that many at once);
the figure is wall time per trial. The image is cached; the run also checks that asking for
a Dockerfile image twice builds it once (``rebuilt`` must be 0). Goal: container within 1.5×
of the floor.

    DOCKER_HOST=unix:///run/ap-docker/docker.sock .venv/bin/python bench/environments.py [--trials 24] [--image agentsproof-test/bookworm:base]

Exit status 1 when the container/floor ratio at --parallel 1 or 4 exceeds --target (or
the Dockerfile was rebuilt).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentsproof.model.environment import Environment  # noqa: E402
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem  # noqa: E402
from agentsproof.targets.base import TrialInput  # noqa: E402
from agentsproof.targets.command.target import CommandTarget, CommandTargetSpec  # noqa: E402
from agentsproof.isolation.engine import docker  # noqa: E402
from agentsproof.isolation.environments import Environments  # noqa: E402


def trial(workspace: Path, env: Environment | None) -> TrialInput:
    item = EvalItem(
        id="bench", name="bench", kind="skill", source_path="SKILL.md", system_prompt="s", task_name="t",
        prompt="go", graders=[], trials=1, timeout=60, threshold=0.5, environment=env,
    )  # fmt: skip
    return TrialInput(item=item, arm="without", index=0, system=BASELINE_SYSTEM_PROMPT, prompt="go", timeout=60, workspace=workspace)


def target(sandbox: bool) -> CommandTarget:
    spec = CommandTargetSpec(type="command", command=["true"], sandbox=sandbox)
    return CommandTarget("bench", spec, spec)


def seed(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text("region,revenue\nnorth,1200\n")
    return folder


async def timed(n: int, parallel: int, one: Callable[[int], Awaitable[None]]) -> float:
    sem = asyncio.Semaphore(parallel)

    async def slot(i: int) -> None:
        async with sem:
            await one(i)

    t0 = time.perf_counter()
    await asyncio.gather(*(slot(i) for i in range(n)))
    return (time.perf_counter() - t0) / n


async def main(args: argparse.Namespace) -> int:
    env = Environment(source="bench", image=args.image)
    envs = Environments()
    await envs.prepare([env])
    tmp = Path(tempfile.mkdtemp(prefix="ap-bench-"))
    box_target, bwrap_target, open_target = target(False), target(True), target(False)

    async def floor(i: int) -> None:
        got = await docker(["run", "--rm", "--network", "none", args.image, "true"])
        assert got.returncode == 0, got.reason()

    async def container(i: int) -> None:
        ws = seed(tmp / f"c{time.perf_counter_ns()}-{i}")
        box = await envs.start(env, trial=f"bench/{i}", workspace=ws)
        try:
            t = trial(ws, env)
            t.environment = box
            await box_target.run(t)
            await envs.collect(box, ws)
        finally:
            await envs.remove(box)

    async def host(tg: CommandTarget, i: int) -> None:
        ws = seed(tmp / f"h{time.perf_counter_ns()}-{i}")
        await tg.run(trial(ws, None))

    rows = []
    for parallel in (1, 4):
        await timed(2, parallel, container)  # warm the engine and the image's first-use probe
        row = {
            "floor": await timed(args.trials, parallel, floor),
            "container": await timed(args.trials, parallel, container),
            "bubblewrap": await timed(args.trials, parallel, lambda i: host(bwrap_target, i)),
            "unconfined": await timed(args.trials, parallel, lambda i: host(open_target, i)),
        }
        rows.append((parallel, row))
    # an unchanged Dockerfile is never rebuilt: the second run of the same image builds nothing
    ctx = tmp / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {args.image}\nRUN echo built > /built\n")
    built_env = Environment(source="bench", dockerfile=ctx / "Dockerfile", context=ctx)
    first, second = Environments(), Environments()
    await first.prepare([built_env])
    await second.prepare([built_env])
    rebuilt = len(second.built)
    await envs.close()
    print(f"per-trial wall time, {args.trials} trials each, image {args.image}")
    print(f"{'parallel':>8} {'floor':>8} {'container':>10} {'bubblewrap':>11} {'unconfined':>11} {'container/floor':>16}")
    for parallel, row in rows:
        ratio = row["container"] / row["floor"]
        print(f"{parallel:>8} {row['floor']:>7.3f}s {row['container']:>9.3f}s {row['bubblewrap']:>10.3f}s {row['unconfined']:>10.3f}s {ratio:>15.2f}x")
    print(f"unchanged Dockerfile rebuilt on the second run: {rebuilt} time(s) (built on the first: {len(first.built)})")
    worst = max(row["container"] / row["floor"] for _, row in rows)  # the goal holds at every --parallel, not just 1
    print(f"goal: container within {args.target:g}x of the floor at --parallel 1 and 4: {'met' if worst <= args.target else 'MISSED'} (worst {worst:.2f}x)")
    return 1 if worst > args.target or rebuilt else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--image", default="agentsproof-dev/bookworm:base")
    parser.add_argument("--target", type=float, default=1.5)
    sys.exit(asyncio.run(main(parser.parse_args())))
