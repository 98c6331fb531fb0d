"""promptfoo's ``assert-set``: a group of assertions with one weight (and metric).

::

    assert:
      - type: assert-set
        weight: 2
        metric: tone
        assert:
          - {type: icontains, value: bonjour}
          - {type: not-icontains, value: merci, weight: 3}

The set's assertions are graded one by one, each with its share of the set's weight (its
own weight over the set's total: 2 × 1/4 and 2 × 3/4 above), so that the test's score is
promptfoo's (the weighted mean of the set's score with the other assertions). A check
without its own ``metric`` takes the set's. A set's ``threshold`` (the share of its checks
that must pass for the set to pass) is read: in agentv and promptfoo it sets the set's own
verdict, which changes neither the test's score nor its pass, so the set's checks are scored
as above and a note says the set's verdict is not shown apart. A *required* set (a gate on the
set's score) is refused by name. Sets nest.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

SET_TYPES = {"assert-set": {"assert", "weight", "metric", "threshold", "required", "min_score", "name", "id", "description"}}
"""The type of this module and the keys it takes."""


def _weight(entry: dict[str, Any]) -> float | None:
    w = entry.get("weight", 1.0)
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 < w <= 1000:
        return None  # the assertion builder names the field
    return float(w)


def expand_sets(src: str, entries: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``entries`` (field, raw assertion) with every ``assert-set`` replaced by its
    assertions, their weights scaled to the set's; InputError naming the field of a bad set."""
    out: list[tuple[str, Any]] = []
    for where, entry in entries:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if not isinstance(kind, str) or kind.replace("_", "-").removeprefix("not-") != "assert-set":
            out.append((where, entry))
            continue
        if kind.startswith("not-") or entry.get("negate") is True:
            raise InputError(src, f"{where}.type", "negating an assert-set is not supported: negate its assertions one by one")
        if "threshold" in entry:
            mark = entry["threshold"]
            if isinstance(mark, bool) or not isinstance(mark, (int, float)) or not 0 <= mark <= 1:
                raise InputError(src, f"{where}.threshold", "must be a number from 0 to 1 (the share of the set's weighted score it passes from)")
            from agentsproof.formats.agentevals.providers import say_once

            say_once(
                src,
                f"{where}.threshold: the set's own pass mark ({mark:g} of its weighted score) is read; its verdict is not shown apart: "
                "the test's score counts the set's checks with the set's weight (agentv's rule: a set's verdict does not change the test's)",
            )
        if entry.get("required") is not None or entry.get("min_score") is not None:
            raise InputError(
                src,
                f"{where}.required" if "required" in entry else f"{where}.min_score",
                "a required assert-set (a gate on the set's score) is not supported: mark its checks required: true one by one",
            )
        extra = sorted(str(k) for k in entry if k not in SET_TYPES["assert-set"] | {"type", "negate"})
        if extra:
            raise InputError(
                src, f"{where}.{extra[0]}", f"unknown key for 'assert-set'; expected one of {', '.join(sorted(SET_TYPES['assert-set'] | {'type'}))}"
            )
        inner = entry.get("assert")
        if not isinstance(inner, list) or not inner or not all(isinstance(a, dict) for a in inner):
            raise InputError(src, f"{where}.assert", "must be a non-empty list of assertions (mappings with a type)")
        total = _weight(entry)
        if total is None:
            raise InputError(src, f"{where}.weight", "must be a number above 0 (at most 1000)")
        subs = [(f"{where}.assert[{i}]", dict(a)) for i, a in enumerate(inner)]
        weights = [_weight(a) for _, a in subs]
        known = sum(w for w in weights if w is not None)
        for (_, a), w in zip(subs, weights, strict=True):
            if w is not None:
                a["weight"] = total * w / known
            if "metric" in entry and "metric" not in a and "name" not in a:
                a["metric"] = entry["metric"]
        out.extend(expand_sets(src, subs))
    return out
