"""Plugin layouts: plain folders, awesome-copilot plugins (plugin.json, items at the repository
root, ``.agent.md`` files) and Claude Code plugins (``.claude-plugin/plugin.json``), found by
the real eval-generate CLI against the scripted server, then run with eval-all.

The fixtures copy the shapes of github/awesome-copilot (``plugins/<name>/plugin.json`` listing
``./skills/<name>/`` and ``./agents/<name>.md`` that live at the repository root as
``skills/<name>/`` and ``agents/<name>.agent.md``; or ``.github/plugin/plugin.json`` with
top-level ``skills``/``agents``) and of Claude Code plugins (``skills/``, ``agents/``,
``commands/``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentsproof.core.errors import InputError
from agentsproof.formats.layout import find_layout, repository_root
from conftest import Rule, read_json
from generated_evals import eval_reply

MODEL = ["--model", "gen-model"]
GEN_MARK = "You design evaluations for agentsproof"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def manifest(path: Path, data: dict[str, Any]) -> Path:
    return write(path, json.dumps(data, indent=2))


@pytest.fixture
def ac_repo(tmp_path: Path) -> Path:
    """A slice of an awesome-copilot repository."""
    repo = tmp_path / "awesome-copilot"
    (repo / ".git").mkdir(parents=True)
    write(repo / "skills" / "doublecheck" / "SKILL.md", "---\nname: doublecheck\ndescription: Verify claims.\n---\n# Doublecheck\nFill in assets/report-template.md.\n")
    write(repo / "skills" / "doublecheck" / "assets" / "report-template.md", "# Verification report\n")
    write(repo / "skills" / "arize-trace" / "SKILL.md", "---\nname: arize-trace\n---\n# Traces\nRead references/api.md first.\n")
    write(repo / "skills" / "arize-trace" / "references" / "api.md", "GET /v1/traces\n")
    write(repo / "skills" / "not-listed" / "SKILL.md", "# Not in any plugin\n")
    write(repo / "agents" / "doublecheck.agent.md", "---\nname: doublecheck\ndescription: 'Verify: claims'\ntools: ['codebase', 'fetch']\n---\nYou verify claims.\n")
    write(repo / "agents" / "devops-oncall.agent.md", "---\ndescription: On call helper\nmodel: gpt-4.1\n---\nYou help the on-call engineer.\n")
    write(repo / "agents" / "README.md", "Not an agent.\n")
    manifest(
        repo / "plugins" / "devops-oncall" / "plugin.json",
        {
            "name": "devops-oncall",
            "version": "1.0.0",
            "extensions": {"com.github.awesome-copilot": {"agents": ["./agents/devops-oncall.md"], "skills": ["./skills/arize-trace/"]}},
        },
    )
    write(repo / "plugins" / "devops-oncall" / "README.md", "# devops-oncall\n")
    # doublecheck: the published shape, .github/plugin/plugin.json with top-level paths
    manifest(
        repo / "plugins" / "doublecheck" / ".github" / "plugin" / "plugin.json",
        {"name": "doublecheck", "agents": ["./agents/doublecheck.md"], "skills": ["./skills/doublecheck/"]},
    )
    return repo


def names(layout) -> list[tuple[str, str]]:
    return [(i.kind, i.name) for i in layout.items]


# ------------------------------------------------------------------ discovery


def test_awesome_copilot_extension_paths_resolve_at_the_repository_root(ac_repo):
    layout = find_layout(ac_repo / "plugins" / "devops-oncall")
    assert layout.style == "awesome-copilot" and layout.name == "devops-oncall"
    assert layout.root == ac_repo.resolve()
    assert names(layout) == [("skill", "arize-trace"), ("agent", "devops-oncall")]
    agent = layout.items[1]
    assert agent.source == (ac_repo / "agents" / "devops-oncall.agent.md").resolve()  # ./agents/x.md -> x.agent.md
    assert layout.items[0].folder == (ac_repo / "skills" / "arize-trace").resolve()


def test_github_plugin_manifest_and_same_name_skill_agent_plugin(ac_repo):
    layout = find_layout(ac_repo / "plugins" / "doublecheck")
    assert layout.manifest == ac_repo / "plugins" / "doublecheck" / ".github" / "plugin" / "plugin.json"
    assert names(layout) == [("skill", "doublecheck"), ("agent", "doublecheck")]


def test_paths_resolve_in_the_plugin_folder_first(ac_repo):
    plugin = ac_repo / "plugins" / "doublecheck"
    write(plugin / "agents" / "doublecheck.md", "---\nname: doublecheck\n---\nThe plugin's own copy.\n")
    layout = find_layout(plugin)
    assert layout.items[1].source == (plugin / "agents" / "doublecheck.md").resolve()


def test_repository_root_without_git_is_the_first_folder_with_skills(tmp_path):
    repo = tmp_path / "r"
    write(repo / "skills" / "a" / "SKILL.md", "a\n")
    (repo / "plugins" / "p").mkdir(parents=True)
    assert repository_root(repo / "plugins" / "p") == repo.resolve()


def test_item_names_come_from_frontmatter_then_file_name(tmp_path):
    plugin = tmp_path / "plain"
    write(plugin / "skills" / "folder-name" / "SKILL.md", "---\nname: Real Name\n---\nbody\n")
    write(plugin / "agents" / "helper.agent.md", "no frontmatter\n")
    write(plugin / "agents" / "x.md", "---\nname: [not, a, string]\n---\nbody\n")
    layout = find_layout(plugin)
    assert layout.style == "folder"
    assert names(layout) == [("skill", "Real-Name"), ("agent", "helper"), ("agent", "x")]


def test_claude_code_plugin_with_skills_agents_and_commands(tmp_path):
    plugin = tmp_path / "cc-plugin"
    manifest(plugin / ".claude-plugin" / "plugin.json", {"name": "cc-tools", "commands": ["./extra/ship.md"]})
    write(plugin / "skills" / "pdf" / "SKILL.md", "---\nname: pdf\nallowed-tools: Read, Bash\n---\nWork with PDFs.\n")
    write(plugin / "agents" / "reviewer.md", "---\nname: reviewer\ntools: Read, Grep\n---\nReview code.\n")
    write(plugin / "commands" / "deploy.md", "---\ndescription: Deploy\n---\nDeploy the app.\n")
    write(plugin / "extra" / "ship.md", "Ship it.\n")
    layout = find_layout(plugin)
    assert layout.style == "claude-code" and layout.name == "cc-tools"
    assert names(layout) == [("skill", "pdf"), ("agent", "deploy"), ("agent", "reviewer"), ("agent", "ship")]
    assert {i.name: i.origin for i in layout.items}["deploy"] == "command"


@pytest.mark.parametrize(
    "entry, message",
    [
        ("./skills/missing/", "'./skills/missing/' not found"),
        ("/etc/skills/x/", "is an absolute path"),
        ("../../../outside/", "leads out of the repository root"),
        ("./skills/escape/", "leads out of the repository root"),
        ("./agents/README.md", "is a file; a skill is a folder"),
    ],
)
def test_a_manifest_path_that_does_not_resolve_is_one_line_exit_30(cli, byok_env, ac_repo, tmp_path, entry, message):
    outside = tmp_path / "outside"
    write(outside / "SKILL.md", "secret skill\n")
    os.symlink(outside, ac_repo / "skills" / "escape")
    plugin = ac_repo / "plugins" / "devops-oncall"
    manifest(plugin / "plugin.json", {"name": "x", "extensions": {"com.github.awesome-copilot": {"skills": [entry]}}})
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, *MODEL])
    assert code == 30
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {plugin / 'plugin.json'}: extensions.\"com.github.awesome-copilot\".skills[0]:"), lines[0]
    assert message in lines[0]
    assert byok_env.requests == []


def test_bad_manifest_shapes_are_one_line(tmp_path):
    plugin = tmp_path / "p"
    manifest(plugin / "plugin.json", {"name": "p", "skills": [3]})
    with pytest.raises(InputError) as err:
        find_layout(plugin)
    assert err.value.field == "skills[0]"
    write(plugin / "plugin.json", "{not json")
    with pytest.raises(InputError) as err:
        find_layout(plugin)
    assert "invalid JSON" in err.value.message


def test_symlinked_skill_folder_leading_out_is_not_scanned(tmp_path):
    plugin = tmp_path / "repo" / "plain"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(plugin / "skills" / "ok" / "SKILL.md", "ok\n")
    write(tmp_path / "repo" / "shared" / "inside" / "SKILL.md", "inside the repository\n")
    os.symlink(tmp_path / "repo" / "shared" / "inside", plugin / "skills" / "inside")  # allowed: inside the repo
    outside = tmp_path / "elsewhere"
    write(outside / "SKILL.md", "not ours\n")
    os.symlink(outside, plugin / "skills" / "linked")
    assert names(find_layout(plugin)) == [("skill", "inside"), ("skill", "ok")]


# ------------------------------------------------------------------ end to end


def _reply_for(req: dict[str, Any]) -> str:
    """A valid eval for whichever item the generator request is about."""
    user = next(m["content"] for m in req["messages"] if m["role"] == "user")
    kind = "skill" if "- skill name: " in user else "agent"
    ref = next(line.split("`")[1] for line in user.splitlines() if line.startswith("- reference line to use:"))
    return eval_reply(ref, name="t", graders=f"- type: deterministic\n  checks: [VERIFIED-{kind}]\n", defaults=False)


def test_eval_generate_then_eval_all_on_an_awesome_copilot_plugin_finds_every_item(cli, byok_env, ac_repo, tmp_path):
    byok_env.add(
        Rule(reply=_reply_for, system_contains=GEN_MARK),
        Rule(reply="VERIFIED-skill", system_contains="# Doublecheck", judge=False),
        Rule(reply="VERIFIED-agent", system_contains="You verify claims.", judge=False),
    )
    out = tmp_path / "evals" / "doublecheck"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", ac_repo / "plugins" / "doublecheck", "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    assert "(awesome-copilot plugin)" in stdout
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "agents/doublecheck/.agentsproof-copies.json",  # where each copy came from (stale copies are caught)
        "agents/doublecheck/doublecheck.md",
        "agents/doublecheck/eval.yaml",
        "skills/doublecheck/.agentsproof-copies.json",
        "skills/doublecheck/SKILL.md",
        "skills/doublecheck/assets/report-template.md",
        "skills/doublecheck/eval.yaml",
    ]
    # the header names a path that exists: the skill lives at the repository root, not in the plugin folder
    header = (out / "skills" / "doublecheck" / "eval.yaml").read_text().splitlines()[0]
    assert header == f"# Generated by agentsproof eval-generate from {ac_repo.name}/skills/doublecheck/SKILL.md."
    assert (ac_repo.parent / ac_repo.name / "skills" / "doublecheck" / "SKILL.md").is_file()
    runs = tmp_path / "runs"
    code, _, stderr = cli(["eval-all", out, "--output", runs, *MODEL])
    assert code == 0, stderr
    report = read_json(runs / "doublecheck" / "eval-all-summary.json")
    items = {(i["kind"], i["name"]): i for i in report["items"]}
    assert set(items) == {("skill", "doublecheck"), ("agent", "doublecheck")}
    assert all(i["delta"] == 1.0 for i in items.values())
    # the agent ran with its body only; its tools are named in a warning, once
    agent_system = next(
        r["messages"][0]["content"] for r in byok_env.trial_requests() if "You verify claims." in r["messages"][0]["content"]
    )
    assert not agent_system.startswith("---") and "tools:" not in agent_system
    assert items[("agent", "doublecheck")]["warnings"] and "codebase, fetch" in items[("agent", "doublecheck")]["warnings"][0]
    assert stderr.count("warning: agents/doublecheck: this agent declares tools (codebase, fetch)") == 1
    # the skill ran with its referenced asset inlined
    skill_system = next(r["messages"][0]["content"] for r in byok_env.trial_requests() if "# Doublecheck" in r["messages"][0]["content"])
    assert "# Verification report" in skill_system


def test_eval_generate_on_a_claude_code_plugin(cli, byok_env, tmp_path):
    plugin = tmp_path / "cc"
    manifest(plugin / ".claude-plugin" / "plugin.json", {"name": "cc"})
    write(plugin / "skills" / "pdf" / "SKILL.md", "Work with PDFs.\n")
    write(plugin / "agents" / "reviewer.md", "Review code.\n")
    write(plugin / "commands" / "deploy.md", "Deploy the app.\n")
    byok_env.add(Rule(reply=_reply_for, system_contains=GEN_MARK))
    out = tmp_path / "out"
    code, stdout, stderr = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, "--no-check", *MODEL])
    assert code == 0, stderr
    assert "cc (claude-code plugin): 1 skill, 2 agents" in stdout
    assert sorted(p.parent.relative_to(out).as_posix() for p in out.rglob("eval.yaml")) == ["agents/deploy", "agents/reviewer", "skills/pdf"]


def test_eval_all_on_the_plugin_folder_finds_evals_in_its_skill_folders(cli, byok_env, ac_repo, tmp_path):
    """Evals kept beside the skills at the repository root: eval-all plugins/<name> finds them."""
    ev = 'version: "2"\nskill: {ref}\ntask:\n  name: t\n  instruction: Check it.\n  graders:\n    - type: deterministic\n      checks: [VERIFIED]\n'
    write(ac_repo / "skills" / "arize-trace" / "eval.yaml", ev.format(ref="SKILL.md"))
    write(ac_repo / "skills" / "doublecheck" / "evals" / "eval.yaml", ev.format(ref="../SKILL.md"))
    write(ac_repo / "skills" / "not-listed" / "eval.yaml", ev.format(ref="SKILL.md"))  # not in the plugin: not run
    byok_env.add(Rule(reply="VERIFIED", system_contains="# Traces", judge=False))
    runs = tmp_path / "runs"
    code, _, stderr = cli(["eval-all", ac_repo / "plugins" / "devops-oncall", "--output", runs, *MODEL])
    assert code == 0, stderr
    report = read_json(runs / "devops-oncall" / "eval-all-summary.json")
    assert [(i["id"], i["delta"]) for i in report["items"]] == [("skills/arize-trace", 1.0)]
    # the plugin's agent has no eval file: said, not skipped silently
    assert "no eval file for agents/devops-oncall: not run" in stderr and "eval-generate --plugin-dir" in stderr
    # the same-name plugin finds its skill's eval in skills/doublecheck/evals/
    code, _, stderr = cli(["eval-all", ac_repo / "plugins" / "doublecheck", "--output", runs, *MODEL])
    assert code == 0, stderr
    report = read_json(runs / "doublecheck" / "eval-all-summary.json")
    assert [i["id"] for i in report["items"]] == ["skills/doublecheck"]


def test_eval_all_on_a_plugin_without_evals_says_how_to_write_them(cli, byok_env, ac_repo):
    plugin = ac_repo / "plugins" / "devops-oncall"
    code, _, stderr = cli(["eval-all", plugin, *MODEL])
    assert code == 30
    assert stderr.strip() == (
        f"error: {plugin}: no eval files (eval.yaml, *.eval.yaml, EVAL.yaml, promptfooconfig.yaml, evals/evals.json, Harbor task.toml) found below this directory or in the folders of its 2 items; "
        f"write them with `agentsproof eval-generate --plugin-dir {plugin}`"
    )


def test_two_items_of_one_kind_with_one_name_are_refused_a_command_is_renamed(tmp_path):
    plugin = tmp_path / "cc"
    manifest(plugin / ".claude-plugin" / "plugin.json", {"name": "cc"})
    write(plugin / "agents" / "deploy.md", "Deploy agent.\n")
    write(plugin / "commands" / "deploy.md", "Deploy command.\n")
    assert names(find_layout(plugin)) == [("agent", "deploy"), ("agent", "deploy-command")]
    write(plugin / "skills" / "a" / "SKILL.md", "---\nname: same\n---\nA\n")
    write(plugin / "skills" / "b" / "SKILL.md", "---\nname: same\n---\nB\n")
    with pytest.raises(InputError) as err:
        find_layout(plugin)
    assert "two skills are named 'same'" in err.value.message and "rename one" in err.value.message
