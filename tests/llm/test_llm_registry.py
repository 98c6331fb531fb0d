"""Provider and model resolution (pure logic: no model is loaded, no call is made)."""

from __future__ import annotations

import pytest

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm import registry
from agentsproof.llm.local_model import default_model_name


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in (
        "AGENTSPROOF_PROVIDER_TYPE",
        "AGENTSPROOF_PROVIDER_URL",
        "AGENTSPROOF_PROVIDER_KEY",
        "AGENTSPROOF_MODEL",
        "AGENTSPROOF_JUDGE_MODEL",
        "AGENTSPROOF_LOCAL_MODEL",
        "AGENTSPROOF_COPILOT_PROVIDER_URL",
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "COPILOT_GITHUB_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return monkeypatch


def test_explicit_provider_wins(clean_env):
    clean_env.setenv("AGENTSPROOF_PROVIDER_TYPE", "ollama")
    assert registry.resolve_provider_name("azure") == "azure"
    assert registry.resolve_provider_name(None) == "ollama"


def test_unknown_provider_is_one_line_error(clean_env):
    with pytest.raises(ProviderUnavailable) as err:
        registry.resolve_provider_name("vertex")
    assert "unknown provider 'vertex'" in str(err.value)
    assert "\n" not in str(err.value)


def test_auto_prefers_byok_url(clean_env):
    clean_env.setenv("AGENTSPROOF_PROVIDER_URL", "http://127.0.0.1:9/v1")
    assert registry.resolve_provider_name("auto") == "openai"


def test_auto_takes_a_byok_key_alone_as_openai(clean_env):
    clean_env.setenv("AGENTSPROOF_PROVIDER_KEY", "sk-x")
    assert registry.resolve_provider_name(None) == "openai"


def test_auto_falls_back_to_local_without_copilot_login(clean_env):
    # HOME is empty and no token is set, so Copilot is not usable; the local extra is installed.
    assert registry.resolve_provider_name(None) == "local"


def test_models_from_flag_then_env(clean_env):
    clean_env.setenv("AGENTSPROOF_MODEL", "env-model")
    assert registry.resolve_models("openai", None, None).model == "env-model"
    choice = registry.resolve_models("openai", "flag-model", None)
    assert (choice.model, choice.judge_model) == ("flag-model", "flag-model")
    clean_env.setenv("AGENTSPROOF_JUDGE_MODEL", "judge-env")
    assert registry.resolve_models("openai", "flag-model", None).judge_model == "judge-env"
    assert registry.resolve_models("openai", "flag-model", "judge-flag").judge_model == "judge-flag"


def test_missing_model_names_the_flag(clean_env):
    with pytest.raises(ProviderUnavailable) as err:
        registry.resolve_models("openai", None, None)
    assert str(err.value).startswith("--model:")


def test_local_ignores_env_model_of_other_providers(clean_env):
    clean_env.setenv("AGENTSPROOF_MODEL", "gpt-4o")
    clean_env.setenv("AGENTSPROOF_JUDGE_MODEL", "gpt-4o-mini")
    choice = registry.resolve_models("local", None, None)
    assert choice.model == choice.judge_model == default_model_name()


def test_local_rejects_another_model_flag(clean_env):
    with pytest.raises(ProviderUnavailable) as err:
        registry.resolve_models("local", "gpt-4o", None)
    assert "AGENTSPROOF_LOCAL_MODEL" in str(err.value)
    assert registry.resolve_models("local", default_model_name().upper(), None).model == default_model_name()


def test_byok_openai_without_url_or_key_is_unusable(clean_env):
    with pytest.raises(ProviderUnavailable) as err:
        registry.build_client("openai")
    assert "AGENTSPROOF_PROVIDER_KEY" in str(err.value)
