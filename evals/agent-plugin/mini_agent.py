#!/usr/bin/env python3
"""A minimal tool-using agent, for agentsproof's `command` target (standard library only).

It talks to any OpenAI-compatible chat endpoint (OPENAI_BASE_URL, OPENAI_API_KEY,
AGENT_MODEL), offers the model three tools that work in the current folder (the trial's
workspace) — list_files, read_file, write_file — runs the calls the model makes, and prints
the model's final answer on stdout.

With the skill installed (the with-arm), AGENTSPROOF_SKILL_FILE names it: the agent reads
it and uses it as its system prompt, as a real agent loads a skill. Every tool call is
appended to AGENTSPROOF_TRACE_FILE as one JSON line, which agentsproof turns into the
trial's trajectory.

Usage: mini_agent.py "the instruction"      (or the instruction on stdin)
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

MAX_TURNS = 8
BASELINE = "You are a helpful assistant with tools that work in the current folder."
TOOLS = [
    {"type": "function", "function": {"name": "list_files", "description": "List the files in the working folder.",
                                      "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "read_file", "description": "Read a text file.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Write a text file.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                                                     "required": ["path", "content"]}}},
]


def inside(path: str) -> Path:
    """A path in the working folder; anything that leaves it is refused."""
    here = Path.cwd().resolve()
    target = (here / path).resolve()
    if not target.is_relative_to(here):
        raise ValueError(f"{path} is outside the working folder")
    return target


def run_tool(name: str, args: dict) -> str:
    if name == "list_files":
        return "\n".join(sorted(p.relative_to(Path.cwd()).as_posix() for p in Path.cwd().rglob("*") if p.is_file())) or "(empty)"
    if name == "read_file":
        return inside(args["path"]).read_text(encoding="utf-8")[:20_000]
    if name == "write_file":
        target = inside(args["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args["content"], encoding="utf-8")
        return f"wrote {len(args['content'])} characters to {args['path']}"
    raise ValueError(f"unknown tool {name}")


def chat(messages: list[dict]) -> dict:
    base = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1").rstrip("/")
    body = json.dumps({"model": os.environ.get("AGENT_MODEL", "agent-model"), "messages": messages, "tools": TOOLS}).encode()
    req = urllib.request.Request(base + "/chat/completions", data=body, method="POST", headers={
        "Content-Type": "application/json", "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.load(resp)["choices"][0]["message"]


def trace(record: dict) -> None:
    path = os.environ.get("AGENTSPROOF_TRACE_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


def main() -> int:
    prompt = " ".join(sys.argv[1:]) if len(sys.argv) > 1 else sys.stdin.read()
    skill_file = os.environ.get("AGENTSPROOF_SKILL_FILE")
    system = BASELINE
    if skill_file:  # the with-arm: load the skill, as a real agent does
        system = Path(skill_file).read_text(encoding="utf-8")
        trace({"type": "skill", "name": Path(skill_file).parent.name, "path": skill_file})
    messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for _ in range(MAX_TURNS):
        message = chat(messages)
        calls = message.get("tool_calls") or []
        if not calls:
            print(message.get("content") or "")
            return 0
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for call in calls:
            name = call["function"]["name"]
            raw = call["function"].get("arguments") or "{}"
            started = time.perf_counter()
            try:
                result, ok = run_tool(name, json.loads(raw)), True
            except Exception as exc:  # a failed tool call is reported to the model, as agents do
                result, ok = f"error: {exc}", False
            trace({"tool": name, "arguments": raw, "result": result[:300], "latency_s": time.perf_counter() - started, "ok": ok})
            messages.append({"role": "tool", "tool_call_id": call.get("id", name), "content": result})
    print("stopped: too many tool calls", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
