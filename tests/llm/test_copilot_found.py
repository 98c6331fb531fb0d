"""Copilot found where ``make copilot-cli`` puts it (agentsproof's own environment), and run
on the configured provider when there is no GitHub login (agentv's multi-model-benchmark
names a `copilot` target; the corpus run has a model server, no login)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from copilot_cli import cli_cache  # noqa: F401 - a fixture the real-CLI test uses


@pytest.fixture
def no_login(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    pytest.importorskip("copilot")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    for name in ("COPILOT_CLI_PATH", "COPILOT_CLI_EXTRACT_DIR", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name in ("URL", "KEY", "TYPE"):
        monkeypatch.delenv(f"AGENTSPROOF_COPILOT_PROVIDER_{name}", raising=False)
        monkeypatch.delenv(f"AGENTSPROOF_PROVIDER_{name}", raising=False)
    return tmp_path


def test_the_cli_in_agentsproofs_environment_is_found(no_login, monkeypatch):
    from agentsproof.llm.copilot_setup import find_cli

    venv = no_login / "venv"
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert find_cli()[0] is None
    cli = venv / "copilot-cli" / "node_modules" / ".bin" / "copilot"
    cli.parent.mkdir(parents=True)
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    path, how = find_cli()
    assert path == str(cli) and "make copilot-cli" in how


def test_without_a_login_copilot_runs_on_the_configured_provider(no_login, monkeypatch, capsys):
    from agentsproof.llm.copilot import CopilotClient
    from agentsproof.llm.copilot_setup import copilot_status

    cli = no_login / "bin" / "copilot"
    cli.parent.mkdir()
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    monkeypatch.setenv("COPILOT_CLI_PATH", str(cli))
    ok, problem = copilot_status()
    assert not ok and "no GitHub login" in problem
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", "sk-test")
    assert copilot_status() == (True, "")
    client = CopilotClient.from_env()
    assert client.provider == {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-test"}
    assert "runs on the configured provider (http://127.0.0.1:9/v1)" in capsys.readouterr().err
    monkeypatch.setenv("GH_TOKEN", "ghp_not_a_real_token")  # a login wins: Copilot's own models
    assert CopilotClient.from_env().provider is None


def test_an_eval_naming_copilot_runs_on_the_configured_provider_with_the_real_cli(monkeypatch, tmp_path, cli_cache):
    from copilot_cli import copilot_byok

    from conftest import only_report, run_cli

    gen = copilot_byok(monkeypatch, tmp_path, cli_cache, "sk-configured-secret")
    srv = next(gen)
    try:
        for name in ("AGENTSPROOF_COPILOT_PROVIDER_URL", "AGENTSPROOF_COPILOT_PROVIDER_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", srv.base_url)
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", "sk-configured-secret")
        monkeypatch.setenv("AGENTSPROOF_RETRY_BASE_DELAY", "0")
        from openai_server import Rule

        srv.add(Rule(reply="Paris is the capital of France."))
        suite = tmp_path / "benchmark.eval.yaml"  # as agentv's multi-model-benchmark names its copilot target
        suite.write_text("execution: {target: copilot}\ntests:\n  - id: factual-geography\n    input: What is the capital of France?\n    assert: [{type: contains, value: Paris}]\n")
        code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
        assert code == 0 and "Traceback" not in err, err
        assert "Copilot has no GitHub login here; it runs on the configured provider" in err
        trial = only_report(tmp_path / "out")["items"][0]["with_arm"]["trials"][0]
        assert trial["passed"] and "Paris" in trial["response"]
        assert {r.get("model") for r in srv.requests} == {"m"}
        assert "sk-configured-secret" not in next((tmp_path / "out").glob("*/*-tc-eval.json")).read_text()
    finally:
        gen.close()
