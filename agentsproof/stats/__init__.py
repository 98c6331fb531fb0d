"""Uncertainty of a grade: intervals, p-values, grade confidence, compare, power, adaptive trials."""

from __future__ import annotations

from agentsproof.stats.item import item_stats

__all__ = ["item_stats"]
