"""``--executor ray`` with agent and container trials (issue 48, item 3): a real local Ray
cluster of three nodes on 127.0.0.1, the real engine at DOCKER_HOST (shared by the nodes here,
as one machine's nodes share it), the command target under bubblewrap.

Two nodes have the test's agent program on their PATH, the third does not: agent trials
that need it go to the other two, after one line naming the third. The cluster shuts down in
the fixture's ``finally``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import read_json, run_cli

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on loopback (see test_ray_trials.py)
ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")

SLOTS = 2
AGENT = """#!/bin/sh
cat data.txt > /dev/null
if [ -n "$AGENTSPROOF_SKILL_FILE" ] && [ -f "$AGENTSPROOF_SKILL_FILE" ]; then
  printf 'total: %s\\n' "$(cat data.txt)" > result.txt
fi
[ -n "$AGENT_SLEEP" ] && sleep "$AGENT_SLEEP"
echo "done in $(pwd)"
"""
BOXED = r"""
cat data.txt > /dev/null
if [ -n "$AGENTSPROOF_SKILL_FILE" ] && [ -f "$AGENTSPROOF_SKILL_FILE" ]; then printf 'total: %s\n' "$(cat data.txt)" > result.txt; fi
test -f /.dockerenv && echo "in a container"
sleep "${AGENT_SLEEP:-0}"
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from agent_clis import installed
    from ray_cluster import loopback_cluster

    bin_dir = Path(tempfile.mkdtemp(prefix="apraya-bin-", dir="/var/tmp"))  # not below /tmp: the sandbox gives the agent an empty one
    (bin_dir / "count-agent").write_text(AGENT)
    (bin_dir / "count-agent").chmod(0o755)
    path = os.environ.get("PATH", "/usr/bin:/bin")
    claude = installed("claude")
    clis = {"CLAUDE_CLI_PATH": claude} if claude else {}  # each node finds its own agent CLIs (none is forwarded by the driver)
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": {"agentsproof_trial": SLOTS, "docker": SLOTS}, "object_store_memory": 80 * 1024 * 1024}
    with_agent = {**node, "env_vars": {"PATH": f"{bin_dir}:{path}", **clis}}
    try:
        with loopback_cluster("apraya-", [{**with_agent, "include_dashboard": False}, with_agent, {**node, "env_vars": {"PATH": path, **clis}}]) as c:
            c.bare = c.added[2]  # no count-agent here
            yield c
    finally:
        shutil.rmtree(bin_dir, ignore_errors=True)


def _eval(root: Path, target: dict[str, Any], image: str | None = None, trials: int = 2, timeout: float = 60) -> Path:
    (root / "seed").mkdir(parents=True)
    (root / "seed" / "data.txt").write_text("42")
    (root / "SKILL.md").write_text("---\nname: counting\ndescription: counts\n---\nWrite result.txt.\n")
    (root / "targets.yaml").write_text(yaml.safe_dump({"agent": target}))
    cfg: dict[str, Any] = {
        "version": "2",
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "agent"},
        "workspace": "seed",
        "defaults": {"trials": trials, "timeout": timeout},
        "task": {
            "name": "count",
            "instruction": "Count the data.",
            "graders": [{"type": "files", "exists": ["result.txt"], "mustContain": {"result.txt": ["total: 42"]}}],
        },
    }
    if image is not None:
        cfg["environment"] = {"image": image, "memory_mb": 256, "pids": 64}
    path = root / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _trials(report: dict[str, Any]) -> dict[tuple[str, int], tuple[Any, ...]]:
    item = report["items"][0]
    return {
        (t["arm"], t["index"]): (t["status"], t.get("score"), [(f["path"], f["status"]) for f in t["files"]])
        for arm in ("with_arm", "without_arm")
        for t in item[arm]["trials"]
    }


def _run_labels() -> dict[str, str]:
    """Every container with an agentsproof run label: id -> run id."""
    got = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=org.agentsproof.run", "--format", '{{.ID}}\t{{.Label "org.agentsproof.run"}}'],
        capture_output=True,
        timeout=60,
    )
    return dict(line.split("\t", 1) for line in got.stdout.decode().splitlines() if "\t" in line)


def _ours(cluster: Any) -> list[str]:
    """Containers owned by a live process of this test's cluster (a worker, a descendant of this process)."""
    got = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=org.agentsproof.owner", "--format", '{{.ID}}\t{{.Label "org.agentsproof.owner"}}'],
        capture_output=True,
        timeout=60,
    )
    mine = []
    for line in got.stdout.decode().splitlines():
        cid, _, owner = line.partition("\t")
        parts = owner.split("/")
        if len(parts) == 3 and parts[1].isdigit() and _descends(int(parts[1])):
            mine.append(cid)
    return mine


def _descends(pid: int) -> bool:
    me = os.getpid()
    while pid > 1:
        if pid == me:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def test_container_trials_run_on_the_nodes_as_they_run_here(cluster, docker_base_image, tmp_path):
    ev = _eval(tmp_path / "ev", {"type": "command", "command": ["sh", "-c", BOXED], "timeout": 60}, image=docker_base_image)
    code, _, stderr = run_cli(["eval", ev, "--output", tmp_path / "local"])
    assert code == 0, stderr
    code, _, stderr = run_cli(["eval", ev, "--output", tmp_path / "ray", "--parallel", "4", "--executor", "ray", "--ray-address", cluster.address])
    assert code == 0, stderr
    local = read_json(next((tmp_path / "local").glob("*/*.json")))
    remote = read_json(next((tmp_path / "ray").glob("*/*.json")))
    assert _trials(remote) == _trials(local)
    assert {k: v[1] for k, v in _trials(remote).items()} == {("with", 0): 1.0, ("with", 1): 1.0, ("without", 0): 0.0, ("without", 1): 0.0}
    for t in remote["items"][0]["with_arm"]["trials"]:
        assert "in a container" in t["response"] and any("ran on Ray node" in e["text"] for e in t["log"]), t
    # the flight recorder on the driver kept the with-arm's produced file the nodes sent back
    assert [p for p in (tmp_path / "ray").rglob("*") if p.is_file() and p.read_bytes() == b"total: 42\n"]
    assert _ours(cluster) == [], "every container of the run removed on every node"


def test_a_node_without_the_agent_program_is_named_once_and_its_trials_go_elsewhere(cluster, tmp_path):
    ev = _eval(tmp_path / "ev", {"type": "command", "command": ["count-agent"], "timeout": 60}, trials=3)
    args = ["eval", ev, "--output", tmp_path / "out", "--parallel", "4", "--executor", "ray", "--ray-address", cluster.address]
    code, _, stderr = run_cli(args)
    assert code == 0, stderr
    bare = cluster.bare.node_id[:12]
    lines = [ln for ln in stderr.splitlines() if "runs none of this run's agent trials" in ln]
    assert len(lines) == 1 and bare in lines[0] and "count-agent was not found" in lines[0], stderr
    report = read_json(next((tmp_path / "out").glob("*/*.json")))
    trials = _trials(report)
    assert len(trials) == 6 and all(v[0] == "scored" for v in trials.values()), trials
    ran_on = {
        e["text"].rsplit(" ", 1)[-1]
        for arm in ("with_arm", "without_arm")
        for t in report["items"][0][arm]["trials"]
        for e in t["log"]
        if "ran on Ray node" in e["text"]
    }
    assert ran_on and bare not in ran_on


