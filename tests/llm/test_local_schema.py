"""The embedded model on real skills: judge replies always within range and complete,
and the context the model was trained for (not 2,048) as the default."""

from __future__ import annotations

import json
import os

import pytest

from agentsproof.llm.local_schema import MAX_STRING_CHARS, constrain, rescale
from agentsproof.grading.assertions import ASSERTION_SCHEMA
from agentsproof.grading.llm_rubric import RUBRIC_SCHEMA


def test_a_0_to_1_score_is_asked_as_an_integer_0_to_10_and_mapped_back():
    schema, scaled = constrain(RUBRIC_SCHEMA)
    assert scaled == ["score"]
    assert schema["properties"]["score"] == {"type": "integer", "enum": list(range(11))}
    assert schema["properties"]["reasoning"]["maxLength"] == MAX_STRING_CHARS
    assert RUBRIC_SCHEMA["properties"]["score"]["type"] == "number", "the judge's own schema is untouched"
    assert json.loads(rescale('{"reasoning": "ok", "score": 7}', scaled)) == {"reasoning": "ok", "score": 0.7}
    assert rescale("not json", scaled) == "not json"
    # the grammar lets raw control characters into strings; the reply comes back strict JSON
    raw = '{"reasoning": ");\n\nS: The answer is ","score" :2}'
    assert json.loads(rescale(raw, scaled)) == {"reasoning": ");\n\nS: The answer is ", "score": 0.2}
    assert json.loads(rescale('{"passed": true, "why": "a\tb"}', [])) == {"passed": True, "why": "a\tb"}
    schema, scaled = constrain(ASSERTION_SCHEMA)
    assert scaled == [] and schema["properties"]["passed"] == {"type": "boolean"}


def test_bounded_integers_become_enums():
    schema, _ = constrain({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}}})
    assert schema["properties"]["n"]["enum"] == [1, 2, 3, 4, 5]


@pytest.mark.local_model
def test_local_judge_scores_stay_in_range_and_long_prompts_fit():
    if not os.environ.get("CI"):
        pytest.importorskip("llama_cpp")
    import asyncio

    from agentsproof.llm.base import ChatRequest
    from agentsproof.llm.local import LocalClient

    async def main() -> tuple[list[str], int, object]:
        client = LocalClient.from_env()
        try:
            replies = []
            for _ in range(4):
                r = await client.complete(
                    ChatRequest(
                        messages=[
                            {"role": "system", "content": "You grade an AI assistant's response. Reply with JSON: reasoning, score."},
                            {"role": "user", "content": "Rubric: greets the user.\nResponse: " + "hello there, friend. " * 40},
                        ],
                        model="",
                        temperature=1.0,
                        json_schema=RUBRIC_SCHEMA,
                        max_tokens=400,
                    )
                )
                replies.append(r.text)
            # far past the old 2,048-token default: SmolLM2 was trained for 8,192
            long = await client.complete(ChatRequest(messages=[{"role": "user", "content": "word " * 5000}], model="", max_tokens=4))
            return replies, long.usage.prompt_tokens, client.describe()["n_ctx"]
        finally:
            await client.aclose()

    replies, prompt_tokens, n_ctx = asyncio.run(main())
    for text in replies:
        data = json.loads(text)  # complete JSON every time
        assert 0.0 <= data["score"] <= 1.0 and isinstance(data["reasoning"], str)
    assert prompt_tokens > 4000
    assert "GGUF" in str(n_ctx)
