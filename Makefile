# Two entry points for a fresh machine:
#   make demo   a real eval on the embedded local model (no API key, no network)
#   make test   the whole test suite (what .ci/run calls): scripts/test-machine.sh first
#               installs the Debian packages (as root) and starts a Docker engine

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
COPILOT_CLI_VERSION ?= 1.0.102
COPILOT_DIR := $(VENV)/copilot-cli
CLAUDE_CLI_VERSION ?= 2.1.332
CLAUDE_DIR := $(VENV)/claude-cli
CODEX_CLI_VERSION ?= 0.171.0
CODEX_DIR := $(VENV)/codex-cli
# The ACP agents the acp target's built-ins run (tests/agent_clis.py finds them here).
GEMINI_CLI_VERSION ?= 0.61.0
GEMINI_DIR := $(VENV)/gemini-cli
QWEN_CLI_VERSION ?= 0.24.4
QWEN_DIR := $(VENV)/qwen-cli
CLAUDE_ACP_VERSION ?= 0.16.2
CLAUDE_ACP_DIR := $(VENV)/claude-acp
CODEX_ACP_VERSION ?= 0.16.0
CODEX_ACP_DIR := $(VENV)/codex-acp
# agentv's runtime: its TypeScript graders, assertions and cli agents run with bun
# (agentsproof finds it here, agentsproof/core/bun.py; AGENTSPROOF_BUN or PATH otherwise).
BUN_VERSION ?= 1.4.4
BUN_DIR := $(VENV)/bun-cli

# ---------------------------------------------------------------- the embedded model
# llama-cpp-python compiles llama.cpp on install. Built with the build machine's native
# CPU flags (its default), it can run instructions another CPU -- or a VM that hides
# AMX/AVX-512 -- does not allow, and segfault. So we build it ourselves with portable
# flags into a wheelhouse keyed by version, architecture and flags, never from pip's
# wheel cache (which keys by version only), and install it from there.
LLAMA_VERSION ?= 0.3.36
ARCH := $(shell uname -m)
HAS_AVX2 := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo yes)
ifeq ($(ARCH),x86_64)
  ifeq ($(HAS_AVX2),yes)
    LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  else
    LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF
  endif
else
  LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
endif
LLAMA_FLAGS_ID := $(shell printf '%s' '$(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-10)
WHEELHOUSE_ROOT ?= $(or $(AGENTSPROOF_WHEELHOUSE),$(HOME)/.cache/agentsproof/wheelhouse)
WHEELHOUSE := $(WHEELHOUSE_ROOT)/llama-cpp-python-$(LLAMA_VERSION)-$(ARCH)-$(LLAMA_FLAGS_ID)
LLAMA_WHEEL_STAMP := $(WHEELHOUSE)/.complete
LLAMA_VENV_STAMP := $(VENV)/.llama-portable-$(LLAMA_VERSION)-$(LLAMA_FLAGS_ID)

.PHONY: demo relay test test-installed lint test-python test-node install install-dev copilot-cli claude-cli codex-cli acp-agents bun interop-tools llama bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(LLAMA_WHEEL_STAMP): | $(PY)
	@echo "building llama-cpp-python $(LLAMA_VERSION) with portable flags ($(LLAMA_CMAKE_ARGS)); about 5 minutes on 2 cores"
	mkdir -p $(WHEELHOUSE)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" FORCE_CMAKE=1 $(PY) -m pip wheel --quiet --no-deps --no-cache-dir \
		--no-binary llama-cpp-python -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION)
	touch $@

$(LLAMA_VENV_STAMP): $(LLAMA_WHEEL_STAMP)
	$(PY) -m pip install --quiet --no-cache-dir --force-reinstall --no-deps --no-index \
		--find-links $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION)
	rm -f $(VENV)/.llama-portable-*
	touch $@

llama: $(LLAMA_VENV_STAMP)

# The editable installs are redone only when pyproject.toml (or the llama build) changed:
# the code itself is read from the checkout, so `make demo` skips pip when nothing did.
INSTALL_STAMP := $(VENV)/.installed-local
INSTALL_DEV_STAMP := $(VENV)/.installed-dev

