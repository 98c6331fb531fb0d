"""eval-generate end to end: the real CLI and openai client against the scripted server.

The "LLM" replies are scripted per item (the item is recognised by the name line of the
first user message), so every test controls exactly what the model wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from agentsproof.formats.eval_yaml.models import load_eval
from agentsproof.generator import prompt as prompt_mod
from agentsproof.generator.plugin import PluginItem
from agentsproof.generator.validate import InvalidEval, build_eval, dump_eval, eval_dict
from conftest import Rule, read_json
from generated_evals import PROBLEMS
from generated_evals import eval_reply as eval_yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_PLUGIN = REPO / "examples" / "example-plugin"
EXAMPLE_EVALS = REPO / "evals" / "example-plugin"
MODEL = ["--model", "gen-model"]


def first_user(req: dict[str, Any]) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def item_of(req: dict[str, Any]) -> str:
    """'skill:<name>' or 'agent:<name>' from the first user message."""
    for line in first_user(req).splitlines():
        for kind in ("skill", "agent"):
            if line.startswith(f"- {kind} name: "):
                return f"{kind}:{line.split(': ', 1)[1]}"
    raise AssertionError("no item line in the request")


def scripted(replies: dict[str, list[str] | str]) -> Callable[[dict[str, Any]], str]:
    """A reply function: per item, the Nth reply for the Nth attempt (a str: every attempt)."""

    def reply(req: dict[str, Any]) -> str:
        got = replies[item_of(req)]
        if isinstance(got, str):
            return got
        attempt = sum(1 for m in req["messages"] if m["role"] == "assistant")
        return got[attempt]

    return reply


def requests_for(server: Any, item: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if item_of(r) == item]


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "acme-plugin"
    (root / "skills" / "incident-triage").mkdir(parents=True)
    (root / "skills" / "incident-triage" / "SKILL.md").write_text("# Incident triage\nStart with 'Root cause:'.\n")
    (root / "skills" / "log-reading").mkdir(parents=True)
    (root / "skills" / "log-reading" / "SKILL.md").write_text("# Log reading\nQuote the failing line.\n")
    (root / "skills" / "no-skill-here").mkdir(parents=True)  # no SKILL.md: skipped
    (root / "agents").mkdir()
    (root / "agents" / "oncall-helper.md").write_text("---\nname: oncall-helper\n---\nYou help the on-call engineer.\n")
    (root / "agents" / "README.md").write_text("Docs about the agents, not an agent.\n")
    return root


def valid_replies() -> dict[str, list[str] | str]:
    return {
        # wrong reference paths and trials on purpose: both are normalized
        "skill:incident-triage": eval_yaml("skill: skills/incident-triage/SKILL.md", name="triage"),
        "skill:log-reading": eval_yaml("skill: SKILL.md", trials=9, name="logs"),
        "agent:oncall-helper": eval_yaml("agent: agents/oncall-helper.md", name="pager"),
    }


# ------------------------------------------------------------------ happy path


def test_writes_layout_with_valid_yaml_copied_sources_and_trials(cli, byok_env, plugin, tmp_path):
    byok_env.add(Rule(reply=scripted(valid_replies())))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--trials", "4", *MODEL, "--no-check"])
    assert code == 0, stderr
    assert stderr == ""
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "agents/oncall-helper/.agentsproof-copies.json",
        "agents/oncall-helper/eval.yaml",
        "agents/oncall-helper/oncall-helper.md",
        "skills/incident-triage/.agentsproof-copies.json",
        "skills/incident-triage/SKILL.md",
        "skills/incident-triage/eval.yaml",
        "skills/log-reading/.agentsproof-copies.json",
        "skills/log-reading/SKILL.md",
        "skills/log-reading/eval.yaml",
    ]
    for kind, name, fname in [("skills", "incident-triage", "SKILL.md"), ("skills", "log-reading", "SKILL.md"), ("agents", "oncall-helper", "oncall-helper.md")]:
        ev = load_eval(out / kind / name / "eval.yaml")
        assert ev.config.version == "2"
        assert ev.config.source == fname
        assert ev.kind == kind[:-1]
        assert ev.config.defaults.trials == 4
        assert ev.config.defaults.timeout == 60
        src = plugin / kind / name / "SKILL.md" if kind == "skills" else plugin / "agents" / fname
        assert (out / kind / name / fname).read_bytes() == src.read_bytes()
        assert ev.source_text == src.read_text()
    assert "wrote" in stdout and "Generated 3 of 3 evals" in stdout
    # One call per item; the system prompt is the suite-generator skill, the user message carries the file.
    assert len(byok_env.requests) == 3
    system_prompt, _ = prompt_mod.load_system_prompt()
    for req in byok_env.requests:
        assert req["model"] == "gen-model"
        assert req["messages"][0] == {"role": "system", "content": system_prompt}
    triage = requests_for(byok_env, "skill:incident-triage")[0]
    assert "Start with 'Root cause:'." in first_user(triage)
    assert "`skill: SKILL.md`" in first_user(triage)
    assert "defaults.trials: 4" in first_user(triage)
    agent = requests_for(byok_env, "agent:oncall-helper")[0]
    assert "`agent: oncall-helper.md`" in first_user(agent)


def test_default_out_is_evals_plugin_name_and_rerun_overwrites(cli, byok_env, plugin, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    byok_env.add(Rule(reply=scripted(valid_replies())))
    code, stdout, _ = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, *MODEL, "--no-check"])
    assert code == 0
    target = tmp_path / "evals" / "acme-plugin" / "skills" / "incident-triage" / "eval.yaml"
    assert target.is_file()
    assert "overwrote" not in stdout
    target.write_text("hand edit\n")
    code, stdout, _ = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, *MODEL, "--no-check"])
    assert code == 0
    assert f"overwrote {Path('evals/acme-plugin/skills/incident-triage/eval.yaml')}" in " ".join(stdout.split())
    assert load_eval(target).config.primary_task.name == "triage"


def test_fenced_yaml_with_prose_is_accepted(cli, byok_env, plugin, tmp_path):
    replies = valid_replies()
    replies["skill:log-reading"] = "Here is the eval:\n\n```yaml\n" + eval_yaml(name="fenced") + "```\n\nGood luck!"
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "out"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 0, stderr
    assert load_eval(out / "skills" / "log-reading" / "eval.yaml").config.primary_task.name == "fenced"
    assert len(requests_for(byok_env, "skill:log-reading")) == 1  # no retry needed


def test_v1_tasks_reply_is_written_as_v2_with_every_task(cli, byok_env, plugin, tmp_path):
    v1 = yaml.safe_load(eval_yaml(name="first"))
    v1["version"] = 1
    replies = valid_replies()
    replies["skill:log-reading"] = yaml.safe_dump(v1, sort_keys=False)
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "out"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 0, stderr
    written = yaml.safe_load((out / "skills" / "log-reading" / "eval.yaml").read_text())
    assert written["version"] == "2" and "task" not in written
    assert [t["name"] for t in written["tasks"]] == ["first", "first-2", "first-3", "first-4", "first-5"]


# ------------------------------------------------------------------ retry and failure


def test_invalid_reply_is_retried_once_with_the_validation_error(cli, byok_env, plugin, tmp_path):
    bad = eval_yaml(name="bad").replace("weight: 0.7", "weight: 0")
    replies = valid_replies()
    replies["skill:log-reading"] = [bad, eval_yaml(name="fixed")]
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 0, stderr
    reqs = requests_for(byok_env, "skill:log-reading")
    assert len(reqs) == 2
    second = reqs[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"] == bad
    assert "tasks[0].graders[0].weight" in second[3]["content"]
    assert "greater than 0" in second[3]["content"]
    assert load_eval(out / "skills" / "log-reading" / "eval.yaml").config.primary_task.name == "fixed"
    assert "retried once" in stdout
    # the other items were not retried
    assert len(requests_for(byok_env, "skill:incident-triage")) == 1


def test_two_invalid_replies_fail_that_item_only_with_exit_30(cli, byok_env, plugin, tmp_path):
    replies = valid_replies()
    replies["agent:oncall-helper"] = eval_yaml("agent: x.md").replace("  threshold: 0.7\n", "  threshold: 0.7\n  retries: 2\n")
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 30
    assert len(requests_for(byok_env, "agent:oncall-helper")) == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 2, stderr
    assert lines[0].startswith("error: acme-plugin/agents/oncall-helper: defaults.retries: unknown key")
    assert "1 item failed" in lines[1]
    assert "Traceback" not in stderr
    assert not (out / "agents" / "oncall-helper").exists()
    assert (out / "skills" / "incident-triage" / "eval.yaml").is_file()
    assert (out / "skills" / "log-reading" / "eval.yaml").is_file()


@pytest.mark.parametrize(
    "reply, field",
    [
        ("", "(reply)"),
        ("version: '2'\ntask: [unclosed\n", "YAML line"),
        ("- just\n- a list\n", "(top level)"),
        (eval_yaml().replace("['(?m)^Fix: \\S']", "['(unclosed']"), "tasks[0].graders[0].checks.regexMatch"),
        (eval_yaml().replace("Our deploy failed", "Use the log-reading skill: our deploy failed"), "tasks[0].instruction"),
        (eval_yaml().replace("Two pods keep", "Do some log reading: two pods keep"), "tasks[3].instruction"),
    ],
)
def test_each_kind_of_invalid_reply_is_named(cli, byok_env, plugin, tmp_path, reply, field):
    replies = valid_replies()
    replies["skill:log-reading"] = reply
    byok_env.add(Rule(reply=scripted(replies)))
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "out", *MODEL, "--no-check"])
    assert code == 30
    assert f"error: acme-plugin/skills/log-reading: {field}" in stderr
    assert field in requests_for(byok_env, "skill:log-reading")[1]["messages"][-1]["content"]


def test_provider_failure_fails_the_item_not_the_command(cli, byok_env, plugin, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "1")
    byok_env.add(Rule(status=500, user_contains="- skill name: log-reading\n"), Rule(reply=scripted(valid_replies())))
    out = tmp_path / "out"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 30
    assert "error: acme-plugin/skills/log-reading: provider: HTTP 500" in stderr
    assert "sk-test-secret" not in stderr
    assert (out / "skills" / "incident-triage" / "eval.yaml").is_file()


def test_empty_source_fails_without_a_call(cli, byok_env, plugin, tmp_path):
    (plugin / "skills" / "log-reading" / "SKILL.md").write_text("  \n")
    byok_env.add(Rule(reply=scripted(valid_replies())))
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "out", *MODEL, "--no-check"])
    assert code == 30
    assert "error: acme-plugin/skills/log-reading: SKILL.md: is empty" in stderr
    assert len(byok_env.requests) == 2


def test_parallel_generates_items_concurrently(cli, byok_env, plugin, tmp_path):
    byok_env.add(Rule(reply=scripted(valid_replies()), delay=0.3))
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "a", "--parallel", "3", *MODEL, "--no-check"])
    assert code == 0, stderr
    assert byok_env.max_in_flight == 3
    byok_env.max_in_flight = 0
    code, _, _ = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "b", *MODEL, "--no-check"])
    assert code == 0
    assert byok_env.max_in_flight == 1


# ------------------------------------------------------------------ dry run and bad input


def test_dry_run_prints_paths_and_yaml_and_writes_nothing(cli, byok_env, plugin, tmp_path):
    byok_env.add(Rule(reply=scripted(valid_replies())))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--trials", "2", "--dry-run", *MODEL, "--no-check"])
    assert code == 0, stderr
    assert not out.exists()
    assert f"# would write {out / 'skills' / 'log-reading' / 'eval.yaml'}" in stdout
    assert f"# would copy {plugin / 'agents' / 'oncall-helper.md'}" in stdout
    assert "  - name: logs\n    instruction: |\n      Our deploy failed" in stdout
    assert "trials: 2" in stdout
    assert "nothing was written" in stdout


@pytest.mark.parametrize("setup", ["missing", "empty", "single-skill", "file"])
def test_bad_plugin_dir_exits_30_with_one_line(cli, byok_env, tmp_path, setup):
    target = tmp_path / "p"
    if setup == "empty":
        (target / "skills" / "x").mkdir(parents=True)
    elif setup == "single-skill":
        target.mkdir()
        (target / "SKILL.md").write_text("a skill")
    elif setup == "file":
        target.write_text("not a dir")
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", target, *MODEL, "--no-check"])
    assert code == 30
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {target}: --plugin-dir:"), stderr
    if setup == "single-skill":
        assert "single skill folder" in lines[0]
    assert byok_env.requests == []


def test_out_that_is_a_file_and_missing_model_exit_30(cli, byok_env, plugin, tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", f, *MODEL, "--no-check"])
    assert code == 30 and "--out" in stderr and "is a file" in stderr and len(stderr.strip().splitlines()) == 1
    assert byok_env.requests == []


def test_model_defaults_to_gpt_4o_and_the_judge_model_checks_relevance(cli, byok_env, plugin, tmp_path, monkeypatch):
    """The spec: `--model` defaults to gpt-4o (AGENTSPROOF_MODEL first); --judge-model is the relevance judge's."""
    byok_env.add(Rule(reply=scripted(valid_replies()), judge=False))
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "a", "--no-check"])
    assert code == 0, stderr
    assert "model gpt-4o" in stdout and {r["model"] for r in byok_env.requests} == {"gpt-4o"}
    byok_env.requests.clear()
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-model")
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", tmp_path / "b", "--no-check"])
    assert code == 0, stderr
    assert {r["model"] for r in byok_env.requests} == {"env-model"}


