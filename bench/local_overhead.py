"""How much time does agentsproof add on top of raw llama-cpp-python?

The same prompts run twice per round, interleaved: once through the harness (the
``local`` provider as the runner gets it from ``build_client``, i.e. the retry wrapper,
the per-call timeout, the waiting thread, the JSON frames to and from the worker process,
the prompt-length check in the worker) and once straight through
``Llama.create_chat_completion`` on a model loaded in this process with the same file,
context size and threads, with identical messages, sampling parameters and per-call
seeds. Both sides therefore generate the same tokens; the difference is the harness.
Target: harness / raw <= 1.05.

    .venv/bin/python bench/local_overhead.py [--rounds 3] [--max-tokens 64]

Prints both times, the ratio and tokens/s. On a busy machine, run it with
AGENTSPROOF_LOCAL_THREADS=1: llama.cpp's threads stall each other when a core is taken. Exit status 1 when the ratio exceeds --target.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentsproof.model.items import BASELINE_SYSTEM_PROMPT  # noqa: E402
from agentsproof.llm.base import ChatRequest  # noqa: E402
from agentsproof.llm.local import sampling_params  # noqa: E402
from agentsproof.llm.local_model import LocalSettings  # noqa: E402
from agentsproof.llm.registry import build_client  # noqa: E402

SKILL = (
    "# Release notes writer\n\nYou turn a list of merged changes into release notes. "
    "Group them under the headings Added, Fixed and Changed, one bullet per change."
)
PROMPTS = [
    (SKILL, "Merged this week: dark mode toggle, crash on empty search fixed, faster CSV export."),
    (BASELINE_SYSTEM_PROMPT, "Merged this week: dark mode toggle, crash on empty search fixed, faster CSV export."),
    (SKILL, "Merged: login page redesign, typo in the settings menu fixed, removed the legacy API."),
    (BASELINE_SYSTEM_PROMPT, "Explain in two sentences what a release note is for."),
]


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def _harness(client, model: str, max_tokens: int, temperature: float) -> tuple[float, int]:
    tokens = 0
    t0 = time.perf_counter()
    for system, user in PROMPTS:
        req = ChatRequest(
            messages=_messages(system, user), model=model, temperature=temperature, max_tokens=max_tokens, timeout=300
        )
        resp = await asyncio.wait_for(client.complete(req), 300)
        tokens += resp.usage.completion_tokens
    return time.perf_counter() - t0, tokens


def _raw(llm, seeds: list[int], max_tokens: int, temperature: float) -> tuple[float, int]:
    tokens = 0
    t0 = time.perf_counter()
    for (system, user), seed in zip(PROMPTS, seeds):
        out = llm.create_chat_completion(messages=_messages(system, user), **sampling_params(temperature, max_tokens, seed))
        tokens += out["usage"]["completion_tokens"]
    return time.perf_counter() - t0, tokens


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--target", type=float, default=1.05)
    args = ap.parse_args()

    os.environ["AGENTSPROOF_LOCAL_SEED"] = str(args.seed)
    client = build_client("local")  # the RetryingClient(LocalClient) the runner uses
    settings = LocalSettings.from_env()
    model = settings.model_name
    from llama_cpp import Llama  # the raw side only: the harness runs the model in its worker process

    threads = settings.threads_per_instance
    raw_llm = Llama(
        model_path=str(settings.model_path), n_ctx=settings.n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    print(f"model: {settings.model_path.name}  threads: {settings.threads}  instances: {settings.instances}")
    print(f"prompts per round: {len(PROMPTS)}  max_tokens: {args.max_tokens}  temperature: {args.temperature}")

    # The client draws one seed per call from Random(seed); replay that sequence for raw calls.
    seed_rng = random.Random(args.seed)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_harness(client, model, 8, args.temperature))  # warm-up (worker start, caches)
        _raw(raw_llm, [0] * len(PROMPTS), 8, args.temperature)
        for _ in PROMPTS:
            seed_rng.randrange(2**31)
        h_times: list[float] = []
        r_times: list[float] = []
        h_toks: list[int] = []
        r_toks: list[int] = []
        ratios: list[float] = []
        for i in range(args.rounds):
            seeds = [seed_rng.randrange(2**31) for _ in PROMPTS]
            # alternate the order so neither side always runs on a warmer cache
            if i % 2 == 0:
                ht, hn = loop.run_until_complete(_harness(client, model, args.max_tokens, args.temperature))
                rt, rn = _raw(raw_llm, seeds, args.max_tokens, args.temperature)
            else:
                rt, rn = _raw(raw_llm, seeds, args.max_tokens, args.temperature)
                ht, hn = loop.run_until_complete(_harness(client, model, args.max_tokens, args.temperature))
            h_times.append(ht)
            r_times.append(rt)
            h_toks.append(hn)
            r_toks.append(rn)
            ratios.append((ht / hn) / (rt / rn) if hn and rn else ht / rt)
            print(f"round {i + 1}: harness {ht:.2f}s ({hn} tokens)  raw {rt:.2f}s ({rn} tokens)")
        loop.run_until_complete(client.aclose())
    finally:
        loop.close()

    # Seeds are replayed, so both sides generate the same tokens in a round. Other load on the
    # machine only ever adds time, so the fastest round of each side is the least noisy
    # estimate; the ratio compares those (per token), the median round ratio is shown too.
    h_best = min(t / n for t, n in zip(h_times, h_toks) if n)
    r_best = min(t / n for t, n in zip(r_times, r_toks) if n)
    h_total, r_total = sum(h_times), sum(r_times)
    ratio = h_best / r_best
    print(f"harness: {h_total:.2f}s  {sum(h_toks)} tokens  {sum(h_toks) / h_total:.1f} tokens/s (best round {1 / h_best:.1f})")
    print(f"raw:     {r_total:.2f}s  {sum(r_toks)} tokens  {sum(r_toks) / r_total:.1f} tokens/s (best round {1 / r_best:.1f})")
    print(f"ratio (harness/raw, best round, time per token): {ratio:.3f}  median round ratio: {statistics.median(ratios):.3f}  target <= {args.target}")
    return 0 if ratio <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
