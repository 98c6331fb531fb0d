"""RunSettings.observed: what a command recorded merged with what the run saw, by one rule."""

from __future__ import annotations

from agentsproof.model.settings import RunSettings


def test_recorded_options_are_kept_and_the_run_s_facts_win() -> None:
    saved = RunSettings(parallel=4, abort_after=None, trials=3, client={"base_url": "old", "kept": 1}, targets={"a": {}},
                        reused_trials=2, cache={"hits": 1}, budget={"calls": 9})
    seen = RunSettings(parallel=8, abort_after=5, client={"base_url": "new"}, targets=None, reused_trials=6, cache=None,
                       budget={"calls": 1}, throttle={"max": 8})
    merged = saved.observed(seen)
    assert merged.parallel == 4 and merged.abort_after == 5  # a retry keeps the saved run's options; unset ones are filled
    assert merged.client == {"base_url": "new", "kept": 1}
    assert merged.targets == {"a": {}} and merged.cache == {"hits": 1}  # nothing seen: the recorded value stays
    assert merged.reused_trials == 6 and merged.budget == {"calls": 1} and merged.throttle == {"max": 8}
    assert merged.trials == 3  # what only the command records is untouched


def test_a_fresh_run_records_what_it_saw() -> None:
    merged = RunSettings(trials=2).observed(RunSettings(parallel=3, abort_after=0, client={"base_url": "u"}))
    assert merged.to_dict() == {"parallel": 3, "abort_after": 0, "trials": 2, "base_url": "u"}
