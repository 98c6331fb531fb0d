"""The native-launcher fact on the target registry's entries: in a trial's container an npm
CLI's native binary runs, not its Node wrapper, found by the launchers its kind declares."""

from __future__ import annotations

from pathlib import Path

from agentsproof.targets import registry
from agentsproof.targets.agents.container import native_program


def _install(root: Path, wrapper: str, wrapper_rel: str, binary_rel: str) -> tuple[Path, Path]:
    """An npm layout: ``node_modules/.bin/<name>`` -> the wrapper, the binary where its package puts it."""
    js = root / "node_modules" / wrapper_rel
    js.parent.mkdir(parents=True)
    js.write_text("// node wrapper\n")
    binary = root / "node_modules" / binary_rel
    binary.parent.mkdir(parents=True)
    binary.write_text("ELF")
    link = root / "node_modules" / ".bin" / wrapper.removesuffix(".js")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(js)
    return link, binary


def _launchers(kind: str) -> tuple:
    return registry.target_class(kind).native_launchers


def test_each_wrapper_is_declared_on_its_kinds_registry_entry(tmp_path: Path) -> None:
    declared = {kind: [launcher.wrapper for launcher in cls.native_launchers] for kind, cls in registry.classes().items()}
    assert declared["codex"] == ["codex.js"] and declared["claude-code"] == [] and declared["command"] == []
    assert all(declared[k] == ["codex-acp.js"] for k in ("acp", "codex-acp", "gemini"))  # a plain acp entry may run codex-acp too
    link, binary = _install(tmp_path / "codex", "codex.js", "@openai/codex/bin/codex.js", "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
    assert native_program(str(link), _launchers("codex")) == str(binary)
    assert native_program(str(link), _launchers("claude-code")) == str(link.resolve())  # another kind's wrapper is not its own
    link, binary = _install(tmp_path / "acp", "codex-acp.js", "@zed-industries/codex-acp/bin/codex-acp.js", "@zed-industries/codex-acp-linux-x64/bin/codex-acp")
    assert native_program(str(link), _launchers("codex-acp")) == str(binary)


def test_a_program_without_a_native_binary_runs_as_it_resolves(tmp_path: Path) -> None:
    link, binary = _install(tmp_path / "codex", "codex.js", "@openai/codex/bin/codex.js", "elsewhere/codex")
    binary.unlink()
    assert native_program(str(link), _launchers("codex")) == str(tmp_path / "codex" / "node_modules" / "@openai" / "codex" / "bin" / "codex.js")
    plain = tmp_path / "agent.sh"
    plain.write_text("#!/bin/sh\n")
    assert native_program(str(plain), _launchers("codex")) == str(plain)
