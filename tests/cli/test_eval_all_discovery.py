"""``eval-all``'s discovery and folder handling, end to end on the scripted server.

It finds eval.yaml, EVAL.yaml, agentv's ``*.eval.yaml``, promptfooconfig.yaml and
skill-creator's ``evals/evals.json``; a file that does not load is listed with its one
error line (and in the report's ``settings.refused``) while the rest run; exit 30 only
when none runs, or with ``--strict`` before any trial.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

MARK = "SKILLMARK"
SKILL_TEXT = f"{MARK}: always greet with the word HELLO.\n"
MODEL = "test-model"

AGENTV = """\
name: greet
description: says hello
tests:
  - id: says-hello
    input: Say hello to the user.
    assert:
      - type: contains
        value: hello
"""

PROMPTFOO = """\
description: Greetings
prompts:
  - "Greet {{who}} with hello"
tests:
  - vars: {who: Ann}
    assert:
      - type: icontains
        value: hello
"""

SKILL_MD = "---\nname: counter\ndescription: Count things\n---\n\nCount every item; answer hello N.\n"


def _evals_json(skill: Path, skill_name: str, duplicate: bool = False) -> None:
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    case = {"id": 1, "prompt": "Count: a, b", "expectations": ["The output says hello"]}
    evals = {"skill_name": skill_name, "evals": [case, case] if duplicate else [case]}
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))


def _mixed(tmp_path: Path) -> Path:
    """A folder with a good and a bad file of each kind eval-all discovers."""
    plugin = make_plugin(
        tmp_path,
        skills={
            "good": {"prompt": SKILL_TEXT, "eval": simple_eval()},
            "zz-bad": {"prompt": SKILL_TEXT, "eval": {**simple_eval(), "defaults": {"trialz": 1}}},
        },
    )
    (plugin / "evals").mkdir()
    (plugin / "evals" / "greet.eval.yaml").write_text(AGENTV)
    (plugin / "evals" / "broken.eval.yaml").write_text(AGENTV.replace("name: greet", "name: broken\nno_such_key: 1"))
    (plugin / "suites" / "ok").mkdir(parents=True)
    (plugin / "suites" / "ok" / "EVAL.yaml").write_text(AGENTV.replace("name: greet", "name: upper"))
    (plugin / "pf" / "good").mkdir(parents=True)
    (plugin / "pf" / "good" / "promptfooconfig.yaml").write_text(PROMPTFOO)
    (plugin / "pf" / "bad").mkdir(parents=True)
    (plugin / "pf" / "bad" / "promptfooconfig.yaml").write_text(PROMPTFOO.replace("icontains", "no-such-assertion"))
    _evals_json(plugin / "more" / "counter", "counter")
    _evals_json(plugin / "more" / "miscount", "counter", duplicate=True)  # (a skill_name that differs from the SKILL.md above is a label)
    for skipped in ("runs/old", "node_modules/pkg"):  # reports and installed packages are not looked in
        (plugin / skipped).mkdir(parents=True)
        (plugin / skipped / "x.eval.yaml").write_text("not: [an eval")
    return plugin


def test_a_mixed_folder_runs_the_good_files_and_lists_the_bad_ones(byok_env, tmp_path):
    byok_env.add(Rule(reply="HELLO there", judge=False))
    plugin = _mixed(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", out, "--no-cache"])
    assert code in (0, 1), err
    assert "4 of 9 eval files refused; the others run" in err
    refused_lines = [line.strip() for line in err.splitlines() if line.strip().startswith("refused: ")]
    assert len(refused_lines) == 4, err
    joined = "\n".join(refused_lines)
    assert "zz-bad/eval.yaml: defaults.trialz" in joined
    assert "broken.eval.yaml" in joined and "no_such_key" in joined
    assert "pf/bad/promptfooconfig.yaml" in joined and "no-such-assertion" in joined
    assert "miscount/evals/evals.json" in joined and "evals[1].id" in joined
    assert "runs/old" not in err and "node_modules" not in err

    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    refused = data["settings"]["refused"]
    assert sorted(Path(r["file"]).name for r in refused) == ["broken.eval.yaml", "eval.yaml", "evals.json", "promptfooconfig.yaml"]
    assert all(r["error"] in joined for r in refused)
    names = sorted(i["name"] for i in data["items"])
    assert "good" in names and "zz-bad" not in names
    assert any(n.startswith("greet/") for n in names), names  # agentv's *.eval.yaml
    assert any(n.startswith("upper/") for n in names), names  # EVAL.yaml
    assert any(n.startswith("good/") for n in names), names  # the promptfooconfig.yaml in pf/good
    assert any(n.startswith("counter/") for n in names), names  # evals/evals.json beside its SKILL.md
    assert len(names) == 5, names
    items = {i["name"]: i for i in data["items"]}
    # no skill to compare with: the agentv, EVAL.yaml and promptfoo files run their with-arm only
    for name, item in items.items():
        single = not (name == "good" or name.startswith("counter/"))
        assert bool(item["stats"].get("single_arm")) is single, name
        assert (item["without_arm"]["trials"] == []) is single, name
    assert not any(r["model"] != MODEL for r in byok_env.trial_requests())


def test_strict_refuses_before_any_trial(byok_env, tmp_path):
    plugin = _mixed(tmp_path)
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--strict"])
    assert code == 30
    assert "4 of 9 eval files refused; the run stops (--strict)" in err
    assert len([line for line in err.splitlines() if line.strip().startswith("refused: ")]) == 4
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {plugin / 'evals' / 'broken.eval.yaml'}: ") and "no_such_key" in last
    assert last.endswith("(--strict: the run is refused; 3 more eval files refused, listed above)")
    assert not byok_env.requests
    assert not (tmp_path / "out").exists()


def test_strict_with_nothing_refused_runs(byok_env, tmp_path):
    byok_env.add(Rule(reply="HELLO", judge=False))
    plugin = make_plugin(tmp_path, skills={"good": {"prompt": SKILL_TEXT, "eval": simple_eval()}})
    (plugin / "evals").mkdir()
    (plugin / "evals" / "greet.eval.yaml").write_text(AGENTV)
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--strict"])
    assert code == 0, err
    assert "refused" not in err
    data = read_json(tmp_path / "out" / "demo-plugin" / "eval-all-summary.json")
    assert "refused" not in data["settings"]
    assert len(data["items"]) == 2


def test_none_loads_is_exit_30_with_each_file_listed(byok_env, tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "a.eval.yaml").write_text(AGENTV.replace("name: greet", "name: a\nno_such_key: 1"))
    (folder / "promptfooconfig.yaml").write_text(PROMPTFOO.replace("icontains", "no-such-assertion"))
    code, _, err = run_cli(["eval-all", folder, "--model", MODEL, "--output", tmp_path / "out"])
    assert code == 30
    assert "2 of 2 eval files refused" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and last.endswith("(1 more eval file refused, listed above)")
    assert "--strict" not in last  # nothing loads: refused without it
    assert not byok_env.requests


def test_agentv_naming_alone_is_found(byok_env, tmp_path):
    """agentv names its files <name>.eval.yaml: a folder of them is no longer "no eval files found"."""
    byok_env.add(Rule(reply="hello", judge=False))
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "one.eval.yaml").write_text(AGENTV.replace("name: greet", "name: one"))
    (folder / "two.eval.yml").write_text(AGENTV.replace("name: greet", "name: two"))
    code, _, err = run_cli(["eval-all", folder, "--model", MODEL, "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    data = read_json(tmp_path / "out" / "evals" / "eval-all-summary.json")
    assert sorted(i["name"].split("/")[0] for i in data["items"]) == ["one", "two"]
    assert all(i["passed"] for i in data["items"])


def test_an_empty_folder_names_every_kind_it_looked_for(byok_env, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.yaml").write_text(yaml.safe_dump({"a": 1}))
    code, _, err = run_cli(["eval-all", tmp_path / "empty", "--model", MODEL])
    assert code == 30
    for kind in ("eval.yaml", "*.eval.yaml", "EVAL.yaml", "promptfooconfig.yaml", "evals/evals.json"):
        assert kind in err


def test_a_single_armed_file_is_retried_single_armed(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, times=1, judge=False), Rule(reply="hello", judge=False))
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "greet.eval.yaml").write_text(AGENTV)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", folder, "--model", MODEL, "--output", out, "--no-cache"])
    assert code == 30, err  # the one trial errored
    assert len(byok_env.trial_requests()) == 1  # its with-arm only: no skill to compare with
    saved = out / "evals" / "eval-all-summary.json"
    code, _, err = run_cli(["eval-all", folder, "--model", MODEL, "--output", out, "--no-cache", "--retry-errors", saved])
    assert code == 0, err
    assert len(byok_env.trial_requests()) == 2  # the errored trial again, and no baseline arm
    item = read_json(saved)["items"][0]
    assert item["stats"].get("single_arm") and item["without_arm"]["trials"] == []
    assert item["with_arm"]["scored"] == 1 and item["passed"]


def test_a_plugins_skill_folders_are_searched_for_every_kind(byok_env, tmp_path):
    """No eval file below the plugin folder: its manifest's skill folders (at the repository
    root) are searched with the same rule, so agentv's ``evals/<name>.eval.yaml`` is found."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    skill = repo / "skills" / "greeter"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: greeter\n---\n{SKILL_TEXT}")
    (skill / "evals" / "greet.eval.yaml").write_text(AGENTV)
    (repo / "skills" / "other" / "evals").mkdir(parents=True)
    (repo / "skills" / "other" / "SKILL.md").write_text("---\nname: other\n---\nNot in the plugin.\n")
    (repo / "skills" / "other" / "evals" / "x.eval.yaml").write_text(AGENTV.replace("name: greet", "name: other"))
    plugin = repo / "plugins" / "greetings"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "greetings", "skills": ["./skills/greeter/"]}))
    byok_env.add(Rule(reply="hello", system_contains=MARK, judge=False), Rule(reply="no", judge=False))
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    data = read_json(tmp_path / "out" / "greetings" / "eval-all-summary.json")
    assert [i["name"].split("/")[0] for i in data["items"]] == ["greet"]
    item = data["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0  # two arms: its SKILL.md is above evals/
