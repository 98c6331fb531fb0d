"""A report's manifest and signature, the same way for every command that writes one
(eval, eval-all, tc-eval, activation, and any command to come: call :func:`seal` before
writing and :func:`sign_report` after)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.executor.proof import ProofOptions, run_manifest

if TYPE_CHECKING:
    from agentsproof.model.items import EvalItem
    from agentsproof.model.options import RunFlags
    from agentsproof.model.results import RunResult
    from agentsproof.targets.base import TargetDef


def proof_options(cfg: RunFlags | None = None, *, sign: Path | None = None, ci: bool = False, argv: Sequence[str] | None = None) -> ProofOptions:
    """What the manifest records of this command: its command line (masked), the options that decide its exit code, the signing key."""
    line = ["agentsproof", *(_given_args() if argv is None else argv)]
    if cfg is None:
        return ProofOptions(argv=line, ci=ci, sign_key=sign)
    return ProofOptions(argv=line, ci=cfg.ci, fail_on_underpowered=cfg.fail_on_underpowered, ci_rule=cfg.ci_rule, sign_key=cfg.sign)


def _given_args() -> list[str]:
    """The arguments the command line gave (as click received them; else ``sys.argv``)."""
    import click

    ctx = click.get_current_context(silent=True)
    given = ctx.meta.get("agentsproof_argv") if ctx is not None else None
    return [str(a) for a in given] if given is not None else list(sys.argv[1:])


def seal(run: RunResult, items: Sequence[EvalItem], target_defs: Mapping[str, TargetDef], opts: ProofOptions) -> None:
    """Write the run's manifest into it (just before its reports are written)."""
    run.manifest = run_manifest(run, items, target_defs, opts)


def sign_report(written: Mapping[str, Path], key: Path | None) -> Path | None:
    """Sign the JSON report just written with ``--sign KEY`` (its ``.sig`` beside it); None without a key."""
    if key is None or "json" not in written:
        return None
    from agentsproof.commands.signing import sign_file

    return sign_file(written["json"], key)


def check_sign_key(key: Any) -> None:
    """Before any trial: ``--sign KEY`` can be used."""
    from agentsproof.commands.signing import check_key

    check_key(key)
