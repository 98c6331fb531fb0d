"""The README's statements a command can check, checked against the commands (timings are
not: they live in bench/). Commands and flags it names exist; install lines work from a
checkout (the PyPI name is someone else's SDK) and name real extras; the sample output
has the shape `eval` prints; the output paths it names are where a run writes."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> set[str]:
    from agentsproof.cli import main

    return set(main.commands)


def _invocations() -> list[list[str]]:
    """Every `agentsproof …` the README shows, in code blocks or backticks, as words."""
    found = re.findall(r"`(agentsproof [^`]+)`", README)
    found += [line.split("#", 1)[0] for line in re.findall(r"^(agentsproof [a-z-]+ [^\n]*)$", README, re.M)]
    out = []
    for text in found:
        words = shlex.split(text.replace("\\|", "|"))
        if len(words) > 1:
            out.append(words)
    return out


def test_readme_is_short():
    assert len(README.splitlines()) <= 200


def test_every_command_the_readme_names_exists():
    names = _commands()
    for words in _invocations():
        if words[1].startswith("·"):
            continue  # sample output, checked below
        assert words[1] in names, f"README names `agentsproof {words[1]}`, which is not a command"
        for sub in words[2].split("|") if len(words) > 2 and "|" in words[2] else []:
            code, _, err = run_cli([words[1], sub, "--help"])
            assert code == 0, f"`agentsproof {words[1]} {sub}`: {err}"


@pytest.mark.parametrize("words", [w for w in _invocations() if not w[1].startswith("·")], ids=lambda w: " ".join(w[:3]))
def test_every_flag_the_readme_uses_is_in_that_commands_help(words):
    flags = [w.split("=", 1)[0] for w in words[2:] if w.startswith("--")]
    if not flags:
        return
    cmd = [words[1]]
    if words[1] in ("cache", "keys", "golden", "suite") and len(words) > 2 and not words[2].startswith("-"):
        cmd.append(words[2].split("|")[0])
    code, out, err = run_cli([*cmd, "--help"])
    assert code == 0, err
    for flag in flags:
        assert flag in out, f"README: `agentsproof {' '.join(cmd)} {flag}`, but --help has no {flag}"


def test_install_lines_work_from_a_checkout_and_name_real_extras():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    pages = [README] + [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    for text in pages:
        assert not re.search(r"pip install ['\"]?agentsproof(\[|['\"]?\s|['\"]?$)", text, re.M), \
            "an install line names the PyPI package 'agentsproof', which is the hosted service's SDK"
        for group in re.findall(r"pip install -e '\.\[([a-z,]+)\]'", text):
            assert set(group.split(",")) <= extras, f"unknown extra in pip install -e '.[{group}]'"
    for extra in re.findall(r"the `([a-z]+)` extra", README):
        assert extra in extras, f"README names the `{extra}` extra, which pyproject.toml does not define"


def test_the_sample_output_has_the_shape_eval_prints(byok_env, tmp_path):
    from conftest import Rule, make_plugin

    sample = re.search(r"```\n(agentsproof eval · [^\n]+)\n(.*?)```", README, re.S)
    assert sample, "README has no sample `eval` output"
    byok_env.add(Rule(reply="hello", judge=False))
    ev = {"version": "2", "defaults": {"trials": 1, "timeout": 30, "threshold": 0.6},
          "task": {"name": "t", "instruction": "greet", "graders": [{"type": "deterministic", "checks": {"mustContain": ["hello"]}}]}}
    plugin = make_plugin(tmp_path / "p", plugin="my-plugin", skills={"incident-summary": {"prompt": "Say hello.", "eval": ev}})
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", plugin / "skills" / "incident-summary", "--model", "gpt-4o", "--output", out])
    assert code == 0, err
    got, want = stdout.splitlines(), [sample.group(1)] + sample.group(2).strip("\n").splitlines()
    shape = lambda line: re.sub(r"[\d.+\-%]+", "N", line.split(":")[0]).split()[:4]  # noqa: E731
    assert got[0].replace(str(out), "runs") == want[0], "the header line differs from the README's"
    assert shape(got[1]) == shape(want[1])  # the table header
    for line in want:
        if line.endswith((".html", ".md", ".json")):  # the report paths it names are the ones written
            kind, path = line.split(": ", 1)
            assert f"{kind}: {out / Path(path).relative_to('runs')}" in stdout


def test_exit_codes_the_readme_states():
    from agentsproof.core.errors import EXIT_ERROR, EXIT_OK

    assert "**0** all passed" in README and "**30** an error" in README and "**1** with `--ci`" in README
    assert (EXIT_OK, EXIT_ERROR) == (0, 30)


def _section(title: str) -> str:
    part = README.split(f"\n## {title}\n", 1)
    assert len(part) == 2, f"README has no '## {title}' section"
    return part[1].split("\n## ", 1)[0]


def test_the_across_agents_command_runs_from_a_checkout(byok_env, monkeypatch):
    """The "Across agents" path exists, its install line names the extra its `copilot` target
    needs, and its command loads the file on every target it names (--plan: nothing runs)."""
    section = _section("Across agents")
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the 'Across agents' section has no command"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    installs = [line for line in lines if line.startswith("pip install")]
    assert installs and any("copilot" in re.findall(r"\[([a-z,]+)\]", line)[0].split(",") for line in installs), \
        "the copilot target needs the `copilot` extra; the section's install line must name it"
    command = next(shlex.split(line) for line in lines if line.startswith("agentsproof "))
    files = [w for w in command[2:] if not w.startswith("-") and w.endswith((".yaml", ".yml", ".json"))]
    assert files, command
    for name in files:
        assert (ROOT / name).is_file(), f"README 'Across agents': {name} does not exist in the checkout"
    targets = command[command.index("--target") + 1].split(",")
    assert set(targets) == {"copilot", "claude-code", "codex"}
    monkeypatch.chdir(ROOT)  # the README's paths are from the checkout's root
    code, out, err = run_cli([*command[1:], "--plan", "--model", "m"])
    assert code == 0, err
    assert f"{len(targets)} items" in out and "agent trials" in out


def _stamped_venv(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A .venv whose every make stamp is newer than pyproject.toml (python itself a stub)."""
    import os
    import subprocess

    venv, wheels = tmp_path / "venv", tmp_path / "wheels"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 0\n")
    env = {**os.environ, "AGENTSPROOF_WHEELHOUSE": str(wheels)}
    plan = subprocess.run(["make", "-n", "-C", str(ROOT), "install", f"VENV={venv}"], capture_output=True, text=True, env=env, check=True).stdout
    for line in plan.splitlines():  # create every stamp the install would touch, in order
        if line.startswith("touch "):
            stamp = Path(line.split(" ", 1)[1])
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
    return venv, env


def test_make_demo_skips_pip_when_nothing_changed(tmp_path):
    """README: after the first install, pip runs again only when pyproject.toml changed."""
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make")
    assert "pip runs again only when `pyproject.toml` changed" in README
    venv, env = _stamped_venv(tmp_path)
    dry = lambda: subprocess.run(["make", "-n", "-C", str(ROOT), "install", f"VENV={venv}"], capture_output=True, text=True, env=env, check=True).stdout  # noqa: E731
    assert "pip install" not in dry()
    stamp = venv / ".installed-local"
    assert stamp.is_file()
    old = (ROOT / "pyproject.toml").stat().st_mtime - 10
    os.utime(stamp, (old, old))  # pyproject.toml is newer than the install: pip runs again
    assert "pip install --quiet -e '.[local]'" in dry()