# ------------------------------------------------------------------ generated evals run


def test_generated_evals_run_with_eval_all(cli, byok_env, plugin, tmp_path):
    byok_env.add(
        Rule(reply=scripted(valid_replies()), system_contains="You design evaluations for agentsproof"),
        Rule(reply="Root cause: disk full\nFix: rotate logs", system_contains="Incident triage", judge=False),
    )
    out = tmp_path / "evals" / "acme-plugin"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--trials", "2", *MODEL, "--no-check"])
    assert code == 0, stderr
    runs = tmp_path / "runs"
    code, stdout, stderr = cli(["eval-all", out, "--output", runs, *MODEL])
    assert code == 0, stderr
    summary = read_json(runs / "acme-plugin" / "eval-all-summary.json")
    items = {i["name"]: i for i in summary["items"]}
    assert set(items) == {"incident-triage", "log-reading", "oncall-helper"}
    assert items["oncall-helper"]["kind"] == "agent"
    assert all(len(i["with_arm"]["trials"]) == 2 * len(PROBLEMS) for i in items.values())  # 2 per case
    assert items["incident-triage"]["delta"] > 0.5  # only the skill arm writes the checked lines
    assert (runs / "acme-plugin" / "acme-plugin-eval.html").is_file()


# ------------------------------------------------------------------ the committed example plugin


