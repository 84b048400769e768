# Two entry points for a fresh machine with Python 3.11+ and make:
#   make run   set up .venv and start the service under gunicorn (port from $PORT, default 8000)
#   make test  set up .venv and run every test (lint, unit, property, API, fuzz)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: setup run test lint spec bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/.installed

# Logs as text for people (LOG_FORMAT=json to see what the container writes).
run: setup
	PORT=$(PORT) LOG_FORMAT=$${LOG_FORMAT:-text} \
		$(BIN)/gunicorn --config gunicorn.conf.py 'service.web.app:create_app()'

lint: setup
	$(BIN)/ruff check .

# The timing tests (hostile clients against a live server) run after the rest, alone.
# First the kernels: compiled once into numba's cache (a cheap variant's tables built into a
# throwaway directory), so that no test process or server compiles them again (minutes each).
test: setup lint
	tables=$$(mktemp -d) && ADVISOR_TABLE_DIR=$$tables $(BIN)/python -m service.advisor build bozo \
		>/dev/null && rm -rf $$tables
	$(BIN)/python -m pytest -n 2 -q -m "not timing" --durations=15
	$(BIN)/python -m pytest -q -m timing --durations=5

spec: setup
	$(BIN)/python -m service.web.spec > openapi/openapi.json

# numba's cache of a compiled kernel follows the kernel's own file, not the helpers inlined
# into it (service/advisor/kernels/steps.py): after editing those, `make clean`.
clean:
	rm -rf $(VENV)
	find service -name '*.nbi' -delete -o -name '*.nbc' -delete
