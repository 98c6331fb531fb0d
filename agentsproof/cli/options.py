"""Click options shared by the commands, declared once.

The provider, trial and run options are on every run command;
``eval`` and ``eval-all`` take ``--all-tasks``; every run command takes the budget and
plan options and ``--fail-on-underpowered``; ``eval-all`` also takes ``--p-adjust``.
They all land in :class:`agentsproof.model.options.RunFlags`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from agentsproof.core.errors import InputError


class ProviderChoice(click.Choice):
    """``--provider``: the in-tree providers (its choices in ``--help``) and, looked up only
    for a value that is not one of them, the providers of installed packages."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=False)

    @property
    def choices(self) -> tuple[str, ...]:
        """The in-tree providers, read from the registry when first asked (a command that takes
        no ``--provider``, such as ``verify``, does not load the provider layer)."""
        from agentsproof.llm.registry import PROVIDERS

        return PROVIDERS

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ sets them: the registry's are kept
        pass

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The provider name, lower-cased: an in-tree one or an installed plugin's (``--help`` lists the in-tree ones)."""
        if isinstance(value, str) and value.strip().lower() not in self.choices:
            from agentsproof.llm.registry import plugin_names

            if value.strip().lower() in plugin_names():
                return value.strip().lower()
        return super().convert(value, param, ctx)


