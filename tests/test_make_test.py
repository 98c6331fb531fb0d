"""`make test` sets up a fresh machine itself (issue 47, item 6): scripts/test-machine.sh runs
before any install, and `.ci/run` only calls `make test`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-machine.sh"


def _recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert found, f"no `{target}` target in the Makefile"
    return [line.strip() for line in found.group(1).splitlines()]


def test_make_test_sets_up_the_machine_before_anything_else():
    recipe = _recipe("test")
    assert recipe[0].startswith("scripts/test-machine.sh $(MAKE)"), recipe
    assert recipe[0].endswith("test-installed"), recipe
    assert "lint test-python test-node" in " ".join(_recipe("test-installed"))


def test_ci_run_only_calls_make_test():
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1].strip() == "exec make test", commands
    assert not any(word in line for line in commands for word in ("apt-get", "dockerd", "debootstrap"))


def test_a_user_without_the_packages_gets_one_line_naming_them_and_the_command():
    """Not root and packages missing: one line naming them and how to install them; nothing runs."""
    with tempfile.TemporaryDirectory() as where:  # in /tmp: nobody can reach it, unlike tmp_path
        _not_root_without_packages(Path(where))


def _not_root_without_packages(tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    bin_dir = tmp_path / "bin"  # a PATH with the shell's tools and none of the packages
    bin_dir.mkdir()
    for tool in ("id", "ls", "bash", "touch"):
        where = shutil.which(tool)
        assert where, tool
        (bin_dir / tool).symlink_to(where)
    marker = tmp_path / "ran"
    argv = ["/bin/bash", str(SCRIPT), "touch", str(marker)]
    if os.geteuid() == 0:  # as root it would install them: run it as nobody
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root"
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    got = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False, cwd=tmp_path)
    assert got.returncode == 1, got
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1, got.stderr
    line = lines[0]
    for package in ("chromium", "bubblewrap"):  # never in /usr/sbin, which the script adds to PATH
        assert package in line
    assert "sudo apt-get install -y " in line and "run make test as root" in line
    assert not marker.exists()
    # the same user could have made the marker: its absence means the command did not run
    got = subprocess.run([*argv[: argv.index("/bin/bash")], "/bin/bash", "-c", f"touch {marker}"], env=env, timeout=60, check=False)
    assert got.returncode == 0 and marker.exists()
