"""Harbor task folders as items: what task.toml's keys become, what is refused by name (no engine needed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from agentsproof.formats import registry
from agentsproof.formats.base import ItemRequest

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


def _copy(tmp_path: Path, name: str = "hello-file") -> Path:
    dest = tmp_path / name
    shutil.copytree(DATA / name, dest)
    return dest


def _load(path: Path, target: str | None = "nothing", **kw: object):
    return registry.load(path, "eval", ItemRequest(target=target, **kw))  # type: ignore[arg-type]


def test_the_registry_detects_a_task_folder_and_its_task_toml() -> None:
    """The registry detects a task folder and its task toml."""
    assert registry.detect(DATA / "hello-file", "eval").name == "harbor"
    assert registry.detect(DATA / "hello-file" / "task.toml", "eval").name == "harbor"
    assert registry.detect(DATA / "hello-file" / "task.toml", "eval-all").name == "harbor"
    assert registry.detect(DATA / "hello-file", "lint").name == "harbor"
    assert registry.discoverable(DATA / "hello-file" / "task.toml")
    assert not registry.discoverable(DATA / "hello-file" / "instruction.md")
    assert not registry.discoverable(DATA / "hello-file")


def test_eval_all_discovery_finds_every_task_below_a_folder() -> None:
    """Eval all discovery finds every task below a folder."""
    from agentsproof.formats.layout import discover_evals

    found = {p.parent.name for p in discover_evals(DATA)}
    assert found == {"hello-file", "partial-credit", "json-reward", "broken-reward", "house-style"}


def test_a_task_becomes_one_case_item_with_its_keys_honoured() -> None:
    """A task becomes one case item with its keys honoured."""
    loaded = _load(DATA / "hello-file")
    assert loaded.format == "harbor" and loaded.report == "tc-eval"
    (item,) = loaded.items
    assert item.prompt.startswith("Create the file `/app/hello.txt`")
    assert item.target == "nothing" and item.kind == "case"
    assert item.timeout == 60.0 and item.threshold == 1.0
    (grader,) = item.graders
    assert grader.type == "verifier" and grader.timeout == 60.0 and grader.tests == "tests" and grader.script == "test.sh"
    env = item.environment
    assert env is not None
    assert env.dockerfile == (DATA / "hello-file" / "environment" / "Dockerfile").resolve()
    assert env.context == (DATA / "hello-file" / "environment").resolve()
    assert (env.cpus, env.memory_mb, env.disk_mb, env.allow_internet, env.build_timeout) == (1.0, 512, 256, False, 300.0)
    assert loaded.single_arm  # no skill: the task alone
    assert loaded.oracle_plan is not None and loaded.oracle_plan.tasks[0].oracle.script == "solution/solve.sh"


def test_the_command_line_replaces_the_task_timeouts_and_threshold() -> None:
    """The command line replaces the task timeouts and threshold."""
    (item,) = _load(DATA / "partial-credit", timeout=5.0, threshold=0.5, trials=3).items
    assert (item.timeout, item.threshold, item.trials) == (5.0, 0.5, 3)
    assert item.environment is not None and item.environment.memory_mb == 512  # memory = "512M"


def test_harbor_defaults_when_task_toml_says_nothing(tmp_path: Path) -> None:
    """Harbor defaults when task toml says nothing."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text('version = "1.0"\n', encoding="utf-8")
    (item,) = _load(task).items
    assert item.timeout == 600.0  # Harbor's [agent] timeout_sec
    assert item.graders[0].timeout == 600.0
    assert item.environment is not None and item.environment.allow_internet is True  # Harbor's default


