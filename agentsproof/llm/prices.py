"""Model prices, for the cost of a trial, an arm and a run.

Prices are USD per million tokens. The built-in table covers the Claude models (Anthropic's
public list prices) and a few OpenAI models (for ``--plan`` and ``--max-cost``); ``AGENTSPROOF_PRICES`` names a JSON file whose entries are added to it
or replace its rows::

    {"claude-sonnet-4-5": {"input": 3, "output": 15},
     "my-proxy-model":    {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.25}}

``cache_read`` defaults to a tenth of ``input`` and ``cache_write`` (a 5-minute prompt-cache
write) to 1.25 x ``input``; ``cache_write_1h`` (a 1-hour write) to 2 x ``input``. A model
matches the longest name that is its prefix up to a ``-``/``@``/``:`` boundary
(``claude-sonnet-4-5-20250929`` is priced as ``claude-sonnet-4-5``); a provider prefix such
as Bedrock's ``anthropic.`` or ``us.anthropic.`` is ignored. A model with no row has no
cost (``null``), never a guessed one. A malformed file is one error line naming it (exit 30).

Token counts follow :class:`~agentsproof.model.results.Usage`: ``prompt_tokens``
includes the cache reads and writes, which are priced at their own rates.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.model.results import Usage

ENV_PRICES = "AGENTSPROOF_PRICES"
CACHE_READ_FACTOR = 0.1
CACHE_WRITE_FACTOR = 1.25
CACHE_WRITE_1H_FACTOR = 2.0
MAX_PRICE = 1_000_000.0
"""Largest price per million tokens accepted from a file."""
MAX_PRICES_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float

    @classmethod
    def of(cls, input: float, output: float, cache_read: float | None = None, cache_write: float | None = None, cache_write_1h: float | None = None) -> Price:
        """A price from input and output USD per million tokens; cache prices not given follow from the input price."""
        return cls(
            input=input,
            output=output,
            cache_read=input * CACHE_READ_FACTOR if cache_read is None else cache_read,
            cache_write=input * CACHE_WRITE_FACTOR if cache_write is None else cache_write,
            cache_write_1h=input * CACHE_WRITE_1H_FACTOR if cache_write_1h is None else cache_write_1h,
        )


BUILTIN: dict[str, tuple[float, float]] = {
    # Anthropic list prices, USD per million input / output tokens
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-3-haiku": (0.25, 1.25),
    # OpenAI list prices, USD per million input / output tokens
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "o3-mini": (1.1, 4.4),
}

_FIELDS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")


def _number(path: str, model: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= MAX_PRICE:
        raise InputError(path, f"{model}.{name}", f"must be a number of USD per million tokens between 0 and {MAX_PRICE:g}")
    return float(value)


def _read_file(path: str) -> dict[str, Price]:
    from agentsproof.llm.replies import ReplyError, load_json

    where = f"{ENV_PRICES} file {path}"
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_PRICES_FILE_BYTES + 1)
    except OSError as err:
        raise InputError(where, None, f"cannot read: {err.strerror or err}") from None
    try:
        data = load_json(raw, what="the prices file", max_bytes=MAX_PRICES_FILE_BYTES)
    except ReplyError as err:
        raise InputError(where, None, str(err)) from None
    if not isinstance(data, dict):
        raise InputError(where, None, 'must be a JSON object: {"model": {"input": USD, "output": USD}, ...}')
    table: dict[str, Price] = {}
    for model, row in data.items():
        if not isinstance(row, dict):
            raise InputError(where, model, 'must be an object like {"input": 3, "output": 15}')
        unknown = sorted(set(row) - set(_FIELDS))
        if unknown:
            raise InputError(where, model, f"unknown key {unknown[0]!r}; known: {', '.join(_FIELDS)}")
        for needed in ("input", "output"):
            if needed not in row:
                raise InputError(where, model, f"{needed!r} is missing")
        values = {k: _number(where, model, k, v) for k, v in row.items()}
        table[model.strip().lower()] = Price.of(**values)
    return table


def load_prices() -> dict[str, Price]:
    """The built-in table with the rows of the ``AGENTSPROOF_PRICES`` file (if set) on top."""
    table = {name: Price.of(i, o) for name, (i, o) in BUILTIN.items()}
    path = (os.environ.get(ENV_PRICES) or "").strip()
    if path:
        table.update(_read_file(os.path.expanduser(path)))
    return table


def _bare(model: str) -> str:
    name = model.strip().lower().rsplit("/", 1)[-1]
    marker = "anthropic."
    if marker in name:
        name = name.split(marker, 1)[1]
    return name


def price_for(model: str | None, table: dict[str, Price]) -> Price | None:
    """The row for ``model``: an exact name, else the longest prefix ending at a boundary."""
    if not model:
        return None
    name = model.strip().lower()
    if name in table:
        return table[name]
    name = _bare(model)
    if name in table:
        return table[name]
    best = ""
    for key in table:
        if len(key) > len(best) and name.startswith(key) and name[len(key) : len(key) + 1] in ("-", "@", ":"):
            best = key
    return table[best] if best else None


def cost_usd(price: Price | None, usage: Usage, cache_write_1h_tokens: int = 0) -> float | None:
    """What ``usage`` costs at ``price``; None when the price is unknown."""
    if price is None:
        return None
    read = usage.cache_read_tokens
    write_1h = min(cache_write_1h_tokens, usage.cache_write_tokens)
    write_5m = usage.cache_write_tokens - write_1h
    uncached = max(0, usage.prompt_tokens - read - usage.cache_write_tokens)
    total = (
        uncached * price.input
        + read * price.cache_read
        + write_5m * price.cache_write
        + write_1h * price.cache_write_1h
        + usage.completion_tokens * price.output
    )
    return round(total / 1_000_000, 10)


def cache_saving_usd(price: Price | None, usage: Usage) -> float | None:
    """What prompt caching saved against sending the same tokens uncached: the reads at
    their discount, less the surcharge of the writes (5-minute rate). Negative when the
    writes were never read back. None when the price is unknown."""
    if price is None:
        return None
    saved = usage.cache_read_tokens * (price.input - price.cache_read)
    extra = usage.cache_write_tokens * (price.cache_write - price.input)
    return round((saved - extra) / 1_000_000, 10)
