# Two entry points for a fresh machine with Python 3.11+ and make:
#   make run   set up .venv and start the service under gunicorn (port from $PORT, default 8000)
#   make test  set up .venv and run every test (lint, unit, property, API, fuzz)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: setup run test lint spec bench clean lock

# Installs come from the lock files (exact versions, each file's hash: pip refuses anything
# else), made from pyproject.toml's ranges by `make lock`; tests/test_lock.py holds the two
# together. requirements/test.lock: the service, its tests and the build backend (setuptools,
# for the editable install without build isolation); requirements/runtime.lock: what the
# image installs.
LOCK := requirements/test.lock

$(BIN)/.installed: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
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

# Refresh the lock files after a change of pyproject.toml's dependencies: versions already
# locked stay unless the change needs another (`make lock UPGRADE=1`: the newest each range
# allows). pip-tools runs in a virtualenv of its own (.venv-lock).
PIP_COMPILE = CUSTOM_COMPILE_COMMAND="make lock" .venv-lock/bin/pip-compile --quiet \
	--generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	--no-emit-find-links $(if $(UPGRADE),--upgrade)
lock:
	test -x .venv-lock/bin/pip-compile || ($(PYTHON) -m venv .venv-lock \
		&& .venv-lock/bin/pip install --quiet 'pip-tools>=7.4,<8')
	$(PIP_COMPILE) --all-build-deps -o requirements/runtime.lock pyproject.toml
	$(PIP_COMPILE) --all-build-deps --extra test -c requirements/runtime.lock \
		-o requirements/test.lock pyproject.toml
	$(PIP_COMPILE) -c requirements/test.lock -o requirements/sbom.lock requirements/sbom.in

spec: setup
	$(BIN)/python -m service.web.spec > openapi/openapi.json

# numba's cache of a compiled kernel follows the kernel's own file, not the helpers inlined
# into it (service/advisor/kernels/steps.py): after editing those, `make clean`.
clean:
	rm -rf $(VENV) .venv-lock
	find service -name '*.nbi' -delete -o -name '*.nbc' -delete
