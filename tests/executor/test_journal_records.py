"""Journal records are checked when --resume reads them back: a line of the wrong shape
or with a non-finite number is one line, "FILE: line N is not a journal record", exit 30
(never an internal error, never a trial with a NaN score); a line cut off by a kill is
still ignored. Saved reports with NaN/Infinity scores are refused the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Rule, assert_refused, make_plugin, run_cli, simple_eval


def _run(byok_env, tmp_path: Path) -> tuple[Path, Path, Path]:
    byok_env.add(Rule(reply="hello", judge=False))
    plugin = make_plugin(tmp_path, skills={"s0": {"eval": simple_eval(trials=2)}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", plugin / "skills" / "s0", "--model", "m", "--output", out])
    assert code == 0, err
    return plugin / "skills" / "s0", out, next(out.rglob("*.journal.jsonl"))


def _edit(journal: Path, n: int, change) -> None:
    lines = journal.read_text().splitlines()
    rec = json.loads(lines[n - 1])
    change(rec)
    lines[n - 1] = json.dumps(rec)
    journal.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("change", [
    lambda r: r.update(index="zero"),
    lambda r: r.update(index=True),
    lambda r: r.update(arm="sideways"),
    lambda r: r.update(item=["a"]),
    lambda r: r["trial"].update(score=float("nan")),
    lambda r: r["trial"].update(score=float("inf")),
    lambda r: r["trial"].update(index=7),
    lambda r: r.update(trial="not an object"),
], ids=["index-text", "index-bool", "arm", "item", "nan", "inf", "index-mismatch", "trial"])
def test_a_bad_journal_record_is_one_line_naming_the_line(byok_env, tmp_path: Path, change) -> None:
    folder, out, journal = _run(byok_env, tmp_path)
    _edit(journal, 2, change)
    line = assert_refused(["eval", folder, "--model", "m", "--output", out, "--resume"], [f"{journal.name}: line 2 is not a journal record"])
    assert "internal error" not in line


def test_a_score_that_overflows_to_infinity_is_refused(byok_env, tmp_path: Path) -> None:
    folder, out, journal = _run(byok_env, tmp_path)
    lines = journal.read_text().splitlines()
    rec = json.loads(lines[2])
    text = json.dumps(rec).replace('"score": 1.0', '"score": 1e400')
    assert "1e400" in text
    journal.write_text("\n".join([*lines[:2], text, *lines[3:]]) + "\n")
    assert_refused(["eval", folder, "--model", "m", "--output", out, "--resume"], ["line 3 is not a journal record"])


def test_a_last_line_cut_off_by_a_kill_is_still_ignored(byok_env, tmp_path: Path) -> None:
    folder, out, journal = _run(byok_env, tmp_path)
    text = journal.read_text()
    journal.write_text(text[: len(text) - 40])  # the last trial's line cut mid-write
    calls = len(byok_env.requests)
    code, _, err = run_cli(["eval", folder, "--model", "m", "--output", out, "--resume"])
    assert code == 0, err
    assert len(byok_env.requests) == calls + 1, "only the cut-off trial runs again"


def test_a_saved_report_with_a_nan_score_is_refused_in_one_line(byok_env, tmp_path: Path) -> None:
    folder, out, _ = _run(byok_env, tmp_path)
    report = next(out.rglob("s0-eval.json"))
    report.write_text(report.read_text().replace('"score": 1.0', '"score": NaN', 1))
    assert "NaN" in report.read_text()
    assert_refused(["eval", folder, "--model", "m", "--output", tmp_path / "again", "--retry-errors", report], [report.name, "NaN or infinite"])


@pytest.mark.parametrize("score", ["NaN", "Infinity", "1e400"])
def test_compare_refuses_an_agentv_result_with_a_non_finite_score(tmp_path: Path, score: str) -> None:
    line = ('{"test_id": "t", "suite": "s", "score": %s, "duration_ms": 5, "execution_status": "ok"}' % score)
    (tmp_path / "a.jsonl").write_text(line + "\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(line.replace(score, "1") + "\n", encoding="utf-8")
    msg = assert_refused(["compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl"], ["a.jsonl", "line 1", "score"])
    assert "NaN or infinite" in msg
