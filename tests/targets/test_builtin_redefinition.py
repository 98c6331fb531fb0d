"""A built-in target name (copilot) is redefined only by a targets.yaml that is the user's
own and that nobody else can write; every redefinition is said once. Real files, real
owners and modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from conftest import make_plugin, run_cli, simple_eval
from agentsproof.core.errors import InputError
from agentsproof.targets import config

OTHER_UID = 65534  # nobody


def _planted(folder: Path) -> Path:
    (folder / ".agentsproof").mkdir(parents=True, exist_ok=True)
    path = folder / ".agentsproof" / "targets.yaml"
    path.write_text(yaml.safe_dump({"copilot": {"type": "command", "command": ["sh", "-c", "echo pwned"], "sandbox": False}}))
    path.chmod(0o644)
    (folder / ".agentsproof").chmod(0o755)
    return path


def test_the_users_own_file_redefines_a_builtin_and_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _planted(tmp_path)
    for _ in range(3):
        found = config.find_target("copilot", tmp_path / "eval.yaml")
        assert found.spec.type == "command"
    err = capsys.readouterr().err
    assert err.count("target 'copilot' is defined by") == 1 and str(path.name) in err


@pytest.mark.parametrize("harm, words", [
    ("file-mode", "the file can be written by others (mode 666)"),
    ("group-mode", "the file can be written by others (mode 664)"),
    ("folder-mode", "its folder can be written by others (mode 777)"),
    ("owner", f"the file is owned by another user (uid {OTHER_UID})"),
    ("link-owner", f"the symlink is owned by another user (uid {OTHER_UID})"),
])
def test_a_planted_redefinition_is_refused_in_one_line_naming_the_file(tmp_path: Path, harm: str, words: str) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    path = _planted(shared)
    if harm == "file-mode":
        path.chmod(0o666)
    elif harm == "group-mode":
        path.chmod(0o664)
    elif harm == "folder-mode":
        path.parent.chmod(0o777)
    elif harm == "owner":
        if os.geteuid() != 0:
            pytest.skip("giving a file away needs root")
        os.chown(path, OTHER_UID, OTHER_UID)
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a file away needs root")
        mine = tmp_path / "mine.yaml"
        path.rename(mine)
        path.symlink_to(mine)
        os.chown(path, OTHER_UID, OTHER_UID, follow_symlinks=False)
    with pytest.raises(InputError) as err:
        config.find_target("copilot", shared / "project" / "eval.yaml")
    line = str(err.value)
    assert "\n" not in line and "targets.yaml" in line and ": copilot: redefines the built-in target 'copilot'" in line
    assert words in line and "refused" in line


def test_a_sticky_shared_folder_is_fine_when_the_file_is_the_users(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _planted(tmp_path)
    path.parent.chmod(0o1777)
    assert config.find_target("copilot", tmp_path / "x" / "eval.yaml").spec.type == "command"
    assert "is defined by" in capsys.readouterr().err


def test_other_names_are_not_checked(tmp_path: Path) -> None:
    (tmp_path / "targets.yaml").write_text(yaml.safe_dump({"mine": {"type": "command", "command": ["x"]}}))
    (tmp_path / "targets.yaml").chmod(0o666)
    assert config.find_target("mine", tmp_path / "eval.yaml").name == "mine"


def test_a_run_under_a_planted_file_exits_30_naming_it(tmp_path: Path) -> None:
    shared = tmp_path / "tmpish"
    shared.mkdir()
    path = _planted(shared)
    path.chmod(0o666)
    d = make_plugin(shared, skills={"demo": {"prompt": "Be brief.\n", "eval": simple_eval(
        [{"type": "deterministic", "checks": {"mustContain": ["x"]}}], execution={"mode": "agent", "target": "copilot"})}}) / "skills" / "demo"
    code, out, err = run_cli(["eval", d, "--output", tmp_path / "runs"])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 30 and "Traceback" not in err
    assert len(lines) == 1 and ".agentsproof/targets.yaml: copilot: " in lines[0], lines
    assert "redefines the built-in target 'copilot'" in lines[0] and "pwned" not in out
