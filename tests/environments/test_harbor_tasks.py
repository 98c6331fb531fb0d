"""Harbor task folders run as they are on the real engine: the oracle scores 1, a do-nothing
agent 0, float and JSON rewards, malformed and missing rewards errored, the skills of a
SkillsBench-shaped task seen by the with-arm only, every container removed."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from conftest import read_json, run_cli
from docker_engine import run_containers

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"

SEES_SKILLS = r"""
# an agent that follows the house style only when a skill tells it: the one the target
# installed (with-arm) or the ones the image's Dockerfile copied (which the baseline's lacks)
if [ -f /root/.claude/skills/house-style/SKILL.md ] || [ -n "$AGENTSPROOF_SKILL_FILE" ]; then
  echo 'HOUSE-STYLE-OK: all green' > /app/report.txt
else
  echo 'status: all green' > /app/report.txt
fi
ls /root/.claude/skills /root/.codex/skills /root/.agents/skills 2>/dev/null | tr '\n' ' '
"""

IMAGE_SKILLS_ONLY = r"""
if [ -f /root/.claude/skills/house-style/SKILL.md ]; then echo 'HOUSE-STYLE-OK: green' > /app/report.txt; else echo 'plain' > /app/report.txt; fi
"""


def _tasks(tmp_path: Path, image: str, *names: str) -> Path:
    """Copies of the fixture tasks, FROM the test base image."""
    root = tmp_path / "tasks"
    for name in names:
        shutil.copytree(DATA / name, root / name)
        dockerfile = root / name / "environment" / "Dockerfile"
        lines = dockerfile.read_text().splitlines()
        dockerfile.write_text("\n".join(f"FROM {image}" if ln.startswith("FROM ") else ln for ln in lines) + "\n")
    return root


def _targets(root: Path, **commands: str) -> Path:
    path = root / "targets.yaml"
    path.write_text(yaml.safe_dump({name: {"type": "command", "command": ["sh", "-c", cmd], "timeout": 60} for name, cmd in commands.items()}))
    return path


def _owned() -> set[str]:
    """This process's containers (the engine is shared: other runs' are not ours to count)."""
    from agentsproof.isolation.environments import LABEL_OWNER, owner_label

    return set(run_containers(f"{LABEL_OWNER}={owner_label()}"))


def _trials(item: dict, arm: str = "with_arm") -> list[dict]:
    return item[arm]["trials"]


def test_the_oracle_scores_one_and_a_do_nothing_agent_zero(tmp_path: Path, docker_base_image: str) -> None:
    """hello-file: solution/solve.sh passes its own verifier; an agent that does nothing gets reward 0 (scored, not errored)."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    targets = _targets(root, nothing="true")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "hello-file", "--target", "nothing", "--targets", targets, "--trials", "2", "--output", out])
    assert code == 0, stderr + stdout
    (item,) = read_json(out / "hello-file" / "hello-file-tc-eval.json")["items"]
    assert item["oracle"]["score"] == 1.0 and item["oracle"]["tasks"][0]["passed"] is True, item["oracle"]
    trials = _trials(item)
    assert len(trials) == 2
    for t in trials:
        assert t["status"] == "scored" and t["score"] == 0.0, t
        (grader,) = t["graders"]
        assert grader["type"] == "verifier" and grader["checks"][0]["target"] == "/logs/verifier/reward.txt"
    assert item["without_arm"]["trials"] == []  # no skill: the task alone
    assert _owned() == set()  # the oracle's and every trial's container removed


