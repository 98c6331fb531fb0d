"""Choose and build a provider from flags and environment.

Every provider is one module with a :class:`~agentsproof.llm.provider_entry.ProviderEntry`
and one line in :data:`ENTRIES`, an import string loaded only when that provider is asked
about, so start-up imports no provider and no SDK. A provider of an installed package
(entry-point group ``agentsproof.providers``, :mod:`agentsproof.core.entrypoints`) follows
the in-tree ones. The rules around every provider live here, written once: ``auto``
resolution, the trial and judge models, the one "install the extra" error, the AIMD
limiter, retries, and secrets scrubbed from set-up errors.

The providers are the keys of :data:`ENTRIES` (``docs/providers.md`` has a section for each,
``tests/llm/test_provider_registry.py`` checks it). ``auto`` asks the providers of
:data:`AUTO` in order, each by its spec's ``detect``. ``ANTHROPIC_API_KEY`` alone never
takes precedence over Copilot or the local model: many machines have it set for other
tools, and a run should not start billing an Anthropic account unasked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.registry import Registry
from agentsproof.core.scrub import scrub_text, url_secrets
from agentsproof.llm.base import LLMClient, LLMError
from agentsproof.llm.provider_entry import SUGGEST_LOCAL, BuildOptions, ProviderEntry
from agentsproof.llm.retry import RetryingClient

if TYPE_CHECKING:
    from agentsproof.llm.throttle import ThrottledClient

# One line per provider: its --provider name and the ProviderEntry that says how to build it.
# The order is the order of --provider's choices in --help.
ENTRIES: dict[str, str] = {
    "copilot": "agentsproof.llm.copilot:PROVIDER",
    "openai": "agentsproof.llm.byok:OPENAI",
    "azure": "agentsproof.llm.byok:AZURE",
    "ollama": "agentsproof.llm.byok:OLLAMA",
    "anthropic": "agentsproof.llm.anthropic:PROVIDER",
    "local": "agentsproof.llm.local:PROVIDER",
}

PROVIDERS: tuple[str, ...] = ("auto", *ENTRIES)
"""The in-tree values ``--provider`` / ``AGENTSPROOF_PROVIDER_TYPE`` accept (its choices in
``--help``); :func:`names` adds the installed plugins'."""

AUTO: tuple[str, ...] = ("openai", "copilot", "local", "anthropic")
"""What ``auto`` tries, in order (each spec's ``detect``). A provider joins ``auto`` only by
a deliberate line here: picking a provider unasked can bill an account."""


@dataclass
class ProviderChoice:
    """The provider a run uses and the models of its trials and its judge."""

    provider: str
    model: str
    judge_model: str


def _check(name: str, found: object) -> str | None:
    if not isinstance(found, ProviderEntry):
        return "not a ProviderEntry"
    return None if found.name == name else f"its name is {found.name!r}, not its entry point's name"


REGISTRY: Registry[ProviderEntry] = Registry("providers", ENTRIES, _check)
"""Every provider: :data:`ENTRIES`, then the installed plugins' (:mod:`agentsproof.core.registry`)."""


@cache
def entry(name: str) -> ProviderEntry:
    """The spec of provider ``name`` (imports its module, never its SDK): in-tree, else an
    installed plugin's. KeyError if unknown, PluginError for a plugin that does not load."""
    found = REGISTRY.get(name)
    if not isinstance(found, ProviderEntry) or found.name != name:
        raise TypeError(f"{ENTRIES.get(name, name)} is not the ProviderEntry of {name!r}")
    return found


def plugin_names() -> tuple[str, ...]:
    """The providers of installed packages (looked up, not imported)."""
    return REGISTRY.plugin_names()


def names() -> tuple[str, ...]:
    """Every value ``--provider`` accepts: :data:`PROVIDERS` and the installed plugins'."""
    return (*PROVIDERS, *plugin_names())