def test_an_interrupted_driver_removes_the_trials_containers_on_every_node(cluster, docker_base_image, tmp_path):
    ev = _eval(
        tmp_path / "ev",
        {"type": "command", "command": ["sh", "-c", BOXED], "timeout": 600, "env": {"AGENT_SLEEP": "300"}},
        image=docker_base_image,
        trials=3,
        timeout=600,
    )
    seen: dict[str, str] = {}

    def interrupt_when_busy() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ours = set(_ours(cluster))
            running = {cid: run for cid, run in _run_labels().items() if cid in ours}
            if len(running) >= 3:
                seen.update(running)
                break
            time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt_when_busy)
    t.start()
    try:
        code, _, stderr = run_cli(["eval", ev, "--output", tmp_path / "out", "--parallel", "6", "--executor", "ray", "--ray-address", cluster.address])
    finally:
        t.join()
    assert code == 30, stderr
    assert seen, "trials' containers were running on the nodes"
    runs = set(seen.values())
    assert len(runs) == 1, "every node's containers carry the run's one label"
    left = [cid for cid, run in _run_labels().items() if run in runs]
    assert left == [], f"containers left after the interrupt: {left}"


def test_each_node_builds_an_image_once_and_trials_reuse_it(cluster, docker_base_image, tmp_path):
    """The node check builds a Dockerfile's image (or finds it) on every node; a second check builds nothing."""
    import uuid

    from agentsproof.executor.ray_nodes import AgentRun, probe_nodes
    from agentsproof.executor.ray_trials import NodeRun, forwarded_env
    from agentsproof.model.environment import Environment

    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {docker_base_image}\nRUN echo {uuid.uuid4().hex} > /marker\n")
    env = Environment(source=str(ctx / "eval.yaml"), dockerfile=ctx / "Dockerfile", context=ctx)
    run = NodeRun(provider="none", model="m", judge_model="")
    agents = AgentRun(run_id=uuid.uuid4().hex[:12], environments=(env,))
    env_ref = ray.put(forwarded_env({}))
    first: list[Any] = []
    try:
        good, lines, first = probe_nodes(ray, run, env_ref, agents)
        assert len(good) == 3 and lines == [], lines
        tags = {t for c in first for t in (*c.built, *c.reused)}
        assert len(tags) == 1 and all(len(c.built) + len(c.reused) == 1 for c in first), first
        again, _, second = probe_nodes(ray, run, env_ref, agents)
        assert len(again) == 3 and all(c.built == [] and c.reused == sorted(tags) for c in second), second
    finally:
        for tag in {t for c in first for t in c.built}:
            subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)


HARBOR = Path(__file__).resolve().parents[1] / "data" / "harbor"
SEES_SKILLS = r"""
if [ -f /root/.claude/skills/house-style/SKILL.md ] || [ -n "$AGENTSPROOF_SKILL_FILE" ]; then
  echo 'HOUSE-STYLE-OK: all green' > /app/report.txt
else
  echo 'status: all green' > /app/report.txt
fi
"""


def test_a_harbor_task_runs_on_the_nodes_as_it_runs_here(cluster, docker_base_image, tmp_path):
    """house-style (SkillsBench's shape: its Dockerfile COPYs the skills; the baseline's image is built
    without them on each node): the with-arm scores 1, the baseline 0, as locally; no container left."""
    root = tmp_path / "tasks"
    shutil.copytree(HARBOR / "house-style", root / "house-style")
    dockerfile = root / "house-style" / "environment" / "Dockerfile"
    lines = dockerfile.read_text().splitlines()
    dockerfile.write_text("\n".join(f"FROM {docker_base_image}" if ln.startswith("FROM ") else ln for ln in lines) + "\n")
    targets = root / "targets.yaml"
    targets.write_text(yaml.safe_dump({"skilled": {"type": "command", "command": ["sh", "-c", SEES_SKILLS], "timeout": 60}}))
    scores = []
    for name, extra in (("local", []), ("ray", ["--parallel", "4", "--executor", "ray", "--ray-address", cluster.address])):
        out = tmp_path / name
        code, stdout, stderr = run_cli(["eval", root / "house-style", "--target", "skilled", "--targets", targets, "--trials", "2", "--output", out, *extra])
        assert code in (0, 1), stderr + stdout
        (item,) = read_json(out / "house-style" / "house-style-tc-eval.json")["items"]
        scores.append({arm: [t["score"] for t in item[arm]["trials"]] for arm in ("with_arm", "without_arm")})
        remote = [any("ran on Ray node" in e["text"] for e in t["log"]) for arm in ("with_arm", "without_arm") for t in item[arm]["trials"]]
        assert remote == [name == "ray"] * 4, remote
    assert scores[1] == scores[0] == {"with_arm": [1.0, 1.0], "without_arm": [0.0, 0.0]}, scores
    assert _ours(cluster) == []


