#!/bin/sh
# Build stage, step 2: precompute the advisor's tables into $ADVISOR_TABLE_DIR, so a container
# is ready seconds after it starts instead of computing them on every start.
#   VENV               the virtualenv made by build-venv.sh
#   ADVISOR_TABLE_DIR  where the tables go (the image uses /app/tables)
# tests/test_container_steps.py runs this same script outside Docker.
set -eu
: "${VENV:?set VENV to the virtualenv directory}"
: "${ADVISOR_TABLE_DIR:?set ADVISOR_TABLE_DIR to the table directory}"
mkdir -p "$ADVISOR_TABLE_DIR"
# PYTHONSAFEPATH (python -P): import the service from the venv, not from the source tree in
# the working directory, so that the kernels compiled here are cached under the venv's paths,
# which the runtime imports and loads.
PYTHONSAFEPATH=1 "$VENV/bin/python" -m service.advisor build
