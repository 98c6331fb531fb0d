"""The stop rule of --adaptive: grades, futility labels, and the interval they stand on."""

from __future__ import annotations

import pytest

from agentsproof.stats.adaptive import NO_EFFECT, NO_HARM, AdaptivePolicy, statement


@pytest.mark.parametrize(
    "ci,done,cap,expected",
    [
        ((0.35, 0.9), 5, 15, ("A", None)),
        ((-0.6, -0.1), 5, 15, ("F", None)),
        ((-0.2, 0.14), 5, 15, (None, NO_EFFECT)),  # rules out B or better
        ((-0.2, 0.15), 5, 15, (None, None)),  # B not ruled out
        ((0.2, 0.9), 5, 15, (None, None)),  # no harm, but A may still settle by the cap
        ((0.02, 0.9), 5, 15, (None, NO_HARM)),  # projected to the cap, still too wide for any grade
        ((0.01, 0.9), 15, 15, (None, NO_HARM)),  # at the cap: the statement that holds
        ((0.0, 0.6), 14, 15, (None, NO_HARM)),  # too wide to settle any grade by the cap
        ((-0.01, 0.6), 14, 15, (None, None)),
        # the ends as printed (two decimals), like the grades
        ((-0.2, 0.1496), 5, 15, (None, None)),  # prints "+0.15": B is not ruled out
        ((-0.2, 0.1449), 5, 15, (None, NO_EFFECT)),  # prints "+0.14"
        ((-0.004, 0.6), 14, 15, (None, NO_HARM)),  # prints "-0.00": a C bottom, F ruled out
        ((-0.006, 0.6), 14, 15, (None, None)),  # prints "-0.01": an F bottom
    ],
)
def test_statement(ci, done, cap, expected):
    assert statement(ci, done=done, cap=cap) == expected


def test_stop_label_names_the_stop_and_its_interval():
    policy = AdaptivePolicy()
    # identical arms, all passing: no meaningful effect — from 60 trials at 21 looks (at 30 of
    # 9 looks no valid interval can say it: chances 1 and 0.85, a B, give 30/30 and 30/30 with
    # chance 0.85**30 = 0.0076 > 0.05/9; the score interval's top there is 0.215)
    same = [1.0] * 60
    assert policy(same, same, 60, 100) == 0
    label = policy.stop_label(same, same, 60, 100)
    assert label["label"] == NO_EFFECT and label["kind"] == "futility" and label["interval"][1] < 0.15
    assert label["level"] == pytest.approx(1 - 0.05 / 21)
    assert policy.stop_label([1.0] * 30, [1.0] * 30, 30, 40)["kind"] != "futility"
    clear = policy.stop_label([1.0] * 8, [0.0] * 8, 8, 15)
    assert clear["label"] == "CI within A" and clear["kind"] == "grade"
    unclear = policy.stop_label([1.0, 0.0] * 4, [0.0, 1.0] * 4, 8, 15)
    assert unclear["kind"] == "cap" and unclear["label"] == "unsettled at the cap"
