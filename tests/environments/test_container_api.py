"""The TrialEnvironment API itself on the real engine (what graders such as Harbor's verifier
use): exec with env and stdin, copy in and out, read a file, a timeout stopping the
container, links leading out left behind on the way out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from docker_engine import own_containers

from agentsproof.model.environment import Environment
from agentsproof.isolation.environments import Environments


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


def test_the_seed_rides_on_the_first_root_command_and_is_copied_first_for_any_other_call(tmp_path: Path, docker_base_image: str) -> None:
    """On an image whose default user is root with GNU head and tar, the seed is not copied at
    start but unpacked by the first root command's own exec (its stdin intact after it); a
    command as another user, or a copy out, gets it copied in first."""

    async def main() -> None:
        envs = Environments()
        env = Environment(source="eval.yaml", image=docker_base_image)
        seed = tmp_path / "seed"
        (seed / "sub").mkdir(parents=True)
        (seed / "sub" / "in.txt").write_text("seeded")
        try:
            async with envs.container(env, trial="api/with/0", workspace=seed) as box:
                assert box.pending is not None  # not copied yet: the first command brings it
                got = await box.exec(["sh", "-c", "cat sub/in.txt; pwd; cat"], stdin=b"\x00binary stdin\xff", timeout=30)
                assert (got.returncode, got.stdout) == (0, b"seeded/workspace\n\x00binary stdin\xff"), got
                assert box.pending is None
            async with envs.container(env, trial="api/with/1", workspace=seed) as box:
                assert box.pending is not None
                got = await box.exec(["cat", "sub/in.txt"], user="nobody", timeout=30)  # not root: copied in first
                assert (got.returncode, got.stdout) == (0, b"seeded"), got
            async with envs.container(env, trial="api/with/2", workspace=seed) as box:
                back = tmp_path / "back"
                await box.copy_out(box.workdir, back, cap_bytes=1 << 20)  # nothing ran: the seed is there all the same
                assert (back / "sub" / "in.txt").read_text() == "seeded"
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []
