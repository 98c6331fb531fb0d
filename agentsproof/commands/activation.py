"""``agentsproof activation PLUGIN_DIR``: run only a plugin's activation suites.

Every prompt of every skill's suite runs (one turn, ``trials`` times) with all of the
plugin's skills installed in the chosen target; nothing is graded beyond which skills
loaded. The result is scored per skill (:mod:`agentsproof.stats.activation`) and written
as ``<output>/<plugin>/<plugin>-activation.{md,json,html}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.executor.activation import DEFAULT_ACTIVATION_TIMEOUT
from agentsproof.formats.activation import PluginSuites, load_plugin_suites
from agentsproof.model.activation import ActivationSuite, ActivationTrial
from agentsproof.model.items import SkillFile
from agentsproof.stats.activation import ActivationStats

if TYPE_CHECKING:
    from agentsproof.llm.base import LLMClient
    from agentsproof.targets.base import Target


@dataclass
class ActivationOptions:
    """What ``agentsproof activation`` runs: the provider or target, trials, parallelism, timeout (seconds) and output folder."""

    provider: str | None = None
    model: str | None = None
    target: str | None = None
    """A targets.yaml name (or built-in ``copilot``); None: the chat simulation."""
    targets_file: Path | None = None
    trials: int = 1
    parallel: int = 1
    timeout: float = DEFAULT_ACTIVATION_TIMEOUT
    output: Path = Path("runs")
    skills: tuple[str, ...] = ()
    """Only these skills' suites (all of the plugin's skills stay installed)."""
    on_trial: Callable[[ActivationTrial], None] | None = None
    sign: Path | None = None
    """``--sign KEY``: sign the JSON report (docs/verify.md)."""
    ci: bool = False
    """``--ci``: recorded in the manifest (it decides the exit code)."""
    executor: str = "local"
    """``--executor``: ``local`` or ``ray`` (each trial a task on a Ray cluster's node: agentsproof.executor.ray_activation)."""
    ray_address: str | None = None


@dataclass
class ActivationRun:
    """A finished activation run: the plugin's suites, the scores, every trial and the reports written."""

    plugin: PluginSuites
    stats: ActivationStats
    trials: list[ActivationTrial]
    settings: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)


def build_target(opts: ActivationOptions, near: Path) -> tuple[Target, LLMClient | None, dict[str, Any]]:
    """(target, the chat client to close or None, what to record of it)."""
    if opts.target:
        from agentsproof.targets.config import check_target_name
        from agentsproof.targets.registry import build_target as build

        found = check_target_name(opts.target, near, "command line", "--target", opts.targets_file)
        target = build(found, model=opts.model)
        return target, None, {"target": opts.target, "model": opts.model, **target.describe()}
    from agentsproof.executor.session import prepare_provider
    from agentsproof.targets.chat.target import ChatTarget

    prepared = prepare_provider(opts.provider, opts.model, None)
    if prepared.client is None:  # pragma: no cover - a chat provider always has a client
        raise RuntimeError("no chat client")
    return (
        ChatTarget(prepared.client, prepared.model),
        prepared.client,
        {
            "target": "chat (simulated skill tool)",
            "provider": prepared.provider,
            "model": prepared.model,
        },
    )


async def _run_suites(
    target: Target, suites: Sequence[ActivationSuite], skills: list[SkillFile], opts: ActivationOptions, described: dict[str, Any], near: Path
) -> list[ActivationTrial]:
    from agentsproof.executor.activation import run_activation

    if opts.executor == "ray":  # issue 48: each trial on a node of the cluster
        from agentsproof.executor.ray_activation import ActivationTarget, run_activation_on_ray
        from agentsproof.executor.ray_common import NodeRun

        agent = None
        if opts.target:
            from agentsproof.targets.config import check_target_name

            found = check_target_name(opts.target, near, "command line", "--target", opts.targets_file)
            agent = (found, found.expanded())
        run = NodeRun(provider=str(described.get("provider") or "none"), model=str(described.get("model") or opts.model or ""), judge_model="")
        spec = ActivationTarget(run=run, agent=agent)
        return await run_activation_on_ray(
            opts.ray_address, spec, suites, skills, trials=opts.trials, parallel=opts.parallel, timeout=opts.timeout, on_trial=opts.on_trial
        )

    return await run_activation(target, suites, skills, trials=opts.trials, parallel=opts.parallel, timeout=opts.timeout, on_trial=opts.on_trial)


def _choose_suites(plugin: PluginSuites, only: Sequence[str]) -> list[ActivationSuite]:
    if not only:
        return list(plugin.suites)
    from agentsproof.core.errors import InputError

    have = {s.skill.name: s for s in plugin.suites}
    unknown = [n for n in only if n not in have]
    if unknown:
        raise InputError("command line", "--skill", f"{unknown[0]!r} has no activation suite (have: {', '.join(sorted(have)) or 'none'})")
    return [have[n] for n in only]


def run_plugin_activation(plugin_dir: Path, opts: ActivationOptions) -> ActivationRun:
    """Run the plugin's activation suites (or those of ``opts.skills``), score them and write the
    reports; ``plugin_dir`` may be a skill-creator trigger-eval file (its skill's suite, with its
    plugin's skills installed). InputError on bad input."""
    from agentsproof.executor.session import run_sync
    from agentsproof.report import activation as report
    from agentsproof.stats.activation import score

    if Path(plugin_dir).is_file():  # skill-creator's trigger evals ({query, should_trigger}) as they are
        from agentsproof.formats.trigger_evals import trigger_suites

        plugin = trigger_suites(Path(plugin_dir))
    else:
        plugin = load_plugin_suites(plugin_dir)
    suites = _choose_suites(plugin, opts.skills)
    paths = report.report_paths(opts.output, plugin.name)
    for p in paths.values():
        _check_writable(p)
    from agentsproof.commands.proof import check_sign_key

    check_sign_key(opts.sign)
    target, client, described = build_target(opts, Path(plugin_dir))

    async def go() -> list[ActivationTrial]:
        try:
            return await _run_suites(target, suites, plugin.skills, opts, described, Path(plugin_dir))
        finally:
            await target.aclose()
            if client is not None:
                await client.aclose()

    trials = run_sync(go())
    stats = score(suites, trials, [s.name for s in plugin.skills])
    settings = {**described, "trials": opts.trials, "skills installed": len(plugin.skills)}
    run = ActivationRun(plugin=plugin, stats=stats, trials=trials, settings=settings)
    manifest = _manifest(trials, suites, plugin, described, opts, stats)
    run.paths = report.write(stats, paths, plugin.name, settings, trials, manifest=manifest)
    from agentsproof.commands.proof import sign_report

    sign_report(run.paths, opts.sign)
    return run


def _manifest(
    trials: list[ActivationTrial],
    suites: Sequence[ActivationSuite],
    plugin: PluginSuites,
    described: dict[str, Any],
    opts: ActivationOptions,
    stats: ActivationStats,
) -> dict[str, Any]:
    """The activation report's manifest (agentsproof.executor.proof)."""
    import json
    from dataclasses import asdict

    from agentsproof.commands.proof import proof_options
    from agentsproof.executor.proof import activation_manifest

    rows = json.loads(json.dumps([asdict(t) for t in trials]))  # as the report records them
    found = proof_options(sign=opts.sign, ci=opts.ci)
    return activation_manifest(rows, [s.source for s in suites if s.source], plugin.skills, described, found, stats)


def _check_writable(path: Path) -> None:
    from agentsproof.core.errors import InputError

    for parent in [path.parent, *path.parent.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise InputError("command line", "--output", f"{parent} is a file, not a folder")
            return
