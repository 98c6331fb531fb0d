"""Layer 8: the command line (click only). ``agentsproof.cli:main`` is the console script."""

from agentsproof.cli.app import main

__all__ = ["main"]
