"""One agent script, run unchanged by our SDK and by the published one (``agentsproof==1.0.6``).

Reads AP_BASE_URL, AP_KEY, AP_PROJECT, AP_SUITE (optional) and prints one JSON line:
{"run": complete() result, "remote_run_id", "async": ..., "suite": ...}.
"""

import asyncio
import json
import os
import time

from agentsproof import AgentsProof

ap = AgentsProof(api_key=os.environ["AP_KEY"], base_url=os.environ["AP_BASE_URL"])
project = os.environ["AP_PROJECT"]


def search(q):
    return {"hits": [q, q.upper()], "usage": {"prompt_tokens": 5, "completion_tokens": 7}}


run = ap.start_run(
    project_slug=project,
    label="wire script",
    input={"query": "reverse a list"},
    goal="Return working code",
    expected_output={"answer": "xs[::-1]"},
    expected_behavior="search then answer",
    success_criteria=["uses slicing", "mentions reversed()"],
    trace_assertions=["must_call:web_search", "max_steps:5"],
    failure_modes=["hallucinated_api"],
    metadata={"team": "sdk", "n": 1},
)
out = run.trace("tool_call", "web_search", lambda: search("python reverse"), input="python reverse")
time.sleep(0.3)  # the published SDK sends each step from its own thread: keep their order deterministic
run.log_step({"type": "llm_call", "name": "gpt-x", "input": "prompt", "output": "xs[::-1]", "latency_ms": 12.5,
              "token_count": 42, "cost_usd": 0.001})
time.sleep(0.3)
result = run.complete({"answer": "xs[::-1]"})


async def arun():
    r = ap.start_run(project_slug=project, input="async question", goal="answer")

    async def llm():
        await asyncio.sleep(0.01)
        return {"content": "async answer", "usage": {"input_tokens": 3, "output_tokens": 4}}

    got = await r.atrace("llm_call", "claude", llm)
    await asyncio.sleep(0.3)
    return await r.acomplete({"answer": got["content"]}), r.remote_run_id


async_result, async_id = asyncio.run(arun())

suite = None
if os.environ.get("AP_SUITE"):
    def handler(input, ctx):
        if isinstance(input, dict) and input.get("fail"):
            raise ValueError("case failed on purpose")
        r = ctx.start_run()
        r.trace("tool_call", "web_search", lambda: search(str(input)), input=input)
        time.sleep(0.2)
        r.complete({"answer": f"handled {input}"})

    suite = ap.run_proof_suite(project_slug=project, suite_slug=os.environ["AP_SUITE"], handler=handler)

print(json.dumps({"run": result, "remote_run_id": run.remote_run_id, "async": async_result, "async_id": async_id,
                  "suite": suite, "steps_token_count": out["usage"]["prompt_tokens"]}))
