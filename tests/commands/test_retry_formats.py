"""--retry-errors for runs of every input format: a tc-eval of an EVAL.yaml, an eval-all over
eval.yaml, EVAL.yaml and evals/evals.json files, and a JSONL dataset. Only the errored trials
run again, with the items built as the original run built them (same ids, arms, skill)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

SUITE = """\
name: greet
tests:
  - id: hello
    input: Say hello ALPHA
    assert:
      - type: contains
        value: HELLO
  - id: bye
    input: Say bye BETA
    assert:
      - type: contains
        value: HELLO
"""

ROWS = [
    {"id": "calc-1", "input": "What is 2+2? CALC1", "expected_answer": "4"},
    {"id": "down", "input": "DOWN please", "expected_answer": "4"},
]


def _errored(data: dict) -> int:
    return sum(i["with_arm"]["errored"] + i["without_arm"]["errored"] for i in data["items"])


def _trials(data: dict) -> dict[str, tuple[int, int]]:
    return {i["id"]: (len(i["with_arm"]["trials"]), len(i["without_arm"]["trials"])) for i in data["items"]}


def _suite(root: Path, text: str = SUITE) -> Path:
    evals = root / "skills" / "greet" / "evals"
    evals.mkdir(parents=True)
    (root / "skills" / "greet" / "SKILL.md").write_text("GREETSKILL: answer in uppercase.\n")
    (evals / "EVAL.yaml").write_text(text)
    return evals / "EVAL.yaml"


def _dataset(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    p = root / "cases.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return p


def _saved_copy(report: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "saved.json"
    copy.write_text(report.read_text())
    return copy


def test_retry_errors_of_an_eval_yaml_suite(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(status=500, user_contains="BETA", judge=False, times=2), Rule(reply="HELLO", judge=False))
    path = _suite(tmp_path)
    out = tmp_path / "runs"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--trials", "2", "--timeout", "40"])
    report = out / "greet" / "greet-tc-eval.json"
    first = read_json(report)
    assert _errored(first) == 2 and len(srv.trial_requests()) == 8, err
    assert first["settings"]["eval_yaml"] and first["settings"]["timeout"] == 40
    saved = _saved_copy(report, tmp_path)

    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 0, err
    assert len(srv.trial_requests()) == 10  # only the 2 errored trials ran again
    merged = read_json(report)
    assert _errored(merged) == 0
    assert [i["id"] for i in merged["items"]] == [i["id"] for i in first["items"]] == ["case-hello", "case-bye"]
    assert _trials(merged) == {"case-hello": (2, 2), "case-bye": (2, 2)}
    assert merged["settings"]["retried_trials"] == 2 and merged["settings"]["timeout"] == 40
    assert all(i["source_path"].endswith("greet/SKILL.md") for i in merged["items"])


def test_retry_errors_of_an_eval_yaml_suite_run_with_eval_and_no_skill_stays_single_armed(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(status=400, message="scripted refusal", user_contains="ALPHA", judge=False, times=1), Rule(reply="HELLO", judge=False))
    path = tmp_path / "suite" / "EVAL.yaml"
    path.parent.mkdir()
    path.write_text(SUITE)
    out = tmp_path / "runs"
    run_cli(["eval", path, "--model", "m", "--output", out, "--trials", "2"])
    report = out / "greet" / "greet-tc-eval.json"
    first = read_json(report)
    assert first["command"] == "tc-eval" and first["settings"]["baseline"] == "none" and _errored(first) == 1
    saved = _saved_copy(report, tmp_path)

    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 0, err
    assert len(srv.trial_requests()) == 5
    merged = read_json(report)
    assert _errored(merged) == 0 and merged["settings"]["baseline"] == "none"
    assert _trials(merged) == {"case-hello": (2, 0), "case-bye": (2, 0)}


def test_retry_errors_of_eval_all_over_every_kind_of_eval_file(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(
        Rule(status=500, user_contains="BETA", judge=False, times=1),
        Rule(status=500, user_contains="NOTE", judge=False, times=1),
        Rule(status=500, user_contains="Say hello to the user", judge=False, times=1),
        Rule(reply="HELLO", judge=False),
    )
    root = make_plugin(tmp_path, skills={"plain": {"prompt": "PLAINSKILL\n", "eval": simple_eval(trials=2)}})
    _suite(root)
    notes = root / "skills" / "notes"
    (notes / "evals").mkdir(parents=True)
    (notes / "SKILL.md").write_text("Answer in notes.\n")
    (notes / "evals" / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 1, "prompt": "NOTE this", "expected_output": "HELLO"}]}))
    out = tmp_path / "runs"
    run_cli(["eval-all", root, "--model", "m", "--output", out, "--trials", "2"])
    report = out / "demo-plugin" / "eval-all-summary.json"
    first = read_json(report)
    ids = [i["id"] for i in first["items"]]
    assert set(ids) == {"skills/plain", "greet/case-hello", "greet/case-bye", "notes/case-1"}
    assert _errored(first) == 3
    before = len(srv.trial_requests())
    saved = _saved_copy(report, tmp_path)

    code, _, err = run_cli(["eval-all", root, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code in (0, 1), err
    assert len(srv.trial_requests()) - before == 3
    merged = read_json(report)
    assert _errored(merged) == 0 and [i["id"] for i in merged["items"]] == ids
    assert set(_trials(merged).values()) == {(2, 2)}


def test_retry_errors_of_a_dataset(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(status=400, message="scripted outage", user_contains="DOWN", judge=False, times=2), Rule(reply="4", judge=False))
    path = _dataset(tmp_path / "data")
    out = tmp_path / "runs"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--trials", "2"])
    report = out / "cases" / "cases-tc-eval.json"
    first = read_json(report)
    assert code == 30 and _errored(first) == 2, err
    saved = _saved_copy(report, tmp_path)

    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 0, err
    assert len(srv.trial_requests()) == 6
    merged = read_json(report)
    assert _errored(merged) == 0 and merged["settings"]["baseline"] == "none"
    assert [i["id"] for i in merged["items"]] == ["case-calc-1", "case-down"]
    assert _trials(merged) == {"case-calc-1": (2, 0), "case-down": (2, 0)}
    # re-run trials get the dataset's check labels like kept ones (the `after` step ran)
    targets = {c["target"] for it in merged["items"] for t in it["with_arm"]["trials"] for g in t["graders"] for c in g["checks"]}
    assert not any(t.startswith("^") for t in targets), targets


def test_a_run_made_with_skill_file_asks_for_it_again(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(status=500, judge=False, times=1), Rule(reply="4", judge=False))
    skill = tmp_path / "elsewhere" / "my-skill.md"
    skill.parent.mkdir()
    skill.write_text("DSKILL: answer with the number only.\n")
    out = tmp_path / "runs"
    suite = _suite(tmp_path / "plugin")
    dataset = _dataset(tmp_path / "data")
    for path, name in ((dataset, "cases"), (suite, "greet")):
        run_cli(["tc-eval", path, "--skill", skill, "--model", "m", "--output", out])
        report = next(out.rglob(f"{name}-tc-eval.json"))
        saved = _saved_copy(report, tmp_path)
        code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
        assert code == 30 and "--skill" in err and "again" in err, err
        assert len(err.strip().splitlines()) == 1
        code, _, err = run_cli(["tc-eval", path, "--skill", skill, "--model", "m", "--output", out, "--retry-errors", saved])
        assert code in (0, 1), err  # given again: the errored trial is re-run
        assert not [t for it in read_json(report)["items"] for a in ("with_arm", "without_arm") for t in it[a]["trials"]
                    if t["status"] == "errored"]


def test_retry_items_use_the_skill_given_again(tmp_path):
    """``retry_items(..., skill=)`` (the retry's --skill) builds the same items as the first run."""
    from types import SimpleNamespace

    from agentsproof.formats.dataset import dataset_items, load_dataset
    from agentsproof.formats.agentevals.items import find_skill
    from agentsproof.commands.rerun import retry_items

    skill = tmp_path / "my-skill.md"
    skill.write_text("DSKILL: answer with the number only.\n")
    path = _dataset(tmp_path / "data")
    items = dataset_items(load_dataset(path), skill=find_skill(path, skill), trials=3, threshold=0.5, timeout=40, target=None)
    saved = SimpleNamespace(command="tc-eval", settings={"timeout": 40}, items=[
        SimpleNamespace(id=it.id, eval_path=it.eval_path, source_path=it.source_path, source_sha256=it.source_sha256,
                        threshold=it.threshold, trials_requested=3, target="chat")
        for it in items
    ])
    built, after = retry_items(saved, tmp_path / "saved.json", path, skill)
    assert list(built) == [it.id for it in items] and after is not None
    for it in items:
        b = built[it.id]
        assert (b.system_prompt, b.arms, b.trials, b.threshold, b.timeout, b.prompt) == (it.system_prompt, it.arms, 3, 0.5, 40, it.prompt)


def test_a_case_gone_from_the_suite_is_one_line(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False, times=1), Rule(reply="HELLO", judge=False))
    path = _suite(tmp_path)
    out = tmp_path / "runs"
    run_cli(["tc-eval", path, "--model", "m", "--output", out])
    saved = _saved_copy(out / "greet" / "greet-tc-eval.json", tmp_path)
    path.write_text(SUITE.split("  - id: bye")[0])
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 30 and "'case-bye'" in err and "no longer in this file" in err
    assert len(err.strip().splitlines()) == 1
