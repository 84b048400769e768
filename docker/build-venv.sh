#!/bin/sh
# Build stage, step 1: a virtualenv at $VENV with the service and its dependencies installed
# (not editable), from the project in the current directory. The runtime stage copies $VENV.
#   VENV       where to make the virtualenv (the image uses /opt/venv)
#   VENV_ARGS  extra arguments to `python -m venv` (default none)
#   PIP_ARGS   extra arguments to `pip install` (default none)
# tests/test_container_steps.py runs this same script outside Docker.
set -eu
: "${VENV:?set VENV to the virtualenv directory}"
# shellcheck disable=SC2086  # VENV_ARGS and PIP_ARGS are lists of words
python -m venv ${VENV_ARGS:-} "$VENV"
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --no-cache-dir --disable-pip-version-check ${PIP_ARGS:-} .
"$VENV/bin/python" -c "import service; print('installed service', service.__version__)"