install: $(INSTALL_STAMP)

$(INSTALL_STAMP): pyproject.toml $(LLAMA_VENV_STAMP) | $(PY)
	$(PY) -m pip install --quiet -e '.[local]'
	touch $@

install-dev: $(INSTALL_DEV_STAMP)

$(INSTALL_DEV_STAMP): pyproject.toml $(LLAMA_VENV_STAMP) | $(PY)
	$(PY) -m pip install --quiet -e '.[dev,local,copilot,server,acp,ray]'
	touch $@

copilot-cli: $(COPILOT_DIR)/node_modules/.bin/copilot

$(COPILOT_DIR)/node_modules/.bin/copilot:
	mkdir -p $(COPILOT_DIR)
	npm install --silent --no-audit --no-fund --prefix $(COPILOT_DIR) @github/copilot@$(COPILOT_CLI_VERSION)

# The claude-code and codex targets' tests run these pinned CLIs (tests/agent_clis.py).
claude-cli: $(CLAUDE_DIR)/node_modules/.bin/claude

$(CLAUDE_DIR)/node_modules/.bin/claude:
	mkdir -p $(CLAUDE_DIR)
	npm install --silent --no-audit --no-fund --prefix $(CLAUDE_DIR) @anthropic-ai/claude-code@$(CLAUDE_CLI_VERSION)

# Codex's Linux binary is an optional dependency (@openai/codex-linux-x64 / -arm64): check it came.
codex-cli: $(CODEX_DIR)/.complete

$(CODEX_DIR)/.complete:
	mkdir -p $(CODEX_DIR)
	npm install --silent --no-audit --no-fund --prefix $(CODEX_DIR) @openai/codex@$(CODEX_CLI_VERSION)
	$(CODEX_DIR)/node_modules/.bin/codex --version
	touch $@

# The ACP agents (the acp target's built-ins gemini, qwen-code, claude-code-acp, codex-acp).
acp-agents: $(GEMINI_DIR)/.complete $(QWEN_DIR)/.complete $(CLAUDE_ACP_DIR)/.complete $(CODEX_ACP_DIR)/.complete

$(GEMINI_DIR)/.complete:
	mkdir -p $(GEMINI_DIR)
	npm install --silent --no-audit --no-fund --prefix $(GEMINI_DIR) @google/gemini-cli@$(GEMINI_CLI_VERSION)
	touch $@

$(QWEN_DIR)/.complete:
	mkdir -p $(QWEN_DIR)
	npm install --silent --no-audit --no-fund --prefix $(QWEN_DIR) @qwen-code/qwen-code@$(QWEN_CLI_VERSION)
	touch $@

$(CLAUDE_ACP_DIR)/.complete:
	mkdir -p $(CLAUDE_ACP_DIR)
	npm install --silent --no-audit --no-fund --prefix $(CLAUDE_ACP_DIR) @zed-industries/claude-code-acp@$(CLAUDE_ACP_VERSION)
	touch $@

# codex-acp's Linux binary is an optional dependency, like Codex's: check it came.
$(CODEX_ACP_DIR)/.complete:
	mkdir -p $(CODEX_ACP_DIR)
	npm install --silent --no-audit --no-fund --prefix $(CODEX_ACP_DIR) @zed-industries/codex-acp@$(CODEX_ACP_VERSION)
	test -x $(CODEX_ACP_DIR)/node_modules/.bin/codex-acp
	touch $@

# bun's npm package brings its Linux binary as an optional dependency (@oven/bun-linux-x64): check it came.
bun: $(BUN_DIR)/.complete

$(BUN_DIR)/.complete:
	mkdir -p $(BUN_DIR)
	npm install --silent --no-audit --no-fund --prefix $(BUN_DIR) bun@$(BUN_VERSION)
	$(BUN_DIR)/node_modules/.bin/bun --version
	touch $@

