"""No secret in any output: real command and http agents that echo their secrets (in the
answer, stderr, trace arguments, files they write, error replies), run through the CLI
with every report format; no form of the secret (raw, repr-, JSON-, URL-, HTML-escaped)
may be found in any file under the output folder or on the console. And ``${VAR}``
expansion errors as one line that never shows the value."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml

from conftest import assert_refused, make_plugin, run_cli, simple_eval

SECRET = "s3cr3t-TOKEN-0123456789abcdef"
"""The secret every agent here echoes; with a CR at its end where the env var holds one."""


def forms(secret: str) -> list[str]:
    """The ways a secret can be shown: raw, repr, JSON, URL-encoded, HTML (long enough to be
    unambiguous: a 12-character piece of the secret is already a leak)."""
    out = {secret, secret.strip(), repr(secret)[1:-1], json.dumps(secret)[1:-1], quote(secret, safe=""), quote_plus(secret)}
    core = secret.strip()
    out |= {core[i:i + 12] for i in range(0, len(core) - 11, 4)}  # fragments a cut could leave
    return sorted(out)


def leaks(out_dir: Path, *streams: str, secret: str = SECRET) -> list[str]:
    """Every (file, form) of the secret found below ``out_dir`` or in the streams."""
    found = []
    texts = {f"<stream {i}>": s for i, s in enumerate(streams)}
    for p in sorted(out_dir.rglob("*")):
        if p.is_file():
            texts[str(p)] = p.read_text(encoding="utf-8", errors="replace")
    for where, text in texts.items():
        found += [f"{where}: {f!r}" for f in forms(secret) if f in text]
    return found


AGENT = r'''
import json, os, sys, urllib.parse
secret = os.environ["AGENT_TOKEN"]
ws = os.environ["AGENTSPROOF_WORKSPACE"]
with open(os.path.join(ws, "notes.txt"), "w") as fh:
    fh.write("my token is " + secret + "\n")
with open(os.environ["AGENTSPROOF_TRACE_FILE"], "w") as fh:
    fh.write(json.dumps({"tool": "http_get", "arguments": {"url": "https://api.example/x?key=" + urllib.parse.quote(secret), "auth": secret},
                         "result": "x" * 290 + secret}) + "\n")
    fh.write(json.dumps({"tool": "echo", "arguments": "y" * 1990 + secret, "result": repr(secret)}) + "\n")
print("stderr has " + secret + " and " + repr(secret), file=sys.stderr)
if os.environ["AGENTSPROOF_ARM"] == "without":
    # an errored trial: the reason carries the end of stderr, cut to 300 characters
    print("z" * 280 + " " + secret + " " + "w" * 10, file=sys.stderr)
    sys.exit(3)
print("hello, here is the secret " + secret + " and its repr " + repr(secret) + " and json " + json.dumps(secret))
'''


@pytest.fixture
def command_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MY_TOKEN", SECRET + "\r")
    (tmp_path / "agent.py").write_text(AGENT)
    root = make_plugin(tmp_path, skills={"greeter": {
        "eval": simple_eval([{"type": "deterministic", "checks": ["hello"]}], execution={"mode": "agent", "target": "echoer"}),
    }})
    folder = root / "skills" / "greeter"
    (folder / "targets.yaml").write_text(yaml.safe_dump({"echoer": {
        "type": "command", "command": [sys.executable, str(tmp_path / "agent.py"), "{prompt}"],
        "env": {"AGENT_TOKEN": "${MY_TOKEN}"}, "sandbox": False,
    }}))
    return folder


def test_a_command_agent_echoing_its_secret_leaves_it_in_no_output(tmp_path: Path, command_eval: Path) -> None:
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli([
        "eval", command_eval, "--output", out, "--trials", "2",
        "--junit", out / "junit.xml", "--jsonl", out / "trials.jsonl",
    ])
    assert "Traceback" not in stderr, stderr
    report = json.loads(next(p for p in out.rglob("*-eval.json")).read_text())
    item = report["items"][0]
    w, wo = item["with_arm"]["trials"], item["without_arm"]["trials"]
    assert all(t["status"] == "scored" and t["score"] == 1.0 for t in w), w
    assert all(t["status"] == "errored" for t in wo), wo
    # the outputs still say what happened, with the secret masked
    assert "***" in w[0]["response"] and "hello, here is the secret" in w[0]["response"]
    assert [f["path"] for f in w[0]["files"]] == ["notes.txt"] and "***" in w[0]["files"][0]["preview"]
    assert w[0]["trajectory"][0]["name"] == "http_get" and "***" in w[0]["trajectory"][0]["arguments"]
    assert "exited with code 3" in wo[0]["error"] and "***" in wo[0]["error"]
    assert (out / "junit.xml").is_file() and (out / "trials.jsonl").is_file()
    assert list(out.rglob("*.journal.jsonl")) and list(out.rglob("*.html")) and list(out.rglob("*.md"))
    assert leaks(out, stdout, stderr) == []


def test_resume_with_a_changed_var_value_is_refused_naming_the_variable(tmp_path: Path, command_eval: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "runs"
    code, _, stderr = run_cli(["eval", command_eval, "--output", out, "--trials", "1"])
    assert "Traceback" not in stderr
    journal = next(out.rglob("*.journal.jsonl"))
    header = json.loads(journal.read_text().splitlines()[0])
    assert SECRET not in json.dumps(header) and "MY_TOKEN" in json.dumps(header)
    # the same value: resumable
    code, _, stderr = run_cli(["eval", command_eval, "--output", out, "--trials", "1", "--resume"])
    assert "Traceback" not in stderr and "another configuration" not in stderr, stderr
    monkeypatch.setenv("MY_TOKEN", "another-value-for-model-B")
    line = assert_refused(["eval", command_eval, "--output", out, "--trials", "1", "--resume"], ["${MY_TOKEN}", "--resume"],
                          secrets=(SECRET, "another-value-for-model-B"))
    assert "journal" in line


class _Echo(BaseHTTPRequestHandler):
    """An http agent that echoes its bearer token: in the answer (200) or in an error (500)."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        token = self.headers.get("Authorization", "")
        if "fail" in body.get("prompt", ""):
            reply, status = {"error": {"message": "q" * 180 + " bad token " + token + " " + quote(token)}}, 500
        else:
            reply, status = {"answer": f"hello, your header was {token!r}", "tools": [{"name": "curl", "arguments": {"h": token}}]}, 200
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/agent"
    srv.shutdown()
    srv.server_close()


