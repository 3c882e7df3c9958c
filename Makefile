# agentweb — `make run` starts the app, `make test` runs the checks. Both set up what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint format install install-dev migrate clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

migrate: install
	$(BIN)/python manage.py migrate --noinput

run: migrate
	$(BIN)/python manage.py ensure_admin
	@echo "agentweb on http://$(HOST):$(PORT)/  (Ctrl+C stops it)"
	$(BIN)/python -m agentweb.serve -b $(HOST) -p $(PORT) agentweb.asgi:application

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

.PHONY: bench bench-smoke

# The benchmark suite (bench/): each figure against a floor measured in the same run; rewrites docs/performance.md.
bench: install-dev
	$(BIN)/python -m bench --snapshot

# Each benchmark for a fraction of a second, to check it still works (no targets judged; CI may run it).
bench-smoke: install-dev
	$(BIN)/python -m bench --smoke
