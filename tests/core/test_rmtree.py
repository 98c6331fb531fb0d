"""core/rmtree: a tree deleted through folder descriptors, never by path: no symlink
followed, no mode changed outside the tree, any depth, no mount point entered, and one
line for what could not be deleted.

Real folders, real modes, real symlinks, a real bubblewrap for the unprivileged user and
the bind mount; nothing is mocked. (Moved from tests/targets/test_workspace_safety.py.)
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from agentsproof.core import rmtree

REPO = str(Path(__file__).resolve().parents[2])


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _unprivileged(code: str, *args: str) -> str:
    """Run ``code`` (Python, with the package importable) as a user without privileges: as
    root, in a user namespace of real bubblewrap where file modes bind us as they bind anyone."""
    argv = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1])\n" + code, REPO, *args]
    if os.geteuid() == 0:
        argv = ["/usr/bin/bwrap", "--unshare-user", "--uid", "1000", "--gid", "1000", "--dev-bind", "/", "/", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


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
    done = subprocess.run(
        ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--bind", str(outside), str(root / "m"), sys.executable, "-c", script, REPO, str(root)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "another file system is mounted there" in done.stdout and "left in place" in done.stdout
    assert (outside / "keep.txt").read_text() == "keep"
    assert (_mode(outside), _mode(victim), _mode(parent)) == (0o755, 0o444, 0o755)
    assert sorted(os.listdir(root)) == ["m"]  # the rest is gone; the mount point is left


def test_remove_tree_of_a_file_a_symlink_or_nothing(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert rmtree.remove_tree(link) is None
    assert not os.path.lexists(link) and target.read_text() == "keep"  # the link went, its target stayed
    assert rmtree.remove_tree(target) is None and not target.exists()
    assert rmtree.remove_tree(tmp_path / "never-there") is None
    assert rmtree.remove_tree(tmp_path / "no" / "such" / "folder") is None


def test_remove_tree_refuses_what_is_not_below_its_anchor(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    left = rmtree.remove_tree(tmp_path / "a", within=tmp_path / "b")
    assert left == f"{tmp_path / 'a'}: not below {tmp_path / 'b'}; not removed"
    assert rmtree.remove_tree(tmp_path / "a", within=tmp_path / "a") == f"{tmp_path / 'a'}: is the folder that holds it; not removed"
    assert (tmp_path / "a").is_dir()


def test_a_symlinked_folder_above_the_tree_leads_nowhere_of_ours(tmp_path: Path) -> None:
    """``within`` is trusted, the folders between it and the tree are not: one swapped for
    a symlink makes the path lead nowhere, and nothing behind the link is deleted."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "tree").mkdir(parents=True)
    (elsewhere / "tree" / "f").write_text("keep")
    top = tmp_path / "top"
    top.mkdir()
    (top / "mid").symlink_to(elsewhere)
    assert rmtree.remove_tree(top / "mid" / "tree", within=top) is None
    assert (elsewhere / "tree" / "f").read_text() == "keep"
