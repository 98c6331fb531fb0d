"""Uncertainty of a grade: intervals, p-values, grade confidence (filled per item)."""

from __future__ import annotations

from typing import Any


def item_stats(item: Any) -> dict[str, Any]:
    """Statistics of one item; see agentsproof.stats.item for the full version."""
    return {}
