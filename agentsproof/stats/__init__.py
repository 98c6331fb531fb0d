"""Uncertainty of a grade: intervals, p-values, grade confidence, compare, power, adaptive trials."""

from __future__ import annotations

from typing import Any

__all__ = ["item_stats"]


def __getattr__(name: str) -> Any:
    # loaded on first use: importing agentsproof.stats.checks (or adaptive) must not load numpy
    if name == "item_stats":
        from agentsproof.stats.item import item_stats

        return item_stats
    raise AttributeError(f"module 'agentsproof.stats' has no attribute {name!r}")
