"""The workdir carried out by the agent's own last exec (``Container.exec(keep=...)``), on the
real engine: what comes back is what ``docker cp`` brings (files, folders, links inside; a
link leading out left behind and named), the command's stdout, stderr and exit code are
intact, any later call drops the kept tar, a timeout keeps nothing and errors the trial,
and an image that cannot carry (no tar) takes the old path."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import yaml
from conftest import read_json, run_cli
from docker_engine import own_containers

from agentsproof.model.environment import Environment
from agentsproof.isolation.engine import OUTPUT_CAP
from agentsproof.isolation.environments import Environments

TRACE = "/var/tmp/agentsproof/trace.jsonl"
AGENT = r"""
set -e
rm seeded-gone.txt
mkdir -p sub/deeper empty
printf 'x\000y' > sub/deeper/bin.dat
echo made > made.txt && chmod 751 made.txt
echo spaced > 'a b.txt'
ln -s made.txt ok-link
ln made.txt hard.txt
mkfifo a-fifo
ln -s sub sub-link
ln -s /etc/passwd abs-out
ln -s ../../etc rel-out
echo '{"step": 1}' > /var/tmp/agentsproof/trace.jsonl
cat > from-stdin.txt
printf 'out\000put'
echo err >&2
exit 7
"""


def seed(folder: Path) -> Path:
    """A workspace seed: a nested file, and one the agent removes."""
    (folder / "keep" / "nested").mkdir(parents=True)
    (folder / "keep" / "nested" / "in.txt").write_text("seeded")
    (folder / "seeded-gone.txt").write_text("to be removed")
    return folder


def tree(root: Path) -> dict[str, tuple[str, str, int]]:
    """Every entry below ``root``: (kind, content or link target, mode), no link followed."""
    found: dict[str, tuple[str, str, int]] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = path.lstat()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path), 0)
            elif path.is_dir():
                found[rel] = ("dir", "", st.st_mode & 0o7777)
            else:
                found[rel] = ("file", path.read_bytes().hex(), st.st_mode & 0o7777)
    return found


def base_env(image: str) -> Environment:
    """The shared base image as an eval's environment (root, GNU tar: it can carry)."""
    return Environment(source="eval.yaml", image=image)


def test_the_carried_workdir_is_what_docker_cp_brings_and_the_output_is_intact(tmp_path: Path, docker_base_image: str) -> None:
    """The same agent in two containers, one carrying its workdir out, one not: the same tree
    and notes come back, the same stdout, stderr and exit code; the kept tar answers
    ``copy_out`` and ``read_file`` (the trace beside it too) with the container gone."""

    async def main() -> None:
        envs = Environments()
        env = base_env(docker_base_image)
        try:
            results = {}
            for how in ("carried", "copied"):
                box = await envs.start(env, trial=f"carry/{how}/0", workspace=seed(tmp_path / f"seed-{how}"))
                try:
                    keep = (TRACE,) if how == "carried" else None
                    res = await box.exec(["sh", "-c", AGENT], stdin=b"the prompt\n", timeout=60, keep=keep)
                    assert (box.kept is not None) == (how == "carried"), how
                    if how == "carried":  # out of the engine's reach: what follows is read from the kept tar
                        subprocess.run(["docker", "rm", "-f", box.name], check=True, capture_output=True)
                        assert await box.read_file(TRACE, cap_bytes=100) == b'{"step": 1}\n'
                        assert await box.read_file(f"{box.workdir}/made.txt", cap_bytes=3) == b"mad"
                    back = tmp_path / f"back-{how}"
                    notes = await box.copy_out(box.workdir, back, cap_bytes=1 << 20)
                    results[how] = (res.returncode, res.stdout, res.stderr, res.timed_out, tree(back), sorted(notes))
                finally:
                    await envs.remove(box)
            code, stdout, stderr, timed_out, got, notes = results["carried"]
            got = dict(got)
            # hard links: docker cp sends the second name as a link, left out; the carried tar sends both as files
            assert got["hard.txt"] == got["made.txt"]
            for how in results:
                results[how][4].pop("hard.txt", None)
                results[how][4].pop("made.txt", None)
                results[how] = (*results[how][:5], [n for n in results[how][5] if "hard.txt" not in n and "made.txt" not in n])
            assert results["carried"] == results["copied"]
            assert any("'a-fifo'" in n for n in notes), notes
            assert (code, stdout, stderr, timed_out) == (7, b"out\x00put", b"err\n", False)
            assert got["keep/nested/in.txt"][:2] == ("file", b"seeded".hex())
            assert got["sub/deeper/bin.dat"][:2] == ("file", b"x\x00y".hex())
            assert got["made.txt"] == ("file", b"made\n".hex(), 0o751)
            assert got["from-stdin.txt"][1] == b"the prompt\n".hex()
            assert got["ok-link"] == ("link", "made.txt", 0) and got["sub-link"] == ("link", "sub", 0)
            assert got["empty"][0] == "dir" and "a b.txt" in got
            assert "seeded-gone.txt" not in got and "abs-out" not in got and "rel-out" not in got
            assert any("'abs-out'" in n for n in notes) and any("'rel-out'" in n for n in notes), notes
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []


def test_a_later_call_drops_the_kept_tar_and_the_container_is_asked_again(tmp_path: Path, docker_base_image: str) -> None:
    """A command after the carrying one, or a copy in, changes the workdir: the kept tar is
    dropped and what comes back is the container's workdir as it is now."""

    async def main() -> None:
        envs = Environments()
        extra = tmp_path / "extra"
        extra.mkdir()
        (extra / "copied.txt").write_text("copied in")
        try:
            async with envs.container(base_env(docker_base_image), trial="carry/later/0", workspace=seed(tmp_path / "seed")) as box:
                await box.exec(["sh", "-c", "echo one > one.txt"], timeout=30, keep=())
                assert box.kept is not None
                held = box.kept
                await box.exec(["sh", "-c", "rm one.txt; echo two > two.txt"], timeout=30)
                assert box.kept is None and not held.exists()
                assert await box.read_file(f"{box.workdir}/one.txt", cap_bytes=100) is None
                back = tmp_path / "back"
                await box.copy_out(box.workdir, back, cap_bytes=1 << 20)
                assert sorted(p.name for p in back.iterdir()) == ["keep", "seeded-gone.txt", "two.txt"]
                await box.exec(["sh", "-c", "echo three > three.txt"], timeout=30, keep=())
                assert box.kept is not None
                await box.copy_in(extra, box.workdir)
                assert box.kept is None
                again = tmp_path / "again"
                await box.copy_out(box.workdir, again, cap_bytes=1 << 20)
                assert {"copied.txt", "three.txt", "two.txt"} <= {p.name for p in again.iterdir()}
                # not root: the command runs as asked, nothing is carried
                await box.exec(["sh", "-c", "id -u"], timeout=30, user="nobody", keep=())
                assert box.kept is None
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []


def test_an_agent_that_prints_the_mark_only_cuts_its_own_stdout(tmp_path: Path, docker_base_image: str) -> None:
    """The mark is on the wrapper's command line, which the agent can read: printed with junk
    after it, the host's split goes wrong, the kept tar does not read, and the workdir is
    copied out of the container as before."""
    forge = "m=$(grep -a -o 'agentsproof-carry-[0-9a-f]*' /proc/$PPID/cmdline | head -n 1); printf 'before %sjunk, no tar' \"$m\"; echo real > real.txt"

    async def main() -> None:
        envs = Environments()
        try:
            async with envs.container(base_env(docker_base_image), trial="carry/forged/0", workspace=seed(tmp_path / "seed")) as box:
                res = await box.exec(["sh", "-c", forge], timeout=30, keep=())
                assert res.returncode == 0 and res.stdout == b"before ", res
                back = tmp_path / "back"
                await box.copy_out(box.workdir, back, cap_bytes=1 << 20)
                assert (back / "real.txt").read_text() == "real\n" and box.kept is None
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []


def test_stdout_past_the_cap_is_cut_as_before_and_the_workdir_still_carried(tmp_path: Path, docker_base_image: str) -> None:
    """Stdout past OUTPUT_CAP is read and dropped before the mark, as on the old path."""

    async def main() -> None:
        envs = Environments()
        try:
            async with envs.container(base_env(docker_base_image), trial="carry/big/0", workspace=seed(tmp_path / "seed")) as box:
                res = await box.exec(["sh", "-c", "head -c 3000000 /dev/zero | tr '\\000' a; echo done > done.txt"], timeout=60, keep=())
                assert res.returncode == 0 and res.stdout == b"a" * OUTPUT_CAP
                assert box.kept is not None
                assert await box.read_file(f"{box.workdir}/done.txt", cap_bytes=100) == b"done\n"
        finally:
            await envs.close()

    asyncio.run(main())
    assert own_containers() == []


