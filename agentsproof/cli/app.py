"""The agentsproof command line. Commands parse, call the library, print, and exit.

Exit codes: 0 all passed; 1 an eval/case failed its threshold or got F (with --ci);
30 an error (bad input, missing files, unusable provider, aborted run).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from agentsproof.core.errors import EXIT_ERROR, AgentsproofError
from agentsproof.core.version import __version__


class _Group(click.Group):
    """Turns every AgentsproofError into one line on stderr and exit 30."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["agentsproof_argv"] = list(args)  # the command line a report's manifest records (masked there)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from agentsproof.core.scrub import scrubbed_console

        with scrubbed_console():  # no registered secret reaches stdout or stderr
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        previous = _sigterm_as_interrupt()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # SIGINT or SIGTERM outside a run (a run writes its incomplete report itself).
            click.echo("\nerror: interrupted", err=True)
            sys.exit(EXIT_ERROR)
        except AgentsproofError as err:
            from agentsproof.core.termtext import term_text

            click.echo(f"error: {term_text(err)}", err=True)  # one line, whatever key or name it quotes
            sys.exit(err.exit_code)
        except click.UsageError as err:
            # Bad flags are bad input too: one line, exit 30.
            click.echo(f"error: {err.format_message()}", err=True)
            sys.exit(EXIT_ERROR)
        except (click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except ModuleNotFoundError as err:
            from agentsproof.core.extras import missing_extra_message

            message = missing_extra_message(err.name)
            if message is None or os.environ.get("AGENTSPROOF_DEBUG"):
                raise
            click.echo(f"error: {message}", err=True)
            sys.exit(EXIT_ERROR)
        except OSError as err:  # a full disk, an unreadable file no layer expected: one line, exit 30
            if os.environ.get("AGENTSPROOF_DEBUG"):
                raise
            from agentsproof.core.inputs import display

            where = f"{display(err.filename)}: " if err.filename else ""
            click.echo(f"error: {where}{err.strerror or err}", err=True)
            sys.exit(EXIT_ERROR)
        except Exception as err:  # noqa: BLE001 - one line for users, the traceback on request
            if os.environ.get("AGENTSPROOF_DEBUG"):
                raise
            click.echo(
                f"error: internal error: {type(err).__name__}: {err} (set AGENTSPROOF_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(EXIT_ERROR)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _sigterm_as_interrupt() -> Any:
    """SIGTERM behaves like Ctrl-C (clean stop, exit 30); returns the previous handler."""
    try:
        return signal.signal(signal.SIGTERM, _raise_interrupt)
    except (ValueError, AttributeError):  # not the main thread
        return None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentsproof")
def main() -> None:
    """Prove that a skill or agent makes a model, or a whole agent, better.

    Every eval runs N trials with the skill/agent (as the system prompt, or
    installed in a real agent working in its own workspace: --target) and N
    without it, grades both arms, and grades the delta: A >= +0.30,
    B >= +0.15, C >= 0, F < 0. Exit codes: 0 passed, 1 failed (with --ci),
    30 error.
    """


from agentsproof.cli.cache import cache_group  # noqa: E402
from agentsproof.cli.judge_check import judge_check_cmd  # noqa: E402
from agentsproof.cli.run import eval_all_cmd, eval_cmd, eval_generate_cmd, tc_eval_cmd  # noqa: E402
from agentsproof.cli.tools import compare_cmd, convert_cmd, doctor_cmd, merge_cmd, runs_needed_cmd, schema_cmd  # noqa: E402

for _command in (
    eval_cmd,
    eval_all_cmd,
    tc_eval_cmd,
    eval_generate_cmd,
    schema_cmd,
    convert_cmd,
    doctor_cmd,
    compare_cmd,
    merge_cmd,
    cache_group,
    runs_needed_cmd,
    judge_check_cmd,
):
    main.add_command(_command)

from agentsproof.cli.lint import lint_cmd  # noqa: E402

main.add_command(lint_cmd)
from agentsproof.cli.view import view_cmd  # noqa: E402

main.add_command(view_cmd)
from agentsproof.cli.regrade import import_group, regrade_cmd  # noqa: E402

main.add_command(regrade_cmd)
main.add_command(import_group)

from agentsproof.server.cli import register as _register_server  # noqa: E402

_register_server(main)

from agentsproof.cli.sdk import register as _register_sdk  # noqa: E402

_register_sdk(main)

from agentsproof.cli.ablate import ablate_cmd  # noqa: E402
from agentsproof.cli.activation import activation_cmd, tune_description_cmd  # noqa: E402

main.add_command(ablate_cmd)

main.add_command(activation_cmd)
main.add_command(tune_description_cmd)

from agentsproof.cli.verify import bundle_cmd, verify_cmd  # noqa: E402

main.add_command(verify_cmd)
main.add_command(bundle_cmd)


if __name__ == "__main__":  # pragma: no cover
    main()
