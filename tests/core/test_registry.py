"""core/registry: one skeleton for the four registries: in-tree lines first, imported only when
asked for; an unknown name is a KeyError; an unknown group is refused."""

from __future__ import annotations

import sys

import pytest

from agentsproof.core.registry import Registry


def test_in_tree_entries_are_imported_only_when_asked_for() -> None:
    table = {"alpha": "agentsproof.core.units:seconds"}
    reg: Registry[object] = Registry("graders", table)
    sys.modules.pop("agentsproof.core.units", None)
    assert reg.has("alpha") and reg.builtin("alpha") and "alpha" in reg.names() and reg.builtin_names() == ("alpha",)
    assert "agentsproof.core.units" not in sys.modules  # nothing imported to list or test a name
    from agentsproof.core.units import seconds

    assert reg.get("alpha") is seconds and reg.find("alpha") is seconds
    assert reg.find("nobody") is None and not reg.has("nobody")
    with pytest.raises(KeyError):
        reg.get("nobody")


def test_a_line_added_to_the_table_is_seen_by_reference() -> None:
    table: dict[str, str] = {}
    reg: Registry[object] = Registry("formats", table)
    assert not reg.has("late")
    table["late"] = "agentsproof.core.units:seconds"
    assert reg.has("late") and reg.lines()["late"] == "agentsproof.core.units:seconds"


def test_an_unknown_group_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown registry"):
        Registry("widgets", {})
