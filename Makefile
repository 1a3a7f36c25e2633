# The two quick-start commands (see README): `make demo` and `make test`.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# npm packages some tests drive (tests/node_tools.py): yaml-language-server (the schema
# as an editor shows it) and Mermaid with jsdom (Mermaid's own parser reads our diagrams;
# its dist bundle lays them out in headless Chromium, no extra package needed)
NODE_PREFIX := build/node
NODE_PACKAGES := yaml-language-server@1.25.0 mermaid@11.17.2 jsdom@26.1.0
NODE_STAMP := $(NODE_PREFIX)/.installed-$(subst @,-,$(subst $() ,_,$(NODE_PACKAGES)))

.PHONY: w3c-data demo inspect test node-tools lint-machines bench clean

# The W3C SCXML conformance tests that tests/scxml/test_w3c_suite.py runs: the copy
# python-statemachine 3.2.2's source distribution ships (tests/scxml/w3c), unpacked
# into build/w3c; the repository holds only the expected-result table.
W3C_VERSION := 3.2.2
W3C_DIR := build/w3c/python_statemachine-$(W3C_VERSION)/tests/scxml/w3c
w3c-data: $(W3C_DIR)/.unpacked

$(W3C_DIR)/.unpacked: $(STAMP)
	$(BIN)/python -m pip download -q --no-deps --no-binary :all: python-statemachine==$(W3C_VERSION) -d build/w3c
	tar -xzf build/w3c/python_statemachine-$(W3C_VERSION).tar.gz -C build/w3c
	touch $@

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

node-tools: $(NODE_STAMP)

$(NODE_STAMP):
	command -v node >/dev/null && command -v npm >/dev/null || (apt-get update && apt-get install -y nodejs npm)
	npm install --prefix $(NODE_PREFIX) --save-exact --no-audit --no-fund $(NODE_PACKAGES)
	touch $(NODE_STAMP)

# Set up, then the main job on the embedded default (SQLite): lint and compile the
# reference machines, and run a stream of payment events through the durable runner.
demo: $(STAMP)
	$(BIN)/statekit lint machines/
	mkdir -p build
	for f in machines/*.yaml; do $(BIN)/statekit compile $$f -o build/$$(basename $$f .yaml).ir.json; done
	@echo "compiled IR written to build/"
	rm -f build/demo.db
	$(BIN)/statekit run machines/payment.yaml --db sqlite:///build/demo.db --input examples/payment-events.jsonl
	$(BIN)/statekit verify --db sqlite:///build/demo.db
	$(BIN)/statekit outbox --db sqlite:///build/demo.db

# The demo's store in the web inspector (statekit inspect, docs/inspect.md), on
# http://127.0.0.1:8400/ until interrupted
inspect: $(STAMP)
	test -f build/demo.db || $(MAKE) demo
	$(BIN)/statekit inspect --db sqlite:///build/demo.db --chart machines/

# Set up, then run every check CI runs: ruff, mypy --strict, the whole test suite (with
# the statekit coverage plugin over the reference machines: transition and rejection
# coverage kept at 100%, met by tests/machines/test_reference_paths.py alone; headless
# Chromium opens the HTML coverage report in a test, and lays out every Mermaid text
# `render` and `docs` write; the relay's tests start nats-server). The suite runs in
# TEST_PROCESSES pytest-xdist workers (`auto`: one per core, at most 8; each PostgreSQL
# test worker starts its own throwaway server), whose coverage the plugin merges.
TEST_PROCESSES ?= auto
test: $(STAMP) $(NODE_STAMP) w3c-data
	command -v dot >/dev/null || (apt-get update && apt-get install -y graphviz)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	command -v chromedriver >/dev/null || (apt-get update && apt-get install -y chromium chromium-driver)
	command -v nats-server >/dev/null || (apt-get update && apt-get install -y nats-server)
	bash scripts/ensure-postgres.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(TEST_PROCESSES) --maxprocesses=8 --durations=20 \
		--statekit-cov=machines --statekit-cov-fail-under=transition:100,rejection:100 \
		--statekit-cov-report=term --statekit-cov-report=html:build/coverage
	STATEKIT=$(BIN)/statekit bash scripts/check-chart-versions.sh
	$(BIN)/statekit docs machines/ -o docs/machines --check

# Every benchmark, then bench/README.md (and the headline rows the README quotes) written
# from the rows this run recorded in build/bench/ (bench/report.py): PostgreSQL for the
# runner's, valgrind for the instruction counts (bench/instructions.py), Node and npm for
# XState (bench/xstate_peer.py installs it into build/bench-node).
bench: $(STAMP)
	command -v valgrind >/dev/null || (apt-get update && apt-get install -y valgrind)
	command -v node >/dev/null && command -v npm >/dev/null || (apt-get update && apt-get install -y nodejs npm)
	command -v nats-server >/dev/null || (apt-get update && apt-get install -y nats-server)
	bash scripts/ensure-postgres.sh
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build .mypy_cache .pytest_cache .ruff_cache .hypothesis
