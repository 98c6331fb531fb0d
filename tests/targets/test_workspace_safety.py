"""Workspaces never touch the host: removal that follows no symlink and chmods nothing
outside, seeds with link loops, workspaces swapped for symlinks, kept workspaces per run.

Real folders, real modes, real symlinks; nothing is mocked.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError, TargetError
from agentsproof.core import rmtree
from agentsproof.targets import workspace as ws_mod
from agentsproof.targets.seed import MAX_SEED_FILES, check_seed_folder, copy_seed


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ------------------------------------------------------------------ removal


def test_remove_tree_never_follows_a_symlink_nor_chmods_the_parent(tmp_path: Path) -> None:
    parent = tmp_path / "P"
    parent.mkdir()
    parent.chmod(0o755)
    victim_dir = tmp_path / "victim"
    victim_dir.mkdir()
    victim = victim_dir / "precious.txt"
    victim.write_text("keep me")
    victim.chmod(0o444)
    victim_dir.chmod(0o555)
    root = parent / "R"
    (root / "ro" / "deep").mkdir(parents=True)
    (root / "ro" / "deep" / "f").write_text("x")
    (root / "link-to-file").symlink_to(victim)
    (root / "link-to-dir").symlink_to(victim_dir)
    (root / "ro" / "link").symlink_to(victim)
    (root / "locked").mkdir()
    (root / "locked" / "g").write_text("y")
    (root / "locked").chmod(0)
    (root / "ro" / "deep").chmod(0o500)
    (root / "ro").chmod(0o500)
    root.chmod(0o500)
    before = (_mode(parent), _mode(victim), _mode(victim_dir), _mode(tmp_path))
    try:
        assert rmtree.remove_tree(root) is None
        assert not os.path.lexists(root)
        assert (_mode(parent), _mode(victim), _mode(victim_dir), _mode(tmp_path)) == before
        assert victim.read_text() == "keep me"
    finally:
        victim_dir.chmod(0o755)


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


def test_remove_tree_that_cannot_finish_reports_one_line_and_leaves_the_parent_alone(tmp_path: Path) -> None:
    """The parent is not writable (a folder we may not change): the tree's content is
    deleted (its read-only and locked folders opened up: they are inside), the tree itself
    is left, one line names it, and the parent's mode is unchanged."""
    parent = tmp_path / "P"
    root = parent / "R"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_text("x")
    (root / "locked").mkdir()
    (root / "locked" / "g").write_text("y")
    (root / "locked").chmod(0)
    (root / "sub").chmod(0o500)
    parent.chmod(0o555)
    try:
        left = _unprivileged(
            "from pathlib import Path; from agentsproof.core.rmtree import remove_tree; print(remove_tree(Path(sys.argv[2])))",
            str(root),
        ).strip()
        assert "\n" not in left
        assert left.startswith(f"{root}: could not be removed (.: Permission denied)") and left.endswith("left in place")
        assert _mode(parent) == 0o555
        assert os.listdir(root) == []
    finally:
        parent.chmod(0o755)


def test_remove_tree_any_depth(tmp_path: Path) -> None:
    root = tmp_path / "R"
    here = root
    for _ in range(rmtree.MAX_DEPTH * 4):
        here = here / "d"
    here.mkdir(parents=True)
    (here / "f").write_text("bottom")
    assert rmtree.remove_tree(root) is None
    assert not root.exists()


def test_remove_tree_does_not_enter_a_mount_point(tmp_path: Path) -> None:
    """A file system mounted inside the tree (here a bind mount in a user namespace, made by
    a real bubblewrap) is never walked into: its files survive."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    outside.chmod(0o755)
    victim = tmp_path / "victim.txt"
    victim.write_text("v")
    victim.chmod(0o444)
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from agentsproof.core import rmtree; "
        "print(rmtree.remove_tree(__import__('pathlib').Path(sys.argv[2])))"
    )
    parent = tmp_path / "P"
    root = parent / "R"
    (root / "m").mkdir(parents=True)
    (root / "link").symlink_to(victim)
    (root / "m-link").symlink_to(outside)
    parent.chmod(0o755)
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--bind", str(outside), str(root / "m"), sys.executable, "-c", script, repo, str(root)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "another file system is mounted there" in done.stdout and "left in place" in done.stdout
    assert (outside / "keep.txt").read_text() == "keep"
    assert (_mode(outside), _mode(victim), _mode(parent)) == (0o755, 0o444, 0o755)
    assert sorted(os.listdir(root)) == ["m"]  # the rest is gone; the mount point is left


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
from agentsproof.core.errors import InputError, TargetError
from agentsproof.targets import workspace as ws_mod
from agentsproof.targets.seed import check_seed_folder
seed = Path(sys.argv[2])
try:
    check_seed_folder(seed, "eval.yaml", "workspace")
except InputError as err:
    print("LOAD", err)
seed.joinpath("secret.txt").rename(seed / "later.txt")  # readable at load, then a problem at copy time
spaces = ws_mod.Workspaces()
try:
    spaces.create("it", "with", 0, seed)
except TargetError as err:
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
        "from agentsproof.targets.workspace import Workspaces; from agentsproof.core.errors import TargetError\n"
        "w = Workspaces()\n"
        "try:\n    w.create('it', 'with', 0, Path(sys.argv[2]))\nexcept TargetError as e:\n    print('ERRORED', e)\n"
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
