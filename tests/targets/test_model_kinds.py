"""``chat`` is a registered target kind (targets.registry.MODEL_KINDS): its class found through
the registry, told from agent targets by :func:`is_agent`, never compared by name elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

from agentsproof.targets import registry
from agentsproof.targets.chat.target import ChatTarget

ROOT = Path(__file__).resolve().parents[2] / "agentsproof"
# the layers that can ask the target registry (model/ and report/ lie below or beside it)
ASKING = ("targets", "executor", "formats", "commands", "interop", "generator", "cli")
BY_NAME = re.compile(r"""[=!]= *["']chat["']|["']chat["'] *[=!]=|- *\{["']chat["']\}""")


def test_chat_is_registered_and_not_an_agent() -> None:
    assert registry.target_class(registry.CHAT) is ChatTarget and ChatTarget.kind == registry.CHAT
    assert not registry.is_agent("chat") and registry.is_agent("codex") and not registry.is_agent(None)
    assert "chat" not in registry.target_types()  # no targets.yaml entry has type: chat


def test_no_code_compares_a_target_with_chat_by_name() -> None:
    found = []
    for pkg in ASKING:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if BY_NAME.search(line) and "mode" not in line and "role" not in line:
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == [], "ask agentsproof.targets.registry.is_agent instead:\n" + "\n".join(found)
