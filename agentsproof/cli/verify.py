"""``agentsproof verify`` and ``agentsproof bundle``: check a report, and pack one to be checked elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from agentsproof.cli.options import sign_option


@click.command("verify")
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path), metavar="REPORT.json|BUNDLE")
@click.option(
    "--files",
    "files_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also check the files the manifest names (eval, skill, targets.yaml, Dockerfiles) below DIR: which changed, which are missing.",
)
@click.option(
    "--allowed-signers",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Check the report's signature (<report>.sig) against these keys (OpenSSH allowed-signers format; ssh-keygen -Y verify).",
)
@click.option("--regrade", is_flag=True, help="Also run the deterministic graders again on the recorded answers and workspaces and compare.")
def verify_cmd(report: Path, files_dir: Path | None, allowed_signers: Path | None, regrade: bool) -> None:
    """Re-derive every number of a report from its recorded trials.

    Trial scores from their grader results, arm means, deltas, intervals,
    p-values and their adjustment, grades, pass/fail, the verdict and the exit
    code are computed again by the same code the run used; each that differs
    is named with its field, as is a trial added, removed or changed (the
    manifest's digest). REPORT is a JSON report of eval, eval-all, tc-eval or
    activation, or a bundle from `agentsproof bundle` (checked against the
    files it holds). Exit 0 when everything holds, 1 when something differs,
    30 for an unreadable input. See docs/verify.md.

    \b
    Example:
      agentsproof verify runs/my-plugin/my-skill-eval.json --files .
      agentsproof verify my-skill-eval.bundle.tar.gz --allowed-signers allowed_signers
    """
    from agentsproof.commands.verify import verify

    found = verify(report, files_dir=files_dir, allowed_signers=allowed_signers, regrade=regrade)
    for line in found.lines():
        click.echo(line)
    sys.exit(found.exit_code)


@click.command("bundle")
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path), metavar="REPORT.json")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="The archive to write (default: <report>.bundle.tar.gz beside it)."
)
@sign_option
def bundle_cmd(report: Path, out: Path | None, sign: Path | None) -> None:
    """Pack a report to be verified on another machine.

    One .tar.gz: the JSON report (and its signature), its journal, its recorded
    files (trajectories, workspace files), and every file its manifest names
    (the eval and skill files, targets.yaml, Dockerfiles). `agentsproof verify
    BUNDLE` checks it anywhere. --sign KEY also signs the archive (<bundle>.sig).

    \b
    Example:
      agentsproof bundle runs/my-plugin/my-skill-eval.json --sign ~/.ssh/id_ed25519
    """
    from agentsproof.commands.bundle import make_bundle

    path = make_bundle(report, out, sign)
    click.echo(f"wrote {path}")
