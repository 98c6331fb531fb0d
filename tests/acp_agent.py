"""A scripted ACP agent on stdio, for the acp target's protocol tests (standard library only).

Run as ``python tests/acp_agent.py``; ``ACP_SCRIPT`` (JSON) lists what each
``session/prompt`` does, in order, before it answers ``end_turn``:

- ``{"say": TEXT}``: an ``agent_message_chunk``;
- ``{"tool": TITLE, "kind": KIND, "input": {...}}``: a ``tool_call`` then its completion;
- ``{"permission": KIND}``: a ``session/request_permission`` (allow/reject options); the
  chosen option is said back as ``permission: <optionId>``;
- ``{"read": PATH}`` / ``{"write": PATH, "content": TEXT}``: ``fs/*`` requests; the
  result or the error message is said back;
- ``{"terminal": COMMAND, "cwd": PATH}``: ``terminal/create``, ``wait_for_exit``,
  ``output``, ``release``; the output or the error is said back;
- ``{"raw": TEXT}``: that line on stdout as is (malformed JSON-RPC);
- ``{"exit": CODE}``: exit at once; ``{"sleep": SECONDS}``; ``{"fail": MESSAGE}``: the
  prompt is answered with a JSON-RPC error;
- ``{"usage": {...}}``: the prompt's answer carries this ``usage``.

``session/cancel`` ends a sleeping prompt with ``stopReason: cancelled``. Every message
received is appended to ``ACP_LOG`` (a file) when set.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

SCRIPT = json.loads(os.environ.get("ACP_SCRIPT", "[]"))
LOG = os.environ.get("ACP_LOG")
_ids = iter(range(1000, 10**6))
_pending: list[dict] = []
cancelled = False


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def read() -> dict | None:
    line = sys.stdin.readline()
    if not line:
        return None
    msg = json.loads(line)
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(json.dumps(msg) + "\n")
    return msg


def request(method: str, params: dict) -> dict:
    """Send a request to the client; its response (other messages met meanwhile are kept)."""
    rid = next(_ids)
    send({"id": rid, "method": method, "params": params})
    while True:
        msg = read()
        if msg is None:
            sys.exit(0)
        if msg.get("id") == rid and "method" not in msg:
            return msg
        _pending.append(msg)


def update(session: str, upd: dict) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": upd}})


def say(session: str, text: str) -> None:
    update(session, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def answer(resp: dict) -> str:
    return json.dumps(resp["result"]) if "result" in resp else "error: " + str(resp.get("error", {}).get("message"))


def prompt(rid: int, session: str) -> None:
    global cancelled
    usage = None
    for n, step in enumerate(SCRIPT):
        if "say" in step:
            say(session, step["say"])
        elif "tool" in step:
            tid = f"t{n}"
            update(session, {"sessionUpdate": "tool_call", "toolCallId": tid, "title": step["tool"], "kind": step.get("kind", "other"),
                             "status": "pending", "rawInput": step.get("input", {})})
            update(session, {"sessionUpdate": "tool_call_update", "toolCallId": tid, "status": "completed",
                             "content": [{"type": "content", "content": {"type": "text", "text": "tool output"}}]})
        elif "permission" in step:
            resp = request("session/request_permission", {"sessionId": session, "toolCall": {"toolCallId": f"p{n}", "title": "run it", "kind": step["permission"]},
                                                          "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                                                                      {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
            outcome = resp.get("result", {}).get("outcome", {})
            say(session, f"permission: {outcome.get('optionId', outcome.get('outcome'))}\n")
        elif "read" in step:
            say(session, "read: " + answer(request("fs/read_text_file", {"sessionId": session, "path": step["read"]})) + "\n")
        elif "write" in step:
            say(session, "write: " + answer(request("fs/write_text_file", {"sessionId": session, "path": step["write"], "content": step["content"]})) + "\n")
        elif "terminal" in step:
            made = request("terminal/create", {"sessionId": session, "command": step["terminal"], **({"cwd": step["cwd"]} if "cwd" in step else {})})
            if "result" not in made:
                say(session, "terminal: " + answer(made) + "\n")
                continue
            tid = made["result"]["terminalId"]
            request("terminal/wait_for_exit", {"sessionId": session, "terminalId": tid})
            out = request("terminal/output", {"sessionId": session, "terminalId": tid})
            request("terminal/release", {"sessionId": session, "terminalId": tid})
            say(session, "terminal: " + out["result"]["output"])
        elif "raw" in step:
            sys.stdout.write(step["raw"] + "\n")
            sys.stdout.flush()
        elif "exit" in step:
            sys.stderr.write("the scripted agent exits\n")
            os._exit(step["exit"])
        elif "sleep" in step:
            end = time.monotonic() + step["sleep"]
            while time.monotonic() < end and not cancelled:
                if select.select([sys.stdin], [], [], 0.05)[0]:
                    msg = read()
                    if msg is None:
                        sys.exit(0)
                    if msg.get("method") == "session/cancel":
                        cancelled = True
            if cancelled:
                send({"id": rid, "result": {"stopReason": "cancelled"}})
                return
        elif "fail" in step:
            send({"id": rid, "error": {"code": -32000, "message": step["fail"]}})
            return
        elif "usage" in step:
            usage = step["usage"]
    send({"id": rid, "result": {"stopReason": "end_turn", **({"usage": usage} if usage else {})}})


def main() -> None:
    while True:
        msg = _pending.pop(0) if _pending else read()
        if msg is None:
            return
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"id": rid, "result": {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "scripted-acp", "version": "1"}}})
        elif method == "session/new":
            send({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            prompt(rid, msg["params"]["sessionId"])
        elif rid is not None and method is not None:
            send({"id": rid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