def _http_eval(tmp_path: Path, endpoint: str, instruction: str, **target: Any) -> Path:
    root = make_plugin(tmp_path, skills={"greeter": {
        "eval": simple_eval([{"type": "deterministic", "checks": ["hello"]}], instruction=instruction,
                            execution={"mode": "agent", "target": "bot"}),
    }})
    folder = root / "skills" / "greeter"
    spec = {"type": "http", "url": endpoint, "skill_field": "skill", "tools_field": "tools", **target}
    (folder / "targets.yaml").write_text(yaml.safe_dump({"bot": spec}))
    return folder


@pytest.mark.parametrize("instruction", ["Say hello.", "Please fail now."])
def test_an_http_agent_echoing_its_token_leaves_it_in_no_output(tmp_path: Path, echo_server: str, monkeypatch: pytest.MonkeyPatch, instruction: str) -> None:
    monkeypatch.setenv("BOT_TOKEN", SECRET)
    folder = _http_eval(tmp_path, echo_server, instruction, token_env="BOT_TOKEN")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", folder, "--output", out, "--trials", "1", "--jsonl", out / "t.jsonl", "--junit", out / "j.xml"])
    assert "Traceback" not in stderr, stderr
    trial = json.loads(next(p for p in out.rglob("*-eval.json")).read_text())["items"][0]["with_arm"]["trials"][0]
    if "fail" in instruction:
        assert trial["status"] == "errored" and "HTTP 500" in trial["error"], trial
    else:
        assert trial["status"] == "scored" and "***" in trial["response"], trial
    assert leaks(out, stdout, stderr, secret="Bearer " + SECRET) == []
    assert leaks(out, stdout, stderr) == []


def test_a_token_ending_in_a_line_break_is_one_line_without_the_token(tmp_path: Path, echo_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_TOKEN", SECRET + "\r")
    folder = _http_eval(tmp_path, echo_server, "Say hello.", token_env="BOT_TOKEN")
    line = assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", "bot.token_env", "line break"], secrets=forms(SECRET))
    assert "BOT_TOKEN" in line


def test_a_header_var_with_a_newline_is_one_line_without_the_value(tmp_path: Path, echo_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HDR", SECRET + "\nX-Injected: 1")
    folder = _http_eval(tmp_path, echo_server, "Say hello.", headers={"X-Api-Key": "${HDR}"})
    assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", "bot.headers.X-Api-Key", "${VAR}"], secrets=forms(SECRET))


@pytest.mark.parametrize(("field", "value"), [
    ("url", "htp://bot:pw-" + SECRET + "@example.com/x"),
    ("answer_field", ""),
])
def test_a_var_expanding_to_an_invalid_http_field_is_one_line_without_the_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: str) -> None:
    monkeypatch.setenv("BAD", value)
    folder = _http_eval(tmp_path, "http://127.0.0.1:9/x", "Say hello.", **{field: "${BAD}"})
    line = assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", f"bot.{field}", "${BAD}"], secrets=forms(SECRET))
    assert "ValidationError" not in line and "input_value" not in line


@pytest.mark.parametrize("field", ["skill_path", "answer_file", "trace_file"])
def test_a_var_expanding_to_an_invalid_command_path_is_one_line_without_the_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str) -> None:
    monkeypatch.setenv("BAD", "../../" + SECRET)
    root = make_plugin(tmp_path, skills={"greeter": {
        "eval": simple_eval(execution={"mode": "agent", "target": "agent"}),
    }})
    folder = root / "skills" / "greeter"
    (folder / "targets.yaml").write_text(yaml.safe_dump({"agent": {
        "type": "command", "command": ["true"], field: "${BAD}", "sandbox": False,
    }}))
    line = assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", f"agent.{field}", "${BAD}"], secrets=forms(SECRET))
    assert "ValidationError" not in line


def test_an_error_line_that_would_quote_an_expanded_value_shows_it_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the answer path check quotes the path it refuses; expanded from ${AF}, it holds the secret
    monkeypatch.setenv("AF", "a.." + SECRET)
    folder = _http_eval(tmp_path, "http://127.0.0.1:9/x", "Say hello.", answer_field="${AF}")
    line = assert_refused(["eval", folder, "--output", tmp_path / "runs"], ["targets.yaml", "bot.answer_field", "empty segment"], secrets=forms(SECRET))
    assert "***" in line
