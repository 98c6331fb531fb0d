"""Our SDK end to end against the real ``agentsproof serve`` on loopback (SQLite)."""

from __future__ import annotations

import asyncio
import re

import pytest

from conftest import run_cli
from sdk_server import add_golden, api, fetch_page, get_run, running_server, wait_graded

from agentsproof import AgentsProof

PROJECT = "sdk-e2e"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("server")) as srv:
        srv.key = srv.create_key(PROJECT)
        yield srv


@pytest.fixture
def ap(server, tmp_path):
    return AgentsProof(api_key=server.key, base_url=server.base_url, spool_dir=tmp_path / "spool")


def test_sync_agent_round_trip(server, ap):
    run = ap.start_run(
        project_slug=PROJECT, label="e2e sync", input={"query": "reverse a list"}, goal="Return working code",
        expected_output={"answer": "xs[::-1]"}, expected_behavior="search, then answer",
        success_criteria=["uses slicing"], trace_assertions=["must_call:web_search", "max_steps:5"],
        failure_modes=["hallucinated_api"], metadata={"team": "sdk"},
    )
    hits = run.trace("tool_call", "web_search", lambda: {"hits": ["slicing"]}, input="python reverse")
    answer = run.trace("llm_call", "gpt-x", lambda: {"text": "xs[::-1]", "usage": {"prompt_tokens": 9, "completion_tokens": 3}}, input=hits)
    run.log_step({"type": "memory_write", "name": "notes", "output": b"bytes are fine"})
    res = run.complete({"answer": answer["text"]})
    assert re.fullmatch(rf"{re.escape(server.root_url)}/r/\S+", res["publicUrl"])
    stored = get_run(server, server.key, run.remote_run_id)
    assert stored["clientRunId"] == run.run_id and stored["label"] == "e2e sync"
    assert stored["goal"] == "Return working code" and stored["trace_assertions"] == ["must_call:web_search", "max_steps:5"]
    assert stored["metadata"] == {"team": "sdk"} and stored["output"] == {"answer": "xs[::-1]"}
    assert [(s["step_index"], s["type"], s["name"]) for s in stored["steps"]] == [
        (0, "tool_call", "web_search"), (1, "llm_call", "gpt-x"), (2, "memory_write", "notes")]
    assert stored["steps"][1]["token_count"] == 12 and stored["steps"][2]["output"] == "bytes are fine"
    graded = wait_graded(server, server.key, run.remote_run_id)
    assert graded["grade"]["status"] == "done", graded["grade"]


async def test_async_agent_round_trip(server, ap):
    run = ap.start_run(project_slug=PROJECT, input="async q", goal="answer")

    async def llm(prompt):
        await asyncio.sleep(0.01)
        return {"content": f"re: {prompt}", "usage": {"input_tokens": 4, "output_tokens": 6}}

    first = await run.atrace("llm_call", "claude", lambda: llm("one"))
    second = await asyncio.gather(*(run.atrace("tool_call", f"tool{i}", lambda i=i: llm(i)) for i in range(3)))
    res = await run.acomplete({"answer": first["content"], "n": len(second)})
    assert res["publicUrl"]
    stored = get_run(server, server.key, run.remote_run_id)
    assert [s["step_index"] for s in stored["steps"]] == [0, 1, 2, 3]
    assert stored["steps"][0]["token_count"] == 10 and stored["status"] == "completed"


def test_proof_suite_round_trip(server, ap):
    g1 = add_golden(server, server.key, "core", name="reverse", input={"q": "reverse"}, goal="reverse it",
                    success_criteria=["returns a list"])
    g2 = add_golden(server, server.key, "core", name="explodes", input={"q": "boom"}, goal="fail")

    def handler(input, ctx):
        run = ctx.start_run()
        run.trace("tool_call", "web_search", lambda: input["q"])
        if input["q"] == "boom":
            raise RuntimeError("handler blew up")
        run.complete({"answer": input["q"][::-1]})

    res = ap.run_proof_suite(project_slug=PROJECT, suite_slug="core", handler=handler)
    assert (res["passedCases"], res["failedCases"]) == (1, 1)
    assert res["publicUrl"].startswith(server.root_url + "/p/")
    # the case runs carry the golden: its success_criteria reached the run on the server
    status, goldens = api(server, server.key, "GET", f"/goldens?projectSlug={PROJECT}")
    assert status == 200 and {g1["id"], g2["id"]} <= {g["id"] for g in goldens}


async def test_async_proof_suite(server, ap):
    add_golden(server, server.key, "async-suite", name="one", input="a", goal="echo")

    async def handler(input, ctx):
        run = ctx.start_run()
        await run.atrace("llm_call", "m", lambda: asyncio.sleep(0, result=input))
        return {"answer": input}  # left for the SDK to complete

    res = await ap.arun_proof_suite(project_slug=PROJECT, suite_slug="async-suite", handler=handler)
    assert (res["passedCases"], res["failedCases"]) == (1, 0)