def test_verifier_env_is_passed_and_a_variable_is_taken_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verifier env is passed and a variable is taken from the environment."""
    (item,) = _load(DATA / "json-reward").items
    assert item.graders[0].env == {"EXPECTED": "ready"}
    task = _copy(tmp_path, "json-reward")
    (task / "task.toml").write_text('[verifier]\nenv = { TOKEN = "${HARBOR_TEST_TOKEN}" }\n', encoding="utf-8")
    monkeypatch.setenv("HARBOR_TEST_TOKEN", "tok-very-secret-123")
    (item,) = _load(task).items
    assert item.graders[0].env == {"TOKEN": "tok-very-secret-123"}
    from agentsproof.core.scrub import scrub

    assert "tok-very-secret-123" not in scrub("the token is tok-very-secret-123")
    monkeypatch.delenv("HARBOR_TEST_TOKEN")
    with pytest.raises(InputError) as err:
        _load(task)
    assert err.value.field == "verifier.env.TOKEN" and "HARBOR_TEST_TOKEN" in err.value.message


def test_a_skill_bearing_task_compares_arms_and_its_baseline_image_loses_the_skills() -> None:
    """A skill bearing task compares arms and its baseline image loses the skills."""
    loaded = _load(DATA / "house-style")
    (item,) = loaded.items
    assert not loaded.single_arm
    assert item.skill is not None and item.skill.name == "house-style"
    assert item.skill.text.startswith("---\nname: house-style")
    assert item.environment is not None and item.environment.baseline_empty == ("skills",)
    (note,) = item.warnings
    assert "house-style" in note and "environment/skills/ emptied" in note and "/root/.claude/skills" in note


def test_a_skill_folder_named_by_skills_dir_is_found_through_the_dockerfile(tmp_path: Path) -> None:
    """A skill folder named by skills dir is found through the dockerfile."""
    task = _copy(tmp_path, "house-style")
    shutil.move(task / "environment" / "skills", task / "environment" / "task-skills")
    (task / "environment" / "Dockerfile").write_text("FROM agentsproof-dev/bookworm:base\nCOPY task-skills/ /skills/\n", encoding="utf-8")
    (task / "task.toml").write_text('[environment]\nskills_dir = "/skills"\n', encoding="utf-8")
    (item,) = _load(task).items
    assert item.skill is not None and item.skill.name == "house-style"
    assert item.environment is not None and item.environment.baseline_empty == ("task-skills",)
    (task / "environment" / "Dockerfile").write_text("FROM agentsproof-dev/bookworm:base\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        _load(task)
    assert err.value.field == "environment.skills_dir"


def test_the_dockerfile_wins_over_docker_image(tmp_path: Path) -> None:
    """The dockerfile wins over docker image."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text('[environment]\ndocker_image = "someone/prebuilt:1"\n', encoding="utf-8")
    (item,) = _load(task).items
    assert item.environment is not None and item.environment.dockerfile is not None and item.environment.image is None
    (task / "environment" / "Dockerfile").unlink()
    (item,) = _load(task).items
    assert item.environment is not None and item.environment.image == "someone/prebuilt:1" and item.environment.dockerfile is None


def test_a_harbor_task_needs_an_agent_target() -> None:
    """A harbor task needs an agent target."""
    with pytest.raises(InputError) as err:
        _load(DATA / "hello-file", target=None)
    assert err.value.field == "--target" and "Harbor task" in err.value.message


REFUSED = [
    ('[[steps]]\nname = "one"\n', None, "steps"),
    ("[environment]\ngpus = 1\n", None, "environment.gpus"),
    ('[environment]\ntpu = { type = "v6e", topology = "2x4" }\n', None, "environment.tpu"),
    ('[[environment.mcp_servers]]\nname = "search"\ntransport = "stdio"\ncommand = "x"\n', None, "environment.mcp_servers"),
    ('[environment]\nos = "windows"\n', None, "environment.os"),
    ("[verifier.environment]\ncpus = 2\n", None, "verifier.environment"),
    ('[agent]\nuser = "agent"\n', None, "agent.user"),
    ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.com"]\n', None, "environment.network_mode"),
    ('[environment]\nenv = { TOKEN = "x" }\n', None, "environment.env"),
    ('[environment.healthcheck]\ncommand = "true"\n', None, "environment.healthcheck"),
    ('[verifier]\nenvironment_mode = "separate"\n', None, "verifier.environment_mode"),
    ('[[verifier.collect]]\ncommand = "true"\nservice = "db"\n', None, "verifier.collect"),
    ('[agent]\nnetwork_mode = "public"\n', None, "agent.network_mode"),
    ("", "environment/docker-compose.yaml", "environment/docker-compose.yaml"),
    ("", "steps/one/instruction.md", "steps"),
]


