"""Extensions from installed packages (the ``agentsproof.*`` entry-point groups).

The example plugin (examples/plugin: a ``max_words`` grader and an ``echo`` target) is
installed for real with pip from a copy outside the repo, into its own folder, and
``python -m agentsproof`` runs an eval with it in a fresh interpreter. The refusals (a
clash with a built-in name, a plugin that does not import) use small packages declared by
their dist-info folders, the way an installer leaves them."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugin"


def _env(*paths: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSPROOF_")}
    env.update(AGENTSPROOF_NO_CACHE="1", AGENTSPROOF_RETRY_BASE_DELAY="0", PYTHONPATH=os.pathsep.join([*map(str, paths), str(ROOT)]))
    return env


def _agentsproof(args: list[str], *paths: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentsproof", *args], env=_env(*paths), cwd=cwd, capture_output=True, text=True, timeout=300)


def _can_build_without_isolation() -> bool:
    """setuptools builds a wheel on its own from 70.1; before that it needs ``wheel``."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        from importlib.metadata import version

        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except Exception:
        return False
    return (major, minor) >= (70, 1)


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(site folder the plugin is installed into, the copy of examples/plugin it came from)."""
    base = tmp_path_factory.mktemp("plugin")
    copy = base / "src"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    site = base / "site"
    isolation = ["--no-build-isolation"] if _can_build_without_isolation() else []  # else pip fetches setuptools for the build
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *isolation, "--target", str(site), str(copy)],
        capture_output=True, text=True, timeout=600, cwd=base,
    )
    assert out.returncode == 0, out.stderr
    assert not (site / "agentsproof").exists(), "the plugin must not bring agentsproof along"
    return site, copy


def test_an_eval_runs_the_plugins_target_graded_by_its_grader(installed_example, tmp_path):
    site, copy = installed_example
    out = tmp_path / "runs"
    done = _agentsproof(["eval", str(copy / "eval"), "--output", str(out)], site, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(next(out.rglob("*.json")).read_text(encoding="utf-8"))
    item = report["items"][0]
    assert item["target"] == "echo" and report["provider"] == "none"
    for arm, answer, score in (("with_arm", "Hello, in five words or fewer.", 1.0), ("without_arm", None, 0.0)):
        trials = item[arm]["trials"]
        assert len(trials) == 2
        for t in trials:
            assert t["status"] == "scored" and t["score"] == score, t
            assert [g["type"] for g in t["graders"]] == ["max_words"]
            check = t["graders"][0]["checks"][0]
            assert check["target"] == "at most 8 words" and check["passed"] is (score == 1.0)
            if answer is not None:
                assert t["response"] == answer
            # the plugin grader says logged=False: the runner adds no score line of its own
            assert t["log"], "the trial has a log"
            assert not [e for e in t["log"] if e["role"] == "judge" and e["text"].startswith("max_words:")], t["log"]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0


def test_a_plugin_graders_lint_hook_runs(installed_example, tmp_path):
    """``agentsproof lint`` calls an installed grader's own lint hook (the registry, not the
    in-tree table, is asked which grader a ``type`` is)."""
    site, copy = installed_example
    ev = tmp_path / "eval"
    shutil.copytree(copy / "eval", ev)
    done = _agentsproof(["lint", str(ev)], site, cwd=tmp_path)
    assert "[too-few-cases]" in done.stdout and "never-fails" not in done.stdout, done.stdout + done.stderr
    text = (ev / "eval.yaml").read_text(encoding="utf-8")
    (ev / "eval.yaml").write_text(text.replace("words: 8", "words: 5000"), encoding="utf-8")
    done = _agentsproof(["lint", str(ev)], site, cwd=tmp_path)
    assert "Traceback" not in done.stderr
    out = done.stdout + done.stderr
    assert "never-fails" in out and "5000 words is more than any answer gives" in out, out
    assert "task.graders[0].words" in out, out


def test_doctor_lists_the_plugins(installed_example, tmp_path):
    site, _ = installed_example
    done = _agentsproof(["doctor", "--provider", "openai"], site, cwd=tmp_path)  # no URL: the provider part fails, after the plugins
    lines = done.stdout.splitlines()
    assert "plugin: max_words (agentsproof.graders, agentsproof-example-plugin 0.1.0): ok" in lines
    assert "plugin: echo (agentsproof.targets, agentsproof-example-plugin 0.1.0): ok" in lines
    assert "Traceback" not in done.stderr


def test_the_plugins_target_is_named_in_target_help(installed_example, tmp_path):
    site, _ = installed_example
    done = _agentsproof(["eval", "--help"], site, cwd=tmp_path)
    assert done.returncode == 0 and "'echo'" in " ".join(done.stdout.split())


# ------------------------------------------------ refusals, with packages declared by dist-info


def _package(folder: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str] | None = None) -> Path:
    """An installed package as pip leaves it: ``<name>-1.0.dist-info`` and its modules."""
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    ini = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in entry_points.items())
    (info / "entry_points.txt").write_text(ini, encoding="utf-8")
    for module, text in (modules or {}).items():
        (folder / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


PROVIDER_MODULE = """
from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm.provider_entry import ProviderEntry


def build(options):
    raise ProviderUnavailable("provider fakeprov: FAKEPROV_URL is not set")


PROVIDER = ProviderEntry(name="fakeprov", build=build, configure_hint="fakeprov: set FAKEPROV_URL")
"""


FORMAT_MODULE = """
from pathlib import Path

from agentsproof.core.errors import InputError


