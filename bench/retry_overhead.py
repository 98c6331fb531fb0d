"""CPU per call of the retry wrapper: agentsproof's RetryingClient beside the same policy
driven by tenacity's ``AsyncRetrying`` and by stamina's ``retry_context``, around a client
that answers at once (so only the wrapper is measured), plus each library's import time.

Every wrapper runs in the same process, interleaved, --reps rounds; medians are printed and
the ratios are taken within a round. tenacity and stamina are not dependencies: pass a
folder they are installed in with --site (``pip install --target DIR tenacity stamina``).

    python bench/retry_overhead.py --site DIR [--calls 20000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient, LLMError  # noqa: E402
from agentsproof.llm.retry import RetryingClient, RetryPolicy  # noqa: E402
from agentsproof.model.results import Usage  # noqa: E402


class Instant(LLMClient):
    name = "instant"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="OK", usage=Usage(), latency_s=0.0, model=request.model)


def tenacity_wrapper(inner: LLMClient, policy: RetryPolicy):
    import random

    import tenacity

    rng = random.Random(1)

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return policy.wait_for(state.attempt_number, getattr(exc, "retry_after", None), rng)

    async def call(request: ChatRequest) -> ChatResponse:
        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, LLMError) and e.retryable),
            stop=tenacity.stop_after_attempt(policy.max_retries + 1),
            wait=wait,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                resp = await asyncio.wait_for(inner.complete(request), 60)
                resp.attempts = attempt.retry_state.attempt_number
                return resp
        raise AssertionError("unreachable")

    return call


def stamina_wrapper(inner: LLMClient, policy: RetryPolicy):
    import stamina

    def on(exc: Exception) -> bool | float:
        if not (isinstance(exc, LLMError) and exc.retryable):
            return False
        return exc.retry_after if exc.retry_after is not None else True

    async def call(request: ChatRequest) -> ChatResponse:
        async for attempt in stamina.retry_context(
            on=on, attempts=policy.max_retries + 1, wait_initial=policy.base_delay, wait_max=policy.max_wait
        ):
            with attempt:
                resp = await asyncio.wait_for(inner.complete(request), 60)
                resp.attempts = attempt.num
                return resp
        raise AssertionError("unreachable")

    return call


async def cpu_per_call(call, calls: int) -> float:
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], model="m", timeout=60)
    t0 = time.process_time()
    for _ in range(calls):
        await call(request)
    return (time.process_time() - t0) / calls * 1e6


def import_ms(module: str, site: str) -> float:
    code = f"import asyncio, random, dataclasses, time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = {"PYTHONPATH": site, "PATH": "/usr/bin:/bin"}
    times = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout) for _ in range(5)]
    return statistics.median(times) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", required=True, help="a folder holding tenacity and stamina")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, args.site)
    policy = RetryPolicy(max_retries=4, base_delay=0.5, max_wait=30.0)
    inner = Instant()
    ours = RetryingClient(inner, policy)
    wrappers = {"agentsproof": ours.complete, "tenacity": tenacity_wrapper(inner, policy), "stamina": stamina_wrapper(inner, policy)}
    rounds: dict[str, list[float]] = {name: [] for name in wrappers}
    for _ in range(args.reps):
        for name, call in wrappers.items():
            rounds[name].append(asyncio.run(cpu_per_call(call, args.calls)))
    print(f"{args.calls} calls x {args.reps} interleaved rounds, a client that answers at once (median µs CPU per call)")
    for name, values in rounds.items():
        ratio = statistics.median(v / o for v, o in zip(values, rounds["agentsproof"], strict=True))
        print(f"  {name:12s} {statistics.median(values):7.1f} µs/call   ÷ agentsproof {ratio:.2f}")
    for module in ("tenacity", "stamina"):
        print(f"  import {module}: {import_ms(module, args.site):.1f} ms (after asyncio)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
