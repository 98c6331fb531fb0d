"""``ablate --adaptive``'s rule (agentsproof.stats.ablation_looks): sequential p-values
(Bonferroni over the planned looks), the stops, and that with one look the numbers are
exactly the fixed ablation's (the error rates under early stopping: bench/ablation.py --adaptive)."""

from __future__ import annotations

import numpy as np

from agentsproof.stats.ablation import decide, part_effect
from agentsproof.stats.ablation_looks import part_at_looks, reachable, sequential_p, settled


def _cases(without: list[float], whole: list[float], cases: int = 2):
    return [(without, whole)] * cases


def test_the_sequential_p_is_looks_times_the_least_seen_at_most_one():
    assert sequential_p([0.2, 0.01, 0.03], 5) == 0.05
    assert sequential_p([0.4], 5) == 1.0
    assert sequential_p([0.02], 1) == 0.02


def test_one_look_gives_the_fixed_ablations_numbers():
    whole = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    without = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    fixed = part_effect("p", _cases(without, whole), 10, 0.1)
    looked = part_at_looks("p", lambda n: _cases(without[:n], whole[:n]), [8], 1, 10, 0.1)
    decide([fixed])
    decide([looked])
    assert (looked.effect, looked.interval, looked.p_needed, looked.p_removable, looked.verdict) == (
        fixed.effect,
        fixed.interval,
        fixed.p_needed,
        fixed.p_removable,
        fixed.verdict,
    )


def test_a_part_that_matters_stops_needed_and_one_that_cannot_be_settled_stops_unclear():
    ones, zeros = [1.0] * 10, [0.0] * 10
    needed = part_at_looks("t", lambda n: _cases(zeros[:n], ones[:n]), [5, 10], 5, 10, 0.25)
    decide([needed])
    assert settled(needed, _cases(zeros, ones), 20, 60, 5, 0.25) == "needed"
    # pass/fail noise around a small loss: at the cap the interval could show neither claim
    rng = np.random.default_rng(3)
    a, b = list((rng.random(10) < 0.5).astype(float)), list((rng.random(10) < 0.55).astype(float))
    vague = part_at_looks("v", lambda n: _cases(a[:n], b[:n], 1), [10], 5, 10, 0.01)
    decide([vague])
    assert reachable(_cases(a, b, 1), 10, 12, 5, 0.01) == (False, False)
    assert settled(vague, _cases(a, b, 1), 10, 12, 5, 0.01) == "unclear"
    assert settled(vague, _cases(a, b, 1), 12, 12, 5, 0.01) == "unclear"  # at the cap nothing is reachable


def test_removable_waits_while_needed_is_still_reachable():
    whole = [1.0] * 20
    small_loss = ([0.0] + [1.0] * 9) * 2  # −0.10: well within a margin of 0.5, not yet shown below 0
    e = part_at_looks("s", lambda n: _cases(small_loss[:n], whole[:n]), [20], 3, 10, 0.5)
    decide([e])
    assert e.p_removable_adjusted < 0.05 < e.p_needed_adjusted
    assert reachable(_cases(small_loss, whole), 20, 400, 3, 0.5)[0] is True  # 400 trials could show it needed
    assert settled(e, _cases(small_loss, whole), 20, 400, 3, 0.5) is None
    assert settled(e, _cases(small_loss, whole), 20, 22, 3, 0.5) == "removable"  # 22 could not
