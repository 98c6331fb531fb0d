"""core/safepath, the one rule for every write, on the real file system: bad names refused,
a link planted at any depth below the root refused (its target untouched), a link at the
file's own name replaced, never followed; inputs never overwritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentsproof.core import safepath
from agentsproof.core.errors import InputError


@pytest.mark.parametrize("name", ["/V/pwn", "../../../../V/pwn", "..", ".", "", "   ", "a\\b", "two\nlines", "nul\x00", "x" * 256])
def test_bad_names_are_refused(name: str) -> None:
    assert safepath.name_problem(name) is not None
    with pytest.raises(InputError) as err:
        safepath.check_name(name, "eval.yaml", "name")
    assert str(err.value).startswith("eval.yaml: name: ") and "\n" not in str(err.value).replace(repr(name), "")


@pytest.mark.parametrize("name", ["csv-summary", "My Skill", "ünïcode", "-.-", "a.b"])
def test_plain_names_pass(name: str) -> None:
    assert safepath.name_problem(name) is None


@pytest.mark.parametrize("rel", ["/etc/passwd", "../x", "a/../../x", "a/\x01/b", "~/x", "C:/x"])
def test_relative_paths_that_leave_are_refused(rel: str, tmp_path: Path) -> None:
    with pytest.raises(safepath.UnsafePath):
        safepath.write_file(tmp_path / "root", rel, b"x")
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("untouched")
    return victim


@pytest.mark.parametrize("depth", [0, 1])  # history/ or history/<stamp>/ is the link
def test_a_link_planted_below_the_root_is_refused_not_written_through(depth: int, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    root = tmp_path / "root"
    rel = ["history", "20260101T000000Z", "run.json"]
    (root / Path(*rel[:depth])).mkdir(parents=True, exist_ok=True)
    (root / Path(*rel[: depth + 1])).symlink_to(victim, target_is_directory=True)
    with pytest.raises(safepath.UnsafePath) as err:
        safepath.write_file(root, "/".join(rel), b"{}")
    assert "is a symlink; refusing to write through it" in (err.value.strerror or "")
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"] and (victim / "keep.txt").read_text() == "untouched"


def test_a_link_at_the_file_name_is_replaced_never_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "report.json").symlink_to(victim / "keep.txt")
    assert safepath.write_file(tmp_path / "root", "report.json", b"new")
    assert not (tmp_path / "root" / "report.json").is_symlink() and (tmp_path / "root" / "report.json").read_bytes() == b"new"
    assert (victim / "keep.txt").read_text() == "untouched"
    assert [p.name for p in (tmp_path / "root").iterdir()] == ["report.json"]  # no temporary file left


def test_keep_and_fail_never_replace_and_refuse_a_link(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    root = tmp_path / "root"
    assert safepath.write_file(root, "ab/file", b"one", exist="keep")
    assert not safepath.write_file(root, "ab/file", b"two", exist="keep") and (root / "ab" / "file").read_bytes() == b"one"
    with pytest.raises(FileExistsError):
        safepath.write_file(root, "ab/file", b"two", exist="fail")
    (root / "ab" / "link").symlink_to(victim / "keep.txt")
    with pytest.raises(safepath.UnsafePath):
        safepath.write_file(root, "ab/link", b"two", exist="keep")
    with pytest.raises(FileExistsError):
        safepath.write_file(root, "ab/link", b"two", exist="fail")
    assert (victim / "keep.txt").read_text() == "untouched" and sorted(os.listdir(root / "ab")) == ["file", "link"]


def test_copy_file_reads_no_link(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (tmp_path / "src").symlink_to(victim / "keep.txt")
    with pytest.raises(safepath.UnsafePath) as err:
        safepath.copy_file(tmp_path / "src", tmp_path / "out", "x", cap=100)
    assert err.value.filename == str(tmp_path / "src") and not (tmp_path / "out" / "x").exists()


def test_refuse_overwrite_sees_the_same_file_by_any_name(tmp_path: Path) -> None:
    src = tmp_path / "evals.json"
    src.write_text("{}")
    (tmp_path / "alias.json").symlink_to(src)
    for out in (src, tmp_path / "alias.json", tmp_path / "." / "evals.json"):
        with pytest.raises(InputError) as err:
            safepath.refuse_overwrite(out, [src], "command line", "--out")
        assert "is an input of this command" in str(err.value)
    safepath.refuse_overwrite(tmp_path / "EVAL.yaml", [src, None], "command line", "--out")


def test_staged_temp_name_is_readable_in_the_folder_until_commit(tmp_path):
    staged = safepath.Staged(tmp_path, "EVAL.yaml")
    staged.write(b"name: x\n")
    staged.fh.flush()
    tmp = tmp_path / staged.temp_name
    assert tmp.read_bytes() == b"name: x\n" and not (tmp_path / "EVAL.yaml").exists()
    staged.commit()
    assert (tmp_path / "EVAL.yaml").read_bytes() == b"name: x\n" and not tmp.exists() and staged.temp_name == ""


def test_replace_link_swaps_a_link_and_never_touches_a_real_entry(tmp_path: Path) -> None:
    (tmp_path / "run-1").mkdir()
    (tmp_path / "run-2").mkdir()
    safepath.replace_link(tmp_path, "latest", "run-1")
    assert os.readlink(tmp_path / "latest") == "run-1"
    safepath.replace_link(tmp_path, "latest", "run-2")  # replaced, not followed into run-1
    assert os.readlink(tmp_path / "latest") == "run-2" and not (tmp_path / "run-1" / "run-2").exists()
    (tmp_path / "real").mkdir()
    with pytest.raises(safepath.UnsafePath):
        safepath.replace_link(tmp_path, "real", "run-1")
    assert (tmp_path / "real").is_dir() and not (tmp_path / "real").is_symlink()
    with pytest.raises(safepath.UnsafePath):
        safepath.replace_link(tmp_path, "latest", "../elsewhere")  # a link that could lead out
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "out").symlink_to(victim)  # a planted link on the way is refused, never written through
    with pytest.raises(safepath.UnsafePath):
        safepath.replace_link(tmp_path, "out/latest", "run-1")
    assert list(victim.iterdir()) == []
