"""Workspaces never touch the host: seeds with link loops, workspaces swapped for symlinks,
kept workspaces per run (deleting a workspace: tests/core/test_rmtree.py).

Real folders, real modes, real symlinks; nothing is mocked.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError, SeedError
from agentsproof.isolation import workspace as ws_mod
from agentsproof.isolation.workspace import MAX_SEED_FILES, check_seed_folder, copy_seed


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _unprivileged(code: str, *args: str) -> str:
    """Run ``code`` (Python, with the package importable) as a user without privileges: as
    root, in a user namespace of real bubblewrap where file modes bind us as they bind anyone."""
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    argv = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1])\n" + code, repo, *args]
    if os.geteuid() == 0:
        argv = ["/usr/bin/bwrap", "--unshare-user", "--uid", "1000", "--gid", "1000", "--dev-bind", "/", "/", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


# ------------------------------------------------------------------ seeds


def test_seed_link_loops_are_copied_as_links_and_counted_once(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / "data").mkdir(parents=True)
    for i in range(50):
        (seed / "data" / f"{i}.txt").write_text(str(i))
    (seed / "a").symlink_to(".")
    (seed / "b").symlink_to(".")
    for i in range(9):
        (seed / f"view{i}").symlink_to("data")
    (seed / "abs").symlink_to(seed / "data" / "1.txt")  # absolute, inside: rewritten relative
    base = check_seed_folder(seed, "eval.yaml", "workspace")
    dest = tmp_path / "ws"
    copy_seed(base, dest)
    files = [p for p in dest.rglob("*") if p.is_file() and not p.is_symlink()]
    assert len(files) == 50
    assert os.readlink(dest / "a") == "." and os.readlink(dest / "view3") == "data"
    assert os.readlink(dest / "abs") == "data/1.txt" and (dest / "abs").read_text() == "1"


def test_nine_links_to_a_9000_file_folder_copy_9000_files(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / "big").mkdir(parents=True)
    for i in range(9_000):
        (seed / "big" / f"{i}").write_bytes(b"")
    for i in range(9):
        (seed / f"link{i}").symlink_to("big")
    spaces = ws_mod.Workspaces()
    try:
        folder = spaces.create("it", "with", 0, check_seed_folder(seed, "eval.yaml", "workspace"))
        regular = sum(len(files) for _d, _dirs, files in os.walk(folder))  # os.walk does not follow links
        assert regular == 9_000 and sum(1 for _ in folder.rglob("*")) == 9_000 + 1 + 9
        assert all((folder / f"link{i}").is_symlink() for i in range(9))
    finally:
        spaces.close()


def test_seed_links_count_against_the_limit_as_copied(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    for i in range(MAX_SEED_FILES + 1):
        (seed / f"l{i}").symlink_to(".")
    with pytest.raises(InputError, match="over 10,000 files, folders and links"):
        check_seed_folder(seed, "eval.yaml", "workspace")


@pytest.mark.parametrize("make, words", [
    (lambda s: (s / "self").symlink_to("self"), "broken symlink (or a link loop)"),
    (lambda s: (s / "out").symlink_to("/etc"), "leads out of the folder"),
    (lambda s: (s / "up").symlink_to(".."), "leads out of the folder"),
    (lambda s: os.mkfifo(s / "pipe"), "not a regular file"),
])
def test_seed_problems_are_one_line_input_errors(tmp_path: Path, make, words: str) -> None:  # type: ignore[no-untyped-def]
    seed = tmp_path / "seed"
    seed.mkdir()
    make(seed)
    with pytest.raises(InputError) as err:
        check_seed_folder(seed, "eval.yaml", "workspace")
    assert words in str(err.value) and str(err.value).startswith("eval.yaml: workspace: ") and "\n" not in str(err.value)


def test_unreadable_seed_file_is_refused_at_load_and_an_errored_trial_at_copy(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "ok.txt").write_text("fine")
    secret = seed / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    tmp_path.chmod(0o755)
    code = """
