"""Layer 8: the command line (click only). ``agentsproof.cli:main`` is the console script."""

from __future__ import annotations

from typing import Any

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    # loaded on use, like the other packages: importing agentsproof.cli.options alone loads no command
    if name == "main":
        from agentsproof.cli.app import main

        return main
    raise AttributeError(f"module 'agentsproof.cli' has no attribute {name!r}")
