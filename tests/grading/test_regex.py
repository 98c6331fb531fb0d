"""Regex checks cannot hang: RE2 for what it can express, a killed helper process for the rest."""

from __future__ import annotations

import os
import subprocess
import sys

from agentsproof.grading.deterministic import DeterministicGrader
from agentsproof.grading import regex
from agentsproof.grading.deterministic import grade_deterministic
from conftest import SECRET_KEY, Rule, make_plugin, read_json, simple_eval

EVIL_TEXT = "a" * 40 + "!"


def test_backtracking_pattern_runs_on_re2_in_linear_time():
    out = regex.search(r"(a+)+$", EVIL_TEXT)  # how fast: bench/timings.py regex-re2
    assert out.engine == "re2" and out.span is None and out.error is None


def test_python_syntax_re2_lacks_still_works():
    assert regex.search(r"(?<=x)y", "axyz").span == (2, 3)  # lookbehind: helper process
    assert regex.search(r"(\w)\1", "abccd").span == (2, 4)  # backreference
    assert regex.search(r"end\Z", "the end").span == (4, 7)  # \Z translated for RE2
    assert regex.engine_for(r"end\Z") == "re2"
    assert regex.search("é+", "xééy").span == (1, 3)  # character offsets, not bytes


def test_backtracking_fallback_is_cut_off_with_a_reason(monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_REGEX_TIME_LIMIT", "0.5")
    out = regex.search(r"(a+)+(?=b)", "a" * 60)  # how soon: bench/timings.py regex-cutoff
    assert out.span is None and "cut off after 0.5 s" in (out.error or "")
    # the helper was replaced: the next search works
    assert regex.search(r"(?=a)a", "ba").span == (1, 2)


def test_cut_off_check_fails_with_evidence(monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_REGEX_TIME_LIMIT", "0.3")
    spec = DeterministicGrader(type="deterministic", checks={"regexMatch": [r"(a+)+(?=b)", "a+"]})
    res = grade_deterministic("a" * 60, spec)
    first, second = res.checks
    assert not first.passed and first.evidence.startswith("not checked: regex search cut off")
    assert second.passed
    assert res.score == 0.5


def test_backtracking_check_does_not_hang_a_real_run(scripted_server, tmp_path):
    """The adversarial case: `(a+)+$` against 40 a's and a '!' through the real CLI."""
    scripted_server.add(Rule(reply=EVIL_TEXT, judge=False))
    graders = [{"type": "deterministic", "checks": {"regexMatch": [r"(a+)+$", r"(a+)+(?=b)"]}}]
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval(graders, trials=2)}})
    env = {
        **os.environ,
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": scripted_server.base_url,
        "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
        "AGENTSPROOF_REGEX_TIME_LIMIT": "0.5",
    }
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, "-m", "agentsproof", "eval", str(plugin / "skills" / "s" / "eval.yaml"), "--model", "m", "--output", str(out)],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    data = read_json(out / "demo-plugin" / "s-eval.json")
    trial = data["items"][0]["with_arm"]["trials"][0]
    evidence = [c["evidence"] for g in trial["graders"] for c in g["checks"]]
    assert evidence[0] == "no match"
    assert "cut off" in evidence[1]