def _example_replies() -> dict[str, list[str] | str]:
    replies: dict[str, list[str] | str] = {}
    for path in EXAMPLE_EVALS.rglob("eval.yaml"):
        kind = path.parent.parent.name[:-1]
        replies[f"{kind}:{path.parent.name}"] = path.read_text(encoding="utf-8")
    return replies


def test_example_evals_are_what_eval_generate_writes(cli, byok_env, tmp_path):
    """evals/example-plugin is reproduced byte for byte from examples/example-plugin."""
    replies = _example_replies()
    assert set(replies) == {"skill:conventional-commits", "skill:sql-review", "agent:release-notes-writer"}
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "example-plugin"
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", EXAMPLE_PLUGIN, "--out", out, "--trials", "3", *MODEL, "--no-check"])
    assert code == 0, stderr
    from agentsproof.formats.copies import SIDECAR, stale_copies

    # the record of where each copy came from names a path relative to its folder: it differs by place
    committed = {p.relative_to(EXAMPLE_EVALS).as_posix(): p.read_bytes() for p in EXAMPLE_EVALS.rglob("*") if p.is_file() and p.name not in ("README.md", SIDECAR)}
    written = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != SIDECAR}
    assert written == committed
    # the committed copies record their sources in examples/, and none is stale
    for ev in EXAMPLE_EVALS.rglob("eval.yaml"):
        assert (ev.parent / SIDECAR).is_file() and (out / ev.parent.relative_to(EXAMPLE_EVALS) / SIDECAR).is_file()
        assert stale_copies(ev.parent) == [], ev


COMMITS, SQL, NOTES = "Conventional commit messages", "# SQL review", "release-notes writer"
"""Markers of each item's system prompt; each case below is recognised by a phrase of its instruction."""
GOOD_ANSWERS = [
    (COMMITS, "#482", (
        "```\nfix(billing)!: round invoice totals once after currency conversion\n\n"
        "Invoices in another currency were rounded before and after conversion,\n"
        "so totals could be a cent off from what the bank charged.\n\n"
        "BREAKING CHANGE: create_invoice() no longer takes round_total. Drop the\n"
        "argument; totals are always rounded once, after conversion.\n"
        "Closes #482\n```"
    )),
    (COMMITS, "#311", (
        "```\nfeat(reports): add a csv download to the monthly report\n\n"
        "Finance needs the monthly numbers in a spreadsheet.\n\nRefs #311\n```"
    )),
    (COMMITS, "#90", (
        "```\nperf(search): write products to the index in batches of 500\n\n"
        "The nightly rebuild took 40 minutes and blocked the morning import.\n\nCloses #90\n```"
    )),
    (COMMITS, "APP_DB_URL", (
        "```\nfeat(settings)!: read the database location from database_url\n\n"
        "Hosting platforms already set DATABASE_URL.\n\n"
        "BREAKING CHANGE: APP_DB_URL is no longer read; rename it to DATABASE_URL.\n```"
    )),
    (COMMITS, "recieve", "```\ndocs: fix spelling mistakes and broken install guide links\n```"),
    (SQL, "newsletter", (
        "The query is injectable and returns nobody once an unsubscribe row has no user.\n\n"
        "[BLOCKER] SQL injection through the f-string\n**Why:** day and country go into the SQL text.\n"
        "**Fix:** `conn.execute(sql, {\"day\": day, \"country\": country})` with %(day)s placeholders.\n\n"
        "[BLOCKER] NOT IN with a nullable column\n**Why:** one NULL user_id makes the filter return no rows.\n"
        "**Fix:** `AND NOT EXISTS (SELECT 1 FROM unsubscribed u WHERE u.user_id = users.id)`\n\n"
        "[MAJOR] DATE(created_at) cannot use the index\n"
        "**Fix:** `created_at >= %(day)s::date AND created_at < %(day)s::date + 1`\n\n"
        "Verdict: request changes"
    )),
    (SQL, "Sign-in got slow", (
        "The lookup is safe but cannot use the email index.\n\n"
        "[MAJOR] LOWER(email) keeps the index on email from being used\n**Why:** every sign-in scans 12M rows.\n"
        "**Fix:** `CREATE INDEX accounts_email_lower_idx ON accounts (LOWER(email));`\n\n"
        "Verdict: approve with changes"
    )),
    (SQL, "search box on our", (
        "Both query parameters reach the SQL text.\n\n"
        "[BLOCKER] term and sort are pasted into the SQL\n**Why:** anyone can inject SQL through q or sort.\n"
        "**Fix:** `db.query('SELECT id, name FROM products WHERE name LIKE ? ORDER BY ' + allowedSort + ' LIMIT 50', [`%${term}%`])`\n\n"
        "Verdict: request changes"
    )),
    (SQL, "audit log", (
        "Late pages are slow because of OFFSET.\n\n"
        "[MAJOR] OFFSET pagination reads and discards every earlier row\n"
        "**Fix:** keyset pagination: `WHERE (created_at, id) < (%s, %s) ORDER BY created_at DESC, id DESC LIMIT 50`\n\n"
        "Verdict: approve with changes"
    )),
    (SQL, "nobody's", (
        "The NULL manager_id of the CEO empties the result.\n\n"
        "[BLOCKER] NOT IN over a nullable column\n**Why:** one NULL makes every comparison unknown.\n"
        "**Fix:** `WHERE NOT EXISTS (SELECT 1 FROM employees r WHERE r.manager_id = e.id)`\n\n"
        "Verdict: request changes"
    )),
    (NOTES, "skyhook", (
        "# 3.0.0 (2025-03-14)\n\n## ⚠️ Breaking changes\n"
        "- Settings are read from skyhook.toml; .skyhookrc is no longer read (#512)\n"
        "  Upgrade: move your settings from .skyhookrc into skyhook.toml.\n\n"
        "## New features\n- `skyhook deploy --dry-run` shows what would change (#520)\n\n"
        "## Fixes\n- Uploads are retried when the server is briefly unavailable (#515)\n"
        "- urllib3 updated to 2.2.2 for a security fix (#523)\n\n"
        "## Performance\n- Syncing large projects is about 3x faster (#524)\n\n"
        "Full list of changes: https://github.com/acme/skyhook/compare/2.7.1...3.0.0"
    )),
    (NOTES, "Lumen", (
        "# 1.4.0 (2025-06-02)\n\n## New features\n- Share an album with a link that expires (#88)\n"
        "- Search photos by their main colour (#91)\n\n## Fixes\n- HEIC photos from iPhones are no longer rotated (#93)\n\n"
        "Full list of changes: https://github.com/lumen-app/lumen/compare/1.3.2...1.4.0"
    )),
    (NOTES, "invoicing API", "Which release date should the title of 2.1.0 carry? Once I have it, I will write the notes."),
    (NOTES, "Harbor Proxy", (
        "# 4.2.1 (2025-09-30)\n\n## Fixes\n- Certificates are reloaded without dropping open connections (#301)\n"
        "- golang.org/x/net updated to 0.38.0 for a security fix, CVE-2025-22870 (#304)"
    )),
    (NOTES, "Tidewater", (
        "# 5.0.0 (2025-11-18)\n\n## ⚠️ Breaking changes\n- Client.fetch_all() has been removed (#610)\n"
        "  Upgrade: use Client.iter_pages() instead.\n\n## Fixes\n- Timeouts now also apply to streaming downloads (#613)\n\n"
        "## Performance\n- Requests reuse HTTP connections: about 40% lower latency (#612)"
    )),
]
GENERIC_ANSWERS = [
    ("#482", "Fix double rounding for foreign-currency invoices (#482)\n\n- Removed round_total from create_invoice()"),
    ("#311", "Add CSV export to the monthly report (#311)\n\nCloses #311"),
    ("#90", "Speed up the search reindex (#90)"),
    ("APP_DB_URL", "Rename APP_DB_URL to DATABASE_URL"),
    ("recieve", "Fixed typos and broken links in the docs."),
    ("newsletter", "Looks mostly fine. You should use parameterized queries instead of f-strings, and avoid SELECT *."),
    ("Sign-in got slow", "Looks fine to me. Maybe add an index."),
    ("search box on our", "You should use parameterized queries here."),
    ("audit log", "Add an index on created_at and it should be fine."),
    ("nobody's", "The query looks correct; maybe the staging data is wrong."),
    ("skyhook", "## Release 3.0.0\n\n- feat(config)!: read settings from skyhook.toml\n- chore(deps-dev): bump pytest\n- ci: cache pip downloads in GitHub Actions"),
    ("Lumen", "## Lumen 1.4.0\n\n- feat(albums): share albums\n- docs: fix typo in CONTRIBUTING"),
    ("invoicing API", "## 2.1.0\n\n## New features\n- Webhooks can be retried from the dashboard (#140)"),
    ("Harbor Proxy", "## 4.2.1\n\n## New features\n- ci: run tests on arm64 (#302)\n- refactor: rename HttpPool to ConnectionPool (#303)"),
    ("Tidewater", "## 5.0.0\n\n- feat!: remove Client.fetch_all()\n- test: speed up the integration suite"),
]


def test_example_evals_separate_a_good_answer_from_a_generic_one(cli, byok_env, tmp_path):
    """Every deterministic check of every case passes on an answer that follows the skill/agent and fails on a generic one."""
    rules = [Rule(reply=a, system_contains=s, user_contains=u, judge=False) for s, u, a in GOOD_ANSWERS]
    rules += [Rule(reply=a, user_contains=u, judge=False) for u, a in GENERIC_ANSWERS]
    byok_env.add(*rules)
    runs = tmp_path / "runs"
    code, _, stderr = cli(["eval-all", EXAMPLE_EVALS, "--trials", "1", "--ci", "--output", runs, *MODEL])
    assert code == 0, stderr
    summary = read_json(runs / "example-plugin" / "eval-all-summary.json")
    assert len(summary["items"]) == 3

    def checks(trial: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for g in trial["graders"] if g["type"] == "deterministic" for c in g["checks"]]

    for item in summary["items"]:
        for arm in ("with_arm", "without_arm"):
            assert len({t["case"] for t in item[arm]["trials"]}) == 5, (item["name"], arm)  # every case ran once
        for trial in item["with_arm"]["trials"]:
            assert checks(trial) and all(c["passed"] for c in checks(trial)), (item["name"], trial["case"], checks(trial))
        for trial in item["without_arm"]["trials"]:
            assert checks(trial) and not any(c["passed"] for c in checks(trial)), (item["name"], trial["case"], checks(trial))
        assert item["grade"] == "A" and item["passed"]
    assert [r.used for r in rules] == [1] * len(rules)  # every scripted answer answered exactly its case


