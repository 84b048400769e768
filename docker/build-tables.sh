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
# The kernels are compiled for the fixed CPU baselines of ADVISOR_CPU_TARGET=portable (the
# runtime stage's setting, service/cpus.py), not for this machine's CPU, so the cache serves
# every node: the baseline this machine has (x86-64-v3 on any x86-64 server CPU since about
# 2015), then the one for any CPU of the architecture (generic), for older nodes. The first
# run builds the tables; the second finds them and only compiles. Each writes its marker
# (service/warmup.py): a container then starts warm on either kind of node.
portable=$("$VENV/bin/python" -P -c '
import platform, llvmlite.binding as llvm
from service.cpus import portable_cpu
print(portable_cpu(platform.machine(), dict(llvm.get_host_cpu_features())))
')
# CPU_BASELINES (space-separated CPU names) replaces the two (tests/deploy/test_container_steps.py
# compiles once).
for cpu in ${CPU_BASELINES:-$(printf '%s\ngeneric\n' "$portable" | uniq)}; do
    echo "compiling the kernels for the CPU baseline $cpu"
    export NUMBA_CPU_NAME=$cpu NUMBA_CPU_FEATURES=
    if ls "$ADVISOR_TABLE_DIR"/*.npy >/dev/null 2>&1; then
        # the tables are there, so the build below only loads them: the kernels that build
        # value tables (a pod builds tables of new rules) are compiled by building them once
        # more from nothing, into a scratch directory
        scratch=$(mktemp -d)
        ADVISOR_TABLE_DIR=$scratch "$VENV/bin/python" -P -m service.advisor build --values-only \
            >/dev/null
        rm -rf "$scratch"
    fi
    "$VENV/bin/python" -P -m service.advisor build
done
unset NUMBA_CPU_NAME NUMBA_CPU_FEATURES
# The image ships both packed (a server unpacks them at its start, into /tmp; README's "Image
# size" has the figures): the tables by `python -m service.advisor pack`
# (service/advisor/tables/packing.py: bit for bit, but the early distributions' probabilities,
# kept within 5.3e-10), the kernels' cache as one xz archive beside its directory, which
# gunicorn.conf.py extracts into NUMBA_CACHE_DIR.
"$VENV/bin/python" -P -m service.advisor pack
if [ -n "${NUMBA_CACHE_DIR:-}" ] && [ -d "$NUMBA_CACHE_DIR" ]; then
    (cd "$NUMBA_CACHE_DIR" && "$VENV/bin/python" -P -m tarfile -c "$NUMBA_CACHE_DIR.tar.xz" .)
    rm -rf "$NUMBA_CACHE_DIR"
fi
