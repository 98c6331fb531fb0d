# Two entry points for a fresh machine:
#   make demo   a real eval on the embedded local model (no API key, no network)
#   make test   the whole test suite (what .ci/run calls)

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
COPILOT_CLI_VERSION ?= 1.0.102
COPILOT_DIR := $(VENV)/copilot-cli

.PHONY: demo test install install-dev copilot-cli bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

install: $(PY)
	$(PY) -m pip install --quiet -e '.[local]'

install-dev: $(PY)
	$(PY) -m pip install --quiet -e '.[dev,local,copilot]'

copilot-cli: $(COPILOT_DIR)/node_modules/.bin/copilot

$(COPILOT_DIR)/node_modules/.bin/copilot:
	mkdir -p $(COPILOT_DIR)
	npm install --silent --no-audit --no-fund --prefix $(COPILOT_DIR) @github/copilot@$(COPILOT_CLI_VERSION)

# Two model instances with one core each: measured faster than one instance on both
# cores when two trials run at once, and far less fragile under other CPU load.
demo: install
	AGENTSPROOF_LOCAL_INSTANCES=$${AGENTSPROOF_LOCAL_INSTANCES:-2} \
		$(VENV)/bin/agentsproof eval-all evals/demo-plugin --provider local --smoke --parallel 2
	@echo "HTML report: $(abspath runs/demo-plugin/demo-plugin-eval.html)"

test: install-dev copilot-cli
	COPILOT_CLI_PATH=$${COPILOT_CLI_PATH:-$(abspath $(COPILOT_DIR))/node_modules/.bin/copilot} $(PY) -m pytest -q

bench: install-dev
	$(PY) bench/throughput.py

clean:
	rm -rf runs .pytest_cache build *.egg-info
