"""Skills are folders, agents have frontmatter: what the with-arm system prompt is made of,
what eval-generate copies, and how both reach a real run on the scripted server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from agentsproof.model.skillfolder import agent_prompt, folder_files, skill_prompt, split_frontmatter
from conftest import Rule, read_json
from generated_evals import PROBLEMS, eval_reply

MODEL = ["--model", "gen-model"]
GEN_MARK = "You design evaluations for agentsproof"
SKILL = """---
name: arize-trace
description: Read traces.
---
# Traces
Read references/auth.md first, then references/api.md. Fill in the report template.md.
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    d = tmp_path / "skills" / "arize-trace"
    write(d / "SKILL.md", SKILL)
    write(d / "references" / "api.md", "API: GET /v1/traces\n")
    write(d / "references" / "auth.md", "AUTH: send the space key\n")
    write(d / "references" / "extra.md", "EXTRA: never mentioned\n")
    write(d / "assets" / "template.md", "TEMPLATE: ## Findings\n")
    write(d / "assets" / "logo.png", b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    write(d / "scripts" / "run.sh", "echo run\n")
    write(d / ".secret", "DOTFILE\n")
    write(d / ".cache" / "x.md", "DOTDIR\n")
    outside = write(tmp_path / "outside.md", "OUTSIDE\n")
    os.symlink(outside, d / "references" / "linked.md")
    os.mkfifo(d / "references" / "pipe.md")
    return d


def test_folder_files_regular_only_no_dotfiles_no_symlinks(skill):
    rels = [f.rel for f in folder_files(skill)]
    assert rels == ["assets/logo.png", "assets/template.md", "references/api.md", "references/auth.md", "references/extra.md", "scripts/run.sh"]


def test_mentioned_files_are_inlined_in_mention_order_the_rest_listed(skill, monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_SKILL_INLINE_TOKENS", raising=False)
    built = skill_prompt(SKILL, skill)
    assert built.inlined == ["references/auth.md", "references/api.md", "assets/template.md"]
    p = built.system_prompt
    assert p.startswith(SKILL.rstrip())
    assert p.index("AUTH: send") < p.index("API: GET") < p.index("TEMPLATE:")
    assert "EXTRA" not in p and "DOTFILE" not in p and "OUTSIDE" not in p and "DOTDIR" not in p
    assert "- references/extra.md (23 bytes)" in p
    assert "- assets/logo.png (11 bytes)" in p and "- scripts/run.sh (9 bytes)" in p


def test_the_token_budget_lists_what_does_not_fit(skill, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_SKILL_INLINE_TOKENS", "7")  # 28 characters: only the first mention fits
    built = skill_prompt(SKILL, skill)
    assert built.inlined == ["references/auth.md"]
    assert "- references/api.md (20 bytes)" in built.system_prompt
    monkeypatch.setenv("AGENTSPROOF_SKILL_INLINE_TOKENS", "0")
    assert skill_prompt(SKILL, skill).inlined == []


def test_a_skill_alone_in_its_folder_is_sent_unchanged(tmp_path):
    write(tmp_path / "SKILL.md", SKILL)
    write(tmp_path / "eval.yaml", "x")
    write(tmp_path / "evals" / "evals.json", "{}")
    assert skill_prompt(SKILL, tmp_path).system_prompt == SKILL


def test_agent_frontmatter_body_is_the_prompt_tools_warned():
    text = "---\nname: doublecheck\ndescription: Checks: claims\ntools: ['codebase', 'fetch']\nmodel: gpt-4.1\n---\n\nYou verify claims.\n"
    built = agent_prompt(text)
    assert built.system_prompt == "You verify claims.\n"
    assert built.meta["tools"] == ["codebase", "fetch"] and built.meta["model"] == "gpt-4.1"
    assert built.meta["description"] == "Checks: claims"  # invalid YAML, read line by line
    assert len(built.warnings) == 1 and "(codebase, fetch)" in built.warnings[0]
    plain = agent_prompt("You help.\n")
    assert plain.system_prompt == "You help.\n" and plain.warnings == [] and plain.meta == {}
    assert split_frontmatter("---\nno end\n")[0] == {}


def test_malformed_inline_budget_is_one_line_exit_30(cli, byok_env, skill, monkeypatch):
    write(skill / "eval.yaml", yaml.safe_dump({"version": "2", "skill": "SKILL.md", "task": {"name": "t", "instruction": "x", "graders": [{"type": "deterministic", "checks": ["a"]}]}}))
    monkeypatch.setenv("AGENTSPROOF_SKILL_INLINE_TOKENS", "lots")
    code, _, stderr = cli(["eval", skill / "eval.yaml", *MODEL])
    assert code == 30
    assert stderr.strip() == "error: environment: AGENTSPROOF_SKILL_INLINE_TOKENS: 'lots' is not a whole number"


def test_eval_generate_copies_the_whole_skill_folder_and_trials_see_it(cli, byok_env, skill, tmp_path):
    plugin = skill.parent.parent
    reply = eval_reply(name="t", graders="- type: deterministic\n  checks: [space key]\n", defaults=False)
    byok_env.add(Rule(reply=reply, system_contains=GEN_MARK), Rule(reply="send the space key", system_contains="AUTH: send", judge=False))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink())
    target = "skills/arize-trace/"
    assert files == [target + f for f in [".agentsproof-copies.json", "SKILL.md", "assets/logo.png", "assets/template.md", "eval.yaml", "references/api.md", "references/auth.md", "references/extra.md", "scripts/run.sh"]]
    assert (out / target / "assets" / "logo.png").read_bytes() == (skill / "assets" / "logo.png").read_bytes()
    assert "SKILL.md and 6 more files" in stdout
    # the generator saw SKILL.md; the trial's system prompt carries the referenced files
    runs = tmp_path / "runs"
    code, _, stderr = cli(["eval", out / target / "eval.yaml", "--output", runs, *MODEL])
    assert code == 0, stderr
    with_req = [r for r in byok_env.trial_requests() if "AUTH: send" in r["messages"][0]["content"]]
    per_case = yaml.safe_load((out / target / "eval.yaml").read_text())["defaults"]["trials"]  # generated: trials per case
    assert len(with_req) == per_case * len(PROBLEMS) and all("API: GET /v1/traces" in r["messages"][0]["content"] for r in with_req)
    report = read_json(next(runs.rglob("*.json")))
    assert report["items"][0]["delta"] == 1.0 and report["items"][0]["warnings"] == []


def test_dry_run_names_every_file_it_would_copy(cli, byok_env, skill, tmp_path):
    reply = eval_reply(name="t", graders="- type: deterministic\n  checks: [x]\n", defaults=False)
    byok_env.add(Rule(reply=reply, system_contains=GEN_MARK))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", skill.parent.parent, "--out", out, "--dry-run", "--no-check", *MODEL])
    assert code == 0, stderr
    assert not out.exists()
    assert f"# would copy {skill / 'references' / 'api.md'} -> {out / 'skills' / 'arize-trace' / 'references' / 'api.md'}" in stdout
    assert ".secret" not in stdout and "linked.md" not in stdout


def test_the_generator_sees_the_skill_with_its_referenced_files(cli, byok_env, skill, tmp_path):
    reply = eval_reply(name="t", graders="- type: deterministic\n  checks: [x]\n", defaults=False)
    byok_env.add(Rule(reply=reply, system_contains=GEN_MARK))
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", skill.parent.parent, "--out", tmp_path / "o", "--no-check", *MODEL])
    assert code == 0, stderr
    user = byok_env.requests[0]["messages"][1]["content"]
    assert "AUTH: send the space key" in user and "- references/extra.md (23 bytes)" in user


def test_malformed_inline_budget_stops_eval_generate_before_any_call(cli, byok_env, skill, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_SKILL_INLINE_TOKENS", "-1")
    code, _, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", skill.parent.parent, *MODEL])
    assert code == 30
    assert stderr.strip() == "error: environment: AGENTSPROOF_SKILL_INLINE_TOKENS: '-1' must be between 0 and 10000000"
    assert byok_env.requests == []


def test_item_warnings_are_shown_in_every_report(byok_env, tmp_path):
    """An agent that declares tools gets a warning in the JSON, the HTML and the Markdown report."""
    from conftest import make_plugin, read_json, run_cli, simple_eval

    prompt = "---\nname: fixer\ntools: ['bash', 'edit']\n---\nYou fix things.\n"
    plugin = make_plugin(tmp_path, agents={"fixer": {"prompt": prompt, "eval": simple_eval()}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    assert code in (0, 1), err
    warnings = read_json(out / "demo-plugin" / "eval-all-summary.json")["items"][0]["warnings"]
    assert warnings and "bash" in warnings[0]
    assert "Warning:" in (out / "demo-plugin" / "eval-all-summary.md").read_text()
    assert "<b>Warning:</b>" in (out / "demo-plugin" / "demo-plugin-eval.html").read_text()
