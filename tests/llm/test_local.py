"""The ``local`` provider end to end with the real embedded model (SmolLM2-135M in llama.cpp).

Replies are kept short (a few dozen tokens) so the whole file stays well under a minute
on two cores. The model is loaded once per process and shared by every test here.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import read_json, run_cli

pytestmark = pytest.mark.local_model

from conftest import require_local_model  # noqa: E402

require_local_model()

from agentsproof.grading.deterministic import DeterministicGrader  # noqa: E402
from agentsproof.executor.runner import DualArmRunner, Scheduling  # noqa: E402
from agentsproof.model.items import EvalItem
from agentsproof.llm import local_pool  # noqa: E402
from agentsproof.llm.base import ChatRequest, LLMError  # noqa: E402
from agentsproof.llm.local import LocalClient, default_model_name, local_available  # noqa: E402
from agentsproof.llm.local_model import LocalSettings, bundled_model_path  # noqa: E402
from agentsproof.llm.registry import build_client  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "evals" / "demo-plugin"
MODEL = "smollm2-135m-instruct"



@pytest.fixture(autouse=True)
def _local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "AGENTSPROOF_LOCAL_MODEL",
        "AGENTSPROOF_LOCAL_N_CTX",
        "AGENTSPROOF_LOCAL_INSTANCES",
        "AGENTSPROOF_LOCAL_TEMPERATURE",
        "AGENTSPROOF_MODEL",
        "AGENTSPROOF_JUDGE_MODEL",
        "AGENTSPROOF_PROVIDER_URL",
        "AGENTSPROOF_PROVIDER_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "local")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MAX_TOKENS", "24")
    monkeypatch.setenv("AGENTSPROOF_LOCAL_SEED", "7")


def _req(user: str, **kw) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": user}], model=MODEL, **kw)


def test_discovery_is_cheap_and_names_the_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert local_available()
    assert default_model_name() == MODEL
    assert bundled_model_path().name == "SmolLM2-135M-Instruct.Q4_1.gguf"  # type: ignore[union-attr]
    other = tmp_path / "Tiny-Model.Q8_0.gguf"
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MODEL", str(other))
    assert not local_available()  # the file does not exist yet
    other.write_bytes(b"GGUF")
    assert local_available()
    assert default_model_name() == "tiny-model.q8_0"


async def test_complete_returns_text_usage_and_latency() -> None:
    client = LocalClient.from_env()
    resp = await client.complete(_req("Name one colour.", max_tokens=12))
    assert resp.text.strip()
    assert resp.usage.prompt_tokens > 5
    assert 0 < resp.usage.completion_tokens <= 12
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    assert resp.latency_s > 0
    assert resp.model == MODEL
    assert resp.cost_usd is None
    # loaded once: a second client with the same settings reuses the cached model
    before = local_pool.pool_count()
    await LocalClient.from_env().complete(_req("Say yes.", max_tokens=2))
    assert local_pool.pool_count() == before


async def test_judge_call_with_json_schema_always_parses() -> None:
    schema = {
        "type": "object",
        "properties": {"score": {"type": "number"}, "reasoning": {"type": "string"}},
        "required": ["score", "reasoning"],
    }
    client = LocalClient.from_env()
    req = ChatRequest(
        messages=[
            {"role": "system", "content": "You grade answers."},
            {"role": "user", "content": "Question: 2+2? Answer: 4. Grade it from 0 to 1."},
        ],
        model=MODEL,
        temperature=0.0,
        json_schema=schema,
        max_tokens=60,
    )
    value = json.loads((await client.complete(req)).text)
    assert isinstance(value["score"], (int, float))
    assert isinstance(value["reasoning"], str)


async def test_context_overflow_is_an_errored_trial_with_the_reason() -> None:
    client = build_client("local")  # the RetryingClient the runner gets
    item = EvalItem(
        id="skills/huge",
        name="huge",
        kind="skill",
        source_path="SKILL.md",
        system_prompt="Follow these rules carefully. " * 2500,  # ~12,500 tokens: past the 8,192 SmolLM2 was trained for
        task_name="t",
        prompt="Say hello.",
        graders=[DeterministicGrader(type="deterministic", checks=["hello"])],
        trials=1,
        timeout=60,
        threshold=0.5,
    )
    from agentsproof.targets.chat.target import ChatTarget

    runner = DualArmRunner({"chat": ChatTarget(client, MODEL, max_tokens=4)}, Scheduling(), judge=None)
    run = await runner.run_item(item)
    with_trial = run.with_arm.trials[0]
    assert with_trial.status == "errored"
    assert "context overflow:" in (with_trial.error or "")
    assert "prompt tokens > n_ctx 8192" in (with_trial.error or "")  # the context read from the GGUF
    assert run.without_arm.trials[0].status == "scored", run.without_arm.trials[0].error  # the short baseline still ran


async def test_concurrent_calls_are_safe_with_one_or_two_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    for instances in ("1", "2"):
        monkeypatch.setenv("AGENTSPROOF_LOCAL_INSTANCES", instances)
        client = LocalClient.from_env()
        assert client.max_concurrency == int(instances)
        prompts = [f"Write the number {i} in words." for i in range(5)]
        results = await asyncio.gather(*(client.complete(_req(p, max_tokens=6)) for p in prompts))
        assert all(r.usage.completion_tokens > 0 for r in results)


async def test_event_loop_stays_responsive_during_generation() -> None:
    """The loop keeps turning while the model generates: a client that generated on the loop
    would let the loop turn only at its own few awaits, not hundreds of times (no clock read)."""
    client = LocalClient.from_env()
    await client.complete(_req("Hi", max_tokens=1))  # load outside the measurement
    job = asyncio.create_task(client.complete(_req("Tell a short story about a cat.", max_tokens=24, temperature=0.7)))
    turns = 0
    while not job.done():
        await asyncio.sleep(0)
        turns += 0 if job.done() else 1
    resp = job.result()
    assert resp.text and resp.usage.completion_tokens > 1
    assert turns >= 100, turns  # the loop turned while the model generated


async def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(LLMError, match="not served by the local provider.*AGENTSPROOF_LOCAL_MODEL"):
        await LocalClient.from_env().complete(ChatRequest(messages=[{"role": "user", "content": "x"}], model="gpt-4o"))


def test_bad_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_LOCAL_N_CTX", "lots")
    with pytest.raises(LLMError, match="environment: AGENTSPROOF_LOCAL_N_CTX: 'lots' is not a whole number"):
        LocalSettings.from_env()


def _demo_eval() -> Path:
    found = sorted((DEMO / "skills").glob("*/eval.yaml"))
    assert found, f"no demo evals below {DEMO}"
    return found[0]


def test_cli_eval_on_a_demo_skill_writes_reports_and_exits_by_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MAX_TOKENS", "48")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", _demo_eval(), "--provider", "local", "--trials", "2", "--ci", "--output", out])
    assert "Traceback" not in stderr
    reports = {p.suffix: p for p in out.rglob("*-eval.*")}
    assert {".html", ".json", ".md"} <= set(reports), (sorted(out.rglob("*")), code, stdout, stderr)
    data = read_json(reports[".json"])
    assert data["provider"] == "local"
    assert data["model"] == MODEL
    item = data["items"][0]
    assert len(item["with_arm"]["trials"]) == 2 and len(item["without_arm"]["trials"]) == 2
    unproven = item["passed"] and (item.get("stats") or {}).get("enough_data") is False  # --ci fails a pass on too few trials
    expected = 30 if item["status"] == "errored" else (0 if item["passed"] and not unproven else 1)
    assert code == expected, (code, item["status"], item["passed"], stdout, stderr)
    assert str(reports[".html"].name) in stdout


def test_missing_model_file_is_exit_30_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nope" / "model.gguf"
    monkeypatch.setenv("AGENTSPROOF_LOCAL_MODEL", str(missing))
    code, stdout, stderr = run_cli(["eval", _demo_eval(), "--provider", "local", "--trials", "1", "--output", tmp_path / "runs"])
    assert code == 30
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "AGENTSPROOF_LOCAL_MODEL" in lines[0] and str(missing) in lines[0]
    assert not (tmp_path / "runs").exists()
