"""``tune-description`` with hostile proposals and flags (issue 30, item 5): a proposal's
control characters never reach SKILL.md or the terminal, a lone surrogate or a 20 MB reply
is no internal error, ``|`` cannot break the Markdown table, and ``--holdout nan`` is one
line naming the flag (exit 30)."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import Rule, assert_refused
from openai_server import skill_loader
from test_tune_description import ORIGINAL, SKILL, plugin, serve

from agentsproof.commands.tune import MARKER

BETTER = "Builds charts: any graph, scatter or diagram to visualise tabular data."


@pytest.mark.parametrize("value", ["nan", "inf", "-nan"])
def test_holdout_must_be_a_finite_number_in_range(value, byok_env, tmp_path):
    skill = plugin(tmp_path)
    assert_refused(["tune-description", skill, "--model", "m", "--holdout", value], ["--holdout", "0.1", "0.9"], byok_env)


def test_timeout_nan_is_refused(byok_env, tmp_path):
    skill = plugin(tmp_path)
    assert_refused(["tune-description", skill, "--model", "m", "--timeout", "nan"], ["--timeout"], byok_env)


def test_control_characters_of_a_proposal_never_reach_skill_md(byok_env, cli, tmp_path):
    hostile = BETTER.replace(", scatter", ",\x00\x07 scatter").replace(" to visualise", "\x1b\x9b to\u202e visualise") + " |x"
    serve(byok_env, ["From tabular data, builds charts.", hostile])
    skill = plugin(tmp_path)
    code, out, err = cli(["tune-description", skill, "--model", "m", "--rounds", "2", "--write"])
    assert code == 0, err
    assert "Wrote the new description" in out, out
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    assert not any(c in text for c in "\x00\x07\x1b\u202e"), text
    description = yaml.safe_load(text.split("---")[1])["description"]
    assert not any(c in description for c in "\x00\x07\x1b\u202e") and "\\u00" not in text
    assert description.startswith("Builds charts: any graph") and "CHARTBODY" in text
    assert not any(c in out + err for c in "\x00\x07\x1b\u202e")


def test_a_pipe_cannot_break_the_table(byok_env, cli, tmp_path):
    serve(byok_env, ["From tabular | data, builds charts."])
    skill = plugin(tmp_path)
    (skill / "SKILL.md").write_text(SKILL.replace(ORIGINAL, "Builds charts | from tabular data."))
    code, out, err = cli(["tune-description", skill, "--model", "m", "--rounds", "1"])
    assert code == 0, err
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and "round" not in ln]
    assert len(rows) == 2, out
    for row in rows:  # four cells: the pipes of the descriptions are escaped
        assert len(row.replace("\\|", "").split("|")) == 6, row


def test_a_lone_surrogate_in_a_proposal_is_no_internal_error(byok_env, cli, tmp_path):
    serve(byok_env, ["\ud800" + BETTER + "\udfff", "From tabular data, builds charts."])
    skill = plugin(tmp_path)
    code, out, err = cli(["tune-description", skill, "--model", "m", "--rounds", "2", "--write"])
    assert code == 0, err
    assert "internal error" not in err
    text = (skill / "SKILL.md").read_bytes().decode("utf-8")  # valid UTF-8
    assert "\\ud800" not in text and BETTER in text


def test_a_20_mb_proposal_is_no_internal_error(byok_env, cli, tmp_path):
    """Over the provider's reply cap it is a failed proposal call: the search stops there and
    says why (exit 0, the report of what was tried); nothing is written."""
    huge = json.dumps({"descriptions": ["chart " * (20 * 1024 * 1024 // 6)]})
    byok_env.add(Rule(reply=huge, user_contains=MARKER), Rule(reply=skill_loader()))
    skill = plugin(tmp_path)
    before = (skill / "SKILL.md").read_text()
    code, out, err = cli(["tune-description", skill, "--model", "m", "--write"])
    assert code == 0, err
    assert "internal error" not in err and "Traceback" not in err
    assert "stopped: round 1: the proposal call failed:" in out and "exceeds the limit" in out
    assert (skill / "SKILL.md").read_text() == before


def test_a_long_proposal_is_dropped_and_a_long_one_within_reach_is_capped():
    from agentsproof.commands.tune import MAX_DESCRIPTION_CHARS, parse_proposals

    far = "chart " * 1000  # 6,000 characters: not a description
    near = "graph " * 200  # 1,200: cut to the cap
    got = parse_proposals(json.dumps({"descriptions": [far, near, "\x00\x1b", "ok\ud800"]}))
    assert got == [near.strip()[:MAX_DESCRIPTION_CHARS].strip(), "ok"]
    assert parse_proposals(json.dumps({"descriptions": ["x" * 300_000]})) == []
