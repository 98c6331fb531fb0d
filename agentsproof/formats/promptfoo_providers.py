"""promptfoo's ``providers:`` entries: which run, on which model, and which are refused.

An id of the form ``PROVIDER:MODEL`` (``openai:chat:gpt-4o``) is a model and runs through
the configured provider; an id that names a program, a script or an endpoint
(``file://provider.py``, ``exec: python3 agent.py``, ``python:…``, ``https://…``, ``echo`` …)
is never sent to the model server as a model name: it is refused by name (run it as a
targets.yaml ``command`` or ``http`` target with ``--target``). A provider's ``config`` is
honoured (``model``, ``max_tokens``, ``temperature``) or refused naming the key, never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentsproof.core.errors import InputError


@dataclass(frozen=True)
class Provider:
    """One ``providers`` entry: its label, id, the model it names (None: none), its ``config`` and where it is."""

    label: str
    pid: str
    model: str | None
    config: dict[str, Any]
    at: str


# promptfoo provider ids that name a program, a script or an endpoint, not a model: never a model name
NOT_MODELS = (
    ("file://", "a script provider (promptfoo runs the file)"),
    ("exec:", "a command provider (promptfoo runs the command)"),
    ("python:", "a Python provider"),
    ("golang:", "a Go provider"),
    ("js:", "a JavaScript provider"),
    ("http://", "promptfoo's HTTP provider"),
    ("https://", "promptfoo's HTTP provider"),
    ("http", "promptfoo's HTTP provider"),
    ("https", "promptfoo's HTTP provider"),
    ("ws://", "promptfoo's WebSocket provider"),
    ("wss://", "promptfoo's WebSocket provider"),
    ("websocket:", "promptfoo's WebSocket provider"),
    ("webhook:", "promptfoo's webhook provider"),
    ("browser", "promptfoo's browser provider"),
    ("sequence", "promptfoo's sequence provider"),
    ("echo", "promptfoo's echo provider (no model)"),
    ("script:", "a script provider"),
    ("mcp", "promptfoo's MCP provider"),
)
CONFIG_HONOURED = {"model": "the trials' model", "max_tokens": "the reply cap", "temperature": "the trials' sampling temperature"}


def not_model(pid: str) -> str | None:
    """Why ``pid`` is not a model id (None: it is one, ``PROVIDER:MODEL``)."""
    low = pid.strip().lower()
    for prefix, what in NOT_MODELS:
        if low.startswith(prefix) and (prefix.endswith((":", "/")) or low == prefix or low[len(prefix)] in ":"):
            return what
    if low.endswith((".py", ".js", ".ts", ".mjs", ".cjs", ".sh", ".rb", ".go")):
        return "a script provider"
    if ":" not in low:
        return "not a PROVIDER:MODEL id"
    return None


def check_provider(src: str, entry: Provider) -> dict[str, Any]:
    """Refuse a provider that would run wrongly: an id that names a program, a script or an
    endpoint (never sent as a model name), or a ``config`` key agentsproof cannot honour
    (never dropped). Returns what its ``config`` sets on each item (``max_tokens``, ``temperature``)."""
    why = not_model(entry.pid)
    if why is not None:
        raise InputError(
            src,
            entry.at,
            f"{entry.pid!r} is {why}, not a model; agentsproof does not run it as one "
            "(define a command or http target in targets.yaml and run with --target NAME)",
        )
    for key in sorted(entry.config):
        if key not in CONFIG_HONOURED:
            raise InputError(
                src,
                f"{entry.at}.config.{key}",
                f"is not applied by agentsproof (it honours {', '.join(sorted(CONFIG_HONOURED))}); remove it or run with a targets.yaml target",
            )
    cap = entry.config.get("max_tokens")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise InputError(src, f"{entry.at}.config.max_tokens", "must be a positive integer")
    if "model" in entry.config and (not isinstance(entry.config["model"], str) or not entry.config["model"].strip()):
        raise InputError(src, f"{entry.at}.config.model", "must be a model name")
    temperature = entry.config.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2):
        raise InputError(src, f"{entry.at}.config.temperature", "must be a number from 0 to 2")
    out: dict[str, Any] = {}
    if cap is not None:
        out["max_tokens"] = cap
    if temperature is not None:
        out["temperature"] = float(temperature)
    return out
