"""Hostile and malformed inputs, each class from the adversarial pass: exit 30, one line
naming the file (and the field), no traceback, no hang, no call to the provider, and
nothing read from or written outside the eval's folder.

Cases that could hang (FIFOs, devices) run the real CLI in a subprocess with a timeout, so
a regression fails instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
import yaml

from conftest import SECRET_KEY, assert_refused, make_plugin, run_cli, simple_eval, write_tc_eval

SECRET_TEXT = "TOP-SECRET-OUTSIDE-THE-EVAL"


def _skill_dir(tmp: Path) -> Path:
    d = tmp / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("You help.\n")
    (tmp / "outside.md").write_text(SECRET_TEXT + "\n")
    return d


def _yaml_text(text: str) -> Callable[[Path], tuple[Path, list[str]]]:
    def make(tmp: Path) -> tuple[Path, list[str]]:
        d = _skill_dir(tmp)
        (d / "eval.yaml").write_text(text)
        return d / "eval.yaml", []

    return make


def _ev(**top) -> str:
    ev = simple_eval()
    ev["skill"] = "SKILL.md"
    ev.update(top)
    return yaml.safe_dump(ev, sort_keys=False)


def _defaults(**d) -> str:
    ev = simple_eval()
    ev["skill"] = "SKILL.md"
    ev["defaults"].update(d)
    return yaml.safe_dump(ev, sort_keys=False)


def _grader_text(extra: str) -> str:
    return (
        "version: '2'\nskill: SKILL.md\ntask:\n  name: t\n  instruction: say hi\n  graders:\n"
        "    - type: deterministic\n      checks: [hi]\n" + extra
    )


def _deep_yaml(depth: int) -> str:
    return _ev() + "description: " + "[" * depth + "]" * depth + "\n"


def _skill_ref(ref: str) -> Callable[[Path], tuple[Path, list[str]]]:
    def make(tmp: Path) -> tuple[Path, list[str]]:
        d = _skill_dir(tmp)
        (d / "eval.yaml").write_text(_ev(skill=ref))
        return d / "eval.yaml", ["skill"]

    return make


def _symlinked_skill(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    (d / "SKILL.md").unlink()
    (d / "SKILL.md").symlink_to(tmp / "outside.md")
    (d / "eval.yaml").write_text(_ev())
    return d / "eval.yaml", ["skill", "symlink"]


def _symlinked_dir_skill(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    (d / "shared").symlink_to(tmp)
    (d / "eval.yaml").write_text(_ev(skill="shared/outside.md"))
    return d / "eval.yaml", ["skill"]


def _agent_absolute(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    ev = simple_eval()
    ev["agent"] = str(tmp / "outside.md")
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    return d / "eval.yaml", ["agent", "absolute"]


def _huge_skill(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    (d / "SKILL.md").write_text("x" * 1_000_001)
    (d / "eval.yaml").write_text(_ev())
    return d / "eval.yaml", ["skill", "1,000,000"]


def _huge_eval(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    (d / "eval.yaml").write_text(_ev() + "description: '" + "y" * 1_000_001 + "'\n")
    return d / "eval.yaml", ["1,000,000"]


def _billion_laughs(tmp: Path) -> tuple[Path, list[str]]:
    d = _skill_dir(tmp)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    (d / "eval.yaml").write_text("\n".join(lines) + "\n" + _ev())
    return d / "eval.yaml", ["expands"]


YAML_CASES: dict[str, tuple[Callable[[Path], tuple[Path, list[str]]], list[str]]] = {
    "weight .inf": (_yaml_text(_grader_text("      weight: .inf\n")), ["task.graders[0].weight"]),
    "weight .nan": (_yaml_text(_grader_text("      weight: .nan\n")), ["weight"]),
    "weight 1e308 (above the cap)": (_yaml_text(_grader_text("      weight: 1.0e+308\n")), ["task.graders[0].weight"]),
    "weight true": (_yaml_text(_grader_text("      weight: true\n")), ["task.graders[0].weight"]),
    "timeout .inf": (_yaml_text(_defaults(timeout=float("inf"))), ["defaults.timeout"]),
    "timeout a year": (_yaml_text(_defaults(timeout=31_536_000)), ["defaults.timeout"]),
    "trials true": (_yaml_text(_defaults(trials=True)), ["defaults.trials"]),
    "trials 2.0": (_yaml_text(_defaults(trials=2.0)), ["defaults.trials"]),
    "threshold true": (_yaml_text(_defaults(threshold=True)), ["defaults.threshold"]),
    "threshold .nan": (_yaml_text(_defaults(threshold=float("nan"))), ["threshold"]),
    "caseSensitive 1": (_yaml_text(_grader_text("").replace("checks: [hi]", "checks: {mustContain: [hi], caseSensitive: 1}")), ["caseSensitive"]),
    "duplicate top-level key": (_yaml_text(_ev() + "skill: SKILL.md\n"), ["duplicate key 'skill'"]),
    "duplicate nested key": (_yaml_text(_defaults().replace("  trials: 1\n", "  trials: 1\n  trials: 2\n")), ["duplicate key 'trials'"]),
    "100k-deep nesting": (_yaml_text(_deep_yaml(100_000)), ["nested deeper"]),
    "70-deep nesting": (_yaml_text(_deep_yaml(70)), ["nested deeper than 64"]),
    "5,000-digit number": (_yaml_text(_ev() + "description: x\nextra: " + "9" * 5000 + "\n"), ["digits"]),
    "400-digit weight": (_yaml_text(_grader_text("      weight: " + "1" * 400 + "\n")), ["digits"]),
    "billion laughs": (_billion_laughs, []),
    "skill absolute": (_skill_ref("/etc/passwd"), ["'/etc/passwd'", "absolute"]),
    "skill home": (_skill_ref("~/.bashrc"), ["absolute"]),
    "skill dot-dot": (_skill_ref("../../../outside.md"), ["outside the eval's folder"]),
    "skill symlink out": (_symlinked_skill, []),
    "skill through a symlinked folder": (_symlinked_dir_skill, ["outside the eval's folder"]),
    "agent absolute": (_agent_absolute, []),
    "skill over the size cap": (_huge_skill, []),
    "eval.yaml over the size cap": (_huge_eval, []),
}


@pytest.mark.parametrize("name", list(YAML_CASES))
def test_hostile_eval_yaml(name, byok_env, tmp_path):
    make, expected = YAML_CASES[name]
    path, more = make(tmp_path)
    _assert_refused(["eval", path, "--model", "m", "--output", tmp_path / "runs"], [str(path), *more, *expected], byok_env, tmp_path)


# ---------------------------------------------------------------- evals.json


def _tc_raw(text: str, skill: str = "SKILL.md") -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        d = tmp / "tc"
        d.mkdir()
        (d / "SKILL.md").write_text("skill\n")
        (tmp / "outside.md").write_text(SECRET_TEXT)
        p = d / "evals.json"
        p.write_text(text)
        return p

    return make


def _tc_skill(ref: str) -> Callable[[Path], Path]:
    return _tc_raw(json.dumps({"skill_name": ref, "evals": [{"id": 1, "prompt": "p"}]}))


def _tc_in_skill_evals_folder_escaping(tmp: Path) -> Path:
    skill = tmp / "skills" / "s"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("skill\n")
    (tmp / "outside.md").write_text(SECRET_TEXT)
    p = skill / "evals" / "evals.json"
    p.write_text(json.dumps({"skill_name": "../../../outside.md", "evals": [{"id": 1, "prompt": "p"}]}))
    return p


TC_CASES: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "skill_name absolute": (_tc_skill("/etc/passwd"), ["skill_name", "absolute"]),
    "skill_name dot-dot": (_tc_skill("../outside.md"), ["skill_name", "outside"]),
    "skill_name past the skill folder": (_tc_in_skill_evals_folder_escaping, ["skill_name", "outside"]),
    "duplicate keys": (_tc_raw('{"skill_name": "SKILL.md", "skill_name": "x.md", "evals": [{"id": 1, "prompt": "p"}]}'), ["duplicate key 'skill_name'"]),
    "NaN": (_tc_raw('{"skill_name": "SKILL.md", "evals": [{"id": NaN, "prompt": "p"}]}'), ["NaN"]),
    "Infinity": (_tc_raw('{"skill_name": "SKILL.md", "evals": [{"id": Infinity, "prompt": "p"}]}'), ["Infinity"]),
    "5,000-digit id": (_tc_raw('{"skill_name": "SKILL.md", "evals": [{"id": ' + "7" * 5000 + ', "prompt": "p"}]}'), ["digits"]),
    "1e400": (_tc_raw('{"skill_name": "SKILL.md", "evals": [{"id": 1, "prompt": "p", "x": 1e400}]}'), []),
    "100k-deep nesting": (_tc_raw('{"skill_name": "SKILL.md", "evals": ' + "[" * 100_000 + "]" * 100_000 + "}"), ["nested deeper"]),
    "over the size cap": (_tc_raw('{"skill_name": "SKILL.md", "pad": "' + "z" * 1_000_001 + '"}'), ["1,000,000"]),
}


@pytest.mark.parametrize("name", list(TC_CASES))
def test_hostile_evals_json(name, byok_env, tmp_path):
    make, expected = TC_CASES[name]
    path = make(tmp_path)
    _assert_refused(["tc-eval", path, "--model", "m", "--output", tmp_path / "runs"], [str(path), *expected], byok_env, tmp_path)


def test_evals_json_in_a_skills_evals_folder_names_the_skill_above(byok_env, tmp_path):
    skill = tmp_path / "skills" / "s"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("Always answer in UPPERCASE.\n")
    p = skill / "evals" / "evals.json"
    p.write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}]}))
    code, out, err = run_cli(["tc-eval", p, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    assert any("UPPERCASE" in m.get("content", "") for r in byok_env.requests for m in r["messages"])


# ---------------------------------------------------------------- files that are not files


def _cli_subprocess(args: list, env_extra: dict[str, str], timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "agentsproof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _fifo_eval(tmp: Path) -> tuple[list, list[str]]:
    p = tmp / "eval.yaml"
    os.mkfifo(p)
    return ["eval", p], [str(p), "not a regular file"]


def _fifo_skill(tmp: Path) -> tuple[list, list[str]]:
    d = _skill_dir(tmp)
    (d / "SKILL.md").unlink()
    os.mkfifo(d / "SKILL.md")
    (d / "eval.yaml").write_text(_ev())
    return ["eval", d / "eval.yaml"], [str(d / "eval.yaml"), "skill", "not a regular file"]


def _fifo_tc(tmp: Path) -> tuple[list, list[str]]:
    p = tmp / "evals.json"
    os.mkfifo(p)
    return ["tc-eval", p], [str(p), "not a regular file"]


def _fifo_attached(tmp: Path) -> tuple[list, list[str]]:
    p = write_tc_eval(tmp / "tc", [{"id": 1, "prompt": "p", "files": ["pipe.csv"]}])
    os.mkfifo(tmp / "tc" / "pipe.csv")
    return ["tc-eval", p], [str(p), "evals[0].files[0]", "not a regular file"]


def _dev_zero(tmp: Path) -> tuple[list, list[str]]:
    return ["eval", "/dev/zero"], ["/dev/zero", "not a regular file"]


def _dev_zero_tc(tmp: Path) -> tuple[list, list[str]]:
    return ["tc-eval", "/dev/zero"], ["/dev/zero", "not a regular file"]


SPECIAL_CASES = {
    "eval.yaml is a FIFO": _fifo_eval,
    "SKILL.md is a FIFO": _fifo_skill,
    "evals.json is a FIFO": _fifo_tc,
    "attached file is a FIFO": _fifo_attached,
    "eval /dev/zero": _dev_zero,
    "tc-eval /dev/zero": _dev_zero_tc,
}


@pytest.mark.parametrize("name", list(SPECIAL_CASES))
def test_special_files_are_refused_without_hanging(name, byok_env, tmp_path):
    args, expected = SPECIAL_CASES[name](tmp_path)
    env = {
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": byok_env.base_url,
        "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
    }
    proc = _cli_subprocess([*args, "--model", "m", "--output", tmp_path / "runs"], env)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 30, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    for needle in expected:
        assert needle in lines[0], (needle, lines[0])
    assert not byok_env.requests


# ---------------------------------------------------------------- the assertion


def _assert_refused(args: list, must_contain: list[str], srv, tmp_path: Path) -> None:
    line = assert_refused(args, must_contain, srv, secrets=(SECRET_TEXT,))
    assert len(line) < 600, "the error line must stay one readable line"
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").rglob("*.*")), "no report for bad input"
