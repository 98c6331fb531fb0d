"""``lint --judge``: the LLM review of every file lint reads (agentsproof.formats.lint.judge)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.formats.lint.problems import Problem


def review(paths: Sequence[Path], *, provider: str | None, model: str | None, judge_model: str | None) -> list[Problem]:
    """The reviewer's findings for every eval file in ``paths`` that loads (one call each).
    A reviewer that cannot be reached is one line and exit 30, never a silent pass."""
    from agentsproof.executor.session import prepare_provider
    from agentsproof.formats.lint.judge import review_file
    from agentsproof.formats.lint.lint import loaded_views
    from agentsproof.grading.judge import Judge, JudgeError

    views = [v for p in paths for v in loaded_views(Path(p))]
    if not views:
        return []
    prepared = prepare_provider(provider, model, judge_model)
    client = prepared.client
    if client is None:
        raise ProviderUnavailable("lint --judge: no model to review with; give --provider/--model")
    judge = Judge(client, prepared.judge_model)

    async def run_all() -> list[Problem]:
        try:
            out: list[Problem] = []
            for view in views:
                try:
                    out += await review_file(judge, view)
                except JudgeError as err:
                    raise ProviderUnavailable(f"lint --judge: {view.file}: the reviewer failed: {err}") from None
            return out
        finally:
            await client.aclose()

    return asyncio.run(run_all())
