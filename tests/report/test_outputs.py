"""Reports stay inside --output, are written atomically, are checked writable before the
first model call, and Markdown reports are inert whatever the model or provider said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval


def _files_outside(tmp_path: Path, output: Path) -> list[Path]:
    return [p for p in tmp_path.rglob("*.html") if not p.resolve().is_relative_to(output.resolve())]


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/agentsproof-absolute-name", "a/b\\c", "..", "   ", "two\nlines"])
def test_hostile_item_names_are_refused_at_load(name, byok_env, tmp_path):
    plugin = make_plugin(tmp_path / "src", skills={"s": {"eval": simple_eval(name=name)}})
    out = tmp_path / "work" / "runs"
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 30, err
    line = err.strip()
    assert "\n" not in line and "eval.yaml: name:" in line and "Traceback" not in err
    assert not out.exists() and not _files_outside(tmp_path, out)
    assert not Path("/tmp/agentsproof-absolute-name-eval.html").exists()
    assert byok_env.requests == [], "refused before any model call"


@pytest.mark.parametrize("name", ["weird: name*?", "ünïcode name", "-.-"])
def test_odd_item_names_stay_inside_output(name, byok_env, tmp_path):
    plugin = make_plugin(tmp_path / "src", skills={"s": {"eval": simple_eval(name=name)}})
    out = tmp_path / "work" / "runs"
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 0, err
    written = sorted(p for p in out.rglob("*") if p.is_file())
    # md, json, html, journal, history copy, and the run folder's md, json, html
    assert len(written) == 8 and all(p.resolve().is_relative_to(out.resolve()) for p in written)
    assert not _files_outside(tmp_path, out)


def test_existing_symlink_at_a_report_path_is_replaced_not_followed(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    out = tmp_path / "runs"
    (out / "demo-plugin").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch")
    (out / "demo-plugin" / "s-eval.json").symlink_to(victim)
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 0, err
    assert victim.read_text() == "do not touch"
    report = out / "demo-plugin" / "s-eval.json"
    assert not report.is_symlink() and read_json(report)["command"] == "eval"
    assert not [p for p in (out / "demo-plugin").iterdir() if p.name.startswith(".")], "temporary files left behind"


def test_report_folder_that_is_a_symlink_out_is_refused_before_any_call(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    out = tmp_path / "runs"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "demo-plugin").symlink_to(elsewhere)
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 30 and "--output" in err and "symlink" in err
    assert len(err.strip().splitlines()) == 1
    assert not byok_env.requests and not list(elsewhere.iterdir())


@pytest.mark.parametrize("command", ["eval", "eval-all", "tc-eval"])
def test_unwritable_output_is_found_before_the_first_call(command, byok_env, tmp_path):
    from conftest import write_tc_eval

    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the output folder should be")
    target = {"eval": plugin / "skills" / "s" / "eval.yaml", "eval-all": plugin}.get(command)
    if command == "tc-eval":
        target = write_tc_eval(tmp_path / "tc", [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}])
    code, out, err = run_cli([command, target, "--model", "m", "--output", blocker / "runs"])
    assert code == 30, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(blocker) in lines[0] and "--output" in lines[0]
    assert not byok_env.requests, "the output folder must be checked before any model call"


def test_eval_yaml_outside_a_skills_folder_gets_a_real_name(byok_env, tmp_path, monkeypatch):
    d = tmp_path / "my-eval"
    d.mkdir()
    (d / "SKILL.md").write_text("You help.\n")
    ev = simple_eval()
    ev["skill"] = "SKILL.md"
    import yaml

    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    monkeypatch.chdir(d)
    code, _, err = run_cli(["eval", "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "runs").glob("*/*.html"))  # not the run folders' copies
    assert names == ["my-eval-skill-eval.html"]  # the plugin (its folder) and the skill share a name


def test_non_utf8_folder_name_runs_to_a_report(byok_env, tmp_path):
    root = os.fsencode(tmp_path)
    bad = os.path.join(root, b"plug-\xff\xfe")
    os.makedirs(os.path.join(bad, b"skills", b"s"))
    with open(os.path.join(bad, b"skills", b"s", b"SKILL.md"), "w") as fh:
        fh.write("You help.\n")
    import yaml

    ev = simple_eval()
    ev["skill"] = "SKILL.md"
    with open(os.path.join(bad, b"skills", b"s", b"eval.yaml"), "w") as fh:
        fh.write(yaml.safe_dump(ev))
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval-all", os.fsdecode(bad), "--model", "m", "--output", out])
    assert code == 0, err
    assert "Traceback" not in err
    jsons = list(out.glob("*/eval-all-summary.json"))  # not the history/ and run folders' copies
    assert len(jsons) == 1
    json.loads(jsons[0].read_text(encoding="utf-8"))  # valid UTF-8 JSON


HOSTILE_HTML = '<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3)) &lt;b&gt;'


def test_markdown_report_is_inert(byok_env, tmp_path):
    byok_env.add(Rule(status=500, message=HOSTILE_HTML, judge=False))
    plugin = make_plugin(tmp_path, skills={"s<b>": {"eval": simple_eval(name="<img src=y onerror=alert(4)>")}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--abort-after", "0"])
    assert code == 30, err  # every trial errored
    md = next(out.rglob("eval-all-summary.md")).read_text()
    assert "onerror" in md, "the error text itself is kept"
    assert "<img" not in md and "<script" not in md and "[click](javascript:" not in md
    assert "&lt;img" in md
    assert "&lt;b&gt;" not in md.replace("&amp;lt;b&amp;gt;", ""), "entity references are escaped too"


def test_write_reports_keeps_what_it_could_write(tmp_path):
    from agentsproof.core.errors import OutputError
    from agentsproof.report.files import write_reports
    from agentsproof.model.results import RunResult

    run = RunResult(tool_version="t", command="eval", plugin="p", provider="openai", model="m", judge_model="m")
    (tmp_path / "blocked").write_text("a file")
    targets = {"md": tmp_path / "ok" / "r.md", "json": tmp_path / "blocked" / "r.json", "html": tmp_path / "ok" / "r.html"}
    with pytest.raises(OutputError) as info:
        write_reports(run, targets)
    assert "r.json" in str(info.value) and "written" in str(info.value)
    assert (tmp_path / "ok" / "r.md").is_file() and (tmp_path / "ok" / "r.html").is_file()
    assert [p.name for p in (tmp_path / "ok").iterdir() if p.name.startswith(".")] == []
