#!/bin/sh
# Build stage, step 1: a virtualenv at $VENV with the service and its dependencies installed
# (not editable), from the project in the current directory: its dependencies from the lock
# file (exact versions and hashes: the image built is the one tested), then the service alone.
# The runtime stage copies $VENV.
#   VENV       where to make the virtualenv (the image uses /opt/venv)
#   VENV_ARGS  extra arguments to `python -m venv` (default none)
#   PIP_ARGS   extra arguments to `pip install` (default none)
#   LOCK       the lock file (default requirements/runtime.lock; empty: none installed)
# tests/test_container_steps.py runs this same script outside Docker.
set -eu
: "${VENV:?set VENV to the virtualenv directory}"
# shellcheck disable=SC2086  # VENV_ARGS and PIP_ARGS are lists of words
python -m venv ${VENV_ARGS:-} "$VENV"
LOCK="${LOCK-requirements/runtime.lock}"
if [ -n "$LOCK" ]; then
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install --no-cache-dir --disable-pip-version-check \
    --require-hashes ${PIP_ARGS:-} -r "$LOCK"
fi
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --no-cache-dir --disable-pip-version-check --no-deps \
  --no-build-isolation ${PIP_ARGS:-} .
"$VENV/bin/python" -c "import service; print('installed service', service.__version__)"
