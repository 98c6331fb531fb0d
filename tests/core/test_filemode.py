"""core/filemode: files we write get 0666 less the user's umask (never mkstemp's 0600), and
reading the umask leaves it as it was."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from agentsproof.core.filemode import as_user_file, user_file_mode


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600), (0o000, 0o666)])
def test_the_mode_follows_the_umask_and_leaves_it_unchanged(mask: int, mode: int, tmp_path: Path) -> None:
    old = os.umask(mask)
    try:
        assert user_file_mode() == mode
        assert os.umask(mask) == mask  # still the mask we set
        fd, name = tempfile.mkstemp(dir=tmp_path)
        try:
            assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o600
            as_user_file(fd)
            assert stat.S_IMODE(os.stat(name).st_mode) == mode
        finally:
            os.close(fd)
    finally:
        os.umask(old)