class LazyHelpOption(click.Option):
    """An option whose help is written when ``--help`` is shown (it names what a registry
    holds, which start-up does not import)."""

    def __init__(self, *args: Any, help_text: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_text = help_text

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The help line, its text read from the registry when ``--help`` asks for it."""
        self.help = self._help_text()
        return super().get_help_record(ctx)


def target_help() -> str:
    """``--target``'s help, naming the built-in targets of the targets registry."""
    from agentsproof.targets.registry import builtin_names

    builtins = ", ".join(f"'{name}'" for name in builtin_names())
    return (
        f"Run the trials with this agent (a targets.yaml name, or the built-in {builtins}); several, comma-separated, run every item "
        "on each (one report, a grade per agent). Overrides eval.yaml's execution. See docs/agent-trials.md."
    )


class FiniteRange(click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and ``inf`` (``nan`` compares false
    with both bounds, so click lets it through any range)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, refused (one line naming the flag and the range) when it is nan, infinite or out of range."""
        import math

        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number in the range {self._describe_range()}.", param, ctx)
        return number


PRESETS = {"smoke": 5, "reliable": 15, "regression": 30}


P_ADJUST_METHODS = ("holm", "bh", "none")


def tasks_option(f: Callable) -> Callable:
    """``--all-tasks``: every task of a version 1 ``tasks`` list, not just the first."""
    return click.option(
        "--all-tasks",
        is_flag=True,
        default=None,
        help="Run every task of a version 1 'tasks' list as a case (default: the first only; version 2 'tasks' always run all).",
    )(f)


def budget_options(f: Callable) -> Callable:
    """What a run may spend and when it fails: ``--max-calls``, ``--max-cost``, ``--plan``, ``--fail-on-underpowered``."""
    f = click.option(
        "--fail-on-underpowered",
        is_flag=True,
        default=None,
        help="With --ci, also exit 1 when an item's verdict is underpowered (fewer than 5 cases, or an interval for tasks like these spanning grade bands).",
    )(f)
    f = click.option(
        "--max-calls",
        type=click.IntRange(1, None),
        metavar="N",
        help="Stop cleanly before the run's N+1-th LLM call (incomplete report, exit 30).",
    )(f)
    f = click.option(
        "--max-cost",
        type=FiniteRange(0, None, min_open=True),
        metavar="USD",
        help="Stop cleanly before a call would take the run's cost past USD (incomplete report, exit 30).",
    )(f)
    f = click.option(
        "--plan",
        is_flag=True,
        default=None,
        help="Print the LLM calls, tokens and cost the run would make, make no call, exit 0.",
    )(f)
    return f


def p_adjust_option(f: Callable) -> Callable:
    """``--p-adjust``: how an eval-all run corrects its p-values for the number of items."""
    return click.option(
        "--p-adjust",
        type=click.Choice(P_ADJUST_METHODS, case_sensitive=False),
        default=None,
        help="Adjust the items' p-values for testing many items: holm (default), bh (Benjamini-Hochberg) or none.",
    )(f)


def provider_options(f: Callable, model_help: str = "Model for the trials. Env: AGENTSPROOF_MODEL.") -> Callable:
    """``--provider``, ``--model`` and ``--judge-model``."""
    f = click.option(
        "--judge-model",
        envvar="AGENTSPROOF_JUDGE_MODEL",
        help="Model for LLM graders (default: --model). Env: AGENTSPROOF_JUDGE_MODEL.",
    )(f)
    f = click.option(
        "--provider",
        type=ProviderChoice(),
        envvar="AGENTSPROOF_PROVIDER_TYPE",
        help="LLM provider (default auto: BYOK env, else Copilot, else local). Env: AGENTSPROOF_PROVIDER_TYPE.",
    )(f)
    f = click.option("--model", help=model_help)(f)
    return f


def trial_options(default_trials_help: str) -> Callable[[Callable], Callable]:
    """``--trials`` (its default described by ``default_trials_help``) and ``--trials-per-case``."""

    def deco(f: Callable) -> Callable:
        for name, n in reversed(list(PRESETS.items())):
            f = click.option(
                f"--{name}",
                "preset",
                flag_value=name,
                help=f"{n} trials per arm per item, spread round robin over its cases (at least one per case).",
            )(f)
        f = click.option("--trials-per-case", type=click.IntRange(1, 1000), help="Trials per arm for every case of an item.")(f)
        f = click.option("--trials", type=click.IntRange(1, 1000), help=f"Trials per arm per case ({default_trials_help}).")(f)

        @functools.wraps(f)
        def wrapper(*args: Any, preset: str | None = None, trials: int | None = None, trials_per_case: int | None = None, **kw: Any) -> Any:
            given = [
                x
                for x in (
                    f"--{preset}" if preset else None,
                    "--trials" if trials is not None else None,
                    "--trials-per-case" if trials_per_case is not None else None,
                )
                if x
            ]
            if len(given) > 1:
                raise InputError("command line", given[1], f"conflicts with {given[0]}; give one of them")
            per_case = trials if trials is not None else trials_per_case
            return f(*args, trials=per_case, trials_per_item=PRESETS[preset] if preset else None, **kw)

        return wrapper

    return deco


def run_options(f: Callable) -> Callable:
    """The options eval, tc-eval and eval-all share: output and exports, ``--parallel``, the interval rule, ``--adaptive``, cache, resume, targets, baseline and config."""
    f = click.option(
        "--abort-after",
        type=click.IntRange(0, None),
        default=5,
        show_default=True,
        help="Stop after this many errored trials in a row, write an incomplete report, exit 30 (0: never).",
    )(f)
    f = click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=Path("runs"), show_default=True, help="Output directory.")(f)
    f = click.option(
        "--ci-rule",
        type=click.Choice(["point", "interval"]),
        default="point",
        show_default=True,
        help="Which items fail: point (graded F or pass rate below the threshold) or interval (only when the delta's "
        "interval lies below 0 or the pass rate's below the threshold). See docs/statistics.md.",
    )(f)
    f = click.option("--ci", is_flag=True, help="Exit 1 when an eval is below its threshold or graded F (see --ci-rule).")(f)
    f = click.option("--parallel", type=click.IntRange(1, 512), default=1, show_default=True, help="Concurrent trials across the whole command.")(f)
    f = click.option(
        "--aa",
        is_flag=True,
        help="A/A run: the baseline against itself (same prompts, graders, judge); reports the noise floor. See docs/statistics.md.",
    )(f)
    f = click.option(
        "--adaptive",
        is_flag=True,
        help="Run trials in batches; stop once the grade is settled (trials/preset = cap, default 15). See docs/statistics.md.",
    )(f)
    f = click.option(
        "--retry-errors",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="RUN.json",
        help="Re-run only the errored trials of this saved run (its JSON report) and merge them.",
    )(f)
    f = click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Response cache folder (default: $AGENTSPROOF_CACHE_DIR, else ~/.cache/agentsproof).",
    )(f)
    f = click.option(
        "--no-cache",
        "cache",
        flag_value=False,
        default=None,
        help="Make every call; neither read nor store the response cache (env AGENTSPROOF_NO_CACHE=1).",
    )(f)
    f = click.option(
        "--no-prompt-cache",
        "prompt_cache",
        flag_value=False,
        default=None,
        help="Do not mark the system prompt for the provider's prompt cache (anthropic; on by default).",
    )(f)
    f = click.option(
        "--resume",
        is_flag=True,
        help="Keep the trials journalled by an interrupted or killed run of the same command; run only the missing ones.",
    )(f)
    f = click.option(
        "--target",
        metavar="NAME",
        cls=LazyHelpOption,
        help_text=target_help,
    )(f)
    f = click.option(
        "--targets",
        "targets_file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help="A targets.yaml to look in first (then beside the eval, .agentsproof/ above it, ~/.config/agentsproof/).",
    )(f)
    f = click.option(
        "--atif",
        type=click.Path(file_okay=False, path_type=Path),
        metavar="DIR",
        help="Also write each agent trial as an ATIF trajectory (Harbor's format) below DIR.",
    )(f)
    f = click.option(
        "--no-oracle",
        is_flag=True,
        default=None,
        help="Skip the oracle preflight (an eval's `oracle:` is graded before the trials; docs/lint-oracle-regrade.md).",
    )(f)
    f = click.option(
        "--keep-workspaces",
        is_flag=True,
        default=None,
        help="Keep every agent trial's workspace in <report>.workspaces/run-<time>-<id>/, one folder per run (default: deleted after grading).",
    )(f)
    f = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Also write JUnit XML: one testcase per item or case.")(f)
    f = click.option("--jsonl", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Also write one JSON line per trial.")(f)
    f = click.option(
        "--baseline",
        type=click.Choice(["default", "none"]),
        default="default",
        show_default=True,
        help="none: run only the with-arm (or the target alone): pass rates and flaky cases, no grade. See docs/interop.md.",
    )(f)
    f = click.option(
        "--config",
        multiple=True,
        metavar="KEY=VALUE",
        help="Record a setting of the agent in the report (repeatable); compare warns when two runs differ.",
    )(f)
    return root_option(sign_option(f))


def sign_option(f: Callable) -> Callable:
    """``--sign KEY``: sign the JSON report (every command that writes one, and ``bundle``)."""
    return click.option(
        "--sign",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="KEY",
        help="Sign the JSON report with this SSH private key (ssh-keygen -Y sign, namespace agentsproof): <report>.json.sig; check with `agentsproof verify --allowed-signers`.",
    )(f)


def executor_options(f: Callable) -> Callable:
    """``--executor`` and ``--ray-address`` (issue 48): where each trial runs (agentsproof.executor.ray_trials)."""
    f = click.option(
        "--ray-address",
        envvar="RAY_ADDRESS",
        metavar="ADDRESS",
        help="With --executor ray: the cluster (host:port, ray://host:port, or auto for the one running here; "
        "default: a one-node Ray on this machine). Env: RAY_ADDRESS.",
    )(f)
    f = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where trials run: local (this machine) or ray (each trial a task on a node offering the agentsproof_trial resource; "
        "chat, agent and container trials). See docs/cluster.md.",
    )(f)
    return f


def threshold_option(f: Callable) -> Callable:
    """``--threshold``: the pass rate the with-skill arm needs (default: from the eval file)."""
    return click.option("--threshold", type=FiniteRange(0, 1), help="Pass rate required in the with-skill arm (default: from eval.yaml).")(f)


def _set_root(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    from agentsproof.core.project import set_root

    set_root(value)


def root_option(f: Callable) -> Callable:
    """``--root DIR``: the project every file an eval names must stay in (docs/eval-files.md)."""
    return click.option(
        "--root",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        metavar="DIR",
        expose_value=False,
        callback=_set_root,
        help="The project root: files an eval names may be anywhere below it, never outside (default: the nearest folder "
        "above the eval with .git, .agentv/ or promptfooconfig.yaml, else the current folder). Env: AGENTSPROOF_ROOT.",
    )(f)
