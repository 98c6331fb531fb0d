"""core/treecopy, the one tree copier: folders and files copied with their modes, a link
inside the tree copied as a link (a loop costs one entry), a link out, a broken link or a
FIFO refused, the entry and byte limits enforced; real files, nothing mocked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentsproof.core import treecopy
from agentsproof.core.treecopy import TreeEntry, TreeProblem, copy_tree, walk_tree


def test_tree_copy_keeps_link_loops_as_links(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / "sub").mkdir(parents=True)
    (seed / "sub" / "f.txt").write_text("data")
    (seed / "a").symlink_to(".")
    (seed / "b").symlink_to(".")
    (seed / "sub" / "up").symlink_to("..")
    copy_tree(seed, tmp_path / "copy")
    entries = sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*"))
    assert entries == ["a", "b", "sub", "sub/f.txt", "sub/up"]
    assert os.readlink(tmp_path / "copy" / "a") == "." and (tmp_path / "copy" / "sub" / "f.txt").read_text() == "data"


def test_tree_copy_refuses_a_link_out(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("untouched")
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "out").symlink_to(victim)
    with pytest.raises(TreeProblem, match="leads out of the folder"):
        copy_tree(seed, tmp_path / "copy")
    assert (victim / "keep.txt").read_text() == "untouched"


def test_walk_lists_a_folder_in_name_order_before_what_is_below_it(tmp_path: Path) -> None:
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "b" / "c" / "deep.txt").write_bytes(b"12345")
    (tmp_path / "a.txt").write_bytes(b"abc")
    (tmp_path / "b" / "to-a").symlink_to("../a.txt")
    assert list(walk_tree(tmp_path)) == [
        TreeEntry("a.txt", "file", size=3),
        TreeEntry("b", "dir"),
        TreeEntry("b/c", "dir"),
        TreeEntry("b/to-a", "link", "../a.txt"),
        TreeEntry("b/c/deep.txt", "file", size=5),
    ]


def test_an_absolute_link_inside_the_tree_is_copied_relative(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    (seed / "data").mkdir(parents=True)
    (seed / "data" / "x.txt").write_text("x")
    (seed / "abs").symlink_to(seed / "data" / "x.txt")
    copy_tree(seed, tmp_path / "copy")
    assert os.readlink(tmp_path / "copy" / "abs") == "data/x.txt"
    assert (tmp_path / "copy" / "abs").read_text() == "x"  # leads to the copy, not the seed


def test_modes_are_kept_and_the_copy_stays_writable_by_its_owner(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "run.sh").write_text("#!/bin/sh\n")
    (seed / "run.sh").chmod(0o755)
    (seed / "ro.txt").write_text("r")
    (seed / "ro.txt").chmod(0o444)
    copy_tree(seed, tmp_path / "copy")
    assert stat.S_IMODE(os.stat(tmp_path / "copy" / "run.sh").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(tmp_path / "copy" / "ro.txt").st_mode) == 0o644


@pytest.mark.parametrize("make, words", [
    (lambda seed: (seed / "gone").symlink_to(seed / "nowhere"), "broken symlink"),
    (lambda seed: os.mkfifo(seed / "pipe"), "not a regular file"),
])
def test_entries_a_tree_may_not_hold_are_refused(tmp_path: Path, make, words: str) -> None:  # type: ignore[no-untyped-def]
    seed = tmp_path / "seed"
    seed.mkdir()
    make(seed)
    with pytest.raises(TreeProblem, match=words):
        list(walk_tree(seed))


def test_the_destination_must_be_a_new_folder(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "f").write_text("new")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "f").write_text("old")
    with pytest.raises(FileExistsError):
        copy_tree(seed, dest)
    assert (dest / "f").read_text() == "old"


def test_entry_and_byte_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    for i in range(4):
        (seed / f"f{i}").write_bytes(b"x" * 10)
    monkeypatch.setattr(treecopy, "MAX_TREE_ENTRIES", 4)
    assert len(list(walk_tree(seed))) == 4  # at the limit: fine
    (seed / "f4").write_bytes(b"x")
    with pytest.raises(TreeProblem, match="holds over 4 files, folders and links, the limit"):
        list(walk_tree(seed))
    monkeypatch.setattr(treecopy, "MAX_TREE_ENTRIES", 100)
    monkeypatch.setattr(treecopy, "MAX_TREE_BYTES", 40)
    with pytest.raises(TreeProblem, match="the limit"):
        copy_tree(seed, tmp_path / "copy")
