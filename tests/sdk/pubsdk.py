"""The published SDK (PyPI ``agentsproof==1.0.6``) in its own venv, cached under
``.venv/pubsdk-1.0.6`` (it shares our package name, so it can never live in our venv).

``published_python()`` returns that venv's python, creating it on first use (a file lock
keeps parallel test processes from building it twice). Env ``AGENTSPROOF_PUBSDK_VENV``
moves the cache.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

VERSION = "1.0.6"
ROOT = Path(__file__).resolve().parents[2]


def venv_dir() -> Path:
    return Path(os.environ.get("AGENTSPROOF_PUBSDK_VENV") or ROOT / ".venv" / f"pubsdk-{VERSION}")


def published_python() -> Path:
    d = venv_dir()
    py = d / "bin" / "python"
    marker = d / ".installed"
    if marker.exists():
        return py
    d.parent.mkdir(parents=True, exist_ok=True)
    with open(d.parent / f".pubsdk-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(d)], check=True)
            subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"agentsproof=={VERSION}"],
                           check=True, capture_output=True)
            out = subprocess.run([str(py), "-I", "-c", "import agentsproof, inspect; print(inspect.getsourcefile(agentsproof))"],
                                 check=True, capture_output=True, text=True, cwd=str(d)).stdout
            assert str(d) in out, f"published agentsproof not isolated: {out}"
            marker.write_text(VERSION)
    return py


AGENT_SCRIPT = Path(__file__).resolve().parent / "agent_script.py"


def run_agent(sdk: str, env: dict[str, str], script: Path = AGENT_SCRIPT, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``script`` with the ``"published"`` SDK's python or ``"ours"`` (this venv's), in
    isolated mode from a neutral folder, so neither can pick up the other's package."""
    py = published_python() if sdk == "published" else Path(sys.executable)
    cwd = venv_dir() if sdk == "published" else Path(env.get("AP_CWD") or ROOT / "tests")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "AGENTSPROOF_"))}
    return subprocess.run([str(py), "-I", str(script)], env={**clean, **env}, cwd=str(cwd),
                          capture_output=True, text=True, timeout=timeout)


def check_output(res: subprocess.CompletedProcess) -> dict:
    import json

    assert res.returncode == 0, f"agent script failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
    return json.loads(res.stdout.strip().splitlines()[-1])
