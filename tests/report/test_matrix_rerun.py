"""A matrix run (``--target a,b``) re-graded, retried and imported per ``<item>@<agent>``:
each agent's item is found, run against its own agent again, and kept apart. Two real
command agents: on ``follows`` the skill makes the answer right, on ``contrary`` wrong;
``flaky`` fails its first trials (a file counts them) so ``--retry-errors`` has work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from conftest import make_plugin, read_json, run_cli, simple_eval

AGENT = """\
import os, pathlib, sys
name = sys.argv[1]
skill = os.environ.get("AGENTSPROOF_SKILL_FILE")
if name == "flaky":
    count = pathlib.Path(sys.argv[2])
    n = int(count.read_text()) if count.exists() else 0
    count.write_text(str(n + 1))
    if n < 3:
        sys.exit("not yet")
contrary = name == "contrary"
answer = "hello there" if bool(skill) != contrary else "no greeting"
pathlib.Path("answer.txt").write_text(answer)
print(answer)
"""


def _setup(tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    targets = tmp_path / "targets.yaml"
    targets.write_text(yaml.safe_dump({
        name: {"type": "command", "command": [sys.executable, str(agent), name, str(tmp_path / f"{name}.count")], "sandbox": False}
        for name in names
    }))
    ev = simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=3, instruction="Greet me.")
    ev["execution"] = {"mode": "agent", "target": names[0]}
    root = make_plugin(tmp_path, skills={"greeter": {"prompt": "Always greet with hello.\n", "eval": ev}})
    return root / "skills" / "greeter", targets


def _items(report: dict) -> dict[str, dict]:
    return {it["id"]: it for it in report["items"]}


def test_a_matrix_run_is_regraded_per_agent(tmp_path: Path) -> None:
    d, targets = _setup(tmp_path, ("follows", "contrary"))
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", d, "--output", out, "--target", "follows,contrary", "--targets", targets])
    assert code in (0, 1), err
    saved = next(out.rglob("*-eval.json"))
    before = _items(read_json(saved))
    assert set(before) == {"skills/greeter@follows", "skills/greeter@contrary"}
    code, _, err = run_cli(["regrade", saved])
    assert code in (0, 1), err
    after = _items(read_json(next(out.rglob("*-regraded.json"))))
    assert set(after) == set(before)
    for item_id, it in after.items():
        assert it["target"] == before[item_id]["target"] and it["grade"] == before[item_id]["grade"], item_id
    assert after["skills/greeter@follows"]["grade"] == "A" and after["skills/greeter@contrary"]["grade"] == "F"


def test_a_matrix_run_retries_each_agents_errors_on_that_agent(tmp_path: Path) -> None:
    d, targets = _setup(tmp_path, ("follows", "flaky"))
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", d, "--output", out, "--target", "follows,flaky", "--targets", targets, "--parallel", "1"])
    saved = next(out.rglob("*-eval.json"))
    assert int((tmp_path / "flaky.count").read_text()) == 6  # 3 errored, then 3 answered
    first = _items(read_json(saved))
    errored = {i: sum(t["status"] == "errored" for a in ("with_arm", "without_arm") for t in it[a]["trials"]) for i, it in first.items()}
    assert errored["skills/greeter@follows"] == 0 and errored["skills/greeter@flaky"] == 3, errored
    out2 = tmp_path / "runs2"
    code, _, err = run_cli(["eval", d, "--output", out2, "--target", "follows,flaky", "--targets", targets, "--retry-errors", saved])
    assert code in (0, 1), err
    again = _items(read_json(next(out2.rglob("*-eval.json"))))
    assert set(again) == set(first)
    flaky = again["skills/greeter@flaky"]
    assert flaky["target"] == "flaky"
    assert all(t["status"] != "errored" for a in ("with_arm", "without_arm") for t in flaky[a]["trials"])
    assert int((tmp_path / "flaky.count").read_text()) == 9  # only the 3 errored trials ran again, on flaky


def test_import_atif_keeps_the_agents_of_a_matrix_run_apart(tmp_path: Path) -> None:
    d, targets = _setup(tmp_path, ("follows", "contrary"))
    out = tmp_path / "runs"
    atif = tmp_path / "atif"
    code, _, err = run_cli(["eval", d, "--output", out, "--target", "follows,contrary", "--targets", targets, "--atif", atif])
    assert code in (0, 1), err
    code, _, err = run_cli(["import", "atif", atif, "--eval", d / "eval.yaml", "--output", tmp_path / "imported"])
    assert code in (0, 1), err
    report = read_json(next((tmp_path / "imported").rglob("*.json")))
    items = _items(report)
    assert set(items) == {"skills/greeter@follows", "skills/greeter@contrary"}, list(items)
    assert items["skills/greeter@follows"]["grade"] == "A" and items["skills/greeter@contrary"]["grade"] == "F"
    assert json.dumps(report).count("skills/greeter@follows") >= 1
