"""One vocabulary for trials and calls across the terminal, --plan, the progress lines and
every report: a *trial* is one case run once in one arm, a *call* is one model request (a
trial may make several). Every count of trials says what it counts (per arm, per case, all
arms, passed, from the cache); --plan counts calls by who makes them, never under a
"calls" column of trial rows. Scanned on the output of a real small run on the scripted server."""

from __future__ import annotations

import html
import re

from conftest import Rule, make_plugin, run_cli

MARK = "VOCABMARK"
QUALIFIED = re.compile(r" (per arm|per case|\(all arms\)|passed|from the cache)(?!\w)")
COUNT = re.compile(r"\b\d[\d,]*(?:/(?:at most )?\d[\d,]*)? trials\b")  # lower case: "15 Trials errored" is two table cells
FORBIDDEN = (
    re.compile(r"\bcalls\s+model\s+calls\b"),  # --plan's old header: a "calls" column over trial rows
    re.compile(r"\b\d+ runs? per (arm|case|item)\b"),  # "runs" for trials
    re.compile(r"\btrials requested per arm\b"),  # the count first, then what it counts
    re.compile(r"\bCalls made\b"),  # the HTML's old name for trials that called the model
)


def _plugin(tmp_path):
    tasks = [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": [{"type": "deterministic", "checks": ["hello"]}]} for k in range(5)]
    ev = {"version": "2", "defaults": {"trials": 3, "threshold": 0.6}, "tasks": tasks}
    return make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with HELLO.\n", "eval": ev}, "waver": {"prompt": "Wave.\n", "eval": ev}})


def _text(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = re.sub(r"<(style|script)\b.*?</\1>", " ", text, flags=re.S)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return re.sub(r"\s+", " ", text)


def unqualified_trial_counts(text: str) -> list[str]:
    """Every count of trials that does not say what it counts."""
    bad = []
    for m in COUNT.finditer(text):
        after, before = text[m.end() : m.end() + 20], text[max(0, m.start() - 8) : m.start()]
        if not QUALIFIED.match(after) and not before.endswith("passed "):
            bad.append(text[max(0, m.start() - 30) : m.end() + 30])
    return bad


def test_the_scan_catches_the_mixed_forms():
    assert unqualified_trial_counts("duration 1 s · 60 trials · agentsproof") == ["duration 1 s · 60 trials · agentsproof"]
    assert unqualified_trial_counts("progress: 1/60 trials · 0:00") and not unqualified_trial_counts("progress: 1/60 trials (all arms) · 0:00")
    assert not unqualified_trial_counts("15 trials per arm (3 per case) · passed 0/15 trials. · 18 trials from the cache")
    assert any(f.search("  calls           model                          calls  prompt tok") for f in FORBIDDEN)


def test_trials_and_calls_are_counted_and_named_one_way(byok_env, tmp_path, monkeypatch):
    byok_env.add(Rule(reply="HELLO there", system_contains=MARK, judge=False), Rule(reply="hi", judge=False))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    plugin = _plugin(tmp_path)
    out = tmp_path / "out"
    code, plan, err = run_cli(["eval-all", plugin, "--model", "m", "--plan"])
    assert code == 0, err
    assert "2 items · 10 cases · 30 trials per arm in all (15 per item, 3 per case)" in plan
    assert re.search(r"^\s+calls made by\s+model\s+calls\b", plan, re.M) and "total: 60 LLM calls" in plan
    code, stdout, stderr = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--junit", tmp_path / "j.xml", "--no-cache"])
    assert code == 0, stderr
    assert "progress: " in stderr and "/60 trials (all arms) · " in stderr
    texts = {"--plan": plan, "stdout": stdout, "stderr": stderr, "step summary": summary.read_text(encoding="utf-8")}
    texts["junit"] = (tmp_path / "j.xml").read_text(encoding="utf-8")
    reports = [p for p in out.glob("*/*") if p.suffix in (".md", ".html")]
    assert len(reports) == 2, reports  # the plugin report, Markdown and HTML (every item in both)
    texts.update({p.name: _text(p) for p in reports})
    for name, text in texts.items():
        text = re.sub(r"\s+", " ", text)
        assert not unqualified_trial_counts(text), (name, unqualified_trial_counts(text))
        for form in FORBIDDEN:
            assert not form.search(text), (name, form.pattern)
    # the step summary says both questions as the terminal does: the interval's question, then the label
    assert "| [-0.07, +1.00] for tasks like these | A on these 5 cases (95 % interval within A); for tasks like these not settled yet: about 4 more cases" in texts["step summary"]
    page = next(t for n, t in texts.items() if n.endswith(".html"))
    assert "underpowered on these 5 cases" not in page and "would settle it underpowered" in page  # the tag after the label, not inside it
    md = next(t for n, t in texts.items() if n == "eval-all-summary.md")
    assert "[underpowered] |" in md and "(underpowered) on these" not in md
    assert "60 trials (all arms)" in md and "| trials w+b (errored) |" in md and "15 trials per arm requested (over 5 cases)" in md
