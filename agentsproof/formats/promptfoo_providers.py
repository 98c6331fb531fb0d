"""promptfoo's ``providers:`` entries: which run, on which model, with which request fields.

An id of the form ``PROVIDER:MODEL`` (``openai:chat:gpt-4o``) is a model and runs through
the configured provider; an id that names a program, a script or an endpoint
(``file://provider.py``, ``exec: python3 agent.py``, ``https://…``, ``echo`` …) is never sent to
the model server as a model name (:mod:`agentsproof.formats.promptfoo_programs` runs the
programs and the HTTP provider; the rest is refused by name). A model's ``config`` is sent in
the request (``model``, ``max_tokens``, ``temperature`` and the chat completions fields:
:func:`request_fields`), noted (promptfoo's client settings) or refused naming the key, never dropped.
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
    prompts: tuple[str, ...] = ()
    """promptfoo's ``providers[].prompts``: the labels (or ids) of the prompts it runs; empty: every prompt."""


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
BODY_FIELDS = frozenset(
    {
        # fields of the OpenAI-compatible chat completions body a provider config sends as given
        "response_format",
        "seed",
        "stop",
        "top_p",
        "frequency_penalty",
        "presence_penalty",
        "max_completion_tokens",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "reasoning_effort",
        "reasoning",
        "verbosity",
        "user",
        "service_tier",
        "store",
        "metadata",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "modalities",
        "prediction",
        "web_search_options",
    }
)
RENAMED = {
    # promptfoo's (or another provider's) name for a chat completions field
    "maxTokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "topP": "top_p",
    "stop_sequences": "stop",
    "stopSequences": "stop",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
    "responseFormat": "response_format",
}
CLIENT_KEYS = {
    # promptfoo's own client settings: where and how promptfoo calls the API, not what it asks
    "apiKey": "the configured provider's key is used",
    "apiKeyEnvar": "the configured provider's key is used",
    "apiHost": "trials go to the configured provider",
    "apiBaseUrl": "trials go to the configured provider",
    "baseUrl": "trials go to the configured provider",
    "organization": "trials go to the configured provider",
    "headers": "trials go to the configured provider with its own headers",
    "cost": "cost comes from the configured provider's prices",
    "maxRetries": "retries are agentsproof's",
    "timeout": "the trial timeout is --timeout",
    "showThinking": "the answer is graded as the API returns it",
    "apiVersion": "trials go to the configured provider",
    "region": "trials go to the configured provider",
    "deploymentName": "trials go to the configured provider, on the model the id names",
    "azureClientId": "trials go to the configured provider",
    "azureTenantId": "trials go to the configured provider",
}


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


def _generation_config(src: str, at: str, value: Any) -> dict[str, Any]:
    """Google's ``generationConfig`` as chat completions fields (promptfoo's vertex / google providers)."""
    if not isinstance(value, dict):
        raise InputError(src, at, "must be a mapping")
    names = {"temperature": "temperature", "maxOutputTokens": "max_tokens", "topP": "top_p", "stopSequences": "stop", "seed": "seed"}
    names |= {"presencePenalty": "presence_penalty", "frequencyPenalty": "frequency_penalty"}
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key in names:
            out[names[key]] = v
        elif key == "responseMimeType":
            if v == "application/json":
                out.setdefault("response_format", {"type": "json_object"})
            elif v != "text/plain":
                raise InputError(src, f"{at}.{key}", f"{v!r}: only application/json and text/plain have a chat completions equivalent")
        elif key in ("responseSchema", "response_schema"):
            out["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": v}}
        else:
            raise InputError(
                src, f"{at}.{key}", "has no field in the OpenAI-compatible chat API agentsproof sends; remove it or run with a targets.yaml target"
            )
    return out


def request_fields(src: str, at: str, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A model provider's ``config`` as chat completions fields (model, max_tokens and temperature
    included), and the notes for promptfoo's client settings that are not sent; InputError naming a
    key the API has no field for (never dropped)."""
    fields: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in config.items():
        where = f"{at}.{key}"
        if key in CONFIG_HONOURED or key in BODY_FIELDS:
            fields[key] = value
        elif key in RENAMED:
            fields[RENAMED[key]] = value
        elif key == "generationConfig":
            fields.update(_generation_config(src, where, value))
        elif key == "passthrough":  # promptfoo: extra body fields, sent as given
            if not isinstance(value, dict):
                raise InputError(src, where, "must be a mapping of request-body fields")
            fields.update({k: v for k, v in value.items() if k not in ("model", "messages")})
        elif key in CLIENT_KEYS:
            notes.append(f"{where}: not sent ({CLIENT_KEYS[key]})")
        else:
            raise InputError(
                src,
                where,
                "has no field in the OpenAI-compatible chat API agentsproof sends (it sends model, max_tokens, temperature, "
                "response_format, seed, stop, top_p and the other chat completions fields); remove it or run with a targets.yaml target",
            )
    return fields, notes


def check_provider(src: str, entry: Provider, extra: dict[str, Any] | None = None, say: Any = None) -> dict[str, Any]:
    """Refuse a provider that would run wrongly: an id that names a program, a script or an
    endpoint (never sent as a model name; :mod:`agentsproof.formats.promptfoo_programs` runs
    those), or a ``config`` key the chat API has no field for (never dropped). Returns what its
    ``config`` (with ``extra``, a prompt's ``config``, over it) sets on each item: ``max_tokens``,
    ``temperature`` and the other request-body fields (``body``)."""
    why = not_model(entry.pid)
    if why is not None:
        raise InputError(
            src,
            entry.at,
            f"{entry.pid!r} is {why}, not a model; agentsproof does not run it as one "
            "(define a command or http target in targets.yaml and run with --target NAME)",
        )
    fields, notes = request_fields(src, f"{entry.at}.config", entry.config)
    if extra:
        more, more_notes = request_fields(src, "prompts[].config", extra)
        fields.update(more)
        notes += more_notes
    for line in notes:
        if say is not None:
            say(line)
    cap = fields.pop("max_tokens", None)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise InputError(src, f"{entry.at}.config.max_tokens", "must be a positive integer")
    model = fields.pop("model", None)
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise InputError(src, f"{entry.at}.config.model", "must be a model name")
    temperature = fields.pop("temperature", None)
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, int | float) or not 0 <= temperature <= 2):
        raise InputError(src, f"{entry.at}.config.temperature", "must be a number from 0 to 2")
    out: dict[str, Any] = {}
    if cap is not None:
        out["max_tokens"] = cap
    if temperature is not None:
        out["temperature"] = float(temperature)
    if model is not None:
        out["model"] = model
    if fields:
        out["body"] = fields
    return out
