"""stats.activation: hand-counted confusion tables, expectations across suites, intervals."""

from __future__ import annotations

from agentsproof.model.activation import ActivationPrompt, ActivationSuite, ActivationTrial
from agentsproof.model.items import SkillFile
from agentsproof.stats.activation import NONE, f1_score, proportion, score


def suite(name: str, should: list[str], should_not: list[str], **kw) -> ActivationSuite:
    prompts = [ActivationPrompt(t, True, "implicit") for t in should] + [ActivationPrompt(t, False, "near-miss") for t in should_not]
    return ActivationSuite(skill=SkillFile(name=name, kind="skill", text=""), prompts=prompts, **kw)


def trial(owner: ActivationSuite, text: str, fired: list[str] | None, index: int = 0) -> ActivationTrial:
    p = next(p for p in owner.prompts if p.text == text)
    return ActivationTrial(owner.skill.name, p, index, fired, error=None if fired is not None else "boom")


def test_counts_collisions_dormancy_and_the_matrix():
    a = suite("a", ["a1", "a2", "a3", "shared"], ["a-not"])
    b = suite("b", ["b1", "shared"], ["b-not"])
    trials = [
        trial(a, "a1", ["a"]), trial(a, "a2", ["a", "b"]), trial(a, "a3", []), trial(a, "shared", ["a", "b"]),
        trial(a, "a-not", ["a"]),                       # a's dormancy violation
        trial(b, "b1", ["b"]), trial(b, "shared", ["b"]), trial(b, "b-not", ["a"]),  # b-not says nothing about a
        trial(b, "b1", None, index=1),                  # errored
    ]
    st = score([a, b], trials, ["a", "b", "c"])
    sa, sb = st.skills
    # a: TP a1 a2 shared ; FN a3 ; FP a-not ; TN b1 (b's should prompt, a quiet). b's "shared"
    # is also a's should prompt: it says nothing more about a (a's own trial counted it).
    assert (sa.tp, sa.fn, sa.fp, sa.tn) == (3, 1, 1, 1)
    assert [m.prompt for m in sa.dormancy] == ["a-not"]
    # b: TP b1 shared ; FP a2 (a's should prompt) ; TN a1 a3 b-not ; a's "shared" not counted for b
    assert (sb.tp, sb.fn, sb.fp, sb.tn) == (2, 0, 1, 3)
    assert [m.prompt for m in sb.collisions] == ["a2"] and sb.errored == 1
    assert sa.precision == 3 / 4 and sa.recall == 3 / 4
    assert abs(sa.f1 - f1_score(0.75, 0.75)) < 1e-12
    assert st.matrix["a"] == {"a": 3, "b": 2, "c": 0, NONE: 1} and st.row_trials == {"a": 4, "b": 2}
    assert st.errored == 1 and st.trials == 9
    [pair] = st.collisions
    assert (pair.a, pair.b, pair.a_on_b, pair.b_on_a) == ("a", "b", 0, 2)
    assert sa.below_floor == ["recall 0.75 < 0.80", "precision 0.75 < 0.80"]


def test_intervals_hold_their_estimate_and_count_prompts_not_repeats():
    a = suite("a", ["p1", "p2"], [])
    many = [trial(a, "p1", ["a"], i) for i in range(20)] + [trial(a, "p2", [], i) for i in range(20)]
    st = score([a], many)
    s = st.skills[0]
    assert s.recall == 0.5
    lo, hi = s.recall_ci
    assert lo <= 0.5 <= hi and hi - lo > 0.6  # two prompts are two units, however many repeats
    assert proportion(10, 20, 20) != proportion(10, 20, 2)
    assert s.f1_ci[0] <= s.f1 <= s.f1_ci[1]


def test_a_skill_that_never_loads_has_no_precision_and_f1_zero():
    a = suite("a", ["p1"], ["n1"])
    st = score([a], [trial(a, "p1", []), trial(a, "n1", [])])
    s = st.skills[0]
    assert s.precision is None and s.recall == 0.0 and s.f1 == 0.0
    assert s.below_floor == ["recall 0.00 < 0.80"]
