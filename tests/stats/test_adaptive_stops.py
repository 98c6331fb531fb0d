"""The stop rule of --adaptive: grades, futility labels, and the interval they stand on."""

from __future__ import annotations

import pytest

from agentsproof.stats.adaptive import NO_EFFECT, NO_HARM, UNREACHABLE, AdaptivePolicy, projection_floor, statement


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
        # futility: projected to the cap (half-width x sqrt(done/cap)) no statement is reachable
        ((-0.5, 0.5), 5, 30, (None, UNREACHABLE)),  # a null skill on pass/fail scores at the first look
        ((-0.5, 0.5), 5, 200, (None, None)),  # by 200 trials "no meaningful effect" is reachable
        ((-0.5, 0.5), 30, 30, (None, None)),  # at the cap the run stops anyway: no futility label
        ((0.1, 1.0), 5, 30, (None, None)),  # centre 0.55: an A is reachable
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
    short = policy.stop_label([1.0] * 30, [1.0] * 30, 30, 40)
    assert short["label"] == UNREACHABLE  # not "no meaningful effect": 30 trials cannot say it, nor the cap of 40
    clear = policy.stop_label([1.0] * 8, [0.0] * 8, 8, 15)
    assert clear["label"].endswith(" % interval within A") and clear["kind"] == "grade"
    unclear = policy.stop_label([1.0, 0.0] * 4, [0.0, 1.0] * 4, 8, 15)
    assert unclear["kind"] == "futility" and unclear["label"] == UNREACHABLE  # 7 more trials cannot settle it
    capped = policy.stop_label([1.0, 0.0] * 4, [0.0, 1.0] * 4, 8, 8)
    assert capped["kind"] == "cap" and capped["label"] == "unsettled at the cap"


def test_the_projection_floor_of_tasks_like_these_is_the_betting_interval_of_agreeing_cases():
    """Question (b) (5 cases or more): more trials per case cannot narrow the interval below
    that of as many cases whose deltas all agree, so a 5-case item stops at its first look
    instead of running to a cap it cannot use; below 5 cases (question (a)) no floor."""
    agree = [([1.0], [1.0]) for _ in range(5)]
    floor = projection_floor(agree, (-0.4, 0.4), looks=7)
    assert 0.5 < floor < 1.0
    assert projection_floor(agree[:3], (-0.4, 0.4), looks=7) == 0.0
    assert projection_floor(None, (-0.4, 0.4), looks=7) == 0.0
    policy = AdaptivePolicy()
    cases = [([1.0, 1.0], [1.0, 0.0]) for _ in range(5)]
    flat = [v for w, _ in cases for v in w]
    base = [v for _, wo in cases for v in wo]
    assert policy(flat, base, 10, 30, cases) == 0
    assert policy.labels[-1] == (10, UNREACHABLE)
    assert policy.stop_label(flat, base, 10, 30, cases)["kind"] == "futility"


def test_a_perfect_five_case_item_settles_on_these_cases_and_says_what_would_settle_tasks_like_these():
    """Every trial 1.00 with, 0.00 without, 5 cases, cap 15: tasks like these (b) cannot settle
    by the cap (5 cases that all gain +1 still span F–A), so the rule asks question (a) and
    stops with a clear A on these cases — never "unsettled" — naming how many more cases would
    settle (b). A null 5-case item still stops for futility at the first look."""
    policy = AdaptivePolicy()

    def perfect(done):  # the runner's round robin: trial i runs case i mod 5
        return [([1.0] * len(range(j, done, 5)), [0.0] * len(range(j, done, 5))) for j in range(5)]

    done = policy([], [], 0, 15)
    while (more := policy([1.0] * done, [0.0] * done, done, 15, perfect(done))) > 0:
        done += more
    assert policy.labels[-1] == (done, "A") and policy.stops[-1] == (done, "A")
    cases = [([1.0] * 3, [0.0] * 3) for _ in range(5)]
    stop = policy.stop_label([1.0] * 15, [0.0] * 15, 15, 15, cases)
    assert stop["kind"] == "grade" and stop["question"] == "cases"
    assert stop["label"].startswith("98.8 % interval within A on these 5 cases (for tasks like these not settled yet: about ")
    assert stop["label"].endswith(" more cases like these would settle it)")
    assert stop["interval"][0] >= 0.30  # (a)'s interval, inside A
    null = [([1.0, 0.0], [1.0, 0.0]) for _ in range(5)]
    flat = [v for w, _ in null for v in w]
    assert policy(flat, flat, 10, 15, null) == 0 and policy.labels[-1] == (10, UNREACHABLE)
    assert policy.stop_label(flat, flat, 10, 15, null)["question"] == "tasks"
