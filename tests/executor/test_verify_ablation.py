"""``agentsproof verify`` on an ablation (issue 49): the run report's ``settings.ablation``
section and the ablation's own JSON file are derived again from the recorded trials; an
edited per-part effect, p-value or verdict, or an edited file, fails verify naming the field."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Rule, read_json, run_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "evals" / "ablation-demo"


def _planted(req: dict) -> str:
    system = "".join(m.get("content") or "" for m in req["messages"] if m.get("role") == "system")
    lines = ["Ticket: REL-0"] if "`Ticket: REL-`" in system else []
    lines.append("Search now finds accented words.")
    if "Shipped by Acme" in system:
        lines.append("Shipped by Acme")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def ablations(tmp_path_factory) -> dict[str, Path]:
    """An ablation at fixed arms and one with --adaptive, on the scripted server."""
    from conftest import SECRET_KEY
    from openai_server import ScriptedServer

    base = tmp_path_factory.mktemp("ablations")
    if not shutil.which("ssh-keygen"):
        pytest.fail("ssh-keygen is not installed (openssh-client)")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "k", "-f", str(base / "k")], check=True)
    (base / "allowed").write_text(f"k@test {(base / 'k.pub').read_text().strip()}\n", encoding="utf-8")
    out: dict[str, Path] = {"allowed": base / "allowed"}
    with ScriptedServer() as srv:
        srv.add(Rule(reply=_planted, judge=False))
        env = {
            "AGENTSPROOF_PROVIDER_TYPE": "openai",
            "AGENTSPROOF_PROVIDER_URL": srv.base_url,
            "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
            "AGENTSPROOF_RETRY_BASE_DELAY": "0",
        }
        for name, extra in (("fixed", ["--trials", "4", "--sign", base / "k"]), ("adaptive", ["--trials", "10", "--adaptive"])):
            demo = base / name / "ablation-demo"
            shutil.copytree(DEMO, demo)
            code, _o, err = run_cli(
                ["ablate", demo / "skills" / "release-notes" / "eval.yaml", "--model", "m", "--margin", "0.25", "--output", base / name / "out", *extra],
                env=env,
            )
            assert code == 0, err
            out[name] = base / name / "out" / "ablation-demo"
    return out


def _verify(path: Path, *extra: object) -> tuple[int, str]:
    code, stdout, err = run_cli(["verify", path, *extra])
    assert "Traceback" not in err, err
    return code, stdout + err


@pytest.mark.parametrize("name", ["fixed", "adaptive"])
def test_an_ablation_verifies(ablations, name):
    folder = ablations[name]
    own = read_json(folder / "release-notes-ablation.json")
    run = folder / own["run_report"]
    code, text = _verify(run)
    assert code == 0 and "verified" in text, text
    code, text = _verify(folder / "release-notes-ablation.json")
    assert code == 0 and "ablation report" in text, text
    assert own["manifest"] == read_json(run)["manifest"] and own["adaptive"] is (name == "adaptive")
    if name == "adaptive":
        assert any(len(p["p_needed_looks"]) > 1 for p in own["parts"]) or any(p["trials"] < own["cap"] for p in own["parts"])


@pytest.mark.parametrize(
    ("field", "value"),
    [("effect", 0.5), ("verdict", "unclear"), ("p_needed_adjusted", 0.9), ("interval", [-0.1, 0.1]), ("trials", 2)],
)
def test_an_edited_part_fails_verify(ablations, tmp_path, field, value):
    folder = ablations["adaptive"]
    own = read_json(folder / "release-notes-ablation.json")
    data = read_json(folder / own["run_report"])
    part = data["settings"]["ablation"]["parts"][0]
    assert part[field] != value
    part[field] = value
    edited = tmp_path / "run.json"
    edited.write_text(json.dumps(data))
    code, text = _verify(edited)
    assert code == 1 and "settings.ablation.parts[0]" in text, text


def test_an_edited_ablation_file_fails_verify(ablations, tmp_path):
    folder = ablations["fixed"]
    own = read_json(folder / "release-notes-ablation.json")
    shutil.copy(folder / own["run_report"], tmp_path / own["run_report"])
    own["parts"][1]["verdict"] = "needed" if own["parts"][1]["verdict"] != "needed" else "removable"
    (tmp_path / "a.json").write_text(json.dumps(own))
    code, text = _verify(tmp_path / "a.json")
    assert code == 1 and "ablation.parts[1].verdict" in text, text
    own["run_report"] = "../elsewhere.json"
    (tmp_path / "a.json").write_text(json.dumps(own))
    code, text = _verify(tmp_path / "a.json")
    assert code == 30 and "run_report" in text, text


def test_a_signed_ablation_verifies_and_an_edit_after_signing_fails(ablations, tmp_path):
    folder = ablations["fixed"]
    own_path = folder / "release-notes-ablation.json"
    own = read_json(own_path)
    assert (folder / "release-notes-ablation.json.sig").is_file() and (folder / (own["run_report"] + ".sig")).is_file()
    assert own["manifest"]["signature"]["key"].startswith("SHA256:")
    code, text = _verify(own_path, "--allowed-signers", ablations["allowed"])
    assert code == 0 and "good signature" in text, text
    for name in (own_path.name, own["run_report"], own["run_report"] + ".sig", own_path.name + ".sig"):
        shutil.copy(folder / name, tmp_path / name)
    edited = (tmp_path / own_path.name).read_text().replace('"margin": 0.25', '"margin": 0.250')
    assert edited != (tmp_path / own_path.name).read_text()
    (tmp_path / own_path.name).write_text(edited)
    code, text = _verify(tmp_path / own_path.name, "--allowed-signers", ablations["allowed"])
    assert code == 1 and "BAD SIGNATURE" in text, text