class Fake:
    name = "fake"

    def detect(self, path):
        return Path(path).suffix == ".fake"

    def discoverable(self, path):
        return False

    def load(self, path, request):
        raise InputError(Path(path).name, "cases", "the fake format reads no cases")


FORMAT = Fake()
"""


@pytest.fixture
def odd_packages(tmp_path: Path) -> Path:
    return _package(tmp_path / "site", "odd-plugins", {
        "agentsproof.graders": {"deterministic": "odd_grader:GRADER"},  # a built-in name
        "agentsproof.targets": {"broken": "odd_missing_module:Target", "wrongkind": "odd_target:NotATarget"},
        "agentsproof.providers": {"fakeprov": "odd_provider:PROVIDER"},
        "agentsproof.formats": {"fake": "odd_format:FORMAT"},
    }, {"odd_grader": "GRADER = None\n", "odd_target": "NotATarget = 3\n", "odd_provider": PROVIDER_MODULE, "odd_format": FORMAT_MODULE})


def test_doctor_says_which_plugins_fail_and_why(odd_packages, tmp_path):
    done = _agentsproof(["doctor", "--provider", "fakeprov", "--model", "m"], odd_packages, cwd=tmp_path)
    assert "Traceback" not in done.stderr + done.stdout
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("plugin: ")]
    assert lines == [
        "plugin: fakeprov (agentsproof.providers, odd-plugins 1.0): ok",
        "plugin: deterministic (agentsproof.graders, odd-plugins 1.0): failed: the name 'deterministic' is built in",
        "plugin: broken (agentsproof.targets, odd-plugins 1.0): failed: failed to load: ModuleNotFoundError: No module named 'odd_missing_module'",
        "plugin: wrongkind (agentsproof.targets, odd-plugins 1.0): failed: is not usable: not a subclass of agentsproof.targets.base.Target",
        "plugin: fake (agentsproof.formats, odd-plugins 1.0): ok",
    ]
    # the plugin provider was accepted by --provider and built: its own set-up error is shown
    assert "fix: provider fakeprov: FAKEPROV_URL is not set" in done.stdout and done.returncode == 30


def test_a_target_plugin_that_does_not_import_is_one_line_exit_30(odd_packages, tmp_path):
    ev = tmp_path / "ev"
    ev.mkdir()
    (ev / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nBe brief.\n", encoding="utf-8")
    (ev / "eval.yaml").write_text(textwrap.dedent("""
        version: "2"
        skill: SKILL.md
        execution: {mode: agent, target: broken}
        task: {name: t, instruction: Say hi., graders: [{type: deterministic, checks: [hi]}]}
    """), encoding="utf-8")
    done = _agentsproof(["eval", str(ev), "--output", str(tmp_path / "runs")], odd_packages, cwd=tmp_path)
    assert done.returncode == 30, done.stderr
    assert "Traceback" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("warning: ")]
    assert len(errors) == 1, done.stderr
    assert "plugin 'broken' (entry point agentsproof.targets = 'odd_missing_module:Target', package odd-plugins 1.0) failed to load" in errors[0]
    assert "No module named 'odd_missing_module'" in errors[0]
    # the clash with a built-in grader name is refused, said once
    refused = [ln for ln in done.stderr.splitlines() if "is refused: the name 'deterministic' is built in" in ln]
    assert len(refused) == 1, done.stderr


def test_a_provider_plugin_is_accepted_by_provider_but_not_listed_in_help(odd_packages, tmp_path):
    done = _agentsproof(["eval", "--help"], odd_packages, cwd=tmp_path)
    assert done.returncode == 0 and "fakeprov" not in done.stdout  # --help lists the in-tree table
    done = _agentsproof(["doctor", "--provider", "nosuch"], odd_packages, cwd=tmp_path)
    assert done.returncode == 30 and "'nosuch' is not one of 'auto'," in done.stderr  # an unknown name is still a usage error


# ------------------------------------------------ lazy: in-tree lookups read no package metadata

LAZY = r"""
import json, sys
from agentsproof.core import entrypoints
scanned = []
real = entrypoints.installed
entrypoints.installed = lambda group: scanned.append(group) or real(group)
from agentsproof.llm import registry as providers
from agentsproof.targets import registry as targets
from agentsproof.formats import registry as formats
providers.entry("openai"); providers.resolve_provider_name("openai"); providers.resolve_models("openai", "m", None)
targets.target_class("command"); formats.get("promptfoo")
before = list(scanned)
try:
    targets.target_class("nosuch")
except KeyError:
    pass
print(json.dumps([before, sorted(set(scanned))]))
"""


def test_in_tree_lookups_read_no_package_metadata(tmp_path):
    out = subprocess.run([sys.executable, "-c", LAZY], env=_env(), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    before, after = json.loads(out.stdout)
    assert before == [], "a lookup of an in-tree name scanned the installed packages"
    assert after == ["agentsproof.targets"], "a miss looks at the installed packages of that one group"


def test_a_format_plugin_is_detected_by_the_run_commands_and_lint(odd_packages, tmp_path):
    path = tmp_path / "cases.fake"
    path.write_text("anything\n", encoding="utf-8")
    done = _agentsproof(["tc-eval", str(path), "--output", str(tmp_path / "runs")], odd_packages, cwd=tmp_path)
    assert done.returncode == 30 and "cases.fake: cases: the fake format reads no cases" in done.stderr, done.stderr
    done = _agentsproof(["lint", str(path)], odd_packages, cwd=tmp_path)
    assert done.returncode == 1 and "cases.fake: cases: error: the fake format reads no cases" in done.stdout, done.stdout + done.stderr
