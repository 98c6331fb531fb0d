"""Every program an eval file names runs confined (issue 45, item 9): a promptfoo ``python`` or
``javascript`` assertion, an output transform and a provider program read the project but
write nothing outside their own workspace, reach no network, and still run. End to end on the
scripted server; the files they try to write are looked for afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

EVIL_PY = """\
import os

def get_assert(output, context):
    here = os.path.dirname(os.path.abspath(__file__))
    wrote = []
    for target in (os.path.join(here, "..", "pwned-py.txt"), os.path.join(here, "pwned-in-eval.txt"), os.path.expanduser("~/pwned-home.txt")):
        try:
            with open(target, "w") as f:
                f.write("pwned")
            wrote.append(target)
        except OSError:
            pass
    readable = open(os.path.join(here, "data.txt")).read().strip()
    return {"pass": not wrote and readable == "project data", "score": 1.0, "reason": f"wrote {wrote}; read {readable!r}"}
"""

EVIL_JS = """\
const fs = require("fs");
const path = require("path");
module.exports = (output, context) => {
  try { fs.writeFileSync(path.join(__dirname, "..", "pwned-js.txt"), "pwned"); return {pass: false, score: 0, reason: "wrote outside"}; }
  catch (err) { return {pass: true, score: 1, reason: "could not write: " + err.code}; }
};
"""

CONFIG = """\
prompts: ["Say {{word}}"]
providers: [openai:gpt-4o-mini]
tests:
  - vars: {word: hello}
    assert:
      - type: python
        value: file://evil.py
"""


def _project(tmp_path: Path, config: str) -> Path:
    project = tmp_path / "project"
    folder = project / "evals" / "pf"
    folder.mkdir(parents=True)
    (project / ".git").mkdir()
    (folder / "evil.py").write_text(EVIL_PY)
    (folder / "evil.js").write_text(EVIL_JS)
    (folder / "data.txt").write_text("project data\n")
    (folder / "promptfooconfig.yaml").write_text(config)
    return folder / "promptfooconfig.yaml"


def _trials(out: Path) -> list[dict]:
    report = read_json(next(out.rglob("*-tc-eval.json")))
    return [t for it in report["items"] for t in it["with_arm"]["trials"]]


def test_a_python_assertion_cannot_write_outside_its_workspace(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    byok_env.add(Rule(reply="hello", judge=False))
    path = _project(tmp_path, CONFIG)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    assert not (path.parent.parent / "pwned-py.txt").exists()
    assert not (path.parent / "pwned-in-eval.txt").exists()
    assert not (tmp_path / "home" / "pwned-home.txt").exists()
    [trial] = _trials(tmp_path / "out")
    assert trial["status"] == "scored" and trial["score"] == 1.0, trial  # it ran, read the project, and wrote nothing
    assert "wrote []; read 'project data'" in trial["graders"][0]["checks"][0]["evidence"], trial


@pytest.mark.skipif(shutil.which("node") is None, reason="javascript assertions run with node")
def test_a_javascript_assertion_cannot_write_outside_its_workspace(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", judge=False))
    path = _project(tmp_path, CONFIG.replace("type: python\n        value: file://evil.py", "type: javascript\n        value: file://evil.js"))
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    assert not (path.parent.parent / "pwned-js.txt").exists()
    [trial] = _trials(tmp_path / "out")
    assert trial["score"] == 1.0 and "could not write: EROFS" in trial["graders"][0]["checks"][0]["evidence"], trial


def test_a_provider_program_runs_confined(byok_env, tmp_path):
    """promptfoo's python provider: called as call_api(prompt, options, context), its config and vars passed;
    what it writes outside its workspace is not written, and it has no network."""
    byok_env.add(Rule(reply="judge", judge=True))
    provider = (
        "import os, socket\n"
        "def call_api(prompt, options, context):\n"
        "    try:\n"
        "        open(os.path.join(os.path.dirname(__file__), 'pwned-provider.txt'), 'w').write('x')\n"
        "        wrote = 'wrote'\n"
        "    except OSError:\n"
        "        wrote = 'read-only'\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', int(options['config']['port'])), 2)\n"
        "        net = 'reached'\n"
        "    except OSError:\n"
        "        net = 'no network'\n"
        "    return {'output': f\"{prompt} | {options['config']['tone']} | {context['vars']['word']} | {wrote} | {net}\"}\n"
    )
    port = byok_env.base_url.rsplit(":", 1)[1].split("/")[0]
    config = (
        'prompts: ["Say {{word}}"]\n'
        f"providers:\n  - id: file://provider.py\n    config: {{tone: dry, port: {port}}}\n"
        "tests:\n  - vars: {word: hello}\n    assert: [{type: contains, value: hello}]\n"
    )
    path = _project(tmp_path, config)
    (path.parent / "provider.py").write_text(provider)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    [trial] = _trials(tmp_path / "out")
    assert trial["response"] == "Say hello | dry | hello | read-only | no network", trial
    assert not (path.parent / "pwned-provider.txt").exists()
    assert byok_env.trial_requests() == [], "the provider is the program: no model call"


def test_an_output_transform_runs_before_the_assertions(byok_env, tmp_path):
    """promptfoo's options.transform (here JSON.parse, as in its json-output example): the assertions see the value."""
    if shutil.which("node") is None:
        pytest.skip("a JavaScript transform runs with node")
    byok_env.add(Rule(reply='{"color": "yellow", "countries": ["Ecuador"]}', judge=False))
    config = (
        'prompts: ["Describe {{item}} as JSON"]\n'
        "providers: [openai:gpt-4o-mini]\n"
        "tests:\n"
        "  - vars: {item: Banana}\n"
        "    options:\n      transform: JSON.parse(output)\n"
        "    assert:\n"
        "      - type: javascript\n        value: output.color === 'yellow' && output.countries.includes('Ecuador')\n"
        "      - type: python\n        value: output['color'] == 'yellow'\n"
    )
    path = _project(tmp_path, config)
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "out", "--no-cache"])
    assert code == 0, err
    [trial] = _trials(tmp_path / "out")
    assert trial["score"] == 1.0, trial
