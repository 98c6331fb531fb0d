"""The verifier grader's reward rules (Harbor's reward.txt / reward.json), and its one refusal
without a container; the runs in a real container are tests/environments/test_harbor_tasks.py."""

from __future__ import annotations

import pytest

from agentsproof.grading.base import GradeInput
from agentsproof.grading.context import TrialContext
from agentsproof.grading.verifier import VerifierGrader, grade, parse_reward_json, parse_reward_txt


@pytest.mark.parametrize(("text", "value"), [(b"1\n", 1.0), (b"0", 0.0), (b" 0.75 \n", 0.75), (b"1e0", 1.0)])
def test_reward_txt_is_one_number(text: bytes, value: float) -> None:
    """reward.txt holds one number, whitespace around it allowed."""
    assert parse_reward_txt(text) == (value, "")


@pytest.mark.parametrize(
    ("text", "why"), [(b"", "is empty"), (b"passed", "not a number"), (b"1 0", "not a number"), (b"nan", "not a number"), (b"inf", "not a number")]
)
def test_a_malformed_reward_txt_says_what_is_wrong(text: bytes, why: str) -> None:
    """Empty, words, two numbers, NaN, infinity: no reward, and the reason."""
    reward, problem = parse_reward_txt(text)
    assert reward is None and why in problem and "reward.txt" in problem


def test_reward_json_takes_its_reward_else_the_mean_of_its_numbers() -> None:
    """Harbor's reward.json: a dict of numbers; 'reward' when there is one, else the mean; each one a check."""
    reward, checks, problem = parse_reward_json(b'{"reward": 0.5, "tests_passed": 1}')
    assert (reward, problem) == (0.5, "") and [(c.target, c.passed) for c in checks] == [("reward", False), ("tests_passed", True)]
    reward, checks, _ = parse_reward_json(b'{"a": 1, "b": 0}')
    assert reward == 0.5 and len(checks) == 2
    assert parse_reward_json(b"0.25")[0] == 0.25  # a bare number, as Harbor accepts


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b"{", "not valid JSON"),
        (b"[]", "not a JSON object"),
        (b"{}", "not a JSON object"),
        (b'{"reward": "1"}', "'reward' is not a number"),
        (b'{"a": true}', "'a' is not a number"),
    ],
)
def test_a_malformed_reward_json_says_what_is_wrong(text: bytes, why: str) -> None:
    """Broken JSON, a list, an empty object, strings and booleans for numbers: no reward, and the reason."""
    reward, checks, problem = parse_reward_json(text)
    assert reward is None and checks == [] and why in problem


def test_the_config_is_strict_and_its_paths_stay_inside() -> None:
    """tests/script are relative paths inside the eval's folder; env names are variable names."""
    from pydantic import ValidationError

    assert VerifierGrader(type="verifier").tests == "tests"
    for bad in ({"tests": "../elsewhere"}, {"script": "/abs/test.sh"}, {"env": {"1X": "y"}}, {"shell": "bash"}, {"timeout": 0}):
        with pytest.raises(ValidationError):
            VerifierGrader.model_validate({"type": "verifier", **bad})


async def test_without_a_container_the_trial_is_errored_not_zero(tmp_path) -> None:
    """A verifier in a trial that has no container errors it, saying what to give."""
    spec = VerifierGrader(type="verifier")
    res = await grade(spec, GradeInput(answer="", context=TrialContext(answer="", eval_dir=tmp_path), judge=None, task="t"))
    assert res.errored and res.score is None and "environment:" in (res.error or "")
