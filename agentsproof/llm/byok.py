"""The BYOK providers ``openai``, ``azure`` and ``ollama``: any OpenAI-compatible endpoint.

Configured by ``AGENTSPROOF_PROVIDER_URL`` and ``AGENTSPROOF_PROVIDER_KEY``. The URL may
carry credentials (``https://user:pw@host/v1`` is sent as HTTP basic auth, ``?api-key=K`` on
every request); they are scrubbed from every output. ``ollama`` defaults to its local URL,
``openai`` without a URL to ``OPENAI_BASE_URL`` or the public API. All three go through one
client, :mod:`agentsproof.llm.openai_http` (httpx on a pooled transport), imported when the
client is built, so loading these specs imports no HTTP library.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm.base import LLMClient
from agentsproof.llm.provider_entry import BuildOptions, ProviderEntry

ENV_URL = "AGENTSPROOF_PROVIDER_URL"
ENV_KEY = "AGENTSPROOF_PROVIDER_KEY"
CONFIGURE = f"BYOK: AGENTSPROOF_PROVIDER_TYPE=openai|azure|ollama with {ENV_URL} and {ENV_KEY}"


def byok_env_set() -> bool:
    """True when the BYOK environment names an endpoint or a key (``auto`` then means openai)."""
    return bool(os.environ.get(ENV_URL) or os.environ.get(ENV_KEY))


def build(provider: str, options: BuildOptions) -> LLMClient:
    """The client for ``provider`` on the endpoint the environment names."""
    url = os.environ.get(ENV_URL) or None
    key = os.environ.get(ENV_KEY) or None
    if provider == "openai" and not url and not key:
        raise ProviderUnavailable(f"provider openai: set {ENV_KEY} (and {ENV_URL} for a compatible server)")
    from agentsproof.llm.openai_http import openai_client

    return openai_client(provider=provider, base_url=url, api_key=key)


def _spec(name: str, detect: Callable[[], bool] | None = None) -> ProviderEntry:
    return ProviderEntry(
        name=name,
        build=lambda options: build(name, options),
        throttled=True,
        secret_envs=(ENV_KEY,),
        url_envs=(ENV_URL,),
        detect=detect,
        configure_hint=CONFIGURE,
    )


OPENAI = _spec("openai", detect=byok_env_set)
AZURE = _spec("azure")
OLLAMA = _spec("ollama")