# Published tools the interop tests run (tests/interop/test_interop_tools.py): agentv from npm in
# tests/interop/node_modules, agentprobe-eval from PyPI in its own venv (.venv-interop; its
# module name `agentprobe` clashes with an unrelated PyPI package, so it stays apart).
AGENTPROBE_VERSION ?= 0.2.0
INTEROP_VENV := .venv-interop

interop-tools: tests/interop/node_modules/.bin/agentv $(INTEROP_VENV)/.agentprobe-$(AGENTPROBE_VERSION)

# `npm install --no-save` rather than `npm ci`: npm 11's `ci` refuses this lock file over
# platform-only optional packages of a dependency it leaves out; the versions stay pinned.
tests/interop/node_modules/.bin/agentv: tests/interop/package.json tests/interop/package-lock.json
	cd tests/interop && npm install --silent --no-audit --no-fund --no-save

$(INTEROP_VENV)/.agentprobe-$(AGENTPROBE_VERSION):
	$(PYTHON) -m venv $(INTEROP_VENV)
	$(INTEROP_VENV)/bin/python -m pip install --quiet 'agentprobe-eval==$(AGENTPROBE_VERSION)'
	touch $@

# Two model instances with one core each: measured faster than one instance on both
# cores when two trials run at once, and far less fragile under other CPU load.
demo: install
	AGENTSPROOF_LOCAL_INSTANCES=$${AGENTSPROOF_LOCAL_INSTANCES:-2} \
		$(VENV)/bin/agentsproof eval-all evals/demo-plugin --provider local --smoke --parallel 2
	@echo "HTML report: $(abspath runs/demo-plugin/demo-plugin-eval.html)"

# The static relay every trial container runs (agentsproof/isolation/engine.py):
# our own C, linked static so it runs in any Linux image (no python, no libc there).
RELAY := agentsproof/data/ap-relay
relay: $(RELAY)
$(RELAY): agentsproof/data/ap_relay.c
	$${CC:-cc} -static -O2 -Wall -o $@ $<

# The machine first (Debian packages, a Docker engine, CI=1: scripts/test-machine.sh), then
# every install and the three test runners with DOCKER_HOST and CI exported to them.
test:
	scripts/test-machine.sh $(MAKE) --no-print-directory test-installed

test-installed: install-dev copilot-cli claude-cli codex-cli acp-agents bun interop-tools relay
	$(MAKE) --no-print-directory lint test-python test-node

# ruff (pyflakes, isort, bugbear, pyupgrade) and mypy over the package, both clean
lint:
	$(PY) -m ruff check agentsproof
	$(PY) -m ruff format --check agentsproof
	$(PY) -m mypy

test-python:
	COPILOT_CLI_PATH=$${COPILOT_CLI_PATH:-$(abspath $(COPILOT_DIR))/node_modules/.bin/copilot} \
	CLAUDE_CLI_PATH=$${CLAUDE_CLI_PATH:-$(abspath $(CLAUDE_DIR))/node_modules/.bin/claude} \
	CODEX_CLI_PATH=$${CODEX_CLI_PATH:-$(abspath $(CODEX_DIR))/node_modules/.bin/codex} \
	GEMINI_CLI_PATH=$${GEMINI_CLI_PATH:-$(abspath $(GEMINI_DIR))/node_modules/.bin/gemini} \
	QWEN_CLI_PATH=$${QWEN_CLI_PATH:-$(abspath $(QWEN_DIR))/node_modules/.bin/qwen} \
	CLAUDE_CODE_ACP_PATH=$${CLAUDE_CODE_ACP_PATH:-$(abspath $(CLAUDE_ACP_DIR))/node_modules/.bin/claude-code-acp} \
	CODEX_ACP_PATH=$${CODEX_ACP_PATH:-$(abspath $(CODEX_ACP_DIR))/node_modules/.bin/codex-acp} $(PY) -m pytest -q --durations=20

test-node:
	cd sdk/typescript && npm ci --silent --no-audit --no-fund && AGENTSPROOF_PYTHON=$(abspath $(PY)) npm test

bench: install-dev
	$(PY) bench/throughput.py

clean:
	rm -rf runs .pytest_cache build *.egg-info $(INTEROP_VENV) tests/interop/node_modules