# ------------------------------------------------------------------ pure logic


def test_packaged_prompt_matches_the_skill_file_and_is_used_when_installed(monkeypatch):
    repo_text = (REPO / "skills" / "suite-generator" / "SKILL.md").read_text(encoding="utf-8")
    packaged = (REPO / "agentsproof" / "data" / "suite-generator.md").read_text(encoding="utf-8")
    assert packaged == repo_text, "copy skills/suite-generator/SKILL.md to agentsproof/data/suite-generator.md"
    monkeypatch.setattr(prompt_mod, "repo_prompt_path", lambda: Path("/nonexistent/SKILL.md"))
    text, where = prompt_mod.load_system_prompt()
    assert text == repo_text and "packaged" in where
    # the prompt must never look like a judge call to the scripted server, nor to a reader
    assert "You grade an AI assistant" not in text


def test_written_yaml_round_trips(tmp_path):
    item = PluginItem("skill", "x", tmp_path / "SKILL.md")
    tricky = eval_yaml().replace("Our deploy failed", "Quote: 'it broke' # not a comment\n      line two: yes")
    gen = build_eval(tricky, item, trials=5)
    again = build_eval(gen.text, item, trials=5)
    assert eval_dict(again.config) == eval_dict(gen.config)
    assert dump_eval(again.config) == gen.text
    assert gen.config.primary_task.instruction.startswith("Quote: 'it broke' # not a comment\nline two: yes")


