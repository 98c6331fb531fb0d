"""The TrialEnvironment API itself on the real engine (what graders such as Harbor's verifier
use): exec with env and stdin, copy in and out, read a file, a timeout stopping the
container, links leading out left behind on the way out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from docker_engine import own_containers

from agentsproof.model.environment import Environment
from agentsproof.targets.environments import Environments


def test_exec_copy_and_read_in_one_trial_container(tmp_path: Path, docker_base_image: str) -> None:
    async def main() -> None:
        envs = Environments()
        env = Environment(source="eval.yaml", image=docker_base_image)
        seed = tmp_path / "seed"
        seed.mkdir()
        (seed / "in.txt").write_text("seeded")
        tests = tmp_path / "tests"
        tests.mkdir()
        (tests / "test.sh").write_text("#!/bin/sh\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n")
        try:
            async with envs.container(env, trial="api/with/0", workspace=seed) as box:
                got = await box.exec(["sh", "-c", 'cat in.txt; echo " $SECRET_VALUE"; cat'], env={"SECRET_VALUE": "s3"}, stdin=b"from stdin", timeout=30)
                assert (got.returncode, got.stdout) == (0, b"seeded s3\nfrom stdin"), got
                await box.copy_in(tests, "/tests")
                ran = await box.exec(["sh", "/tests/test.sh"], timeout=30)
                assert ran.returncode == 0, ran
                assert await box.read_file("/logs/verifier/reward.txt", cap_bytes=100) == b"1\n"
                assert await box.read_file("/logs/verifier/reward.json", cap_bytes=100) is None
                await box.exec(["sh", "-c", "ln -s /etc/passwd out-link; ln -s in.txt ok-link; echo new > made.txt"], timeout=30)
                back = tmp_path / "back"
                notes = await box.copy_out(box.workdir, back, cap_bytes=1 << 20)
                assert sorted(p.name for p in back.iterdir()) == ["in.txt", "made.txt", "ok-link"], notes
                assert any("out-link" in n for n in notes), notes
                slow = await box.exec(["sleep", "30"], timeout=1)
                assert slow.timed_out
                assert box.stopped and "timeout" in box.stopped
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []
