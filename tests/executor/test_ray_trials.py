"""``--executor ray`` (issue 48): trials on a real local Ray cluster of three nodes.

One cluster for the whole module (this machine's cores are shared): every node binds
127.0.0.1, offers ``agentsproof_trial`` slots and one CPU, and the cluster shuts down in
the fixture's ``finally``. The chat eval talks to the scripted server on loopback; its
replies depend only on the request, so the same eval gives the same trials in any order.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
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
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="apray-", dir="/tmp")  # short: Ray's socket paths must fit 107 characters
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = temp  # this cluster's sessions, logs and address file, nobody else's
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": {"agentsproof_trial": SLOTS}, "object_store_memory": 80 * 1024 * 1024}
    c = Cluster(initialize_head=False)
    try:
        c.add_node(**node, include_dashboard=False)
        c.add_node(**node)
        c.add_node(**node)
        c.wait_for_nodes(timeout=120)
        ray.init(address=c.address, log_to_driver=False)
        c.temp = temp
        yield c
    finally:
        try:
            ray.shutdown()
        finally:
            c.shutdown()
            if saved is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = saved
            shutil.rmtree(temp, ignore_errors=True)


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
    """One budget for every node: --max-calls 5 makes exactly 5 calls, the run stops incomplete."""
    _rules(scripted_server)
    plugin = _plugin(tmp_path)
    args = ["eval-all", plugin, "--model", "m", "--parallel", "4", "--no-cache", "--max-calls", "5", "--output", tmp_path / "out"]
    code, _, stderr = run_cli([*args, "--executor", "ray", "--ray-address", cluster.address], env=_env(scripted_server))
    assert code == 30, stderr
    assert len(scripted_server.requests) == 5
    report = read_json(tmp_path / "out" / "demo-plugin" / "eval-all-summary.json")
    assert report["settings"]["budget"]["calls"] == 5 and "--max-calls 5" in report["settings"]["budget"]["stopped"]
    assert all(v[0] == "scored" for v in _trials(report).values()), "a trial the budget stopped counts as not run"


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


def test_agent_and_container_items_are_refused_with_one_line_before_connecting():
    """Agent targets do not run on the cluster yet: --executor ray says so (input error, exit 30), it never half-runs them."""
    import asyncio

    from agentsproof.core.errors import InputError
    from agentsproof.executor.runner import DualArmRunner, Scheduling
    from agentsproof.executor.session import RunSession, RunPlan
    from agentsproof.llm.stack import no_model
    from agentsproof.model.items import EvalItem
    from agentsproof.model.options import RunFlags

    item = EvalItem(
        id="fix-bug",
        name="x",
        kind="skill",
        source_path="SKILL.md",
        system_prompt="s",
        task_name="t",
        prompt="p",
        graders=[],
        trials=1,
        timeout=30,
        threshold=0.6,
        target="claude-code",
    )
    session = RunSession("eval", "p", [item], RunPlan(run=RunFlags(executor="ray", ray_address="127.0.0.1:1")), no_model("m"))
    with pytest.raises(InputError) as err:
        asyncio.run(session._remote(DualArmRunner({}, Scheduling(), None)))
    assert "--executor" in str(err.value) and "fix-bug" in str(err.value) and "--executor local" in str(err.value)
    assert session.ray is None
