"""core/jsondepth: how deep JSON nests, without parsing it (brackets in strings do not count)."""

from __future__ import annotations

import json

import pytest

from agentsproof.core.jsondepth import json_depth


@pytest.mark.parametrize("text, depth", [
    ("", 0),
    ("42", 0),
    ('"just a string"', 0),
    ("[]", 1),
    ('{"a": [1, {"b": []}]}', 4),
    ('[[1], [2], [3]]', 2),
    ('["[[[[", "}}}"]', 1),  # brackets inside strings
    (r'["a \" [[[ still inside", {"k": "]"}]', 2),  # an escaped quote does not end the string
    ('"unterminated [[[[', 0),  # an unterminated string runs to the end
    ("]]]]", 0),  # more closes than opens: never negative
])
def test_depth(text: str, depth: int) -> None:
    assert json_depth(text.encode()) == depth


def test_agrees_with_a_parse_of_deep_nesting() -> None:
    value: object = "leaf"
    for i in range(200):
        value = [value] if i % 2 else {"k": value}
    data = json.dumps(value).encode()
    assert json_depth(data) == 200


def test_a_huge_hostile_body_is_measured() -> None:
    assert json_depth(b"[" * 2_000_000) == 2_000_000
    assert json_depth(b'"' + b"\\" * 1_000_001) == 0  # a long run of escapes in an open string