def all_entries() -> list[ProviderEntry]:
    """Every provider's spec: the in-tree ones, then the installed plugins' that load."""
    return list(REGISTRY.all().values())


def priced(provider: str) -> bool:
    """Whether ``provider``'s calls cost money (its spec's ``priced``; a name outside the
    registry, as ``--plan`` may pass, is taken to be priced)."""
    found = REGISTRY.find(provider)
    return found.priced if isinstance(found, ProviderEntry) else True


def how_to_configure() -> str:
    """The "no usable LLM provider" error: every way to set one up, ``auto``'s order first."""
    hints: list[str] = []
    for name in (*AUTO, *(n for n in ENTRIES if n not in AUTO)):
        hint = entry(name).configure_hint
        if hint and hint not in hints:
            hints.append(hint)
    return "no usable LLM provider. Configure one of: " + "; ".join(f"({i}) {h}" for i, h in enumerate(hints, 1))


def secret_envs() -> tuple[str, ...]:
    """Every environment variable any provider keeps a secret in, scrubbed from set-up errors."""
    return tuple(dict.fromkeys(env for s in all_entries() for env in s.secret_envs))


def __getattr__(name: str) -> Any:
    # the former constants, computed from the specs on first use (loading them imports httpx)
    if name == "HOW_TO_CONFIGURE":
        return how_to_configure()
    if name == "SECRET_ENVS":
        return secret_envs()
    if name == "THROTTLED":
        return tuple(s.name for s in all_entries() if s.throttled)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


