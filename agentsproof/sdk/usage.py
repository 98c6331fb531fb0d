"""Token count and cost of a traced call: the user's ``extract``, else sniffed from the
response's ``usage`` (Anthropic, OpenAI chat and Responses shapes), else nothing.

Cost is filled in when it is derivable: a ``cost``/``cost_usd``/``total_cost`` number in the
usage block (OpenRouter, LiteLLM-style proxies), or the client's ``prices`` table
(USD per million input and output tokens, keyed by the response's ``model``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("agentsproof.sdk")

Prices = Mapping[str, tuple[float, float]]
"""model name → (USD per 1M input tokens, USD per 1M output tokens)."""


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    try:
        return getattr(obj, key, None)
    except Exception:  # noqa: BLE001 - odd objects with raising properties
        return None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) and v >= 0 else None


def sniff_usage(output: Any, prices: Prices | None = None) -> dict[str, Any]:
    """``{"token_count": int, "cost_usd": float}`` (either may be absent) from a response's usage."""
    try:
        usage = _get(output, "usage") if output is not None else None
        if usage is None:
            return {}
        found: dict[str, Any] = {}
        tokens: tuple[int, int] | None = None  # (in, out), when both are known
        # Anthropic Messages and OpenAI Responses: input_tokens + output_tokens
        i, o = _int(_get(usage, "input_tokens")), _int(_get(usage, "output_tokens"))
        if i is not None and o is not None:
            tokens = (i, o)
            found["token_count"] = i + o
        else:
            # OpenAI-compatible chat completions
            p, c = _int(_get(usage, "prompt_tokens")), _int(_get(usage, "completion_tokens"))
            total = _int(_get(usage, "total_tokens"))
            if total is not None:
                found["token_count"] = total
            elif p is not None and c is not None:
                found["token_count"] = p + c
            if p is not None and c is not None:
                tokens = (p, c)
        for key in ("cost_usd", "cost", "total_cost"):
            cost = _num(_get(usage, key))
            if cost is not None:
                found["cost_usd"] = cost
                break
        if "cost_usd" not in found and prices and tokens is not None:
            model = _get(output, "model")
            price = _lookup_price(prices, model) if isinstance(model, str) else None
            if price is not None:
                found["cost_usd"] = round((tokens[0] * price[0] + tokens[1] * price[1]) / 1_000_000, 10)
        return found
    except Exception:  # noqa: BLE001 - sniffing is best effort
        return {}


def _lookup_price(prices: Prices, model: str) -> tuple[float, float] | None:
    if model in prices:
        return prices[model]
    # dated snapshots ("gpt-4o-2024-08-06") fall back to the longest matching prefix
    best = max((k for k in prices if model.startswith(k)), key=len, default=None)
    return prices[best] if best is not None else None


def usage_of(result: Any, extract: Callable[[Any], Any] | None, prices: Prices | None = None) -> dict[str, Any]:
    """The step's usage fields in the reference's priority order: extract, sniffing, nothing."""
    if extract is not None:
        try:
            got = extract(result) or {}
            out: dict[str, Any] = {}
            tokens = _get(got, "token_count")
            if tokens is not None and _num(tokens) is not None:
                out["token_count"] = int(tokens)
            cost = _num(_get(got, "cost_usd"))
            if cost is not None:
                out["cost_usd"] = cost
            return out
        except Exception:  # noqa: BLE001 - a broken extractor falls back to sniffing
            log.debug("agentsproof: extract raised; sniffing usage instead", exc_info=True)
    return sniff_usage(result, prices)
