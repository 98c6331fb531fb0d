"""``--executor ray`` (issue 48): trials on a real local Ray cluster of three nodes.

One cluster for the whole module (this machine's cores are shared): every node binds
127.0.0.1, offers ``agentsproof_trial`` slots and one CPU, and the cluster shuts down in
the fixture's ``finally``. The chat eval talks to the scripted server on loopback; its
replies depend only on the request, so the same eval gives the same trials in any order.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY, Rule, make_plugin, read_json, run_cli

# Ray turns a loopback address into the machine's own IP (unreachable on a sandboxed host) unless
# clusters are "not enabled"; then every process of the test cluster binds 127.0.0.1. Read at import.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")

SLOTS = 2  # agentsproof_trial per node


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray_cluster import loopback_cluster

    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": {"agentsproof_trial": SLOTS}, "object_store_memory": 80 * 1024 * 1024}
    with loopback_cluster("apray-", [{**node, "include_dashboard": False}, node, node]) as c:
        yield c


def _plugin(root: Path, trials: int = 3, timeout: float = 60) -> Path:
    """Three skills: one the skill helps, one it does not, one graded by the judge too."""
    graders = [{"type": "deterministic", "checks": ["hello"]}]
    skills = {
        "helps": {"prompt": "Always greet with HELLO-SKILL.\n", "instr": "Greet the helps user.", "graders": graders},
        "same": {"prompt": "Be brief.\n", "instr": "Greet the same user.", "graders": graders},
        "judged": {"prompt": "Be kind.\n", "instr": "Greet the judged user.", "graders": [*graders, {"type": "llm_rubric", "rubric": "friendly"}]},
    }
    return make_plugin(
        root,
        skills={
            name: {
                "prompt": s["prompt"],
                "eval": {
                    "version": "2",
                    "defaults": {"trials": trials, "timeout": timeout, "threshold": 0.6},
                    "task": {"name": "greet", "instruction": s["instr"], "graders": s["graders"]},
                },
            }
            for name, s in skills.items()
        },
    )


def _rules(srv: Any, delay: float = 0.0) -> None:
    srv.add(
        Rule(reply="hello there", system_contains="HELLO-SKILL", judge=False, delay=delay),
        Rule(reply="good day", user_contains="helps user", judge=False, delay=delay),
        Rule(reply="hello", judge=False, delay=delay),
    )


def _env(srv: Any) -> dict[str, str]:
    return {
        "AGENTSPROOF_PROVIDER_TYPE": "openai",
        "AGENTSPROOF_PROVIDER_URL": srv.base_url,
        "AGENTSPROOF_PROVIDER_KEY": SECRET_KEY,
        "AGENTSPROOF_RETRY_BASE_DELAY": "0",
        "CI": "",
    }


def _trials(report: dict[str, Any]) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    out = {}
    for item in report["items"]:
        for arm in ("with_arm", "without_arm"):
            for t in item[arm]["trials"]:
                graders = tuple((g["type"], g.get("score"), g.get("passed")) for g in t.get("graders") or [])
                out[(item["id"], t["arm"], t["index"])] = (t["status"], t.get("score"), t.get("passed"), graders)
    return out


def _verdicts(report: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    keys = ("delta", "delta_ci", "with_pass_rate_ci", "without_pass_rate_ci", "p_value")
    return {
        it["id"]: (it.get("grade"), it.get("passed"), tuple(json.dumps((it.get("stats") or {}).get(k), sort_keys=True) for k in keys)) for it in report["items"]
    }


def _journal(out: Path) -> list[tuple[str, str, int]]:
    lines = (out / "demo-plugin" / "eval-all-summary.journal.jsonl").read_text().splitlines()
    rows = [json.loads(ln) for ln in lines[1:]]
    return [(r["item"], r["arm"], r["index"]) for r in rows if "item" in r]


def test_same_answers_on_the_cluster_resume_either_way_and_no_key_in_rays_logs(cluster, scripted_server, tmp_path):
    _rules(scripted_server)
    plugin = _plugin(tmp_path)
    env = _env(scripted_server)
    base = ["eval-all", plugin, "--model", "m", "--parallel", "4", "--no-cache"]

    code, stdout, stderr = run_cli([*base, "--output", tmp_path / "local"], env=env)
    assert code == 0, stderr
    local = read_json(tmp_path / "local" / "demo-plugin" / "eval-all-summary.json")
    calls_local = len(scripted_server.requests)

    code, stdout, stderr = run_cli([*base, "--output", tmp_path / "ray", "--executor", "ray", "--ray-address", cluster.address], env=env)
    assert code == 0, stderr
    on_ray = read_json(tmp_path / "ray" / "demo-plugin" / "eval-all-summary.json")
    assert len(scripted_server.requests) == 2 * calls_local, "every trial and judge call made once, on the nodes"
    assert len(_trials(on_ray)) == 18
    assert _trials(on_ray) == _trials(local)
    assert _verdicts(on_ray) == _verdicts(local)
    ran_on = {
        e["text"]
        for it in on_ray["items"]
        for arm in ("with_arm", "without_arm")
        for t in it[arm]["trials"]
        for e in t["log"]
        if e["text"].startswith("ran on Ray node")
    }
    assert len(ran_on) == 3, "the trials were spread over the three nodes"
    journal = _journal(tmp_path / "ray")
    assert sorted(journal) == sorted(set(journal)) and len(journal) == 18, "the journal holds each trial once"

    # --resume of a cluster run: a third of its trials dropped from the journal, resumed on either executor
    jpath = tmp_path / "ray" / "demo-plugin" / "eval-all-summary.journal.jsonl"
    lines = jpath.read_text().splitlines()
    kept = "\n".join(lines[: 1 + 12]) + "\n"
    for executor in ("local", "ray"):
        jpath.write_text(kept)
        before = len(scripted_server.requests)
        extra = ["--executor", "ray", "--ray-address", cluster.address] if executor == "ray" else []
        code, stdout, stderr = run_cli([*base, "--output", tmp_path / "ray", "--resume", *extra], env=env)
        assert code == 0, (executor, stderr)
        resumed = read_json(tmp_path / "ray" / "demo-plugin" / "eval-all-summary.json")
        assert _trials(resumed) == _trials(local), executor
        assert len(scripted_server.requests) - before < calls_local, "only the dropped trials ran again"
        journal = _journal(tmp_path / "ray")
        assert len(journal) == 18 and len(set(journal)) == 18, executor

    # the key reached the nodes (they called the server with it) but none of Ray's logs
    found = []
    for path in Path(cluster.temp).rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if SECRET_KEY.encode() in path.read_bytes():
                    found.append(str(path))
            except OSError:
                continue
    logs = list(Path(cluster.temp).rglob("logs"))
    assert logs, "the cluster's session logs are where the test looks"
    assert found == [], found


def test_max_calls_holds_across_the_cluster(cluster, scripted_server, tmp_path):
    """One budget for every node: --max-calls 5 admits exactly 5 calls and no more reach the
    model (a call admitted on a node whose trial the stop then cancels may never be sent: it
    still counts, the safe side of a cap), and the run stops incomplete."""
    _rules(scripted_server)
    plugin = _plugin(tmp_path)
    args = ["eval-all", plugin, "--model", "m", "--parallel", "4", "--no-cache", "--max-calls", "5", "--output", tmp_path / "out"]
    code, _, stderr = run_cli([*args, "--executor", "ray", "--ray-address", cluster.address], env=_env(scripted_server))
    assert code == 30, stderr
    assert 0 < len(scripted_server.requests) <= 5
    report = read_json(tmp_path / "out" / "demo-plugin" / "eval-all-summary.json")
    assert report["settings"]["budget"]["calls"] == 5 and "--max-calls 5" in report["settings"]["budget"]["stopped"]
    assert all(v[0] == "scored" for v in _trials(report).values()), "a trial the budget stopped counts as not run"


def test_the_judge_panels_record_is_gathered_from_the_nodes(cluster, scripted_server, tmp_path):
    """eval.yaml ``judge_models``: every node's verdicts and disagreements make the panel's one record, as locally."""
    scripted_server.add(
        Rule(reply=json.dumps({"evidence": "no", "passed": False}), model="j3", judge=True),  # a dissenting judge
        Rule(reply="hello", system_contains="PMARK", judge=False),
        Rule(reply="hi", judge=False),
    )
    ev = {
        "version": "2",
        "judge_models": ["j1", "j2", "j3"],
        "defaults": {"trials": 3, "timeout": 30, "threshold": 0.5},
        "task": {"name": "t", "instruction": "Say hello.", "graders": [{"type": "assertions", "assertions": ["The reply contains 'hello'."]}]},
    }
    make_plugin(tmp_path, skills={"greeter": {"prompt": "PMARK: say hello.\n", "eval": ev}})
    path = tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"
    panels = []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-address", cluster.address])):
        code, _, stderr = run_cli(["eval", path, "--model", "m", "--no-cache", "--parallel", "6", "--output", tmp_path / name, *extra], env=_env(scripted_server))
        assert code == 0, stderr
        panels.append(read_json(tmp_path / name / "demo-plugin" / "greeter-eval.json")["items"][0]["stats"]["judge_panel"])
    assert panels[1] == panels[0] and panels[1]["verdicts"] == 6 and panels[1]["disagreements"] == 3, panels


def test_the_cli_joins_the_cluster_without_rays_sigterm_warning(cluster, scripted_server, tmp_path):
    """The command as a user runs it (a child process): Ray connects from a thread; its "SIGTERM handler is not set" line is not shown."""
    import subprocess
    import sys

    _rules(scripted_server)
    plugin = _plugin(tmp_path, trials=1)
    env = {**os.environ, **_env(scripted_server), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--model", "m", "--no-cache", "--output", str(tmp_path / "out")]
    got = subprocess.run([*cmd, "--executor", "ray", "--ray-address", cluster.address], env=env, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "SIGTERM handler" not in got.stderr, got.stderr


def test_activation_runs_on_the_cluster_with_the_same_counts(cluster, scripted_server, tmp_path, monkeypatch):
    """``activation --executor ray``: every activation trial on a node, the same confusion counts as locally, no key in the report."""
    from openai_server import skill_loader

    from agentsproof.executor import ray_activation

    sent: list[Any] = []
    ray_activation_run = ray_activation.run_activation_on_ray

    async def watched(*args: Any, **kw: Any) -> Any:
        sent.append(args)
        return await ray_activation_run(*args, **kw)

    monkeypatch.setattr(ray_activation, "run_activation_on_ray", watched)
    scripted_server.add(Rule(reply=skill_loader()))
    plugin = Path(__file__).resolve().parents[2] / "evals" / "csv-plugin"
    reports = []
    for name, extra in (("local", []), ("ray", ["--executor", "ray", "--ray-address", cluster.address])):
        code, _, stderr = run_cli(["activation", plugin, "--model", "m", "--parallel", "6", "--output", tmp_path / name, *extra], env=_env(scripted_server))
        assert code == 0, stderr
        reports.append(read_json(tmp_path / name / "csv-plugin" / "csv-plugin-activation.json"))
    local, remote = ({s["skill"]: (s["tp"], s["fn"], s["fp"]) for s in r["skills"]} for r in reports)
    assert remote == local and reports[1]["trials"] == 60 and reports[1]["errored"] == 0
    assert len(sent) == 1, "the ray run went through the cluster (the local one did not)"
    assert SECRET_KEY not in json.dumps(reports[1])


def test_container_trials_on_a_cluster_without_an_engine_are_refused_in_one_line(cluster, tmp_path):
    """This module's nodes offer no ``docker`` resource: a container eval is refused at start (exit 30, one line), never left waiting."""
    import yaml

    (tmp_path / "SKILL.md").write_text("---\nname: boxed\ndescription: boxed\n---\nx\n")
    (tmp_path / "targets.yaml").write_text(yaml.safe_dump({"box": {"type": "command", "command": ["true"], "timeout": 30}}))
    ev = {
        "version": "2",
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "box"},
        "environment": {"image": "agentsproof-test/bookworm:base"},
        "defaults": {"trials": 1, "timeout": 30},
        "task": {"name": "t", "instruction": "x", "graders": [{"type": "deterministic", "checks": ["x"]}]},
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(ev))
    code, stdout, stderr = run_cli(["eval", tmp_path / "eval.yaml", "--output", tmp_path / "out", "--executor", "ray", "--ray-address", cluster.address])
    assert code == 30, stderr + stdout
    lines = [ln for ln in stderr.splitlines() if "'docker' resource" in ln]
    assert len(lines) == 1 and "runs in a container" in lines[0] and "ray start --resources" in lines[0], stderr
    assert "Traceback" not in stderr


def test_a_trial_that_fails_on_its_node_is_errored_with_the_nodes_reason(cluster):
    import asyncio

    from agentsproof.executor.ray_trials import RayTrials
    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.llm.stack import ClientStack
    from agentsproof.model.items import EvalItem

    item = EvalItem(
        id="x", name="x", kind="skill", source_path="SKILL.md", system_prompt="s", task_name="t", prompt="p", graders=[], trials=1, timeout=30, threshold=0.6
    )
    stack = ClientStack(provider="no-such-provider", model="m", judge_model="m", client=None, described={})
    runner = DualArmRunner({}, Scheduling(parallel=1), None)

    async def go() -> Any:
        remote = RayTrials(cluster.address, stack, runner)
        await remote.start()
        try:
            return await remote(item, "with", 0)
        finally:
            await remote.close()

    trial = asyncio.run(go())
    assert trial.status == "errored"
    assert "on its Ray node" in trial.error and "no-such-provider" in trial.error
    assert ray.is_initialized(), "a connection the run did not open is left open"


def _free_slots(cluster: Any) -> float:
    """Free agentsproof_trial slots on the cluster's live nodes."""
    from ray._private.state import available_resources_per_node

    free = available_resources_per_node()
    live = [cluster.head_node.node_id, *(n.node_id for n in cluster.worker_nodes)]
    return sum(free.get(n, {}).get("agentsproof_trial", 0) for n in live)


def test_an_interrupted_driver_cancels_the_trials_on_the_nodes(cluster, scripted_server, tmp_path):
    _rules(scripted_server, delay=300)
    plugin = _plugin(tmp_path, trials=2, timeout=900)  # a trial left running holds its slot for 300 s
    env = _env(scripted_server)
    total = SLOTS * (1 + len(cluster.worker_nodes))  # the live nodes (a removed one may linger in cluster_resources)

    def interrupt_when_busy() -> None:
        deadline = time.monotonic() + 90
        while len(scripted_server.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt_when_busy)
    t.start()
    try:
        args = ["eval-all", plugin, "--model", "m", "--parallel", "4", "--no-cache", "--output", tmp_path / "out"]
        code, _, stderr = run_cli([*args, "--executor", "ray", "--ray-address", cluster.address], env=env)
    finally:
        t.join()
    assert code == 30, stderr
    # cancelled trials give their slots back long before their 300 s replies would come
    deadline = time.monotonic() + 120
    while _free_slots(cluster) < total and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _free_slots(cluster) == total


def test_a_node_killed_mid_run_has_its_trials_rerun_elsewhere_counted_once(cluster, scripted_server, tmp_path):
    """Last but one in the module: it replaces the node it kills with a fresh one."""
    _rules(scripted_server, delay=1.5)
    plugin = _plugin(tmp_path, trials=2)  # 12 trials, 2 judge calls
    env = _env(scripted_server)
    result: dict[str, Any] = {}

    def kill_when_busy() -> None:
        from ray._private.state import available_resources_per_node

        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # a worker node with a trial on it (its slots taken) dies
            free = available_resources_per_node()
            busy = [n for n in cluster.worker_nodes if free.get(n.node_id, {}).get("agentsproof_trial", SLOTS) < SLOTS]
            if busy and len(scripted_server.requests) >= 2:
                result["victim"] = busy[0].node_id
                cluster.remove_node(busy[0], allow_graceful=False)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    try:
        args = ["eval-all", plugin, "--model", "m", "--parallel", "6", "--no-cache", "--output", tmp_path / "out"]
        result["code"], _, result["stderr"] = run_cli([*args, "--executor", "ray", "--ray-address", cluster.address], env=env)
    finally:
        killer.join()
        cluster.add_node(node_ip_address="127.0.0.1", num_cpus=1, resources={"agentsproof_trial": SLOTS}, object_store_memory=80 * 1024 * 1024)
    assert result["code"] == 0, result["stderr"]
    report = read_json(tmp_path / "out" / "demo-plugin" / "eval-all-summary.json")
    trials = _trials(report)
    assert len(trials) == 12 and all(v[0] == "scored" for v in trials.values())
    journal = _journal(tmp_path / "out")
    assert len(journal) == 12 and len(set(journal)) == 12, "each trial journalled once"
    assert "victim" in result, "a busy worker node was killed"
    assert len(scripted_server.trial_requests()) > 12, "the killed node's trials were sent again"
    text = (tmp_path / "out" / "demo-plugin" / "eval-all-summary.journal.jsonl").read_text()
    assert "re-run after its Ray node died" in text, "the journal says which trials ran again"