def test_claude_code_runs_on_the_nodes_as_it_runs_here(cluster, tmp_path, monkeypatch):
    """The real Claude Code CLI (each node's own install) on the scripted Anthropic server: the
    with-arm writes the file its skill asks for, the baseline does not, on the cluster as locally;
    the key reaches the nodes through the object store only."""
    import json as _json

    from agent_clis import require
    from anthropic_server import AnthropicServer, tool_results, tool_use
    from conftest import Rule, make_plugin, simple_eval

    require("claude", monkeypatch)
    mark = "WRITEMARK"
    skill = f"---\nname: writer\ndescription: Writes the report file.\n---\n{mark}: always write report.txt with the word done.\n"
    write = tool_use("Bash", {"command": "echo done > report.txt", "description": "write"})

    def reply(req: dict[str, Any]) -> Any:
        if "tools" not in req:
            return "OK"
        if mark not in _json.dumps(req):
            return "nothing to do"
        return write if not tool_results(req) else "wrote report.txt"

    ev = simple_eval([{"type": "files", "exists": ["report.txt"], "mustContain": {"report.txt": ["done"]}}], trials=2, timeout=120, instruction="Do the job.")
    d = make_plugin(tmp_path, skills={"writer": {"prompt": skill, "eval": ev}}) / "skills" / "writer"
    with AnthropicServer([Rule(reply=reply)]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cluster-e2e")
        scores = []
        for name, extra in (("local", []), ("ray", ["--parallel", "4", "--executor", "ray", "--ray-address", cluster.address])):
            code, _, stderr = run_cli(["eval", d, "--output", tmp_path / name, "--target", "claude-code", *extra])
            assert code == 0, stderr
            (item,) = read_json(next((tmp_path / name).glob("*/*.json")))["items"]
            scores.append({arm: [(t["status"], t["score"], [f["path"] for f in t["files"]]) for t in item[arm]["trials"]] for arm in ("with_arm", "without_arm")})
            logs = [e["text"] for arm in ("with_arm", "without_arm") for t in item[arm]["trials"] for e in t["log"]]
            assert any("ran on Ray node" in x for x in logs) is (name == "ray")
    assert scores[1] == scores[0], scores
    leaked = [str(f) for f in Path(cluster.temp).rglob("*") if f.is_file() and b"sk-ant-cluster-e2e" in f.read_bytes()]
    assert leaked == [], "the key is in none of Ray's files (logs, session, dashboard data)"
    assert [s[1] for s in scores[1]["with_arm"]] == [1.0, 1.0] and all(s[1] < 0.5 for s in scores[1]["without_arm"]), scores


def test_oracle_preflights_run_on_the_nodes(cluster, docker_base_image, tmp_path, monkeypatch):
    """eval-all over two Harbor tasks with --executor ray: each task's oracle (solution/solve.sh in a
    fresh container) is checked on a node and scores 1; a failing oracle refuses its task in one line."""
    from agentsproof.executor import ray_oracle

    root = tmp_path / "tasks"
    for name in ("hello-file", "json-reward"):
        shutil.copytree(HARBOR / name, root / name)
        dockerfile = root / name / "environment" / "Dockerfile"
        lines = dockerfile.read_text().splitlines()
        dockerfile.write_text("\n".join(f"FROM {docker_base_image}" if ln.startswith("FROM ") else ln for ln in lines) + "\n")
    targets = root / "targets.yaml"
    targets.write_text(yaml.safe_dump({"nothing": {"type": "command", "command": ["true"], "timeout": 60}}))
    checked: list[str] = []
    real = ray_oracle.OracleCluster.check

    async def counted(self: Any, task: Any, **kw: Any) -> Any:
        outcome = await real(self, task, **kw)
        checked.append(task.name)
        return outcome

    monkeypatch.setattr(ray_oracle.OracleCluster, "check", counted)
    args = ["eval-all", root, "--target", "nothing", "--targets", targets, "--trials", "1", "--parallel", "4", "--executor", "ray", "--ray-address", cluster.address]
    code, stdout, stderr = run_cli([*args, "--output", tmp_path / "out"])
    assert code in (0, 1), stderr + stdout
    assert len(checked) == 2, checked
    report = read_json(tmp_path / "out" / "tasks" / "eval-all-summary.json")
    assert all(it["oracle"]["score"] == 1.0 for it in report["items"]), [it.get("oracle") for it in report["items"]]
    (root / "hello-file" / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'Hello' > /app/hello.txt\n")
    code, stdout, stderr = run_cli([*args, "--output", tmp_path / "bad"])
    assert "solution/solve.sh" in stderr and "reward 0" in stderr, stderr + stdout
    assert _ours(cluster) == []


def test_a_node_killed_mid_run_has_its_container_trials_rerun_elsewhere_counted_once(cluster, docker_base_image, tmp_path):
    """Last in the module: it kills a busy worker node (and adds a fresh one). Every trial is
    scored once, the journal names the trials that ran again, no container of the run is left."""
    agent = {"type": "command", "command": ["sh", "-c", BOXED], "timeout": 120, "env": {"AGENT_SLEEP": "3"}}
    ev = _eval(tmp_path / "ev", agent, image=docker_base_image, trials=6, timeout=120)
    result: dict[str, Any] = {}

    def kill_when_busy() -> None:
        from ray._private.state import available_resources_per_node

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            free = available_resources_per_node()
            busy = [n for n in cluster.worker_nodes if free.get(n.node_id, {}).get("agentsproof_trial", SLOTS) < SLOTS]
            ours = set(_ours(cluster))
            if busy and ours:
                result["runs"] = {run for cid, run in _run_labels().items() if cid in ours}
                result["victim"] = busy[0].node_id
                cluster.remove_node(busy[0], allow_graceful=False)
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    try:
        args = ["eval", ev, "--output", tmp_path / "out", "--parallel", "6", "--executor", "ray", "--ray-address", cluster.address]
        result["code"], _, result["stderr"] = run_cli(args)
    finally:
        killer.join()
        node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": {"agentsproof_trial": SLOTS, "docker": SLOTS}}
        cluster.add_node(**node, object_store_memory=80 * 1024 * 1024, env_vars={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert "victim" in result, "a busy worker node was killed"
    assert result["code"] == 0, result["stderr"]
    report = read_json(next((tmp_path / "out").glob("*/*.json")))
    trials = _trials(report)
    assert len(trials) == 12 and all(v[0] == "scored" for v in trials.values()), trials
    journal = next((tmp_path / "out").glob("*/*.journal.jsonl")).read_text()
    rows = [r for r in (json.loads(ln) for ln in journal.splitlines()[1:]) if "item" in r]
    assert len(rows) == 12 and len({(r["arm"], r["index"]) for r in rows}) == 12, "each trial journalled once"
    assert "re-run after its Ray node died" in journal
    assert [cid for cid, run in _run_labels().items() if run in result["runs"]] == [], "the dead node's containers too"
