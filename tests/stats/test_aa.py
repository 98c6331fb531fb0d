"""--aa: the baseline against itself, end to end on the scripted server, and its summary."""

from __future__ import annotations

import math
import random
import threading

import pytest

from conftest import Rule, make_plugin, read_json, run_cli

from agentsproof.model.results import compute_grade

MARK = "AAMARK"


def _noisy(seed: int, p: float):
    rng, lock = random.Random(seed), threading.Lock()

    def reply(req: dict) -> str:
        with lock:
            return "hello there" if rng.random() < p else "good day"

    return reply


def _plugin(tmp_path, skills: int = 3, cases: int = 5):
    skills_spec = {}
    for i in range(skills):
        tasks = [{"name": f"c{k}", "instruction": f"Greet user {k} of {i}.", "graders": [{"type": "deterministic", "checks": ["hello"]}]}
                 for k in range(cases)]
        skills_spec[f"s{i}"] = {"prompt": f"{MARK} {i}: always say hello.\n",
                                "eval": {"version": "2", "defaults": {"trials": 3, "timeout": 30, "threshold": 0.5}, "tasks": tasks}}
    make_plugin(tmp_path, skills=skills_spec)
    return tmp_path / "demo-plugin"


def test_aa_runs_the_baseline_in_both_arms_and_reports_the_noise_floor(byok_env, tmp_path):
    srv = byok_env
    # the skill would be a clear A: with its text every reply passes; the baseline is a coin
    srv.add(Rule(reply="hello there", system_contains=MARK, judge=False), Rule(reply=_noisy(7, 0.5), judge=False))
    plugin = _plugin(tmp_path)
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--aa", "--parallel", "8"])
    assert code in (0, 1), err
    assert not any(MARK in (m.get("content") or "") for r in srv.trial_requests() for m in r["messages"])
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    aa = data["settings"]["aa"]
    assert aa["items"] == 3 and set(aa["called"]) == {"A", "B", "F"} and len(aa["rows"]) == 3
    # noise only: with the skill's text every with-trial would pass; a coin passes all 15 of an
    # item's with-trials once in 32,768 (a bound on the delta, |delta| < 0.5, failed by chance
    # about once in 40 runs: 15 coin flips a side under --parallel 8 draw in any order)
    assert all(it["with_arm"]["mean_score"] < 1.0 for it in data["items"])
    assert aa["called_share"] == sum(aa["called"].values()) / 3
    called = {"A": 0, "B": 0, "F": 0}
    for row in aa["rows"]:
        lo, hi = row["delta_ci"]
        assert lo <= row["delta"] <= hi
        if compute_grade(lo) == compute_grade(hi) != "C":
            called[compute_grade(lo)] += 1  # the interval inside one band: a call (about 5 % of items by chance)
    assert aa["called"] == called
    calls = sum(called.values())
    assert aa["calls_p"] == pytest.approx(sum(math.comb(3, j) * 0.05**j * 0.95 ** (3 - j) for j in range(calls, 4)))
    assert aa["within_alpha"] is (aa["calls_p"] >= 0.05)
    assert (f"A/A run (--aa, the baseline against itself): 3 items; called A {called['A']}, B {called['B']}, "
            f"F {called['F']}") in stdout
    html = (out / "demo-plugin" / "demo-plugin-eval.html").read_text(encoding="utf-8")
    assert "<b>A/A run</b>" in html


def test_aa_conflicts_with_baseline_none(byok_env, tmp_path):
    plugin = _plugin(tmp_path, skills=1)
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--aa", "--baseline", "none"])
    assert code == 30 and "--aa" in err and "--baseline none" in err


def test_aa_verdict_is_a_binomial_test_across_items():
    """One call in ten items is what chance gives (P(X >= 1 | 10, 0.05) = 0.40): the run is
    within alpha; four calls in ten are not (P = 0.001)."""
    from types import SimpleNamespace

    from agentsproof.stats.aa import aa_summary

    def items(calls: int, n: int = 10):
        out = []
        for k in range(n):
            called = k < calls
            stats = {"delta_ci": [-0.4, -0.1] if called else [-0.2, 0.2],
                     "grade_low": "F", "grade_high": "F" if called else "B"}
            out.append(SimpleNamespace(id=f"i{k}", delta=-0.2 if called else 0.0, grade="F" if called else "C", stats=stats))
        return out

    one = aa_summary(items(1))
    assert one["called_share"] == 0.1 and one["within_alpha"] is True
    assert one["calls_p"] == pytest.approx(1 - 0.95**10)
    four = aa_summary(items(4))
    assert four["within_alpha"] is False and four["calls_p"] < 0.05
    assert aa_summary(items(0))["within_alpha"] is True
