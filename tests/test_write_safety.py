"""Every command that writes goes through core/safepath (issue 30, item 1).

Walked with the real commands: an agent eval (a real command agent under the real
bubblewrap sandbox, its seed holding the link loops ``a -> .`` and ``b -> .``) is run with
``--keep-workspaces --atif``, re-graded and imported back, after a symlink to a folder
outside the tree was planted in one output location at a time (``history/``,
``<report>.files/`` and its sub-folder, ``<report>.workspaces/``, the ``--atif`` item and
files folders, ``regrade``'s and ``import atif``'s outputs); nothing outside may change, and
what was refused is named on one line. ``convert --out`` never replaces its input nor
writes through a link; ``tune-description --write`` never rewrites a SKILL.md through a
symlinked skill folder; bad ``name:`` and oracle ``script:`` paths are refused at load.
A static check holds every write site of the command, report, interop and executor layers
to the helper, with a short allow-list.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import make_plugin, run_cli, simple_eval

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = "# Summary\nTotal: 3,500\n"
AGENT = f"import pathlib; pathlib.Path('summary.md').write_text({SUMMARY!r}); print('Wrote summary.md')"
DIGEST = hashlib.sha256(SUMMARY.encode()).hexdigest()


def agent_eval(tmp: Path) -> Path:
    """plug/skills/csv/eval.yaml: a command agent (sandboxed by default), a seed with link loops."""
    d = tmp / "plug" / "skills" / "csv"
    (d / "fixtures").mkdir(parents=True)
    (d / "fixtures" / "data.csv").write_text("region,revenue\nnorth,1000\nsouth,2500\n")
    (d / "fixtures" / "a").symlink_to(".")
    (d / "fixtures" / "b").symlink_to(".")
    (d / "SKILL.md").write_text("Write summary.md starting with '# Summary'.\n")
    (d / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": [sys.executable, "-c", AGENT, "{prompt}"]}}))
    (d / "check.py").write_text("import pathlib,sys\nsys.exit(0 if pathlib.Path('summary.md').read_text().startswith('# Summary') else 1)\n")
    ev = {"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "mini"}, "workspace": "fixtures/",
          "defaults": {"trials": 1, "timeout": 60},
          "task": {"name": "summary", "instruction": "Summarise data.csv into summary.md.", "graders": [
              {"type": "files", "exists": ["summary.md"]}, {"type": "script", "script": "check.py"}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml"


def state(folder: Path) -> dict[str, Any]:
    """Every entry below ``folder`` (not following links): kind, content, mode."""
    out: dict[str, Any] = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        rel = p.relative_to(folder).as_posix()
        out[rel] = os.readlink(p) if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir", st.st_mode)
    return out


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder outside every tree a command is given; nothing may appear or change in it."""
    v = tmp_path / "victim"
    (v / "h").mkdir(parents=True)
    (v / "h" / "authorized_keys").write_text("ssh-ed25519 AAAA owner\n")
    (v / "h" / "authorized_keys").chmod(0o444)
    return v


def plant(link: Path, victim: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim / "h", target_is_directory=True)


def one_line_refusal(err: str, link: Path) -> None:
    assert "Traceback" not in err, err
    refused = [line for line in err.splitlines() if "is a symlink; refusing to write through it" in line]
    assert refused and str(link) in refused[0], err


# where eval --keep-workspaces --atif writes, below tmp_path (report: runs/plug/csv-eval.*)
EVAL_LOCATIONS = {
    "history": ("runs/plug/history", 30),
    "recorder store": ("runs/plug/csv-eval.files", 0),
    "recorder sub-folder": (f"runs/plug/csv-eval.files/{DIGEST[:2]}", 0),
    "kept workspaces": ("runs/plug/csv-eval.workspaces", 30),
    "atif item folder": ("atif/skills-csv", 30),
    "atif files folder": ("atif/files", 30),
}


@pytest.mark.parametrize("where", list(EVAL_LOCATIONS))
def test_eval_never_writes_through_a_link_planted_in_its_outputs(where: str, tmp_path: Path, victim: Path) -> None:
    rel, code_expected = EVAL_LOCATIONS[where]
    path = agent_eval(tmp_path)
    link = tmp_path / rel
    plant(link, victim)
    before = state(victim)
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs", "--keep-workspaces", "--atif", tmp_path / "atif"])
    assert state(victim) == before, f"{where}: written through the link"
    assert link.is_symlink() and code == code_expected, out + err
    one_line_refusal(err, link)