def test_instruction_naming_the_file_is_rejected_but_topic_words_are_fine(tmp_path):
    item = PluginItem("agent", "release-notes-writer", tmp_path / "release-notes-writer.md")
    ok = eval_yaml("agent: release-notes-writer.md").replace("Our deploy failed", "Write release notes: our deploy failed")
    build_eval(ok, item, trials=1)
    for leak in ("Act as the release-notes-writer", "Follow release-notes-writer.md"):
        with pytest.raises(InvalidEval) as err:
            build_eval(ok.replace("Write release notes", leak), item, trials=1)
        assert err.value.field == "tasks[0].instruction"


def test_example_sources_are_unchanged_copies():
    for src in [*EXAMPLE_PLUGIN.glob("skills/*/SKILL.md")]:
        assert (EXAMPLE_EVALS / "skills" / src.parent.name / "SKILL.md").read_bytes() == src.read_bytes()
    for src in EXAMPLE_PLUGIN.glob("agents/*.md"):
        assert (EXAMPLE_EVALS / "agents" / src.stem / src.name).read_bytes() == src.read_bytes()


def test_oracle_answer_failing_its_checks_is_sent_back_and_a_passing_one_written(cli, byok_env, plugin, tmp_path):
    def with_oracle(answer: str, name: str) -> str:
        text = eval_yaml(name=name)
        return text.replace("    graders:\n", f"    oracle:\n      answer: {json.dumps(answer)}\n    graders:\n", 1)

    replies = valid_replies()
    replies["skill:log-reading"] = [with_oracle("Root cause: disk full.", "bad"), with_oracle("Root cause: disk full.\nFix: free space", "good")]
    byok_env.add(Rule(reply=scripted(replies)))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 0, stderr
    second = requests_for(byok_env, "skill:log-reading")[1]["messages"]
    assert "tasks[0].oracle" in second[3]["content"]
    assert "the oracle answer fails its own task's checks: graders[0] (deterministic): regexMatch" in second[3]["content"]
    written = load_eval(out / "skills" / "log-reading" / "eval.yaml")
    assert written.config.tasks[0].oracle.answer == "Root cause: disk full.\nFix: free space"
    assert "timeout" not in (out / "skills" / "log-reading" / "eval.yaml").read_text().split("oracle:")[1].split("graders:")[0]
