"""promptfoo's own examples as they are (tests/data/promptfoo-real, MIT, see the LICENSE
there), run on the scripted server end to end: python-assert's inline and external
assertions (``context.vars``, ``context.config``), files named as promptfoo's examples name
them (``promptfooconfig-inline.yaml``, run with ``-c`` there) found as promptfoo configs."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Rule, read_json, run_cli

from agentsproof.formats import registry
from agentsproof.formats.promptfoo import is_config_name

REAL = Path(__file__).resolve().parents[1] / "data" / "promptfoo-real" / "examples"


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(REAL / name, root)
    return root


def test_config_variants_are_promptfoo_configs(tmp_path):
    for name in ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig-inline.yaml", "promptfooconfig.claude.yaml"):
        assert is_config_name(name), name
        assert registry.detect(tmp_path / name, "eval").name == "promptfoo"
    for name in ("promptfoo.yaml", "mypromptfooconfig.yaml", "promptfooconfig.json", "promptfooconfig-.yaml"):
        assert not is_config_name(name), name


def test_python_assert_inline_runs_as_promptfoo_runs_it(byok_env, tmp_path):
    root = _copy(tmp_path, "python-assert")
    byok_env.add(Rule(reply="Go bananas for bananas! #fruit", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "promptfooconfig-inline.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert "Traceback" not in err and code in (0, 1), err
    data = read_json(out / "python-assert" / "python-assert-tc-eval.json")
    got = {i["name"]: i["with_arm"]["trials"][0] for i in data["items"]}
    assert got["test-1"]["passed"] is True  # 'bananas' in output
    assert got["test-2"]["passed"] is False and "Did not contain expected output" in str(got["test-2"]["graders"])
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}  # one provider stands for the configured model


def test_python_assert_external_gets_its_config(byok_env, tmp_path):
    root = _copy(tmp_path, "python-assert")
    byok_env.add(Rule(reply="Passion fruit, pineapple, guava.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "promptfooconfig-external.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert "Traceback" not in err and code in (0, 1), err
    trial = read_json(out / "python-assert" / "python-assert-tc-eval.json")["items"][0]["with_arm"]["trials"][0]
    assert [g["score"] for g in trial["graders"]] == [1.0, 0.0]  # its fruitList found; 'banana' not in the answer
    code, _, err = run_cli(["lint", "--errors-only", root / "promptfooconfig-external.yaml"])
    assert code == 0, err  # what runs lints clean
