"""core/bun.py: which bun runs agentv's programs, and the environment that finds our agentv module."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentsproof.core import bun


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 9.9.9\n")
    path.chmod(0o755)
    return path


def test_env_var_wins_and_a_missing_one_is_no_bun(monkeypatch, tmp_path):
    mine = _exe(tmp_path / "mybun")
    monkeypatch.setenv(bun.ENV, str(mine))
    assert bun.find_bun() == str(mine)
    assert bun.resolve(["bun", "run", "x.ts"]) == [str(mine), "run", "x.ts"]
    assert bun.resolve(["node", "x.js"]) == ["node", "x.js"]
    monkeypatch.setenv(bun.ENV, str(tmp_path / "nosuch"))
    assert bun.find_bun() is None
    assert bun.resolve(["bun", "x.ts"]) == ["bun", "x.ts"]  # left as written: running it says why
    reason = bun.missing_reason("bun")
    assert reason is not None and "make bun" in reason and bun.ENV in reason
    assert bun.missing_reason("python3") is None


def test_the_venv_tool_area_then_path(monkeypatch, tmp_path):
    monkeypatch.delenv(bun.ENV, raising=False)
    venv = tmp_path / "venv"
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python"))
    on_path = _exe(tmp_path / "path" / "bun")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert bun.find_bun() == str(on_path)
    local = _exe(venv / bun.TOOL_DIR / "node_modules" / ".bin" / "bun")
    assert bun.find_bun() == str(local)


def test_runtime_env_adds_bun_and_the_sdk_after_what_is_there(monkeypatch, tmp_path):
    local = _exe(tmp_path / "tools" / "bun")
    monkeypatch.setenv(bun.ENV, str(local))
    env = bun.runtime_env({"PATH": "/usr/bin", "NODE_PATH": "/mine"})
    assert env["PATH"].split(os.pathsep) == ["/usr/bin", str(local.parent)]
    assert env["NODE_PATH"].split(os.pathsep) == ["/mine", str(bun.SDK_DIR)]
    assert bun.runtime_env(env) == env  # once
    assert (bun.SDK_DIR / "agentv" / "package.json").is_file() and (bun.SDK_DIR / "@agentv" / "sdk" / "index.js").is_file()
