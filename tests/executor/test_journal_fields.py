"""``--resume`` refuses a journal whose items changed in any field their trials depend on."""

from __future__ import annotations

import pytest

from agentsproof.executor.journal import difference


def _fp(**item):
    return {"version": 1, "run": {"command": "eval"}, "items": {"s/greeter": {"prompt": "p", **item}}}


@pytest.mark.parametrize(
    "key, words",
    [("turns", "the turns"), ("case_turns", "the tasks' turns"), ("users", "the simulated user"),
     ("model", "the item's model"), ("max_tokens", "the reply cap")],
)
def test_a_changed_field_is_named(key, words):
    said = difference(_fp(**{key: "a"}), _fp(**{key: "b"}))
    assert said is not None and said.startswith("s/greeter: ") and words in said
    assert difference(_fp(**{key: "a"}), _fp(**{key: "a"})) is None