def test_a_command_past_its_timeout_keeps_nothing_and_its_trial_is_errored(tmp_path: Path, docker_base_image: str) -> None:
    """A timeout stops the container before any tar: nothing kept; through the CLI, the
    trial is errored (timed out) and no container is left."""

    async def main() -> None:
        envs = Environments()
        try:
            async with envs.container(base_env(docker_base_image), trial="carry/slow/0", workspace=seed(tmp_path / "seed")) as box:
                res = await box.exec(["sh", "-c", "echo started; sleep 30"], timeout=1, keep=())
                assert res.timed_out and box.kept is None and box.stopped and "timeout" in box.stopped
        finally:
            await envs.close()

    asyncio.run(main())
    root = tmp_path / "ev"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: slow\ndescription: slow\n---\nSlow.\n")
    (root / "targets.yaml").write_text(yaml.safe_dump({"slow": {"type": "command", "command": ["sh", "-c", "echo x > x.txt; sleep 30"], "timeout": 2}}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "slow"},
        "environment": {"image": docker_base_image},
        "defaults": {"trials": 1, "timeout": 2},
        "task": {"name": "slow", "instruction": "go", "graders": [{"type": "deterministic", "checks": {"mustContain": ["x"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "runs"
    _code, stdout, stderr = run_cli(["eval", root / "eval.yaml", "--output", out])
    assert "Traceback" not in stderr, stderr
    item = read_json(next(out.rglob("*.json")))["items"][0]
    for trial in item["with_arm"]["trials"] + item["without_arm"]["trials"]:
        assert trial["status"] == "errored" and "timed out" in trial["error"], trial.get("error")
    assert own_containers() == []


def test_an_image_without_tar_takes_the_old_path(tmp_path: Path, docker_base_image: str) -> None:
    """No tar in the image: the seed is copied in and the workdir copied out by the engine,
    with the same result; the command target's trial there is scored as anywhere."""
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {docker_base_image}\nRUN rm -f /usr/bin/tar /bin/tar\n")
    env = Environment(source="eval.yaml", dockerfile=ctx / "Dockerfile", context=ctx)

    async def main() -> None:
        envs = Environments()
        try:
            await envs.prepare([env])
            async with envs.container(env, trial="carry/notar/0", workspace=seed(tmp_path / "seed")) as box:
                assert not box.can_carry and box.pending is None
                res = await box.exec(["sh", "-c", "cat keep/nested/in.txt; echo made > made.txt; echo err >&2; exit 3"], timeout=30, keep=(TRACE,))
                assert (res.returncode, res.stdout, res.stderr, box.kept) == (3, b"seeded", b"err\n", None)
                back = tmp_path / "back"
                await box.copy_out(box.workdir, back, cap_bytes=1 << 20)
                assert (back / "made.txt").read_text() == "made\n" and (back / "seeded-gone.txt").read_text() == "to be removed"
        finally:
            await envs.close()

    asyncio.run(main())
    root = tmp_path / "ev"
    (root / "seed").mkdir(parents=True)
    (root / "seed" / "data.txt").write_text("42")
    (root / "SKILL.md").write_text("---\nname: counting\ndescription: counts\n---\nWrite result.txt.\n")
    (root / "env").mkdir()
    (root / "env" / "Dockerfile").write_text((ctx / "Dockerfile").read_text())
    agent = 'printf "total: %s\\n" "$(cat data.txt)" > result.txt; echo answered'
    (root / "targets.yaml").write_text(yaml.safe_dump({"boxed": {"type": "command", "command": ["sh", "-c", agent], "timeout": 60}}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "boxed"},
        "workspace": "seed",
        "environment": {"dockerfile": "env/Dockerfile"},
        "defaults": {"trials": 1, "timeout": 60},
        "task": {"name": "count", "instruction": "Count.", "graders": [{"type": "files", "mustContain": {"result.txt": ["total: 42"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "eval.yaml", "--output", out])
    item = read_json(next(out.rglob("*.json")))["items"][0]
    for trial in item["with_arm"]["trials"] + item["without_arm"]["trials"]:
        assert trial["status"] == "scored" and trial["score"] == 1.0 and "answered" in trial["response"], trial
    assert own_containers() == []


def test_what_follows_the_mark_is_capped_and_a_file_past_the_cap_is_emptied(tmp_path: Path) -> None:
    """A command that read the mark from its parent's command line and streams without end
    cannot fill the host's disk: past ``file_cap`` the file is emptied and the rest dropped
    (it then holds no closing mark, so nothing is kept); under the cap it is written whole."""
    from agentsproof.isolation.engine import _read_split

    mark = b"agentsproof-carry-0123"

    async def split(data: bytes, out: Path, file_cap: int) -> bytes:
        reader = asyncio.StreamReader()
        for at in range(0, len(data), 7000):  # chunks that cut the mark apart too
            reader.feed_data(data[at : at + 7000])
        reader.feed_eof()
        return await _read_split(reader, 100, mark, out, file_cap)

    over, under = tmp_path / "over.tar", tmp_path / "under.tar"
    assert asyncio.run(split(b"answer" + mark + b"x" * 50_000 + mark, over, 20_000)) == b"answer"
    assert over.stat().st_size == 0
    assert asyncio.run(split(b"answer" + mark + b"x" * 50_000 + mark, under, 60_000)) == b"answer"
    assert under.read_bytes() == b"x" * 50_000 + mark