def test_regrade_rebuilds_a_seed_with_link_loops_and_never_overwrites_its_input(tmp_path: Path, victim: Path) -> None:
    path = agent_eval(tmp_path)
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 0, out + err
    report = tmp_path / "runs" / "plug" / "csv-eval.json"
    # the script grader needs the rebuilt workspace: the seed's a -> . and b -> . must be
    # copied as links (copytree(symlinks=False) recursed without end here: a guard, not a timing check)
    done = subprocess.run([sys.executable, "-m", "agentsproof", "regrade", str(report)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    regraded = report.with_name("csv-eval-regraded.json")
    item = json.loads(regraded.read_text())["items"][0]
    assert [(g["type"], g["score"]) for g in item["with_arm"]["trials"][0]["graders"]] == [("files", 1.0), ("script", 1.0)]
    kept = regraded.read_bytes()
    code, out, err = run_cli(["regrade", regraded])  # its own output name: refused before grading
    assert code == 30 and "is an input of this command" in err and err.count("\n") == 1, err
    assert regraded.read_bytes() == kept
    # a link planted at regrade's output history/
    out_dir = tmp_path / "elsewhere"
    plant(out_dir / "history", victim)
    before = state(victim)
    code, out, err = run_cli(["regrade", report, "--output", out_dir])
    assert state(victim) == before and code == 30, out + err
    one_line_refusal(err, out_dir / "history")


def test_import_atif_never_writes_through_a_planted_link(tmp_path: Path, victim: Path) -> None:
    path = agent_eval(tmp_path)
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs", "--atif", tmp_path / "atif"])
    assert code == 0, out + err
    out_dir = tmp_path / "imported"
    plant(out_dir / "history", victim)
    before = state(victim)
    code, out, err = run_cli(["import", "atif", tmp_path / "atif", "--eval", path, "--output", out_dir])
    assert state(victim) == before and code == 30, out + err
    one_line_refusal(err, out_dir / "history")
    assert (out_dir / "csv-imported.json").is_file()  # the reports themselves were written


# ------------------------------------------------------------------ convert --out


def _evals_json(tmp: Path) -> Path:
    d = tmp / "skills" / "demo"
    (d / "evals").mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nSay hi.\n")
    (d / "evals" / "evals.json").write_text(json.dumps({"skill_name": "demo", "evals": [{"id": 1, "prompt": "Say hi", "assertions": ["greets"]}]}))
    return d / "evals" / "evals.json"


def test_convert_out_never_replaces_its_input(tmp_path: Path) -> None:
    src = _evals_json(tmp_path)
    source = src.read_bytes()
    (tmp_path / "alias.json").symlink_to(src)
    for out in (src, tmp_path / "alias.json", src.parent / ".." / "evals" / "evals.json"):
        code, _, err = run_cli(["convert", src, "--to", "EVAL.yaml", "--out", out])
        assert code == 30 and "is an input of this command" in err and err.count("\n") == 1, err
        assert src.read_bytes() == source
    promptfoo = tmp_path / "promptfooconfig.yaml"
    promptfoo.write_text(yaml.safe_dump({"prompts": ["Say {{x}}"], "tests": [{"vars": {"x": "hi"}}]}))
    kept = promptfoo.read_bytes()
    code, _, err = run_cli(["convert", promptfoo, "--to", "EVAL.yaml", "--out", promptfoo])
    assert code == 30 and promptfoo.read_bytes() == kept, err


def test_convert_a_run_report_onto_itself_is_refused(byok_env: Any, tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    code, out, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    report = tmp_path / "runs" / "demo-plugin" / "s-eval.json"
    kept = report.read_bytes()
    code, _, err = run_cli(["convert", report, "--to", "agentprobe-report", "--out", report])
    assert code == 30 and "is an input of this command" in err and report.read_bytes() == kept, err


def test_convert_out_never_writes_through_a_link(tmp_path: Path, victim: Path) -> None:
    src = _evals_json(tmp_path)
    target = victim / "h" / "authorized_keys"
    (tmp_path / "EVAL.yaml").symlink_to(target)
    before = state(victim)
    code, _, err = run_cli(["convert", src, "--to", "EVAL.yaml", "--out", tmp_path / "EVAL.yaml"])
    assert code == 30 and "is a symlink; not written through" in err and err.count("\n") == 1, err
    assert state(victim) == before and (tmp_path / "EVAL.yaml").is_symlink()
    (tmp_path / "sub").symlink_to(victim / "h", target_is_directory=True)  # a folder link below --out's own folder is the user's path
    code, _, err = run_cli(["convert", src, "--to", "EVAL.yaml", "--out", tmp_path / "new" / "EVAL.yaml"])
    assert code == 0 and yaml.safe_load((tmp_path / "new" / "EVAL.yaml").read_text())["name"] == "demo", err
    assert state(victim) == before


# ------------------------------------------------------------------ tune-description --write


def test_tune_write_refuses_a_symlinked_skill_folder(byok_env: Any, tmp_path: Path, victim: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "activation"))
    try:
        from test_tune_description import SKILL, plugin, serve
    finally:
        sys.path.remove(str(ROOT / "tests" / "activation"))
    better = "Builds charts: any graph, scatter or diagram to visualise tabular data."
    serve(byok_env, ["From tabular data, builds charts.", better])
    skill = plugin(tmp_path)
    real = victim / "chart-maker"  # the skill folder lives outside the plugin; the plugin links to it
    shutil.move(str(skill), real)
    skill.symlink_to(real, target_is_directory=True)
    before = state(victim)
    code, out, err = run_cli(["tune-description", skill, "--model", "m", "--rounds", "2", "--write"])
    assert code == 30 and "--write" in err and "is a symlink; refusing to write through it" in err and err.count("\n") == 1, out + err
    assert state(victim) == before and (real / "SKILL.md").read_text() == SKILL


# ------------------------------------------------------------------ bad input refused at load


@pytest.mark.parametrize("name", ["/V/pwn", "../../../../V/pwn"])
def test_a_skill_name_that_is_a_path_is_refused_before_staging(name: str, tmp_path: Path) -> None:
    path = agent_eval(tmp_path)
    ev = yaml.safe_load(path.read_text())
    ev["name"] = name
    ev["execution"] = {"mode": "agent", "target": "claude-code"}
    path.write_text(yaml.safe_dump(ev))
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 30 and f"{path}: name: " in err and err.count("\n") == 1, out + err
    assert not (tmp_path / "runs").exists() and not Path("/V").exists()


@pytest.mark.parametrize("script", ["../../bin/true", "/bin/true", "sh-link"])
def test_an_oracle_script_outside_the_eval_is_refused_at_load(script: str, tmp_path: Path) -> None:
    path = agent_eval(tmp_path)
    (path.parent / "sh-link").symlink_to("/bin/sh")
    ev = yaml.safe_load(path.read_text())
    ev["oracle"] = {"script": script}
    path.write_text(yaml.safe_dump(ev))
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 30 and "oracle.script" in err and err.count("\n") == 1 and "Traceback" not in err, out + err
    assert not (tmp_path / "runs").exists()


# ------------------------------------------------------------------ the static check

LAYERS = ("commands", "report", "interop", "executor")
RAW_WRITE = re.compile(
    r"""\.write_text\(|\.write_bytes\(|copytree\(|shutil\.copy|shutil\.move\(|os\.replace\(|os\.rename\(|mkstemp\(|write_atomic\("""
    r"""|\bopen\([^)]*["'](?:w|a|x|r\+)b?["']|os\.O_WRONLY|os\.O_RDWR|os\.symlink\("""
)
ALLOWED = {
    ("report/exports.py", "open(target, \"a\""): "appends to $GITHUB_STEP_SUMMARY, a file CI names",
    ("report/files.py", "os.O_RDWR"): "the report lock: O_NOFOLLOW, checked with samestat",
    ("executor/journal.py", "os.O_WRONLY"): "reopens the journal just renamed into place, O_NOFOLLOW",
}


def test_write_sites_in_the_upper_layers_go_through_safepath() -> None:
    found = []
    for layer in LAYERS:
        for py in sorted((ROOT / "agentsproof" / layer).rglob("*.py")):
            rel = py.relative_to(ROOT / "agentsproof").as_posix()
            for n, line in enumerate(py.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if RAW_WRITE.search(code) and not any(rel == f and snippet in code for f, snippet in ALLOWED):
                    found.append(f"agentsproof/{rel}:{n}: {line.strip()}")
    assert not found, "write through agentsproof.core.safepath (or add a reason to ALLOWED):\n" + "\n".join(found)
    assert len(ALLOWED) <= 5


def test_the_static_check_catches_a_raw_write() -> None:
    for line in ['path.write_text("x")', 'open(p, "w")', "shutil.copyfile(a, b)", "os.replace(tmp, path)", 'with open(x, "ab") as fh:']:
        assert RAW_WRITE.search(line), line
    assert not RAW_WRITE.search('open(path, encoding="utf-8")')