AUTO_LOOKS_FOR: dict[str, str] = {
    "openai": "AGENTSPROOF_PROVIDER_URL or AGENTSPROOF_PROVIDER_KEY",
    "copilot": "a signed-in Copilot CLI",
    "local": "the embedded model",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""What ``auto`` looks for of each provider of :data:`AUTO`, as its messages name it."""


def auto_findings() -> str:
    """What ``auto`` looked for, in its order, and what it found of each (the no-provider messages)."""
    seen: list[str] = []
    for name in AUTO:
        found = entry(name)
        what = AUTO_LOOKS_FOR.get(name, "its settings")
        if found.missing():
            seen.append(f"{name} ({what}: {', '.join(found.missing())} not installed)")
            continue
        ok = bool(found.detect is not None and found.detect())
        seen.append(f"{name} ({what}: {'found' if ok else 'not set' if name in ('openai', 'anthropic') else 'not found'})")
    return ", ".join(seen)


def chosen_by_auto(flag: str | None) -> bool:
    """Whether the provider is ``auto``'s pick (no --provider, no AGENTSPROOF_PROVIDER_TYPE)."""
    return (flag or os.environ.get("AGENTSPROOF_PROVIDER_TYPE") or "auto").strip().lower() == "auto"


def resolve_choice(flag: str | None, model: str | None, judge_model: str | None) -> tuple[str, ProviderChoice]:
    """The provider (:func:`resolve_provider_name`) and its models (:func:`resolve_models`);
    when ``auto`` picked a provider that cannot run the model asked for, the error says what
    ``auto`` looked for and found, and what to set."""
    name = resolve_provider_name(flag)
    try:
        return name, resolve_models(name, model, judge_model)
    except ProviderUnavailable as err:
        if not chosen_by_auto(flag):
            raise
        raise ProviderUnavailable(
            f"no provider is configured for this model: auto looked for {auto_findings()} and picked {name}, so {err}. "
            f"To run {model or 'that model'} elsewhere set AGENTSPROOF_PROVIDER_URL and AGENTSPROOF_PROVIDER_KEY "
            "(an OpenAI-compatible endpoint) or give --provider (docs/providers.md)"
        ) from None


def resolve_provider_name(flag: str | None) -> str:
    """``--provider``, else ``AGENTSPROOF_PROVIDER_TYPE``, else ``auto``, lower-cased."""
    name = (flag or os.environ.get("AGENTSPROOF_PROVIDER_TYPE") or "auto").strip().lower()
    if name != "auto" and not REGISTRY.has(name):
        raise ProviderUnavailable(f"--provider / AGENTSPROOF_PROVIDER_TYPE: unknown provider {name!r}; choose one of {', '.join(names())}")
    if name != "auto":
        return name
    for candidate in AUTO:
        found = entry(candidate)
        if found.detect is not None and not found.missing() and found.detect():
            return candidate
    raise ProviderUnavailable(f"{how_to_configure()}. (auto looked for {auto_findings()})")


def resolve_models(provider: str, model: str | None, judge_model: str | None) -> ProviderChoice:
    """The trial and judge models. ``model``/``judge_model`` are the flags; env fills the gaps.

    ``provider`` may be a name outside the table (``--plan`` passes what it could resolve):
    such a provider gets the general rules."""
    found = entry(provider) if REGISTRY.has(provider) else None
    if found is not None and found.own_model is not None:
        name = found.own_model(model, judge_model)
        return ProviderChoice(provider=provider, model=name, judge_model=name)
    model = model or os.environ.get("AGENTSPROOF_MODEL")
    if not model:
        hint = found.no_model_hint if found is not None else SUGGEST_LOCAL
        raise ProviderUnavailable("--model: no model given; pass --model NAME or set AGENTSPROOF_MODEL" + hint)
    judge = judge_model or os.environ.get("AGENTSPROOF_JUDGE_MODEL") or model
    return ProviderChoice(provider=provider, model=model, judge_model=judge)


def build_client(provider: str, *, retry: bool = True, prompt_cache: bool = True) -> LLMClient:
    """Build the named provider (not 'auto'); raises ProviderUnavailable with what to fix.

    ``prompt_cache`` (``--no-prompt-cache`` turns it off) marks the system prompt cacheable
    where the provider supports it (``anthropic``). A run's whole stack (budget, response
    cache) is :func:`agentsproof.llm.stack.build_stack`."""
    return build_layers(provider, retry=retry, prompt_cache=prompt_cache)[0]


def build_layers(provider: str, *, retry: bool = True, prompt_cache: bool = True) -> tuple[LLMClient, ThrottledClient | None]:
    """The provider behind its throttle and retry layers, and the throttle (None when the
    provider is not rate-limited or ``AGENTSPROOF_THROTTLE=off``), kept by reference."""
    if not REGISTRY.has(provider):
        raise ProviderUnavailable(f"unknown provider {provider!r}")
    found = entry(provider)
    found.check_installed()
    _register_secrets(found)
    try:
        client = found.build(BuildOptions(prompt_cache=prompt_cache))
        throttle = None
        if found.throttled:
            from agentsproof.llm.throttle import ThrottledClient, throttling_enabled

            if throttling_enabled():
                # inside the retry loop: every attempt passes the AIMD limiter
                client = throttle = ThrottledClient(client)
        # the retry settings are read here, so a malformed one is reported before any call
        return (RetryingClient(client) if retry else client), throttle
    except LLMError as err:
        raise ProviderUnavailable(f"provider {provider}: {scrub_text(str(err), _provider_secrets())}") from None


def _provider_secrets() -> list[str]:
    secrets = [os.environ.get(n) or "" for n in secret_envs()]
    for url_env in dict.fromkeys(env for s in all_entries() for env in s.url_envs):
        secrets += url_secrets(os.environ.get(url_env))
    return secrets


def _register_secrets(found: ProviderEntry) -> None:
    """The provider's keys (and URL credentials) in the environment: masked in every output.
    Only this provider's spec is read (the others stay unimported)."""
    from agentsproof.core.scrub import register

    secrets = [os.environ.get(n) or "" for n in found.secret_envs]
    for url_env in found.url_envs:
        secrets += url_secrets(os.environ.get(url_env))
    register(*secrets)
