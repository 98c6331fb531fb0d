"""A report of trials in a Dockerfile's image names that environment in its manifest (the
Dockerfile's SHA-256, the image tag and the engine's image id), verifies, and a changed
Dockerfile is named by ``verify --files`` (docs/verify.md)."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import yaml
from conftest import read_json, run_cli
from environments.test_command_in_container import AGENT, write_eval


def test_the_manifest_names_the_environment_and_its_image(tmp_path: Path, docker_base_image: str, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    ev = write_eval(tmp_path / "ev", "x")
    env_dir = tmp_path / "ev" / "env"
    env_dir.mkdir()
    (env_dir / "nonce.txt").write_text(uuid.uuid4().hex)
    (env_dir / "Dockerfile").write_text(f"FROM {docker_base_image}\nCOPY nonce.txt /nonce.txt\n")
    data = yaml.safe_load(ev.read_text())
    data["environment"] = {"dockerfile": "env/Dockerfile"}
    ev.write_text(yaml.safe_dump(data))
    (tmp_path / "ev" / "targets.yaml").write_text(yaml.safe_dump({"boxed": {"type": "command", "command": ["sh", "-c", AGENT], "timeout": 60}}))
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", ev, "--output", out, "--trials", "1"])
    assert code in (0, 1), stderr + stdout
    report = next(p for p in out.rglob("*-eval.json") if "history" not in p.parts)
    m = read_json(report)["manifest"]
    (env,) = m["environments"]
    assert env["dockerfile"] == "ev/env/Dockerfile" and len(env["dockerfile_sha256"]) == 64
    image_id = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", env["image"]], capture_output=True, text=True, check=True).stdout.strip()
    assert env["image_id"] == image_id and image_id.startswith("sha256:")
    assert "ev/targets.yaml" in m["files"] and m["files"]["ev/env/Dockerfile"]["role"] == "dockerfile"
    assert m["agents"]["boxed"]["kind"] == "command"
    code, out_text, err = run_cli(["verify", report, "--files", tmp_path])
    assert code == 0, out_text + err
    (env_dir / "Dockerfile").write_text(f"FROM {docker_base_image}\n")
    code, out_text, _ = run_cli(["verify", report, "--files", tmp_path])
    assert code == 1 and "FILE ev/env/Dockerfile: changed since the run" in out_text
