"""judge-check on the scripted server: agreement, κ, position and self-consistency, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Rule, run_cli

from agentsproof.commands.gold import load_gold
from agentsproof.stats.agreement import cohen_kappa, consistency, spearman

SHIPPED = Path(__file__).resolve().parents[2] / "evals" / "judge-gold" / "judge-gold.jsonl"


def _gold(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "gold.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def _pairwise_always_first(req: dict) -> str:
    return json.dumps({"reasoning": "the first one", "better": "A"})


def test_judge_check_reports_agreement_and_consistency(byok_env, tmp_path):
    # the scripted judge checks quoted words literally (assertions) and scores rubrics by them
    byok_env.add(Rule(reply=_pairwise_always_first, system_contains="You compare two"))
    rows = [
        {"task": "t", "answer": "it says hello", "assertion": "The reply contains 'hello'.", "label": True},
        {"task": "t", "answer": "it says bye", "assertion": "The reply contains 'hello'.", "label": False},
        {"task": "t", "answer": "hello world", "assertion": "The reply contains 'world'.", "label": True},
        {"task": "t", "answer": "nothing here", "assertion": "The reply contains 'world'.", "label": False},
        {"task": "t", "answer": "red green", "rubric": "Names 'red' and 'green' and 'blue'.", "score": 0.7},
        {"task": "t", "answer": "red green blue", "rubric": "Names 'red' and 'green' and 'blue'.", "score": 1.0},
        {"task": "t", "answer": "nothing", "rubric": "Names 'red' and 'green' and 'blue'.", "score": 0.0},
        {"task": "t", "answer": "red", "rubric": "Names 'red' and 'green' and 'blue'.", "score": 0.3},
        {"task": "t", "answer_a": "right", "answer_b": "wrong", "preference": "A"},
        {"task": "t", "answer_a": "wrong", "answer_b": "right", "preference": "B"},
    ]
    gold = _gold(tmp_path, rows)
    out = tmp_path / "jc.json"
    code, stdout, err = run_cli(["judge-check", gold, "--model", "m", "--judge-model", "j1,j2", "--json", out])
    assert code == 0, err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [m["judge_model"] for m in report["models"]] == ["j1", "j2"]
    kinds = report["models"][0]["kinds"]
    assert kinds["assertion"]["accuracy"]["value"] == 1.0 and kinds["assertion"]["kappa"]["value"] == pytest.approx(1.0)
    assert kinds["assertion"]["self_consistency"]["value"] == 1.0
    assert kinds["rubric"]["spearman"]["value"] == pytest.approx(1.0)
    # a judge that always picks the first answer: every pair flips with the order, so each is a tie
    assert kinds["pairwise"]["position_consistency"]["value"] == 0.0
    assert kinds["pairwise"]["accuracy"]["value"] == 0.0
    judged = {r["model"] for r in byok_env.judge_requests()}
    assert judged == {"j1", "j2"}
    for m in report["models"]:  # each item asked twice by each model (the JSON keeps every verdict)
        assert all(len(v["judge"]) == 2 and v["error"] is None for v in m["verdicts"]), [v["error"] for v in m["verdicts"]]
    assert "judge model j1" in stdout and "position consistency 0%" in stdout
    assert "kappa +1.00" in stdout


@pytest.mark.parametrize(
    "line, field",
    [('{"task": "t", "answer": "a", "assertion": "c", "label": "yes"}', "label"),
     ('{"task": "t", "answer": "a", "rubric": "r", "score": 2}', "score"),
     ('{"task": "t", "answer_a": "a", "answer_b": "b", "preference": "C"}', "preference"),
     ('{"answer": "a", "assertion": "c", "label": true}', "task"),
     ("not json", "is not JSON")],
)
def test_judge_check_bad_line_is_one_clear_error(byok_env, tmp_path, line, field):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"task": "t", "answer": "a", "assertion": "c", "label": true}\n' + line + "\n", encoding="utf-8")
    code, _, err = run_cli(["judge-check", gold, "--model", "m"])
    assert code == 30 and "gold.jsonl:2" in err and field in err and "Traceback" not in err
    assert not byok_env.judge_requests()


def test_shipped_gold_set_parses_and_covers_every_kind():
    items = load_gold(SHIPPED)
    assert {i.kind for i in items} == {"assertion", "rubric", "pairwise"} and len(items) >= 24
    assert sum(i.human is True for i in items if i.kind == "assertion") == sum(i.human is False for i in items if i.kind == "assertion")


def test_kappa_and_spearman_known_values():
    # 10 items, raters agree on 8; each says yes 5 times: p_o 0.8, p_e 0.5, kappa 0.6
    a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 1, 0, 0, 0, 0]
    k = cohen_kappa(a, b)
    assert k["value"] == pytest.approx(0.6) and k["ci"][0] <= 0.6 <= k["ci"][1]
    assert cohen_kappa([1, 1], [1, 1])["value"] is None  # one label only: chance agreement is 1
    s = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert s["value"] == pytest.approx(0.8207826816681233) and -1 <= s["ci"][0] < s["value"] < s["ci"][1] <= 1


def _inside(stat: dict) -> bool:
    lo, hi = stat["ci"]
    return -1.0 <= lo <= stat["value"] <= hi <= 1.0


def test_kappa_with_no_disagreement_is_a_real_interval():
    # 10 items, all agreed, half pass: kappa 1; the exact bound on 0 disagreements in 10
    # (d <= 0.308) over the chance disagreement 0.5 gives a lower end near 0.38, not 1
    k = cohen_kappa([1] * 5 + [0] * 5, [1] * 5 + [0] * 5)
    assert k["value"] == pytest.approx(1.0) and k["ci"][1] == 1.0
    assert 0.3 < k["ci"][0] < 0.45 and _inside(k)


def test_kappa_degenerate_label_sets():
    both = cohen_kappa([True] * 12, [True] * 12)  # one and the same label: kappa undefined, no interval
    assert both["value"] is None and both["ci"] is None and "undefined" in both["method"]
    one = cohen_kappa([True] * 8 + [False] * 4, [True] * 12)  # the person used one label: kappa 0, wide
    assert one["value"] == pytest.approx(0.0) and _inside(one) and one["ci"][1] - one["ci"][0] > 0.5
    worst = cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1])  # every item disagrees: kappa -1 is held
    assert worst["value"] == pytest.approx(-1.0) and _inside(worst)


def test_kappa_interval_holds_its_estimate_on_every_table():
    import numpy as np

    from agentsproof.stats.agreement import kappa_interval

    rng = np.random.default_rng(5)
    for k in (2, 3):
        for n in (2, 5, 10, 28, 300):
            tables = np.stack([rng.multinomial(n, rng.dirichlet(np.full(k * k, 0.3))) for _ in range(2000)]).reshape(-1, k, k)
            value, lo, hi = kappa_interval(tables)
            ok = ~np.isnan(value)
            assert ok.any()
            assert np.all(lo[ok] <= value[ok] + 1e-12) and np.all(value[ok] <= hi[ok] + 1e-12)
            assert np.all(lo[ok] >= -1) and np.all(hi[ok] <= 1) and np.all(hi[ok] - lo[ok] > 0)
            assert np.all(np.isnan(lo[~ok])) and np.all(np.isnan(hi[~ok]))
    # the batch function is the one cohen_kappa calls
    one = cohen_kappa(["A", "B", "tie", "A", "B"], ["A", "B", "A", "A", "tie"])
    table = np.array([[[2, 0, 0], [0, 1, 1], [1, 0, 0]]])  # judge by row, person by column (labels sorted: A, B, tie)
    v, lo, hi = kappa_interval(table)
    assert one["value"] == pytest.approx(v[0]) and one["ci"] == pytest.approx([lo[0], hi[0]])


def test_spearman_of_perfect_agreement_is_not_a_point():
    s = spearman([0, 0.25, 0.5, 0.75, 1, 0.5, 0.25, 1, 0, 0.75], [0, 0.25, 0.5, 0.75, 1, 0.5, 0.25, 1, 0, 0.75])
    assert s["value"] == pytest.approx(1.0) and s["ci"][1] == 1.0 and s["ci"][0] < 0.95 and _inside(s)
    low = spearman([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1])
    assert low["value"] == pytest.approx(-1.0) and low["ci"][0] == -1.0 and low["ci"][1] > -0.95 and _inside(low)
    flat = spearman([0.5] * 6, [0, 0.25, 0.5, 0.75, 1, 1])
    assert flat["value"] is None and flat["ci"] is None


def test_position_consistency_counts_items_not_flags():
    from agentsproof.stats.agreement import consistency_by_item

    # 20 items, two asks each; the flags of an item always agree: 20 independent units, not 40
    clustered = consistency_by_item([[True, True]] * 14 + [[False, False]] * 6)
    flat = consistency([True] * 28 + [False] * 12, [True] * 40)
    items = consistency([True] * 14 + [False] * 6, [True] * 20)
    assert clustered["value"] == flat["value"] == pytest.approx(0.7)
    assert clustered["ci"] == pytest.approx(items["ci"]) and clustered["ci"][0] < flat["ci"][0]
    # flags that vary within items, as independent flags would: every flag counts (never more)
    mixed = consistency_by_item([[True, False]] * 12 + [[True, True]] * 8)
    assert mixed["value"] == pytest.approx(0.7) and mixed["ci"] == pytest.approx(flat["ci"])
    every = consistency_by_item([[True, True]] * 10)  # nothing to estimate the clustering from: items count
    assert every["value"] == 1.0 and every["ci"][1] == 1.0 and every["ci"][0] == pytest.approx(0.025 ** (1 / 10))
    assert consistency_by_item([]) is None
