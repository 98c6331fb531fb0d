"""Time budgets: a timed-out attempt is retried within the call's budget, waits never
overshoot it, and judge calls obey the eval's timeout. Real client, real clock (the
scripted server delays only the first request where a retry must succeed)."""

from __future__ import annotations

import time

import pytest

from agentsproof.grading.llm_rubric import LLMRubricGrader
from agentsproof.llm.base import ChatRequest, LLMError
from agentsproof.llm.openai_http import openai_client
from agentsproof.llm.retry import ATTEMPT_SHARE, RetryingClient, RetryPolicy, attempt_timeout
from agentsproof.grading.grade import grade_all
from agentsproof.grading.judge import Judge
from conftest import SECRET_KEY, Rule

pytestmark = pytest.mark.usefixtures("openai_path")  # every test on both transports: the pooled one and httpx's own

MSGS = [{"role": "user", "content": "hi"}]
RUBRIC = LLMRubricGrader(type="llm_rubric", rubric="Mentions 'pytest'.", weight=1.0)


@pytest.fixture
async def make(scripted_server):
    made = []

    def _make(retry: bool = True, **policy) -> RetryingClient | Any:
        inner = openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY)
        c = RetryingClient(inner, RetryPolicy(**{"max_retries": 4, "base_delay": 0, **policy})) if retry else inner
        made.append(c)
        return c

    yield _make
    for c in made:
        await c.aclose()


def test_attempt_timeout_rule():
    req = ChatRequest(messages=MSGS, model="m")
    assert attempt_timeout(req, None, None) is None
    assert attempt_timeout(req, 10.0, 10.0) == 10.0 * ATTEMPT_SHARE
    assert attempt_timeout(req, 10.0, 2.0) == 2.0  # never past the budget
    assert attempt_timeout(ChatRequest(messages=MSGS, model="m", timeout=1.0), 10.0, 9.0) == 1.0
    # the runner may pass the same number as timeout and budget: one retry still fits
    assert attempt_timeout(ChatRequest(messages=MSGS, model="m", timeout=10.0), 10.0, 10.0) == 10.0 * ATTEMPT_SHARE


async def test_infinite_timeouts_mean_no_limit(make, scripted_server):
    inf = float("inf")
    resp = await make().complete(ChatRequest(messages=MSGS, model="m", timeout=inf, budget=inf))
    assert resp.text == "OK"


async def test_timed_out_attempt_is_retried_within_the_budget(make, scripted_server):
    scripted_server.add(Rule(delay=3, times=1))  # only the first request is slow
    resp = await make().complete(ChatRequest(messages=MSGS, model="m", budget=1.2))
    # the first attempt was cut (its reply would take 3 s), the retry answered within the
    # budget (how soon: bench/timings.py trial-retry)
    assert resp.text == "OK" and resp.attempts == 2
    assert len(scripted_server.requests) == 2


async def test_budget_bounds_all_attempts(make, scripted_server):
    scripted_server.add(Rule(delay=3))
    with pytest.raises(LLMError) as err:  # how soon: bench/timings.py trial-budget
        await make().complete(ChatRequest(messages=MSGS, model="m", budget=1.0))
    assert err.value.kind == "timeout" and "timed out" in str(err.value) and "1s budget" in str(err.value)


async def test_waits_never_overshoot_the_budget(make, scripted_server):
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    scripted_server.add(Rule(status=429, retry_after=30))
    client = make()
    client._sleep = sleep
    with pytest.raises(LLMError) as err:
        await client.complete(ChatRequest(messages=MSGS, model="m", budget=5))
    assert slept == [] and "HTTP 429" in str(err.value) and "no retry fits in the 5s budget" in str(err.value)
    assert len(scripted_server.requests) == 1


async def test_short_retry_after_fits_and_succeeds(make, scripted_server):
    scripted_server.add(Rule(status=503, retry_after=0.1, times=1))
    resp = await make().complete(ChatRequest(messages=MSGS, model="m", budget=5))
    assert resp.attempts == 2


async def test_shared_deadline_already_past_makes_no_call(make, scripted_server):
    with pytest.raises(LLMError, match="no time left"):
        await make().complete(ChatRequest(messages=MSGS, model="m", deadline=time.monotonic() - 1))
    assert scripted_server.requests == []


# ---------------------------------------------------------------- judge calls


@pytest.mark.parametrize("retry", [True, False], ids=["retrying-client", "bare-client"])
async def test_judge_obeys_the_eval_timeout(make, scripted_server, retry):
    scripted_server.add(Rule(delay=4, judge=True))
    judge = Judge(client=make(retry=retry), model="j", timeout=120)
    (res,) = await grade_all("use pytest", [RUBRIC], judge, "t", timeout=1.0)  # how soon: bench/timings.py judge-timeout
    assert res.errored and res.score is None, res.error
    assert "timed out" in res.error or "ran out of the eval's timeout of 1s" in res.error


async def test_slow_first_judge_call_is_retried_within_the_eval_timeout(make, scripted_server):
    scripted_server.add(Rule(delay=4, judge=True, times=1))
    judge = Judge(client=make(), model="j", timeout=120)
    (res,) = await grade_all("use pytest", [RUBRIC], judge, "t", timeout=2.0)
    assert not res.errored and res.score == 1.0  # the slow first call (4 s) was cut and retried within 2 s
    assert len(scripted_server.requests) == 2


async def test_grade_all_positional_signature_still_works(make, scripted_server):
    judge = Judge(client=make(), model="j")
    (res,) = await grade_all("use pytest", [RUBRIC], judge, "t")
    assert res.score == 1.0 and judge.deadline is None  # the caller's judge is not changed