def test_an_oracle_that_fails_its_verifier_refuses_the_run(tmp_path: Path, docker_base_image: str) -> None:
    """A solve.sh the task's own tests do not accept: one line naming solution/solve.sh, exit 30, no trial."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    (root / "hello-file" / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'Hello' > /app/hello.txt\n")
    targets = _targets(root, nothing="true")
    code, stdout, stderr = run_cli(["eval", root / "hello-file", "--target", "nothing", "--targets", targets, "--output", tmp_path / "runs"])
    assert code == 30, stderr + stdout
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(lines) == 1 and "task.toml" in lines[0] and "solution/solve.sh" in lines[0] and "reward 0" in lines[0], stderr
    assert not (tmp_path / "runs" / "hello-file" / "hello-file-tc-eval.json").exists()


def test_float_and_json_rewards_and_broken_verifiers_in_one_eval_all(tmp_path: Path, docker_base_image: str) -> None:
    """eval-all over four tasks: a float reward is the score, reward.json's reward and checks are read,
    a malformed reward.txt and a missing reward make errored trials with their reason, never a 0."""
    root = _tasks(tmp_path, docker_base_image, "partial-credit", "json-reward", "broken-reward", "hello-file")
    (root / "hello-file" / "tests" / "test.sh").write_text("#!/bin/bash\necho 'checked, but no reward written'\n")
    (root / "hello-file" / "solution" / "solve.sh").unlink()
    agent = "echo 1 > /app/out/1.txt 2>/dev/null; echo 3 > /app/out/3.txt 2>/dev/null; echo ready > /app/status.txt; true"
    targets = _targets(root, half=agent)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval-all", root, "--target", "half", "--targets", targets, "--output", out])
    assert code == 30 and "2 errored" in stdout, stderr + stdout  # errored items: the run's verdict is ERROR, not FAIL
    report = read_json(out / "tasks" / "eval-all-summary.json")
    items = {it["name"]: it for it in report["items"]}
    (partial,) = _trials(items["partial-credit"])
    assert partial["status"] == "scored" and partial["score"] == 0.5 and partial["passed"] is False, partial
    assert items["partial-credit"]["oracle"]["score"] == 1.0
    (js,) = _trials(items["json-reward"])
    assert js["status"] == "scored" and js["score"] == 1.0, js
    checks = {c["target"]: c["passed"] for c in js["graders"][0]["checks"]}
    assert checks == {"reward": True, "file_exists": True, "content_right": True}, js["graders"]
    (broken,) = _trials(items["broken-reward"])
    assert broken["status"] == "errored" and broken["score"] is None, broken
    assert "reward.txt is not a number: 'passed'" in broken["error"], broken["error"]
    (missing,) = _trials(items["hello-file"])
    assert missing["status"] == "errored" and "wrote no reward" in missing["error"] and "checked, but no reward written" in missing["error"], missing["error"]


def test_a_skill_bearing_task_runs_with_and_without_its_skills(tmp_path: Path, docker_base_image: str) -> None:
    """house-style (SkillsBench's shape: the Dockerfile COPYs skills into every agent folder): the
    with-arm sees them, the baseline's image is built without them and its agent does not."""
    root = _tasks(tmp_path, docker_base_image, "house-style")
    targets = _targets(root, skilled=SEES_SKILLS, image_only=IMAGE_SKILLS_ONLY)
    out = tmp_path / "runs"
    for target in ("skilled", "image_only"):
        code, stdout, stderr = run_cli(["eval", root / "house-style", "--target", target, "--targets", targets, "--trials", "2", "--output", out / target])
        assert code in (0, 1), stderr + stdout
        (item,) = read_json(out / target / "house-style" / "house-style-tc-eval.json")["items"]
        with_arm, without = _trials(item), _trials(item, "without_arm")
        assert [t["score"] for t in with_arm] == [1.0, 1.0], with_arm
        assert [t["score"] for t in without] == [0.0, 0.0], without
        assert item["delta"] == 1.0
        for t in without:
            assert "house-style" not in t["response"], t["response"]  # no agent folder of the baseline holds it
        note = next(w for w in item["warnings"] if w.startswith("skills (house-style)"))
        assert "environment/skills/ emptied" in note and "/root/.claude/skills" in note


SKILL_TAG = "HOUSE-STYLE-OK"
LIST_SKILLS = "ls /root/.claude/skills /root/.codex/skills /root/.agents/skills /root/.gemini/skills 2>&1 | tr '\\n' ' '"


def _skilled(req: dict) -> object:
    """The with-arm's model: the skill in its instructions, so it writes the house style."""
    from openai_server import response_outputs, tool_call, tool_reply

    if not response_outputs(req):
        return tool_reply(tool_call("exec_command", {"cmd": f"{LIST_SKILLS}; echo '{SKILL_TAG}: all green' > /app/report.txt"}))
    return "wrote the report"


def _plain(req: dict) -> object:
    """The baseline's model: no skill told it the house style."""
    from openai_server import response_outputs, tool_call, tool_reply

    if not response_outputs(req):
        return tool_reply(tool_call("exec_command", {"cmd": f"{LIST_SKILLS}; echo 'status: all green' > /app/report.txt"}))
    return "wrote the report"


def test_codex_in_the_task_container_with_and_without_the_tasks_skills(tmp_path: Path, docker_base_image: str, monkeypatch) -> None:
    """The real Codex CLI in the task's container against the scripted Responses server: the
    with-arm's model sees the skill (and the image's agent folders hold it), the baseline's sees
    neither — its own shell finds the agent folders of its image empty."""
    from agent_clis import codex_server
    from conftest import Rule

    for srv in codex_server(monkeypatch, tmp_path, "sk-harbor-codex-secret", "HOMEMARK"):
        srv.add(Rule(reply=_skilled, system_contains=SKILL_TAG), Rule(reply=_plain))
        root = _tasks(tmp_path, docker_base_image, "house-style")
        (root / "targets.yaml").write_text(yaml.safe_dump({"cx": {"type": "codex", "model": "codex-test-model", "timeout": 120}}))
        out = tmp_path / "runs"
        code, stdout, stderr = run_cli(["eval", root / "house-style", "--target", "cx", "--targets", root / "targets.yaml", "--output", out])
        assert code in (0, 1), stderr + stdout
        (item,) = read_json(out / "house-style" / "house-style-tc-eval.json")["items"]
        (with_trial,) = _trials(item)
        (base,) = _trials(item, "without_arm")
        assert with_trial["status"] == "scored" and with_trial["score"] == 1.0, with_trial
        assert base["status"] == "scored" and base["score"] == 0.0, base
        seen_with = " ".join(s["result"] for s in with_trial["trajectory"])
        seen_base = " ".join(s["result"] for s in base["trajectory"])
        assert "house-style" in seen_with, with_trial["trajectory"]
        assert seen_base and "house-style" not in seen_base, base["trajectory"]
        assert "sk-harbor-codex-secret" not in (out / "house-style" / "house-style-tc-eval.json").read_text()
        assert _owned() == set()


BOTH_INSTALLED = r"""
# the house style only when both of the task's skills were installed in the workspace
if [ -f .agents/skills/house-style/SKILL.md ] && [ -f .agents/skills/tone/SKILL.md ]; then
  echo 'HOUSE-STYLE-OK: all green' > /app/report.txt
else
  echo 'status: all green' > /app/report.txt
fi
ls .agents/skills 2>&1 | tr '\n' ' '
"""


def test_every_skill_of_a_task_is_installed_in_the_with_arm_only(tmp_path: Path, docker_base_image: str) -> None:
    """A task with two skills: the with-arm's target installs both, the baseline's neither."""
    root = _tasks(tmp_path, docker_base_image, "house-style")
    tone = root / "house-style" / "environment" / "skills" / "tone"
    tone.mkdir()
    (tone / "SKILL.md").write_text("---\nname: tone\ndescription: friendly tone\n---\nBe friendly.\n")
    targets = _targets(root, both=BOTH_INSTALLED)
    out = tmp_path / "runs"
    atif = tmp_path / "atif"
    code, stdout, stderr = run_cli(["eval", root / "house-style", "--target", "both", "--targets", targets, "--output", out, "--atif", atif])
    assert code in (0, 1), stderr + stdout
    (item,) = read_json(out / "house-style" / "house-style-tc-eval.json")["items"]
    (with_trial,) = _trials(item)
    (base,) = _trials(item, "without_arm")
    assert with_trial["score"] == 1.0 and "house-style tone" in with_trial["response"], with_trial
    assert base["score"] == 0.0 and "house-style" not in base["response"], base
    # --atif: each trial as Harbor writes one, its trajectory and its reward
    for arm, reward in (("with", "1"), ("without", "0")):
        doc = read_json(atif / f"house-style__{arm}-1" / "agent" / "trajectory.json")
        assert doc["schema_version"].startswith("ATIF-v1.") and doc["extra"]["agentsproof"]["arm"] == arm
        assert (atif / f"house-style__{arm}-1" / "verifier" / "reward.txt").read_text().strip() == reward


def test_the_verifier_runs_as_the_tasks_verifier_user(tmp_path: Path, docker_base_image: str) -> None:
    """[verifier] user: test.sh runs as that user (here nobody), and can still write its reward."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    toml = root / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", '[verifier]\nuser = "nobody"\n'))
    test_sh = root / "hello-file" / "tests" / "test.sh"
    test_sh.write_text(test_sh.read_text().replace("mkdir -p /logs/verifier\n", 'mkdir -p /logs/verifier\necho "as $(id -un)"\n'))
    targets = _targets(root, hello="echo 'Hello, world!' > /app/hello.txt")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "hello-file", "--target", "hello", "--targets", targets, "--output", out])
    assert code == 0, stderr + stdout
    (item,) = read_json(out / "hello-file" / "hello-file-tc-eval.json")["items"]
    (trial,) = _trials(item)
    assert trial["score"] == 1.0 and "as nobody" in trial["graders"][0]["checks"][0]["evidence"], trial["graders"]


LIMITS = r"""
# the container's caps, from cgroup v2 or v1
mem=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
if [ -f /sys/fs/cgroup/cpu.max ]; then cpu=$(cat /sys/fs/cgroup/cpu.max); else cpu="$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi
printf 'memory=%s\ncpu=%s\ncwd=%s\n' "$mem" "$cpu" "$(pwd)"
"""


def test_the_tasks_cpus_memory_and_workdir_are_the_containers(tmp_path: Path, docker_base_image: str) -> None:
    """hello-file's [environment] cpus = 1 and memory_mb = 512 are the trial container's caps; its workdir the Dockerfile's WORKDIR."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    targets = _targets(root, limits=LIMITS)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "hello-file", "--target", "limits", "--targets", targets, "--output", out, "--no-oracle"])
    assert code in (0, 1), stderr + stdout
    (item,) = read_json(out / "hello-file" / "hello-file-tc-eval.json")["items"]
    (trial,) = _trials(item)
    fields = dict(line.split("=", 1) for line in trial["response"].splitlines() if "=" in line)
    assert fields["memory"].strip() == str(512 * 1024 * 1024), trial["response"]
    quota, period = fields["cpu"].split()
    assert int(quota) == int(period), trial["response"]  # one CPU
    assert fields["cwd"].strip() == "/app"


def _claude_reply(tag: str):
    """A scripted Claude model: one Bash call listing the agent folders and writing the report, then done."""
    from anthropic_server import tool_results, tool_use

    def reply(req: dict) -> object:
        if not tool_results(req):
            return tool_use("Bash", {"command": f"{LIST_SKILLS}; echo '{tag}: all green' > /app/report.txt", "description": "write the report"})
        return "wrote the report"

    return reply


def test_claude_code_in_the_task_container_with_and_without_the_tasks_skills(tmp_path: Path, docker_base_image: str, monkeypatch) -> None:
    """The real Claude Code CLI in the task's container against the scripted Messages server:
    the with-arm is given the skill and its image's .claude/skills holds it; the baseline neither."""
    from agent_clis import claude_server
    from conftest import Rule

    for srv in claude_server(monkeypatch, tmp_path, "sk-ant-harbor-secret", "HOMEMARK"):
        srv.add(Rule(reply=_claude_reply(SKILL_TAG), system_contains=SKILL_TAG), Rule(reply=_claude_reply("status")))
        root = _tasks(tmp_path, docker_base_image, "house-style")
        spec = {"cc": {"type": "claude-code", "model": "claude-test-model", "inject": "system", "timeout": 120}}
        (root / "targets.yaml").write_text(yaml.safe_dump(spec))
        out = tmp_path / "runs"
        code, stdout, stderr = run_cli(["eval", root / "house-style", "--target", "cc", "--targets", root / "targets.yaml", "--output", out])
        assert code in (0, 1), stderr + stdout
        (item,) = read_json(out / "house-style" / "house-style-tc-eval.json")["items"]
        (with_trial,) = _trials(item)
        (base,) = _trials(item, "without_arm")
        assert with_trial["status"] == "scored" and with_trial["score"] == 1.0, with_trial
        assert base["status"] == "scored" and base["score"] == 0.0, base
        assert "house-style" in " ".join(s["result"] for s in with_trial["trajectory"]), with_trial["trajectory"]
        seen_base = " ".join(s["result"] for s in base["trajectory"])
        assert seen_base and "house-style" not in seen_base, base["trajectory"]
        assert "sk-ant-harbor-secret" not in (out / "house-style" / "house-style-tc-eval.json").read_text()
        assert _owned() == set()


def test_regrade_reruns_the_verifier_in_a_fresh_container_of_the_kept_workspace(tmp_path: Path, docker_base_image: str) -> None:
    """regrade re-runs tests/test.sh in a fresh container whose workdir is the recorded
    workspace (the agent's file there, the image file it deleted gone): the same reward with
    the same tests, the new tests' reward once they are edited, every container removed."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    targets = _targets(root, hello="echo 'Hello, world!' > /app/hello.txt; rm /app/README.txt")
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", root / "hello-file", "--target", "hello", "--targets", targets, "--trials", "2", "--output", out])
    assert code == 0, stderr + stdout
    report = out / "hello-file" / "hello-file-tc-eval.json"
    for t in _trials(read_json(report)["items"][0]):
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert {(f["path"], f["status"]) for f in t["files"]} == {("hello.txt", "created"), ("README.txt", "deleted")}, t["files"]

    code, stdout, stderr = run_cli(["regrade", report])
    assert code == 0, stderr + stdout
    for t in _trials(read_json(out / "hello-file" / "hello-file-tc-eval-regraded.json")["items"][0]):
        assert t["status"] == "scored" and t["score"] == 1.0, t
        assert t["graders"][0]["type"] == "verifier" and "reward 1" in t["graders"][0]["reasoning"], t["graders"]

    # tests edited: the reward is now 1 only while the image's README.txt is there (the agent deleted it)
    (root / "hello-file" / "tests" / "test.sh").write_text(
        "#!/bin/bash\nmkdir -p /logs/verifier\nif [ -f /app/README.txt ] && [ -f /app/hello.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
    )
    code, stdout, stderr = run_cli(["regrade", report])
    assert code == 0, stderr + stdout
    for t in _trials(read_json(out / "hello-file" / "hello-file-tc-eval-regraded.json")["items"][0]):
        assert t["status"] == "scored" and t["score"] == 0.0, t
    assert _owned() == set()


def test_the_agents_timeout_is_the_targets_then_the_command_lines_then_the_tasks(tmp_path: Path, docker_base_image: str) -> None:
    """[agent] timeout_sec stops a slow agent (errored, the limit named); tc-eval --timeout
    replaces it; a target's own timeout: wins over both; the verifier keeps its own."""
    root = _tasks(tmp_path, docker_base_image, "hello-file")
    toml = root / "hello-file" / "task.toml"
    toml.write_text(toml.read_text().replace("[agent]\ntimeout_sec = 60.0", "[agent]\ntimeout_sec = 3.0"))
    slow = "sleep 8; echo 'Hello, world!' > /app/hello.txt"
    path = root / "targets.yaml"
    path.write_text(
        yaml.safe_dump({"slow": {"type": "command", "command": ["sh", "-c", slow]}, "patient": {"type": "command", "command": ["sh", "-c", slow], "timeout": 30}})
    )

    def trial(*args: str) -> dict:
        out = tmp_path / f"runs-{len(list(tmp_path.glob('runs-*')))}"
        code, stdout, stderr = run_cli(["tc-eval", root / "hello-file", "--targets", path, "--output", out, *args])
        (t,) = _trials(read_json(next(out.rglob("hello-file-tc-eval.json")))["items"][0])
        return {"code": code, "log": stderr + stdout, **t}

    t = trial("--target", "slow")  # the task's 3 s
    assert t["status"] == "errored" and "timed out after 3" in t["error"], t
    t = trial("--target", "slow", "--timeout", "30")  # the command line's
    assert t["status"] == "scored" and t["score"] == 1.0, t
    t = trial("--target", "patient", "--timeout", "3")  # the target's own, over both
    assert t["status"] == "scored" and t["score"] == 1.0, t
    assert _owned() == set()
