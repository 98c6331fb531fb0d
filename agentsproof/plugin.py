"""The stable API for plugins: everything a provider, grader, target or format needs.

A plugin imports only this module (``from agentsproof.plugin import GraderEntry, ...``): the
modules behind it may move (``tests/core/test_plugin_api.py`` fails when
``examples/plugin`` imports anything else). What each kind of plugin builds, and the
entry-point group it is declared in (:data:`ENTRY_POINT_GROUPS`), is in docs/plugins.md.

- a **grader**: a config model (a :class:`Strict` pydantic model with ``type:
  Literal["name"]``), ``async def grade(spec, given: GradeInput) -> GraderResult`` (its
  :class:`CheckResult` values), and ``GRADER = GraderEntry(...)``; its optional ``lint`` hook
  yields :class:`Finding`, :class:`Patterns`, :class:`Needle` or :class:`Presence` for a
  :class:`LintCase`;
- a **target**: a :class:`Target` subclass with ``kind``, a ``spec_model`` (its targets.yaml
  entry, a :class:`Strict` model) and the constructor :class:`TargetFactory` describes;
  ``run(TrialInput) -> TrialRecord``; a failure of the agent raises :class:`TargetError`;
- a **provider**: a :class:`ProviderEntry` whose ``build(BuildOptions)`` returns an
  :class:`LLMClient` (``ChatRequest`` in, ``ChatResponse`` out; a failed call raises
  :class:`LLMError`);
- a **format**: an object with ``name``, ``detect``, ``discoverable`` and
  ``load(path, ItemRequest) -> Loaded`` (:class:`InputFormat`) whose items are
  :class:`EvalItem` values (:class:`Case`, :class:`SkillFile`); bad input raises
  :class:`InputError` naming the file and field; its optional ``lint_view(path, src,
  loaded=None)`` hook returns :func:`cases_view` (with its :class:`CaseFields`) so that
  ``agentsproof lint`` checks its cases.
"""

from __future__ import annotations

from agentsproof.core.entrypoints import GROUPS as ENTRY_POINT_GROUPS
from agentsproof.core.entrypoints import PluginError
from agentsproof.core.errors import InputError, LLMError, ProviderUnavailable, TargetError
from agentsproof.formats.base import InputFormat, ItemRequest, Loaded
from agentsproof.formats.lint.views import CaseFields, cases_view
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.hooks import Finding, LintCase, LintFact, Needle, Patterns, Presence
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient
from agentsproof.llm.provider_entry import BuildOptions, ProviderEntry
from agentsproof.model.graders import Strict
from agentsproof.model.items import Case, EvalItem, SkillFile
from agentsproof.model.results import CheckResult, GraderResult, ToolCall, Usage
from agentsproof.targets.base import Target, TargetFactory, TrialInput, TrialRecord

# old names plugins may still import (issue 47: names that say one thing)
ProviderSpec = ProviderEntry
GraderKind = GraderEntry

__all__ = [
    "ENTRY_POINT_GROUPS",
    "BuildOptions",
    "Case",
    "CaseFields",
    "ChatRequest",
    "ChatResponse",
    "CheckResult",
    "EvalItem",
    "Finding",
    "GradeInput",
    "GraderEntry",
    "GraderKind",
    "GraderResult",
    "InputError",
    "InputFormat",
    "ItemRequest",
    "LLMClient",
    "LLMError",
    "LintCase",
    "LintFact",
    "Loaded",
    "Needle",
    "Patterns",
    "PluginError",
    "Presence",
    "ProviderEntry",
    "ProviderSpec",
    "ProviderUnavailable",
    "SkillFile",
    "Strict",
    "Target",
    "TargetError",
    "TargetFactory",
    "ToolCall",
    "TrialInput",
    "TrialRecord",
    "Usage",
    "cases_view",
]