@pytest.mark.parametrize(("toml", "extra_file", "key"), REFUSED)
def test_keys_that_cannot_be_honoured_are_refused_by_name(tmp_path: Path, cli, toml: str, extra_file: str | None, key: str) -> None:
    """Keys that cannot be honoured are refused by name."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text('version = "1.0"\n' + toml, encoding="utf-8")
    if extra_file:
        (task / extra_file).parent.mkdir(parents=True, exist_ok=True)
        (task / extra_file).write_text("services: {}\n", encoding="utf-8")
    code, out, err = cli(["eval", str(task), "--target", "nothing", "--output", str(tmp_path / "runs")])
    assert code == 30, err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert "task.toml" in lines[0] and f": {key}: " in lines[0]


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[agent]\ntimeout_sec = -5\n", "agent.timeout_sec"),
        ('[verifier]\ntimeout_sec = "long"\n', "verifier.timeout_sec"),
        ('[environment]\nallow_internet = "yes"\n', "environment.allow_internet"),
        ('[environment]\nmemory = "lots"\n', "environment.memory"),
        ('[environment]\nworkdir = "app"\n', "environment.workdir"),
        ("[environment]\ncpus = 0\n", "environment.cpus"),
    ],
)
def test_bad_values_name_their_key(tmp_path: Path, toml: str, key: str) -> None:
    """Bad values name their key."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InputError) as err:
        _load(task)
    assert err.value.field == key and err.value.source is not None and err.value.source.endswith("task.toml")


def test_broken_files_are_one_line_each(tmp_path: Path) -> None:
    """Broken files are one line each."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text("[agent\ntimeout_sec = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="not valid TOML"):
        _load(task)
    (task / "task.toml").write_text("", encoding="utf-8")
    (task / "tests" / "test.sh").unlink()
    with pytest.raises(InputError, match="tests/test.sh"):
        _load(task)
    task = _copy(tmp_path, "json-reward")
    (task / "environment" / "Dockerfile").unlink()
    with pytest.raises(InputError) as err:
        _load(task)
    assert err.value.field == "environment" and "docker_image" in err.value.message
    (task / "instruction.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(InputError, match="instruction"):
        _load(task)


def test_an_unknown_key_is_named_once_and_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown key is named once and ignored."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text('[environment]\nshiny_new_key = 3\n\n[task]\nname = "org/hello"\n', encoding="utf-8")
    (item,) = _load(task).items
    assert item.name == "hello-file"
    err = capsys.readouterr().err
    assert "environment.shiny_new_key" in err and "ignored" in err and "task.name" not in err


@pytest.mark.parametrize(
    ("toml", "internet"),
    [
        ('[environment]\nnetwork_mode = "no-network"\n', False),
        ('[environment]\nnetwork_mode = "public"\n', True),
        ("[environment]\nallow_internet = false\n", False),
        ('[environment]\nallow_internet = true\nnetwork_mode = "no-network"\n', False),
    ],
)
def test_network_mode_and_the_older_allow_internet(tmp_path: Path, toml: str, internet: bool) -> None:
    """Harbor 0.26's network_mode wins over the deprecated allow_internet."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text(toml, encoding="utf-8")
    (item,) = _load(task).items
    assert item.environment is not None and item.environment.allow_internet is internet


