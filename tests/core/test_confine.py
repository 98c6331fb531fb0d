"""core/confine: a program an eval file names runs under bubblewrap, reading the project and
writing only its own folders; the opt-out; a program that is not there; the project it may read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentsproof.core import confine
from agentsproof.core.errors import TargetError


def test_a_confined_program_writes_its_folder_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(confine.OPT_OUT, raising=False)
    if isinstance(confine.bwrap(), str):
        pytest.skip(f"no sandbox here: {confine.bwrap()}")
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    script = "import pathlib, sys\npathlib.Path('mine.txt').write_text('ok')\ntry:\n    pathlib.Path(sys.argv[1], 'x.txt').write_text('no')\nexcept OSError:\n    print('refused')\n"
    argv = confine.confined_argv(["python3", "-c", script, str(outside)], cwd=work, writable=[work], readable=[tmp_path])
    assert argv[0].endswith("bwrap") and argv[-4:] == ["python3", "-c", script, str(outside)]
    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (work / "mine.txt").read_text() == "ok"
    assert not (outside / "x.txt").exists() and "refused" in done.stdout


def test_the_opt_out_and_a_missing_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(confine.OPT_OUT, "1")
    assert confine.unconfined()
    assert confine.confined_argv(["python3", "-V"], cwd=tmp_path, writable=[tmp_path], readable=[]) == ["python3", "-V"]
    with pytest.raises(TargetError, match="No such file"):
        confine.confined_argv(["no-such-program-here"], cwd=tmp_path, writable=[tmp_path], readable=[])


def test_the_project_a_program_may_read_is_the_nearest_marked_folder_above(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "evals" / "suite"
    deep.mkdir(parents=True)
    assert confine.project_of(deep) == tmp_path / "repo"
    assert confine.project_of(tmp_path / "elsewhere") == tmp_path / "elsewhere"
