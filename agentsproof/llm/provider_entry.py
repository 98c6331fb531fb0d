"""What a provider module declares so that :mod:`agentsproof.llm.registry` can use it.

Each provider module defines one module-level :class:`ProviderEntry` (by convention
``PROVIDER``) and the registry names it by an import string, ``"module:ATTR"``. Loading a
spec imports the provider's module but never its SDK: SDKs are imported inside ``build``
(or later, inside the client), and ``requires`` names the modules the optional extra
installs, so a missing extra is one uniform error before anything is imported
(:meth:`ProviderEntry.check_installed`). This module imports nothing but the error types.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentsproof.core.errors import ProviderUnavailable

if TYPE_CHECKING:
    from agentsproof.llm.base import LLMClient

SUGGEST_LOCAL = " (or use --provider local for the embedded model)"
"""Appended to the "no model given" error by default: the local provider needs no --model."""


@dataclass(frozen=True)
class BuildOptions:
    """Run-level choices every ``build`` receives (new ones go here, not into signatures)."""

    prompt_cache: bool = True
    """Mark the system prompt cacheable where the provider supports it (``--no-prompt-cache``)."""


@dataclass(frozen=True)
class ProviderEntry:
    """One provider: how to build its client and the rules the registry applies around it."""

    name: str
    """The ``--provider`` value; equal to its key in the registry table."""
    build: Callable[[BuildOptions], LLMClient]
    """The client from the environment. Raises ``ProviderUnavailable`` (shown as is) or
    ``LLMError`` (shown as ``provider NAME: reason``, secrets scrubbed)."""
    throttled: bool = False
    """Calls pass the AIMD limiter (rate-limited HTTP APIs); ``AGENTSPROOF_THROTTLE`` applies."""
    priced: bool = True
    """Its calls cost money at the price table's rates; False: free (the embedded model), so
    ``--plan`` prices them at 0 and the budget never asks the table for them."""
    secret_envs: tuple[str, ...] = ()
    """Environment variables holding secrets; their values never appear in a set-up error."""
    url_envs: tuple[str, ...] = ()
    """Environment variables holding URLs whose credentials never appear in a set-up error."""
    extra: str | None = None
    """The optional extra that installs ``requires`` (:func:`agentsproof.core.extras.install_line`)."""
    requires: Mapping[str, str] = field(default_factory=dict)
    """Top-level module -> distribution, checked (not imported) before ``build``."""
    detect: Callable[[], bool] | None = None
    """For ``--provider auto``: True when this provider is configured. Fast, no network.
    Only providers listed in ``registry.AUTO`` are asked, in that order."""
    own_model: Callable[[str | None, str | None], str] | None = None
    """For providers that run one fixed model: ``(--model, --judge-model) -> its name``,
    raising ``ProviderUnavailable`` for a flag that names another model."""
    no_model_hint: str = SUGGEST_LOCAL
    """Appended to the "--model: no model given" error."""
    configure_hint: str = ""
    """How to set this provider up, one clause of the "no usable LLM provider" error."""

    def missing(self) -> list[str]:
        """The distributions of ``requires`` that are not installed (looked up, not imported)."""
        return [dist for module, dist in self.requires.items() if not module_installed(module)]

    def check_installed(self) -> None:
        """Raise the one "install the extra" error when a required module is missing."""
        missing = self.missing()
        if missing:
            from agentsproof.core.extras import install_line

            install = install_line(self.extra) if self.extra else "pip install " + " ".join(missing)
            raise ProviderUnavailable(f"provider {self.name}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed; run: {install}")


def module_installed(name: str) -> bool:
    """True when the top-level module ``name`` can be imported; nothing is imported."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