def test_a_task_with_several_skills_installs_them_all_in_its_with_arm(tmp_path: Path) -> None:
    """Two skills: the with-arm installs both (none is privileged as the system prompt)."""
    task = _copy(tmp_path, "house-style")
    extra = task / "environment" / "skills" / "tone"
    extra.mkdir()
    (extra / "SKILL.md").write_text("---\nname: tone\ndescription: friendly tone\n---\nBe friendly.\n", encoding="utf-8")
    (item,) = _load(task).items
    assert [s.name for s in item.with_skills] == ["house-style", "tone"]
    assert item.skill is not None and item.skill.name == "house-style"
    from agentsproof.model.items import BASELINE_SYSTEM_PROMPT

    assert item.system_prompt == BASELINE_SYSTEM_PROMPT
    assert "each installed by the target" in item.warnings[0]


TB2_STYLE = """artifacts = ["/app/report.json"]

[task]
name = "org/log-report"
description = "Parse an access log into a JSON summary."

[metadata]
category = "data_processing_and_etl"
expert_time_estimate_hours = 0.3

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 2048
storage_mb = 10240
gpus = 0
allow_internet = true
mcp_servers = []
"""


def test_a_terminal_bench_style_task_toml_loads_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The keys a Terminal-Bench 2.0 task writes (gpus = 0, mcp_servers = [], artifacts) load, none named as unknown."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text(TB2_STYLE, encoding="utf-8")
    (item,) = _load(task).items
    env = item.environment
    assert env is not None and (env.cpus, env.memory_mb, env.disk_mb, env.allow_internet) == (1.0, 2048, 10240, True)
    assert item.timeout == 120.0 and item.graders[0].timeout == 120.0
    assert "not a key agentsproof knows" not in capsys.readouterr().err


def test_eval_files_inside_a_task_folder_are_the_tasks_not_evals_of_their_own(tmp_path: Path) -> None:
    """A skill of a SkillsBench task that carries its own evals/evals.json: eval-all finds the task only."""
    from agentsproof.formats.layout import discover_evals

    task = _copy(tmp_path, "house-style")
    evals = task / "environment" / "skills" / "house-style" / "evals"
    evals.mkdir()
    (evals / "evals.json").write_text('{"skill_name": "house-style", "evals": []}', encoding="utf-8")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "evals").mkdir()
    (tmp_path / "other" / "evals" / "evals.json").write_text('{"skill_name": "x", "evals": []}', encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in discover_evals(tmp_path)] == ["house-style/task.toml", "other/evals/evals.json"]


def test_a_schema_1_4_task_toml_with_empty_tables_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Harbor 0.26's own scaffold: schema_version 1.4, artifacts = [], [task] version, collect = [], an empty [verifier.env]."""
    task = _copy(tmp_path)
    (task / "task.toml").write_text(
        'schema_version = "1.4"\nartifacts = []\n\n[task]\nname = "o/t"\nversion = "1.0.0"\nauthors = []\n\n'
        "[verifier]\ntimeout_sec = 90\ncollect = []\n\n[verifier.env]\n\n[agent]\ntimeout_sec = 45\n",
        encoding="utf-8",
    )
    (item,) = _load(task).items
    assert item.timeout == 45.0 and item.graders[0].timeout == 90.0 and item.graders[0].env == {}
    assert "not a key agentsproof knows" not in capsys.readouterr().err


def test_an_aa_run_of_a_task_whose_image_holds_its_skills_is_refused(tmp_path: Path, cli) -> None:
    """--aa runs the baseline in both arms; a task whose with-arm image has its skills built in cannot."""
    task = _copy(tmp_path, "house-style")
    (task / "solution" / "solve.sh").unlink()  # no oracle: the refusal comes before any engine is asked
    (task / "targets.yaml").write_text("agent:\n  type: command\n  command: ['true']\n", encoding="utf-8")
    code, out, err = cli(["eval", task, "--target", "agent", "--aa", "--output", tmp_path / "runs"])
    assert code == 30 and "--aa" in err and "skills built in" in err, err
