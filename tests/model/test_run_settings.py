"""RunSettings, the typed record behind ``RunResult.settings``: the dict it writes (key
order, absent keys), and a saved report's dict read back with its unknown keys and order."""

from __future__ import annotations

import dataclasses

from agentsproof.model.settings import RunSettings


def test_the_dict_has_the_set_keys_in_field_order_and_no_nulls():
    s = RunSettings(
        p_adjust="holm", trials=3, parallel=2, abort_after=5, config={"k": "v"}, client={"base_url": "http://h/v1"},
        cache={"cached_trials": 0, "hits": 0, "calls": 4}, all_tasks=False, retried_trials=0,
    )
    d = s.to_dict()
    assert list(d) == ["parallel", "abort_after", "trials", "config", "p_adjust", "retried_trials", "base_url", "cache"]
    assert "all_tasks" not in d and "threshold" not in d  # False and None are left out, never null


def test_a_saved_dict_reads_back_with_its_unknown_keys_and_its_order():
    saved = {"parallel": 4, "abort_after": 5, "from_an_old_version": [1], "trials": 2, "base_url": "http://h/v1", "reused_trials": 3}
    s = RunSettings.from_dict(saved)
    assert s.trials == 2 and s.extra == {"from_an_old_version": [1], "base_url": "http://h/v1"}
    assert s.to_dict() == saved and list(s.to_dict()) == list(saved)
    retried = dataclasses.replace(s, reused_trials=None, retried_errors_from="r.json", retried_trials=1, client={"base_url": "http://new/v1"})
    assert list(retried.to_dict().items()) == [
        ("parallel", 4), ("abort_after", 5), ("from_an_old_version", [1]), ("trials", 2), ("base_url", "http://new/v1"),
        ("retried_errors_from", "r.json"), ("retried_trials", 1),
    ]
