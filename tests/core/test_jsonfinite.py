"""core/jsonfinite: our own JSON read back with every number finite (no NaN score)."""

from __future__ import annotations

import json
import math

import pytest

from agentsproof.core.jsonfinite import NotFinite, loads_finite


def test_plain_json_reads_as_json_does() -> None:
    text = '{"score": 0.5, "n": 3, "ci": [-1.0, 1e-300], "label": "NaN", "none": null}'
    assert loads_finite(text) == json.loads(text)
    assert loads_finite(text.encode()) == json.loads(text)


@pytest.mark.parametrize("text, says", [
    ('{"score": NaN}', "NaN is not a number agentsproof writes"),
    ('[Infinity]', "Infinity is not a number agentsproof writes"),
    ('[-Infinity]', "-Infinity is not a number agentsproof writes"),
    ('{"score": 1e400}', "1e400 is too large for a number"),
    ('[-1e400]', "-1e400 is too large for a number"),
])
def test_non_finite_numbers_are_refused(text: str, says: str) -> None:
    assert not all(math.isfinite(x) for x in _numbers(json.loads(text)))  # the stdlib would take them
    with pytest.raises(NotFinite, match=f"^{says}$"):
        loads_finite(text)
    with pytest.raises(ValueError):  # callers catch ValueError
        loads_finite(text)


def _numbers(value: object) -> list[float]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return [value] if isinstance(value, float) else []
