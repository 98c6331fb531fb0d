"""Isolation of a trial's container (``allow_internet: false``, the default): from inside a
real trial, the model endpoint's port is reachable through the relay, and nothing else is:
no other host port, no private-range or public address (``--network none``: no route, so
nothing is sent). ``allow_internet: true`` shares the host's network."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import ScriptedServer, read_json, run_cli

PROBE = r"""
probe() {  # name host port: one HTTP GET over bash's /dev/tcp, bounded by timeout(1)
  if timeout 5 bash -c "exec 3<>/dev/tcp/$2/$3 && printf 'GET /v1/models HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && head -c 12 <&3" >/tmp/got 2>/tmp/err; then
    echo "$1 reachable $(head -c 12 /tmp/got)"
  else
    echo "$1 unreachable $(head -c 150 /tmp/err | tr "\n" " ")"
  fi
}
probe model 127.0.0.1 "$MODEL_PORT"
probe other-host-port 127.0.0.1 "$OTHER_PORT"
[ "$WIDE" = 1 ] || exit 0  # only where there is no route (--network none): never any traffic to these
probe private-10 10.255.255.1 80
probe private-192 192.168.255.1 80
probe public 1.1.1.1 80
"""


class _Secret(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host-secret")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_port() -> Iterator[int]:
    """A host service on loopback that no trial may reach."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Secret)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()
    t.join()


def probe_eval(root: Path, image: str, model_port: int, other: int, allow_internet: bool) -> Path:
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: probe\ndescription: probes\n---\nProbe.\n")
    target = {
        "type": "command",
        "command": ["bash", "-c", PROBE],
        "env": {"MODEL_PORT": str(model_port), "OTHER_PORT": str(other), "WIDE": "0" if allow_internet else "1"},
        "loopback_ports": [model_port],
        "timeout": 60,
    }
    (root / "targets.yaml").write_text(yaml.safe_dump({"probe": target}))
    cfg = {
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "probe"},
        "environment": {"image": image, "allow_internet": allow_internet},
        "defaults": {"trials": 1, "timeout": 60},
        "task": {"name": "probe", "instruction": "probe", "graders": [{"type": "deterministic", "checks": {"mustContain": ["model"]}}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    return root / "eval.yaml"


def answers(out: Path) -> list[str]:
    item = read_json(next(out.rglob("*.json")))["items"][0]
    trials = item["with_arm"]["trials"] + item["without_arm"]["trials"]
    assert all(t["status"] == "scored" for t in trials), trials
    return [t["response"] for t in trials]


def test_only_the_model_endpoint_is_reachable_from_inside_a_trial(
    tmp_path: Path, docker_base_image: str, scripted_server: ScriptedServer, other_port: int
) -> None:
    ev = probe_eval(tmp_path / "ev", docker_base_image, scripted_server.port, other_port, allow_internet=False)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    assert code in (0, 1), stderr + stdout
    for text in answers(out):
        lines = dict(line.split(" ", 1) for line in text.splitlines())
        assert lines["model"].startswith("reachable HTTP/1."), text
        assert lines["other-host-port"].startswith("unreachable"), text
        assert lines["private-10"].startswith("unreachable") and lines["private-192"].startswith("unreachable"), text
        assert lines["public"].startswith("unreachable"), text


def test_allow_internet_shares_the_host_network(tmp_path: Path, docker_base_image: str, scripted_server: ScriptedServer, other_port: int) -> None:
    ev = probe_eval(tmp_path / "ev", docker_base_image, scripted_server.port, other_port, allow_internet=True)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out])
    assert code in (0, 1), stderr + stdout
    for text in answers(out):
        lines = dict(line.split(" ", 1) for line in text.splitlines())
        assert set(lines) == {"model", "other-host-port"}, text
        assert lines["model"].startswith("reachable"), text
        assert lines["other-host-port"].startswith("reachable"), text  # the host's loopback: documented