from pathlib import Path
from agentsproof.core.errors import InputError, SeedError
from agentsproof.isolation import workspace as ws_mod
from agentsproof.isolation.workspace import check_seed_folder
seed = Path(sys.argv[2])
try:
    check_seed_folder(seed, "eval.yaml", "workspace")
except InputError as err:
    print("LOAD", err)
seed.joinpath("secret.txt").rename(seed / "later.txt")  # readable at load, then a problem at copy time
spaces = ws_mod.Workspaces()
try:
    spaces.create("it", "with", 0, seed)
except SeedError as err:
    print("COPY", err)
print("LEFT", sorted(p.name for p in spaces.root.rglob("*")))
spaces.close()
"""
    seed.chmod(0o777)
    out = _unprivileged(code, str(seed)).splitlines()
    assert out[0].startswith("LOAD eval.yaml: workspace: 'secret.txt' cannot be read (permission denied) in ")
    assert out[1].startswith("COPY cannot copy the workspace seed ") and "'later.txt' cannot be read" in out[1]
    assert out[2].startswith("LEFT ['it-") and out[2].count("'") == 2  # the item's folder only: the half-made workspace is gone


def test_a_full_disk_while_copying_a_seed_is_an_errored_trial(tmp_path: Path) -> None:
    """A real full file system: a 1 MB tmpfs (bubblewrap, user namespace) as the temp folder."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
        "from agentsproof.isolation.workspace import Workspaces; from agentsproof.core.errors import SeedError\n"
        "w = Workspaces()\n"
        "try:\n    w.create('it', 'with', 0, Path(sys.argv[2]))\nexcept SeedError as e:\n    print('ERRORED', e)\n"
        "w.close()\nprint('LEFT', __import__('os').listdir(sys.argv[3]))\n"
    )
    small = tmp_path / "small"
    small.mkdir()
    done = subprocess.run(
        ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--size", str(1024 * 1024), "--tmpfs", str(small),
         "--setenv", "TMPDIR", str(small), sys.executable, "-c", script, repo, str(seed), str(small)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "ERRORED cannot copy the workspace seed" in done.stdout and "No space left on device" in done.stdout
    assert "LEFT []" in done.stdout


# ------------------------------------------------------------------ a workspace swapped for a symlink


def test_a_workspace_swapped_for_a_symlink_is_detected_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "f.txt").write_text("host file")
    (victim / "f.txt").chmod(0o444)
    spaces = ws_mod.Workspaces()
    folder = spaces.create("it", "with", 0)
    assert spaces.check(folder) is None
    os.rmdir(folder)
    folder.symlink_to(victim)
    assert "replaced by a symlink" in (spaces.check(folder) or "")
    assert ws_mod.snapshot(folder).files == {}
    assert ws_mod.changes(folder, ws_mod.Snapshot({})) == []
    spaces.finish(folder)
    # a folder above it swapped too
    other = spaces.create("it2", "with", 0)
    seg = other.parent
    os.rmdir(other)
    os.rmdir(seg)
    seg.symlink_to(tmp_path)
    assert "replaced by a symlink" in (spaces.check(other) or "")
    spaces.finish(other)
    spaces.close()
    assert (victim / "f.txt").read_text() == "host file" and _mode(victim / "f.txt") == 0o444


def test_kept_workspaces_are_per_run(tmp_path: Path) -> None:
    keep = tmp_path / "out.workspaces"
    first = ws_mod.Workspaces(keep_in=keep)
    a = first.create("item", "with", 0)
    (a / "made.txt").write_text("first run")
    second = ws_mod.Workspaces(keep_in=keep)
    b = second.create("item", "with", 0)
    assert a != b and first.root.parent == second.root.parent == keep.resolve()
    assert (a / "made.txt").read_text() == "first run"
