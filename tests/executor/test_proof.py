"""The manifest's parts that no scripted run shows: an agent CLI's reported version, and
the masking of a command line's secrets (agentsproof.executor.proof)."""

from __future__ import annotations

import re

import pytest
from agent_clis import require

from agentsproof.executor.proof import agent_programs, canonical, masked_argv, trials_digest


def test_an_agent_clis_version_is_what_it_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    path = require("codex", monkeypatch)
    from agentsproof.targets.config import find_target

    rows = agent_programs({"codex": find_target("codex", None, None)})
    assert rows["codex"]["kind"] == "codex" and rows["codex"]["program"] == "codex"
    import subprocess

    said = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
    assert rows["codex"]["version"] == said and re.search(r"\d+\.\d+", said)


def test_secrets_on_the_command_line_are_masked() -> None:
    line = masked_argv(["eval", "x.yaml", "--api-key", "sk-abcdef123456", "--token=tok-987654321", "--config", "db_password=hunter2hunter2", "--model", "m"])
    assert line == ["eval", "x.yaml", "--api-key", "***", "--token=***", "--config", "db_password=***", "--model", "m"]
    from agentsproof.core.scrub import scrub

    assert scrub("echo sk-abcdef123456") == "echo ***"  # registered: masked everywhere from now on


def test_the_trials_digest_depends_on_every_trial_and_its_order() -> None:
    a, b = {"index": 0, "score": 1.0}, {"index": 1, "score": 0.0}
    n, d1 = trials_digest([("i", "with", a), ("i", "with", b)])
    assert n == 2
    assert d1 != trials_digest([("i", "with", b), ("i", "with", a)])[1]
    assert d1 != trials_digest([("i", "with", a)])[1]
    assert d1 != trials_digest([("i", "with", a), ("i", "with", {**b, "score": 0.5})])[1]
    assert canonical({"b": 1, "a": "é"}) == b'{"a":"\\u00e9","b":1}'
