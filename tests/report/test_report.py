"""Reports: HTML, Markdown and JSON rendered from RunResult objects built here directly.

The last test runs the real CLI against the scripted OpenAI-compatible server and reads the
HTML it wrote.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentsproof.report import files as report_files
from agentsproof.report import render as report
from agentsproof.executor.finalize import build_run
from agentsproof.model.results import (
    ArmResult,
    CheckResult,
    GraderResult,
    ItemResult,
    LogEvent,
    RunResult,
    Summary,
    TrialResult,
    Usage,
    compute_grade,
)

REPO = Path(__file__).resolve().parents[2]
SKILL_PROMPT = "You are the csv-expert skill. Always sort before slicing."
BASELINE_PROMPT = "You are a helpful assistant."

FULL_STATS = {
    "with": {"n": 5, "errored": 0, "mean": 0.82, "sd": 0.11, "pass_rate": 0.8, "pass_rate_ci": [0.376, 0.964]},
    "without": {"n": 5, "errored": 0, "mean": 0.42, "sd": 0.2, "pass_rate": 0.2, "pass_rate_ci": [0.036, 0.624]},
    "delta": 0.40,
    "delta_ci": [0.21, 0.62],
    "delta_ci_method": "bootstrap percentile, 10000 resamples, seed 0",
    "p_value": 0.0079,
    "p_value_method": "one-sided exact permutation test (with > without)",
    "normalized_gain": 0.729,
    "pass_at_k": {"k": 3, "value": 0.9921},
    "pass_hat_k": {"k": 3, "value": 0.512},
    "grade_low": "B",
    "grade_high": "A",
    "grade_label": "A (CI spans B–A)",
    "enough_data": True,
    "note": None,
    "flaky_checks": [{"arm": "with", "kind": "mustContain", "target": "sorted", "passed": 3, "total": 5}],
    "non_discriminating_checks": [
        {"kind": "regexMatch", "target": "month", "baseline_passed": 5, "baseline_total": 5}
    ],
}
NULL_STATS = {
    "with": {"n": 1, "errored": 0, "mean": None, "sd": None, "pass_rate": None, "pass_rate_ci": None},
    "without": {"n": 1, "errored": 0, "mean": None, "sd": None, "pass_rate": None, "pass_rate_ci": None},
    "delta": None,
    "delta_ci": None,
    "delta_ci_method": "bootstrap percentile, 10000 resamples, seed 0",
    "p_value": None,
    "p_value_method": "one-sided exact permutation test (with > without)",
    "normalized_gain": None,
    "pass_at_k": None,
    "pass_hat_k": None,
    "grade_low": None,
    "grade_high": None,
    "grade_label": None,
    "enough_data": False,
    "note": "too few trials to say anything: 1 scored per arm; use --smoke or more",
    "flaky_checks": [],
    "non_discriminating_checks": [],
}


# ---------------------------------------------------------------------------- builders


def scored(arm: str, index: int, score: float, *, response: str = "answer", checks: list[CheckResult] | None = None,
           threshold: float = 0.6, reasoning: str | None = None) -> TrialResult:
    checks = checks if checks is not None else [CheckResult(kind="mustContain", target="sorted", passed=score >= threshold, evidence="seen: sorted")]
    system = SKILL_PROMPT if arm == "with" else BASELINE_PROMPT
    return TrialResult(
        index=index,
        arm=arm,  # type: ignore[arg-type]
        status="scored",
        response=response,
        latency_s=0.25 + index / 100,
        usage=Usage(prompt_tokens=100, completion_tokens=20, total_tokens=120),
        score=score,
        passed=score >= threshold,
        graders=[
            GraderResult(type="deterministic", weight=0.7, score=score, checks=checks),
            GraderResult(type="llm_rubric", weight=0.3, score=score, reasoning=reasoning or "judge ok",
                         checks=[CheckResult(kind="rubric", target="explains the ranking", passed=score >= threshold, evidence="quote")]),
        ],
        log=[
            LogEvent(t=0.0, role="system", text=system),
            LogEvent(t=0.0, role="user", text="Find the top 3 months."),
            LogEvent(t=0.2, role="assistant", text=response),
            LogEvent(t=0.3, role="judge", text=f"llm_rubric: score {score:.2f}: judge ok"),
        ],
    )


def errored(arm: str, index: int, reason: str) -> TrialResult:
    return TrialResult(
        index=index,
        arm=arm,  # type: ignore[arg-type]
        status="errored",
        error=reason,
        latency_s=1.5,
        log=[
            LogEvent(t=0.0, role="system", text=SKILL_PROMPT if arm == "with" else BASELINE_PROMPT),
            LogEvent(t=0.0, role="user", text="Find the top 3 months."),
            LogEvent(t=1.5, role="error", text=reason),
        ],
    )


def make_item(name: str, kind: str, with_trials: list[TrialResult], without_trials: list[TrialResult], *,
              stats: dict | None = None, suggestions: list[str] | None = None, threshold: float = 0.6) -> ItemResult:
    w = ArmResult(arm="with", system_prompt_kind="skill" if kind == "case" else kind, trials=with_trials).summarize()
    b = ArmResult(arm="without", system_prompt_kind="baseline", trials=without_trials).summarize()
    item = ItemResult(
        id=f"case-{name}" if kind == "case" else f"{kind}s/{name}",
        name=name,
        kind=kind,  # type: ignore[arg-type]
        eval_path=None if kind == "case" else f"evals/demo/{kind}s/{name}/eval.yaml",
        source_path=f"evals/demo/{kind}s/{name}/SKILL.md",
        source_sha256="ab" * 32,
        task_name="top-months",
        instruction="Find the top 3 months by revenue.",
        threshold=threshold,
        trials_requested=max(len(with_trials), len(without_trials)),
        with_arm=w,
        without_arm=b,
        suggestions=suggestions or [],
        stats=stats or {},
    )
    if w.mean_score is None or b.mean_score is None:
        item.status = "errored"
        item.status_reason = "no scored trial in the with-skill arm; last error: HTTP 429 rate limited"
    else:
        item.delta = w.mean_score - b.mean_score
        item.grade = compute_grade(item.delta)
        item.pass_rate = w.pass_rate
        item.passed = (w.pass_rate or 0) >= threshold and item.grade != "F"
    return item


def good_item(name: str, kind: str = "skill", stats: dict | None = None, **kw) -> ItemResult:
    return make_item(
        name, kind,
        [scored("with", i, s) for i, s in enumerate([1.0, 0.9, 0.7, 1.0, 0.5])],
        [scored("without", i, s) for i, s in enumerate([0.3, 0.5, 0.4, 0.2, 0.7])],
        stats=stats, **kw,
    )


def bad_item(name: str, kind: str = "skill") -> ItemResult:
    return make_item(
        name, kind,
        [scored("with", i, s) for i, s in enumerate([0.2, 0.4, 0.3])],
        [scored("without", i, s) for i, s in enumerate([0.5, 0.6, 0.5])],
        suggestions=["The skill lowers the score against the baseline."],
    )


def make_run(items: list[ItemResult], command: str = "eval-all", plugin: str = "demo-plugin", **kw) -> RunResult:
    return build_run(command, plugin, items, provider="openai", model="gpt-test-1", judge_model="judge-test-2",
                     settings={"parallel": 4, "base_url": "http://127.0.0.1:9/v1"}, **kw)


def section(html_text: str, element_id: str) -> str:
    """The HTML of the <section> or <details> element with this id (they do not nest in themselves)."""
    m = re.search(rf'<(section|details) [^>]*id="{re.escape(element_id)}"', html_text)
    assert m, f"no element with id {element_id}"
    tag = m.group(1)
    start, depth, pos = m.start(), 0, m.start()
    pat = re.compile(rf"<{tag}[\s>]|</{tag}>")
    while True:
        n = pat.search(html_text, pos)
        assert n, "unbalanced"
        depth += -1 if n.group().startswith("</") else 1
        pos = n.end()
        if depth == 0:
            return html_text[start:pos]


def visible_text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


# ---------------------------------------------------------------------------- HTML


def test_skills_and_agents_each_get_a_summary_and_a_drill_down():
    run = make_run([good_item("reviewer", "agent"), good_item("csv-expert", stats=FULL_STATS), bad_item("slow-skill")])
    out = report.render_html(run)
    # the drill-down follows the summaries: skills first, then agents
    assert out.index('id="item-skills-csv-expert"') < out.index('id="item-skills-slow-skill"') < out.index('id="item-agents-reviewer"')

    head = visible_text(out[out.index("<body>") : out.index("</header>")])
    for text in ("demo-plugin", "FAIL", "3 items", "openai", "gpt-test-1", "judge-test-2", "2/3 passed"):
        assert text in head, text
    avg = (run.items[0].delta + run.items[1].delta + run.items[2].delta) / 3
    assert f"avg delta {avg:+.2f}" in head

    skills = visible_text(section(out, "summary-skills"))
    agents = visible_text(section(out, "summary-agents"))
    assert "csv-expert" in skills and "slow-skill" in skills and "reviewer" not in skills
    assert "reviewer" in agents and "csv-expert" not in agents
    assert re.search(r"2 Total 1 Passed 1 Failed 0 Errored", skills)
    assert re.search(r"1 Total 1 Passed 0 Failed 0 Errored", agents)
    assert f"{run.skills.avg_delta:+.2f} Avg delta" in skills
    assert 'id="summary-cases"' not in out

    d = section(out, "item-skills-csv-expert")
    text = visible_text(d)
    assert "With skill" in text and "Baseline" in text
    assert "0.82 ± 0.11 sd" in text  # mean and sd per arm
    assert "4/5 · 80% [38%, 96%]" in text  # with-arm pass rate + Wilson CI
    assert "seen: sorted" in text  # check evidence
    assert "judge ok" in text  # judge reasoning
    assert "#5" in text and 'id="item-skills-csv-expert-without-4"' in d  # every trial is listed
    # the system prompt is shown once per arm, and the trial logs point at it
    assert d.count(html.escape(SKILL_PROMPT)) == 1
    assert "system prompt of this arm" in text
    assert "Session log" in text
    bad = visible_text(section(out, "item-skills-slow-skill"))
    assert "The skill lowers the score against the baseline." in bad
    assert "FAIL" in bad


def test_skills_only_run_has_no_agents_section():
    out = report.render_html(make_run([good_item("csv-expert")]))
    assert 'id="summary-skills"' in out
    assert 'id="summary-agents"' not in out
    assert ">Agents<" not in out


def test_tc_eval_shows_a_cases_summary():
    run = make_run([good_item("1", "case"), bad_item("2", "case")], command="tc-eval", plugin="sales-evals")
    out = report.render_html(run)
    cases = visible_text(section(out, "summary-cases"))
    assert "Cases" in cases and "Case Grade" in cases
    assert re.search(r"2 Total 1 Passed 1 Failed", cases)
    assert 'id="summary-skills"' not in out and 'id="summary-agents"' not in out
    assert "2 cases" in visible_text(out[out.index("<body>") : out.index("</header>")])
    md = report.render_markdown(run)
    assert "## Cases" in md and "## Skills" not in md
    assert "| Case | grade |" in md


def test_errored_trials_show_their_reason_and_are_counted_not_scored_zero():
    w = [scored("with", 0, 1.0), errored("with", 1, "HTTP 503 service unavailable after 3 retries"), scored("with", 2, 0.8)]
    b = [scored("without", 0, 0.2), scored("without", 1, 0.4), scored("without", 2, 0.3)]
    run = make_run([make_item("csv-expert", "skill", w, b)])
    assert run.items[0].with_arm.mean_score == pytest.approx(0.9)  # errored trial left out

    out = report.render_html(run)
    trial = section(out, "item-skills-csv-expert-with-1")
    head = visible_text(re.search(r"<summary>(.*?)</summary>", trial, re.S).group(1))
    assert "ERRORED" in head and "HTTP 503 service unavailable after 3 retries" in head
    assert "0.00" not in head and "tscore" not in trial and "Grader" not in visible_text(trial)
    assert "Errored — left out of the scores." in visible_text(trial)
    drill = visible_text(section(out, "item-skills-csv-expert"))
    assert "Trials errored 1 0" in drill
    assert "Errored trials (1, not counted as scores)" in drill
    assert "0.90" in drill  # mean of the two scored trials
    summary = visible_text(section(out, "summary-skills"))
    assert "2+3 1 err" in summary

    md = report.render_markdown(run)
    assert "- with #2: HTTP 503 service unavailable after 3 retries" in md
    assert "| trials scored / errored | 2 / 1 | 3 / 0 |" in md


def test_errored_item_has_no_grade_and_says_why():
    w = [errored("with", i, "HTTP 429 rate limited") for i in range(3)]
    b = [scored("without", i, 0.5) for i in range(3)]
    item = make_item("flaky-provider", "skill", w, b, suggestions=["No grade: fix the provider problem and re-run."])
    run = make_run([item, good_item("csv-expert")])
    assert run.verdict == "ERROR"
    out = report.render_html(run)
    d = visible_text(section(out, "item-skills-flaky-provider"))
    assert "Errored: no scored trial in the with-skill arm; last error: HTTP 429 rate limited" in d
    assert "ERROR" in d and "No grade: fix the provider problem" in d
    assert "Δ —" in d
    assert "1 Errored" in visible_text(section(out, "summary-skills"))
    md = report.render_markdown(run)
    assert "### skill: flaky-provider — no grade, delta —, ERROR" in md
    assert "**Errored:** no scored trial in the with-skill arm" in md


def test_incomplete_run_shows_a_banner_everywhere():
    run = make_run([good_item("csv-expert")], incomplete_reason="stopped after 5 errored trials in a row (HTTP 401)")
    assert run.verdict == "INCOMPLETE"
    out = report.render_html(run)
    banner = re.search(r'<div class="banner warn" role="alert">(.*?)</div>', out, re.S)
    assert banner and "stopped after 5 errored trials in a row (HTTP 401)" in banner.group(1)
    assert "r-INCOMPLETE" in out
    md = report.render_markdown(run)
    assert "> **Incomplete run:** stopped after 5 errored trials in a row (HTTP 401)" in md
    assert "banner" not in report.render_html(make_run([good_item("csv-expert")])).split("<body>")[1].split("<nav")[0]


def test_model_output_and_other_run_text_are_escaped():
    evil = "<script>alert(1)</script>"
    t = scored("with", 0, 1.0, response=f"here {evil}", reasoning=f"judge saw {evil}",
               checks=[CheckResult(kind="mustContain", target=evil, passed=True, evidence=f"found {evil}")])
    item = make_item(f"x{evil}", "skill", [t, errored("with", 1, f"bad gateway {evil}")], [scored("without", 0, 0.1)])
    item.suggestions = [f"tighten {evil}"]
    run = make_run([item], plugin=f"p{evil}")
    out = report.render_html(run)
    assert out.count("<script>") == 1  # only the report's own script
    assert "alert(1)</script>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert out.count("&lt;script&gt;") >= 8  # name, plugin, response, log, reasoning, target, evidence, error, suggestion


def test_full_stats_are_rendered_in_html_and_markdown():
    run = make_run([good_item("csv-expert", stats=FULL_STATS)])
    out = report.render_html(run)
    row = visible_text(section(out, "summary-skills"))
    assert "(CI spans B–A)" in row and "[+0.21, +0.62]" in row and "0.008" in row and "[38%, 96%]" in row
    d = visible_text(section(out, "item-skills-csv-expert"))
    for text in (
        "A (CI spans B–A)",
        "[+0.21, +0.62] bootstrap percentile, 10000 resamples, seed 0",
        "0.008 one-sided exact permutation test (with > without)",
        "Normalized gain 0.73",
        "pass@3 = 0.99",
        "pass^3 = 0.51",
        "Flaky checks",
        "with mustContain sorted — 3/5",
        "Non-discriminating checks",
        "regexMatch month — baseline 5/5",
        "0.42 ± 0.20 sd",
    ):
        assert text in d, text
    assert "flaky" in visible_text(section(out, "item-skills-csv-expert").split("<h3>Checks")[1])
    assert "No statistics were recorded" not in out

    md = report.render_markdown(run)
    for text in (
        "| csv-expert | A (CI spans B–A) |",
        "+0.40 [+0.21, +0.62]",
        "- grade: A (CI spans B–A)",
        "- delta: +0.40 [+0.21, +0.62] (bootstrap percentile, 10000 resamples, seed 0)\n",
        "- p-value: 0.008 (one-sided exact permutation test (with > without))\n",
        "- normalized gain: 0.73",
        "pass@3: 0.99 · pass^3: 0.51",
        "- flaky check (with): mustContain `sorted` passed 3/5",
        "- non-discriminating check: regexMatch `month` passed 5/5 baseline trials",
        "80% [38%, 96%]",
    ):
        assert text in md, text


@pytest.mark.parametrize("stats", [{}, NULL_STATS], ids=["empty", "all-null"])
def test_missing_stats_render_cleanly(stats):
    item = make_item("tiny", "skill", [scored("with", 0, 1.0)], [scored("without", 0, 0.0)], stats=stats)
    run = make_run([item])
    out, md = report.render_html(run), report.render_markdown(run)
    for text in (visible_text(out), md):
        assert "None" not in text and "undefined" not in text
    d = visible_text(section(out, "item-skills-tiny"))
    assert "+1.00" in d  # the delta is still shown from the item
    if stats:
        assert "too few trials to say anything: 1 scored per arm" in d
        assert "- note: too few trials to say anything" in md
        assert "pass@k: —" in md
    else:
        assert "No statistics were recorded for this item." in d
        assert "No statistics were recorded for this item." in md


def test_markdown_has_summary_table_and_item_sections_with_pipes_escaped():
    pipe_check = CheckResult(kind="regexMatch", target="a|b", passed=False, evidence="no a|b in text")
    item = make_item("pipe|name", "skill",
                     [scored("with", 0, 0.9), scored("with", 1, 0.5, checks=[pipe_check])],
                     [scored("without", 0, 0.1), scored("without", 1, 0.2)])
    md = report.render_markdown(make_run([item, good_item("reviewer", "agent")]))
    assert "## Skills" in md and "## Agents" in md
    assert "| pipe\\|name |" in md
    assert "| regexMatch | a\\|b | 0/1 | no a\\|b in text |" in md
    assert "### skill: pipe\\|name" in md and "### agent: reviewer" in md
    for line in md.splitlines():  # every table row has as many cells as its header
        if line.startswith("| pipe"):
            assert len(re.split(r"(?<!\\)\|", line)) == 11


def test_html_is_self_contained_and_redacts_secret_settings():
    run = make_run([good_item("csv-expert")])
    run.settings["api_key"] = "sk-very-secret"
    out = report.render_html(run)
    assert "<link" not in out and "@import" not in out and "url(" not in out
    assert not re.search(r"<(script|img|iframe)[^>]+src=", out)
    assert "<style>" in out and ":root" in out  # the stylesheet is inline
    assert "sk-very-secret" not in out and "sk-very-secret" not in report.render_markdown(run)
    assert "(redacted)" in out


def test_report_targets_and_write_reports(tmp_path):
    assert report_files.report_targets("eval", tmp_path, "demo", "csv-expert") == {
        "md": tmp_path / "demo" / "csv-expert-eval.md",
        "json": tmp_path / "demo" / "csv-expert-eval.json",
        "html": tmp_path / "demo" / "csv-expert-eval.html",
    }
    assert report_files.report_targets("eval-all", tmp_path, "demo", "demo") == {
        "html": tmp_path / "demo" / "demo-eval.html",
        "md": tmp_path / "demo" / "eval-all-summary.md",
        "json": tmp_path / "demo" / "eval-all-summary.json",
    }
    assert report_files.report_targets("tc-eval", tmp_path, "sales", "sales") == {
        "html": tmp_path / "sales" / "sales-tc-eval.html",
        "md": tmp_path / "sales" / "sales-tc-eval.md",
        "json": tmp_path / "sales" / "sales-tc-eval.json",
    }
    with pytest.raises(ValueError):
        report_files.report_targets("compare", tmp_path, "demo", "demo")

    run = make_run([good_item("csv-expert")])
    written = report_files.write_reports(run, report_files.report_targets("eval-all", tmp_path, "demo", "demo"))
    assert written["html"].read_text(encoding="utf-8").startswith("<!doctype html>")
    assert written["md"].read_text(encoding="utf-8").startswith("# agentsproof eval-all — demo-plugin")
    assert RunResult.model_validate_json(written["json"].read_text(encoding="utf-8")) == run
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        report_files.write_reports(run, {"pdf": tmp_path / "x.pdf"})


def test_json_round_trips_and_matches_its_schema():
    run = make_run([good_item("csv-expert", stats=FULL_STATS), bad_item("reviewer", "agent")],
                   incomplete_reason="stopped early")
    text = report.render_json(run)
    back = RunResult.model_validate_json(text)
    assert back == run
    assert back.items[0].stats["pass_at_k"] == {"k": 3, "value": 0.9921}
    assert back.schema_version == "1"
    schema = report.json_schema()
    assert set(schema["properties"]) == set(RunResult.model_fields)
    assert {"ItemResult", "ArmResult", "TrialResult", "GraderResult", "CheckResult", "LogEvent", "Summary"} <= set(schema["$defs"])


def test_schema_doc_lists_every_field_of_every_model():
    doc = (REPO / "docs" / "report-schema.md").read_text(encoding="utf-8")
    from agentsproof.model import results as artifacts

    for model in (RunResult, ItemResult, ArmResult, TrialResult, GraderResult, CheckResult, LogEvent, Summary, Usage):
        part = doc.split(f"### {model.__name__}", 1)
        assert len(part) == 2, f"docs/report-schema.md has no section for {model.__name__}"
        body = part[1].split("\n### ", 1)[0]
        for name in model.model_fields:
            assert f"`{name}`" in body, f"{model.__name__}.{name} is not documented"
    for key in list(FULL_STATS) + list(FULL_STATS["with"]):
        assert f"`{key}`" in doc, f"stats key {key} is not documented"
    assert f'schema_version` is `"{artifacts.SCHEMA_VERSION}"`' in doc


def test_rendering_a_thousand_trials_keeps_every_trial():
    """Every trial is in the HTML and every item in the Markdown (how fast that is: bench/report_open.py)."""
    items = [
        make_item(f"skill-{n}", "skill",
                  [scored("with", i, 0.5 + (i % 5) / 10, response="x" * 400) for i in range(50)],
                  [scored("without", i, 0.2 + (i % 3) / 10, response="y" * 400) for i in range(50)],
                  stats=FULL_STATS)
        for n in range(10)
    ]
    run = make_run(items)
    out = report.render_html(run)
    md = report.render_markdown(run)
    assert out.count('<details class="trial') == 1000
    assert md.count("### skill: skill-") == 10


def test_real_cli_run_writes_an_escaped_self_contained_report(tmp_path):
    sys.path.insert(0, str(REPO / "tests"))
    from openai_server import Rule, ScriptedServer

    skill_dir = tmp_path / "evals" / "demo" / "skills" / "shout"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("Always answer in uppercase and end with DONE.\n")
    (skill_dir / "eval.yaml").write_text(
        'version: "2"\nskill: SKILL.md\ndefaults: {trials: 2, timeout: 10, threshold: 0.5}\n'
        "task:\n  name: greet\n  instruction: Say hello.\n  graders:\n"
        '    - type: deterministic\n      checks: ["DONE"]\n'
    )
    rules = [Rule(reply="HELLO <script>alert(1)</script> DONE", system_contains="uppercase"), Rule(reply="hello", judge=False)]
    with ScriptedServer(rules) as srv:
        env = dict(os.environ, AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_URL=srv.base_url,
                   AGENTSPROOF_PROVIDER_KEY="sk-test-not-in-report", AGENTSPROOF_MODEL="scripted-model")
        proc = subprocess.run(
            [sys.executable, "-m", "agentsproof", "eval", str(skill_dir / "eval.yaml"), "--output", str(tmp_path / "runs")],
            env=env, capture_output=True, text=True, timeout=120,
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out_dir = tmp_path / "runs" / "demo"
    page = (out_dir / "shout-eval.html").read_text(encoding="utf-8")
    assert "HELLO &lt;script&gt;alert(1)&lt;/script&gt; DONE" in page and page.count("<script>") == 1
    assert "sk-test-not-in-report" not in page
    assert "scripted-model" in visible_text(page[page.index("<body>") : page.index("</header>")])
    run = RunResult.model_validate_json((out_dir / "shout-eval.json").read_text(encoding="utf-8"))
    assert run.items[0].grade == "A" and run.items[0].delta == pytest.approx(1.0)
    assert "| shout | A" in (out_dir / "shout-eval.md").read_text(encoding="utf-8")