def test_public_urls_serve_report_pages(server, ap):
    add_golden(server, server.key, "pages", name="p1", input="q", goal="g")
    run = ap.start_run(project_slug=PROJECT, input="page q", goal="page goal")
    run.trace("tool_call", "page_tool", lambda: "<script>alert(1)</script>")
    res = run.complete({"answer": "page answer"})
    status, page = fetch_page(res["publicUrl"])
    assert status == 200 and "page_tool" in page and "<script>alert(1)</script>" not in page

    def handler(input, ctx):
        raise RuntimeError("page case failed")

    suite = ap.run_proof_suite(project_slug=PROJECT, suite_slug="pages", handler=handler)
    status, page = fetch_page(suite["publicUrl"])
    assert status == 200 and "page case failed" in page


def test_wrong_key_and_other_project(server, tmp_path):
    other_key = server.create_key("someone-else")
    for key, expected in (("ap-not-a-key", "401"), (other_key, "403")):
        ap = AgentsProof(api_key=key, base_url=server.base_url, spool_dir=tmp_path)
        run = ap.start_run(project_slug=PROJECT, input="x")
        run.log_step({"type": "tool_call", "name": "t"})
        res = run.complete("out")  # never raises
        assert res["publicUrl"] is None and expected in res["error"]
    for f in tmp_path.glob("*.json"):
        assert server.key not in f.read_text() and other_key not in f.read_text() and "ap-not-a-key" not in f.read_text()


def test_suite_run_command(server, tmp_path, monkeypatch):
    add_golden(server, server.key, "cli-suite", name="c1", input="hello", goal="shout")
    (tmp_path / "my_cli_agent.py").write_text(
        "def handle(input, ctx):\n"
        "    run = ctx.start_run()\n"
        "    out = run.trace('llm_call', 'upper', lambda: input.upper())\n"
        "    run.complete({'answer': out})\n"
    )
    monkeypatch.chdir(tmp_path)
    env = {"AGENTSPROOF_API_KEY": server.key, "AGENTSPROOF_BASE_URL": server.base_url, "AGENTSPROOF_SPOOL_DIR": str(tmp_path / "spool")}
    code, out, err = run_cli(["suite", "run", "--suite", "cli-suite", "--project", PROJECT, "--handler", "my_cli_agent:handle"], env=env)
    assert code == 0, err
    assert "cli-suite: 1 passed, 0 failed" in out and f"Report: {server.root_url}/p/" in out
    (tmp_path / "my_async_agent.py").write_text(
        "async def handle(input, ctx):\n"
        "    run = ctx.start_run()\n"
        "    await run.atrace('llm_call', 'upper', lambda: input.upper())\n"
        "    raise ValueError('async agent failed')\n"
    )
    code, out, err = run_cli(["suite", "run", "--suite", "cli-suite", "--project", PROJECT, "--handler", "my_async_agent:handle", "--ci"], env=env)
    assert code == 1, err
    assert "cli-suite: 0 passed, 1 failed" in out
    code, _, err = run_cli(["suite", "run", "--suite", "nope", "--project", PROJECT, "--handler", "my_cli_agent:handle"], env=env)
    assert code == 30 and "404" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["suite", "run", "--suite", "cli-suite", "--project", PROJECT, "--handler", "no_such_module:x"], env=env)
    assert code == 30 and "cannot import" in err


def test_server_down_spool_then_sync(tmp_path_factory, tmp_path):
    spool = tmp_path / "spool"
    with running_server(tmp_path_factory.mktemp("restart")) as srv:
        key = srv.create_key(PROJECT)
        srv.stop()
        ap = AgentsProof(api_key=key, base_url=srv.base_url, spool_dir=spool)
        run = ap.start_run(project_slug=PROJECT, input="offline q", goal="answer offline", client_run_id="offline-1")
        run.trace("tool_call", "search", lambda: "found")
        run.log_step({"type": "llm_call", "name": "m", "output": "offline answer"})
        res = run.complete({"answer": "offline answer"})
        assert res["publicUrl"] is None and (spool / "offline-1.json").exists()
        srv.start()
        env = {"AGENTSPROOF_API_KEY": key, "AGENTSPROOF_SPOOL_DIR": str(spool)}
        code, out, err = run_cli(["sync"], env=env)  # the base URL stored with the run
        assert code == 0, err
        run_id = re.search(r"run (\S+): (\S+)", out).group(1)
        stored = get_run(srv, key, run_id)
        assert stored["clientRunId"] == "offline-1" and stored["status"] == "completed"
        assert [s["name"] for s in stored["steps"]] == ["search", "m"]
        code, out, _ = run_cli(["sync"], env=env)
        assert code == 0 and "nothing to sync" in out


def test_a_step_over_the_body_cap_is_stored_as_a_preview(server, ap):
    run = ap.start_run(project_slug=PROJECT, input="big")
    run.log_step({"type": "tool_result", "name": "huge", "output": ["x" * 150_000 for _ in range(20)]})  # ~3 MB > the 2 MiB cap
    run.log_step({"type": "tool_result", "name": "small", "output": "fine"})
    assert run.complete("ok")["publicUrl"]
    huge, small = get_run(server, server.key, run.remote_run_id)["steps"]
    assert huge["output"]["truncated"] is True and huge["output"]["chars"] > 2_000_000
    assert huge["output"]["preview"].startswith('["xxx') and small["output"] == "fine"
