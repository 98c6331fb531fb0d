"""GitHub Copilot provider: the official ``github-copilot-sdk`` driving the Copilot CLI.

Every call is one fresh Copilot session: the request's system text becomes the whole
system prompt (``replace`` mode, so the skill or the baseline is all the model sees), the
user text is sent, and the session's events give the reply (the last assistant message),
the token usage (the sum of ``assistant.usage`` events) and any tool use. All calls of one
:class:`CopilotClient` share one CLI process, started on the first call.

Two ways to reach a model:

- **GitHub login** (the default): the CLI uses ``GH_TOKEN`` / ``GITHUB_TOKEN`` /
  ``COPILOT_GITHUB_TOKEN`` or the login stored by ``copilot`` then ``/login``.
- **BYOK through the CLI**: ``AGENTSPROOF_COPILOT_PROVIDER_URL`` (with optional
  ``AGENTSPROOF_COPILOT_PROVIDER_KEY`` and ``AGENTSPROOF_COPILOT_PROVIDER_TYPE``, default
  ``openai``) points the CLI at an OpenAI-compatible server; no GitHub login is used.

Judge calls that want JSON get the schema as an instruction in the system message; the
judge layer re-asks when a reply does not parse. Temperature and max_tokens are not
exposed by Copilot sessions and are ignored.

The CLI retries failed model calls itself (with backoff, honouring ``Retry-After``). An
error it reports after retrying is therefore not retried again here; errors it did not
retry keep their usual classification (429, 5xx, connection: retryable; auth: not).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from agentsproof.core.scrub import scrub_text, scrub_url, url_secrets
from agentsproof.core.units import seconds
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, refuse_extra
from agentsproof.llm.copilot_events import EventCollector, error_from_session_error, render_prompt
from agentsproof.llm.copilot_setup import (
    BYOK_TYPES,
    ENV_BYOK_KEY,
    ENV_BYOK_TYPE,
    ENV_BYOK_URL,
    ENV_CLI_PATH,
    HINT_CLI,
    HINT_LOGIN,
    HINT_SDK,
    TOKEN_ENVS,
    byok_from_env,
    configured_byok,
    copilot_status,
    copilot_usable,
    find_cli,
    login_source,
    sdk_installed,
)
from agentsproof.llm.provider_entry import BuildOptions, ProviderEntry

ENV_TOOLS = "AGENTSPROOF_COPILOT_TOOLS"
DEFAULT_TIMEOUT = 600.0


# ---------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------


class CopilotClient(LLMClient):
    """One Copilot session per call, all on one shared CLI process."""

    name = "copilot"

    def __init__(
        self,
        *,
        cli_path: str | None = None,
        provider: dict[str, Any] | None = None,
        tools: list[str] | None = None,
        cli_found_via: str = "",
    ):
        self.cli_path = cli_path
        self.provider = provider
        self.tools = tools or []
        self.cli_found_via = cli_found_via
        self._sdk_client: Any = None
        self._start_lock: asyncio.Lock | None = None
        self._start_error: LLMError | None = None
        self._secrets = [s for s in [(provider or {}).get("api_key")] + [os.environ.get(n) for n in TOKEN_ENVS] if s]
        self._secrets += url_secrets((provider or {}).get("base_url"))
        self.startup_s: float | None = None
        self.home: str | None = None
        """``COPILOT_HOME`` for the CLI process (None: the user's ``~/.copilot``); the copilot
        target sets a private one when the login does not live there."""

    @classmethod
    def from_env(cls) -> CopilotClient:
        """The client for this machine: the CLI found, BYOK from the environment; LLMError when Copilot cannot run here."""
        ok, problem = copilot_status()
        if not ok:
            raise LLMError(problem, kind="unavailable")
        cli, how = find_cli()
        tools = [t.strip() for t in os.environ.get(ENV_TOOLS, "").split(",") if t.strip()]
        provider = byok_from_env()
        if provider is None and (provider := configured_byok()) is not None:
            from agentsproof.core.notice import note_once

            note_once(f"Copilot has no GitHub login here; it runs on the configured provider ({provider['base_url']}), as {ENV_BYOK_URL} would set it")
        return cls(cli_path=cli, provider=provider, tools=tools, cli_found_via=how)

    # -- lifecycle (also used by the copilot agent target) ---------------------

    async def sdk(self) -> Any:
        """The SDK client on its CLI process, started on first use (one per instance)."""
        if self._sdk_client is not None:
            return self._sdk_client
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._sdk_client is not None:
                return self._sdk_client
            if self._start_error is not None:
                raise self._start_error
            self._sdk_client = await self._start()
        return self._sdk_client

    async def _start(self) -> Any:
        import importlib

        from agentsproof.core.threads import to_thread

        # the SDK takes a second to import: in a thread, never holding the loop
        sdk = await to_thread(importlib.import_module, "copilot")
        SDKClient, RuntimeConnection = sdk.CopilotClient, sdk.RuntimeConnection  # noqa: N806 - the SDK's classes

        path = self.cli_path if self.cli_found_via != "SDK runtime cache" else None
        connection = RuntimeConnection.for_stdio(path=path)
        options: dict[str, Any] = {"connection": connection, "log_level": "error"}
        if self.provider is not None:
            options["use_logged_in_user"] = False  # BYOK: no GitHub credentials involved
        if self.home is not None:
            options["base_directory"] = self.home
        t0 = time.perf_counter()
        try:
            client = SDKClient(**options)
            await client.start()
        except Exception as exc:  # noqa: BLE001 - any start failure is reported the same way
            reason = self.scrub(f"{type(exc).__name__}: {exc}".splitlines()[0])[:300]
            self._start_error = LLMError(
                f"the Copilot CLI did not start ({self.cli_path or 'SDK runtime'}): {reason}; {HINT_CLI}",
                kind="unavailable",
            )
            raise self._start_error from None
        self.startup_s = time.perf_counter() - t0
        return client

    async def aclose(self) -> None:
        """Stop the shared CLI process (forced when a clean stop fails); shutting down never raises."""
        client, self._sdk_client = self._sdk_client, None
        if client is not None:
            try:
                await client.stop()
            except Exception:  # noqa: BLE001 - shutting down; nothing left to report to
                with contextlib.suppress(Exception):
                    await client.force_stop()

    def describe(self) -> dict[str, Any]:
        """Provider, CLI path and version, how it logs in and a BYOK base URL (no secret)."""
        facts: dict[str, Any] = {"provider": self.name, "cli_path": self.cli_path or "SDK runtime"}
        version = _cli_version_from_path(self.cli_path)
        if version:
            facts["cli_version"] = version
        facts["auth"] = "byok" if self.provider else "github login"
        if self.provider:
            facts["base_url"] = scrub_url(self.provider.get("base_url"), self._secrets)
        return facts

    def scrub(self, text: str) -> str:
        """``text`` without the BYOK key, GitHub tokens or URL credentials."""
        return scrub_text(text, self._secrets)

    # -- one call ------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One fresh Copilot session: the reply (the last assistant message), its usage and tool calls; LLMError on failure or timeout."""
        refuse_extra(request, "copilot")
        system, prompt = render_prompt(request.messages, request.json_schema)
        client = await self.sdk()
        collector = EventCollector()
        timeout = request.timeout or DEFAULT_TIMEOUT
        start = time.perf_counter()
        session = None
        try:
            session = await client.create_session(**self._session_options(request.model, system, collector))
            await session.send(prompt)
            try:
                await asyncio.wait_for(collector.done.wait(), timeout)
            except TimeoutError:
                raise LLMError(f"timed out after {seconds(timeout)} waiting for Copilot", retryable=True, kind="timeout") from None
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - SDK/CLI failures become LLMErrors
            raise self.sdk_error(exc) from None
        finally:
            if session is not None:
                await self.dispose(client, session, finished=collector.done.is_set())
        latency = time.perf_counter() - start
        if collector.error is not None:
            raise self.session_error(collector.error)
        text = collector.final_text()
        if text is None:
            raise self.no_answer(collector)
        return ChatResponse(
            text=text,
            usage=collector.usage,
            latency_s=latency,
            model=collector.model or request.model,
            cost_usd=collector.cost,
            tool_calls=collector.tool_calls,
        )

    def _session_options(self, model: str, system: str, collector: EventCollector) -> dict[str, Any]:
        from copilot.generated.rpc import PermissionDecisionReject
        from copilot.session import PermissionHandler

        def deny(request: Any, invocation: Any) -> Any:
            return PermissionDecisionReject(feedback="agentsproof runs trials without tools")

        options: dict[str, Any] = {
            "model": model or None,
            "system_message": {"mode": "replace", "content": system},
            "available_tools": list(self.tools),
            "on_permission_request": PermissionHandler.approve_all if self.tools else deny,
            "infinite_sessions": {"enabled": False},
            "skip_custom_instructions": True,
            "on_event": collector.on_event,
        }
        if self.provider is not None:
            options["provider"] = dict(self.provider)
        return options

    def session_error(self, data: Any) -> LLMError:
        """A ``session.error`` event as a scrubbed LLMError naming what to check."""
        hint = f"check {ENV_BYOK_KEY}" if self.provider is not None else HINT_LOGIN
        err = error_from_session_error(data, auth_hint=hint)
        return LLMError(self.scrub(str(err)), retryable=err.retryable, status=err.status, retry_after=err.retry_after, kind=err.kind)

    def no_answer(self, collector: EventCollector) -> LLMError:
        """The LLMError (retryable) for a session that ended without an assistant message."""
        odd = f" ({collector.odd_events} events of an odd shape skipped; {collector.odd_event})" if collector.odd_events else ""
        return LLMError(self.scrub(f"Copilot finished without an assistant message{odd}"), retryable=True, kind="malformed")

    async def dispose(self, client: Any, session: Any, *, finished: bool) -> None:
        """Stop a session and remove it from disk: trials must not fill the user's session history."""
        if not finished:
            with contextlib.suppress(Exception):  # best effort on an already failing call
                await session.abort()
        for step in (session.disconnect, lambda: client.delete_session(session.session_id)):
            with contextlib.suppress(Exception):
                await asyncio.shield(step())

    def sdk_error(self, exc: Exception) -> LLMError:
        """An exception from the SDK or the CLI as a scrubbed LLMError."""
        text = self.scrub(" ".join(f"{exc}".split()))[:300] or type(exc).__name__
        name = type(exc).__name__
        if name in ("ProcessExitedError", "ConnectionError", "BrokenPipeError") or isinstance(exc, OSError):
            # The CLI went away: start a fresh one on the next call.
            self._sdk_client = None
            return LLMError(f"the Copilot CLI connection failed: {text}", retryable=True, kind="connection")
        if isinstance(exc, TimeoutError):
            return LLMError(f"Copilot timed out: {text}", retryable=True, kind="timeout")
        if "auth" in text.lower() or "login" in text.lower():
            return LLMError(f"Copilot: {text}; {HINT_LOGIN}", kind="auth")
        return LLMError(f"Copilot: {name}: {text}", kind="error")


def _cli_version_from_path(path: str | None) -> str | None:
    """The CLI version from its npm package.json next to the binary (cheap: no process)."""
    if not path:
        return None
    try:
        real = Path(path).resolve()
    except OSError:
        return None
    for parent in list(real.parents)[:3]:
        pkg = parent / "package.json"
        if pkg.is_file():
            try:
                data = json.loads(pkg.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            if str(data.get("name", "")).startswith("@github/copilot"):
                return str(data.get("version") or "") or None
            return None
    return None


def build(options: BuildOptions) -> LLMClient:
    """The client on the CLI found here (nothing is started until the first call)."""
    return CopilotClient.from_env()


PROVIDER = ProviderEntry(
    name="copilot",
    build=build,
    secret_envs=(ENV_BYOK_KEY,),
    extra="copilot",
    requires={"copilot": "github-copilot-sdk"},
    detect=copilot_usable,
    no_model_hint="",
    configure_hint=(
        "GitHub Copilot: pip install -e '.[copilot]' (in the agentsproof checkout), install the Copilot CLI (npm install -g @github/copilot) and log in"
    ),
)

__all__ = [
    "BYOK_TYPES",
    "ENV_BYOK_KEY",
    "ENV_BYOK_TYPE",
    "ENV_BYOK_URL",
    "ENV_CLI_PATH",
    "HINT_CLI",
    "HINT_LOGIN",
    "HINT_SDK",
    "PROVIDER",
    "TOKEN_ENVS",
    "CopilotClient",
    "byok_from_env",
    "copilot_status",
    "copilot_usable",
    "find_cli",
    "login_source",
    "sdk_installed",
]
