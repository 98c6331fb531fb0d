"""A full disk while a run writes (its lock, its journal, its reports) is one line and
exit 30, never "internal error" and never a traceback. The disk is made full
for real: the run is a subprocess whose file-size limit (RLIMIT_FSIZE) makes every write
past N bytes fail with EFBIG, as ENOSPC would."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import make_plugin, simple_eval

REPO = Path(__file__).resolve().parents[2]


def _eval(tmp_path: Path) -> Path:
    root = make_plugin(tmp_path, skills={"greeter": {"eval": simple_eval(trials=3, execution={"mode": "agent", "target": "hi"})}})
    folder = root / "skills" / "greeter"
    (folder / "targets.yaml").write_text(yaml.safe_dump({"hi": {
        "type": "command", "command": [sys.executable, "-c", "print('hello ' * 200)"], "sandbox": False,
    }}))
    return folder


def _limited(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("limit", [0, 200, 3_000, 20_000])
def test_a_full_disk_during_a_run_is_one_line_and_exit_30(tmp_path: Path, limit: int) -> None:
    folder = _eval(tmp_path)
    out = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", "AGENTSPROOF_NO_CACHE": "1"}
    env.pop("AGENTSPROOF_DEBUG", None)
    res = subprocess.run([sys.executable, "-m", "agentsproof", "eval", str(folder), "--output", str(out), "--jsonl", str(out / "t.jsonl")],
                         env=env, capture_output=True, text=True, timeout=300, preexec_fn=_limited(limit))
    err = res.stderr
    assert "Traceback" not in err and "internal error" not in err, err
    assert res.returncode == 30, (res.returncode, err)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, err
    assert "File too large" in errors[0] or "No space" in errors[0] or "cannot" in errors[0], errors
