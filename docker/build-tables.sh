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
# numba's cache of the compiled kernels ($NUMBA_CACHE_DIR, shipped in the image) is found only
# for the same source file, by path and modification time, as the runtime imports. So:
#   - python -P: the package is imported from $VENV, not from the project in the current
#     directory (/src in the image), whose kernels' cache entries the runtime never looks up;
#   - image layers keep whole seconds (buildah's do): the installed package's modification
#     times are rounded down to whole seconds before the kernels are compiled.
# Otherwise every container start compiles the kernels again: seconds of CPU before /readyz
# (scripts/check_image.py measures readiness).
"$VENV/bin/python" -P -c '
import os, pathlib, service
for path in pathlib.Path(service.__file__).parent.rglob("*"):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9))
'
"$VENV/bin/python" -P -m service.advisor build
