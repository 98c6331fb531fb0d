"""Stale copies caught (issue 46): a generated eval tests a copy of the skill, so eval-generate
records each copy's source and hash; eval and eval-all warn when the source changed, --ci
fails on it, --refresh updates the copies and --live-source runs the source itself."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule
from generated_evals import eval_reply

from agentsproof.formats.copies import SIDECAR

MODEL = ["--model", "gen-model"]
GENERATOR = "You design evaluations for agentsproof"


def _plugin(tmp_path: Path) -> Path:
    root = tmp_path / "acme-plugin"
    (root / "skills" / "incident-triage").mkdir(parents=True)
    (root / "skills" / "incident-triage" / "SKILL.md").write_text("# Incident triage\nStart with 'Root cause:'.\n")
    return root


def _generate(cli, byok_env, plugin: Path, out: Path) -> str:
    byok_env.add(
        Rule(reply=eval_reply("skill: SKILL.md", name="triage"), system_contains=GENERATOR),
        Rule(reply="Root cause: disk full\nFix: rotate logs", system_contains="Incident triage", judge=False),
        Rule(reply="It is probably the disk.", judge=False),
    )
    code, stdout, err = cli(["eval-generate", "--no-activation", "--plugin-dir", plugin, "--out", out, *MODEL, "--no-check"])
    assert code == 0, err
    return stdout


def test_the_copy_records_its_source_and_hash(cli, byok_env, tmp_path):
    plugin, out = _plugin(tmp_path), tmp_path / "evals"
    stdout = _generate(cli, byok_env, plugin, out)
    # five cases settle a clear-cut skill on these cases; eval-generate says what tasks like these take
    from agentsproof.stats.tasks import clear_cut_cases

    need = clear_cut_cases(3)
    assert need == 12
    assert f"note: 1 of these evals has fewer than {need} cases" in stdout and f"about {need} cases at 3 trials each" in stdout
    folder = out / "skills" / "incident-triage"
    record = json.loads((folder / SIDECAR).read_text(encoding="utf-8"))
    (entry,) = record["files"]
    assert entry["file"] == "SKILL.md" and entry["source"] == "../../../acme-plugin/skills/incident-triage/SKILL.md"
    import hashlib

    assert entry["sha256"] == hashlib.sha256((plugin / "skills" / "incident-triage" / "SKILL.md").read_bytes()).hexdigest()


def test_a_changed_source_warns_fails_ci_and_refresh_or_live_source_fix_it(cli, byok_env, tmp_path):
    plugin, out = _plugin(tmp_path), tmp_path / "evals"
    _generate(cli, byok_env, plugin, out)
    ev = out / "skills" / "incident-triage" / "eval.yaml"
    code, _, err = cli(["eval", ev, "--output", tmp_path / "r0", *MODEL])
    assert code == 0, err
    assert "stale copy" not in err  # fresh copies: nothing to say

    source = plugin / "skills" / "incident-triage" / "SKILL.md"
    source.write_text("# Incident triage\nStart with 'Root cause:' and then LIVEMARK.\n")
    code, _, err = cli(["eval", ev, "--output", tmp_path / "r1", *MODEL])
    assert code == 0, err
    assert "stale copy: SKILL.md differs from its source ../../../acme-plugin/skills/incident-triage/SKILL.md (the source changed since it was copied)" in err
    assert "eval-generate --refresh" in err

    calls = len(byok_env.requests)
    for command, target in (("eval", ev), ("eval-all", out)):
        code, _, err = cli([command, target, "--output", tmp_path / f"ci-{command}", "--ci", *MODEL])
        assert code == 30, err
        assert len(err.strip().splitlines()) == 1, err
        assert "SKILL.md" in err and "stale copy" in err and "--ci fails on it" in err
    assert len(byok_env.requests) == calls  # refused before any trial

    # --live-source: the source runs, not the copy
    code, _, err = cli(["eval", ev, "--output", tmp_path / "live", "--live-source", *MODEL])
    assert code == 0, err and "stale copy" not in err
    systems = [r["messages"][0]["content"] for r in byok_env.requests[calls:] if r["messages"][0]["role"] == "system"]
    assert any("LIVEMARK" in s for s in systems)
    assert "LIVEMARK" not in (ev.parent / "SKILL.md").read_text()  # the copy is left as it was

    # --refresh: the copies again, no model call, the eval kept
    calls, before = len(byok_env.requests), ev.read_bytes()
    code, stdout, err = cli(["eval-generate", "--plugin-dir", plugin, "--out", out, "--refresh"])
    assert code == 0, err
    assert "refreshed" in stdout and "1 stale copy updated" in stdout
    assert len(byok_env.requests) == calls and ev.read_bytes() == before
    assert "LIVEMARK" in (ev.parent / "SKILL.md").read_text()
    code, _, err = cli(["eval-all", out, "--output", tmp_path / "after", "--ci", *MODEL])
    assert "stale copy" not in err and code != 30, err


def test_an_edited_copy_is_stale_too(cli, byok_env, tmp_path):
    plugin, out = _plugin(tmp_path), tmp_path / "evals"
    _generate(cli, byok_env, plugin, out)
    copy = out / "skills" / "incident-triage" / "SKILL.md"
    copy.write_text(copy.read_text() + "Edited by hand.\n")
    code, _, err = cli(["eval", copy.parent, "--output", tmp_path / "r", *MODEL])
    assert code == 0, err
    assert "SKILL.md differs from its source" in err and "(the copy was edited)" in err


def test_live_source_without_a_record_is_refused(cli, byok_env, tmp_path):
    from conftest import make_plugin, simple_eval

    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "Greet.\n", "eval": simple_eval()}})
    code, _, err = cli(["eval", plugin / "skills" / "greeter", "--output", tmp_path / "r", "--live-source", *MODEL])
    assert code == 30
    assert err.strip().splitlines()[-1].startswith("error: ") and "--live-source: no recorded source for 'SKILL.md'" in err


def test_refresh_with_no_evals_exits_30(cli, byok_env, tmp_path):
    code, stdout, err = cli(["eval-generate", "--plugin-dir", _plugin(tmp_path), "--out", tmp_path / "none", "--refresh"])
    assert code == 30 and "no eval of acme-plugin to refresh" in err
    assert not byok_env.requests
