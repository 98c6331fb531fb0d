"""compare: verdicts and p-values against an independent Fisher computation; the CLI."""

from __future__ import annotations

import json

import pytest

from agentsproof.stats.compare import compare_runs
from conftest import run_cli
from helpers import fisher_two_sided, item, passfail, run


def test_verdicts_and_p_values():
    before = run([
        item(passfail(10, 0), passfail(0, 10), id="skills/worse"),
        item(passfail(9, 1), passfail(0, 10), id="skills/noise"),
        item(passfail(2, 8), passfail(0, 10), id="skills/better"),
        item(passfail(6, 4), passfail(0, 10), id="skills/same"),
        item(passfail(0, 0, errored=5), passfail(0, 5), id="skills/inconclusive"),
        item(passfail(5, 0), passfail(0, 5), id="skills/removed"),
    ])
    after = run([
        item(passfail(3, 7), passfail(0, 10), id="skills/worse"),
        item(passfail(7, 3), passfail(0, 10), id="skills/noise"),
        item(passfail(9, 1), passfail(0, 10), id="skills/better"),
        item(passfail(3, 2), passfail(0, 5), id="skills/same"),  # 60 % both times, different n
        item(passfail(5, 0), passfail(0, 5), id="skills/inconclusive"),
        item(passfail(5, 0), passfail(0, 5), id="skills/new"),
    ])
    cmp = compare_runs(before, after)
    got = {c.id.split("/")[1]: c for c in cmp.items}
    assert {k: c.verdict for k, c in got.items()} == {
        "worse": "WORSE", "noise": "NOISE", "better": "BETTER", "same": "SAME",
        "inconclusive": "INCONCLUSIVE", "removed": "REMOVED", "new": "NEW",
    }
    assert got["worse"].p_value == pytest.approx(fisher_two_sided(10, 10, 3, 10))
    assert got["worse"].p_value < 0.05
    assert got["noise"].p_value == pytest.approx(fisher_two_sided(9, 10, 7, 10)) and got["noise"].p_value >= 0.05
    assert got["better"].p_value == pytest.approx(fisher_two_sided(2, 10, 9, 10))
    assert got["inconclusive"].p_value is None
    assert got["worse"].delta_change == pytest.approx(0.3 - 1.0)
    assert (got["worse"].before_grade, got["worse"].after_grade) == ("A", "A")
    assert [w.verdict for w in cmp.worse] == ["WORSE"]


def test_alpha_changes_the_verdict():
    before = run([item(passfail(10, 0), passfail(0, 10))])
    after = run([item(passfail(6, 4), passfail(0, 10))])
    p = fisher_two_sided(10, 10, 6, 10)
    assert 0.05 < p < 0.1
    assert compare_runs(before, after).items[0].verdict == "NOISE"
    assert compare_runs(before, after, alpha=0.1).items[0].verdict == "WORSE"


def test_errored_trials_are_left_out():
    before = run([item(passfail(10, 0), passfail(0, 10))])
    after = run([item(passfail(10, 0, errored=8), passfail(0, 10))])
    c = compare_runs(before, after).items[0]
    assert c.verdict == "SAME" and c.after_errored == 8


def test_warnings_for_changed_settings():
    before = run([item(passfail(5, 0), passfail(0, 5), sha="aaa")])
    after = run([item(passfail(5, 0), passfail(0, 5), sha="bbb")], model="m2", judge_model="j2", provider="azure", settings={"trials": 5})
    w = "\n".join(compare_runs(before, after).warnings)
    for needle in ("provider differs", "model differs: 'm' before, 'm2' after", "judge model differs", "trials setting differs: 10 before, 5 after", "content hash aaa"):
        assert needle in w
    assert compare_runs(before, run([item(passfail(5, 0), passfail(0, 5), sha="aaa")])).warnings == []


def _save(tmp_path, name, r):
    p = tmp_path / name
    p.write_text(r.model_dump_json(indent=2), encoding="utf-8")
    return p


def test_compare_cli_table_markdown_json_and_ci(tmp_path):
    b = _save(tmp_path, "before.json", run([item(passfail(10, 0), passfail(0, 10), id="skills/a|b"), item(passfail(5, 5), passfail(0, 10), id="skills/c")]))
    a = _save(tmp_path, "after.json", run([item(passfail(2, 8), passfail(0, 10), id="skills/a|b"), item(passfail(5, 5), passfail(0, 10), id="skills/c")]))
    md = tmp_path / "out" / "cmp.md"
    code, out, err = run_cli(["compare", b, a, "--markdown", md])
    assert code == 0, err
    assert "WORSE" in out and "SAME" in out and "1 SAME, 1 WORSE" in out.replace("1 WORSE, 1 SAME", "1 SAME, 1 WORSE")
    text = md.read_text()
    assert "| skills/a\\|b |" in text and "WORSE" in text

    code, out, err = run_cli(["compare", b, a, "--ci"])
    assert code == 1, err
    code, out, err = run_cli(["compare", b, b, "--ci"])
    assert code == 0, err

    code, out, err = run_cli(["compare", b, a, "--json"])
    assert code == 0, err
    data = json.loads(out)
    verdicts = {i["id"]: i["verdict"] for i in data["items"]}
    assert verdicts == {"skills/a|b": "WORSE", "skills/c": "SAME"}
    worse = next(i for i in data["items"] if i["id"] == "skills/a|b")
    assert worse["p_value"] == pytest.approx(fisher_two_sided(10, 10, 2, 10))
    assert worse["before_rate"] == 1.0 and worse["after_rate"] == 0.2


def test_compare_cli_bad_input(tmp_path):
    good = _save(tmp_path, "good.json", run([item(passfail(1, 0), passfail(0, 1))]))
    cases = {
        "missing.json": None,
        "notjson.json": "{not json",
        "list.json": "[1, 2]",
        "badfield.json": json.dumps({**json.loads(good.read_text()), "provider": 5}),
    }
    for name, content in cases.items():
        p = tmp_path / name
        if content is not None:
            p.write_text(content)
        code, out, err = run_cli(["compare", p, good])
        assert code == 30, (name, out, err)
        lines = [l for l in err.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and name in lines[0], (name, err)
    code, _, err = run_cli(["compare", good, tmp_path / "nope.json"])
    assert code == 30 and "nope.json: file not found" in err


def test_compare_markdown_never_replaces_an_input_nor_writes_through_a_link(tmp_path):
    b = _save(tmp_path, "before.json", run([item(passfail(10, 0), passfail(0, 10), id="skills/a")]))
    a = _save(tmp_path, "after.json", run([item(passfail(2, 8), passfail(0, 10), id="skills/a")]))
    kept = b.read_bytes()
    code, out, err = run_cli(["compare", b, a, "--markdown", b])
    assert code == 30 and "--markdown" in err and err.count("\n") == 1, err
    assert b.read_bytes() == kept
    outside = tmp_path / "outside.md"
    outside.write_text("theirs\n")
    outside.chmod(0o444)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "cmp.md").symlink_to(outside)
    code, out, err = run_cli(["compare", b, a, "--markdown", tmp_path / "out" / "cmp.md"])
    assert code == 0, err
    assert outside.read_text() == "theirs\n"  # the link is replaced by the report, never written through
    assert not (tmp_path / "out" / "cmp.md").is_symlink() and "WORSE" in (tmp_path / "out" / "cmp.md").read_text()
