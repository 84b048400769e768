#!/bin/sh
# Build stage, step 3: remove from the virtualenv at $VENV what the service never loads at run
# time, so the runtime stage copies less (README's "Image size" has the figures):
#   - pip, setuptools, wheel and their scripts: nothing is installed in a running container;
#   - the test suites that numpy, numba and llvmlite ship (*/tests/);
#   - C and C++ sources and headers shipped in the wheels (numpy's and numba's, for building
#     extensions against them; the service compiles only its numba kernels, from Python).
# Every path removed is under $VENV; nothing else is touched. The compiled kernels cache
# ($NUMBA_CACHE_DIR) and the tables are made before this step and are not in $VENV.
#   VENV  the virtualenv made by build-venv.sh
# tests/test_container_steps.py runs this same script outside Docker.
set -eu
: "${VENV:?set VENV to the virtualenv directory}"
before=$(du -sk "$VENV" | cut -f1)
rm -f "$VENV"/bin/pip "$VENV"/bin/pip3 "$VENV"/bin/pip3.* "$VENV"/bin/wheel
for site in "$VENV"/lib/python3*/site-packages; do
    [ -d "$site" ] || continue
    for name in pip setuptools wheel pkg_resources _distutils_hack; do
        rm -rf "${site:?}/$name" "$site/$name"-*.dist-info
    done
    rm -f "$site/distutils-precedence.pth"
    find "$site" -depth -type d -name tests -exec rm -rf {} +
    find "$site" -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \
        -o -name '*.pyx' -o -name '*.pxd' \) -delete
done
after=$(du -sk "$VENV" | cut -f1)
echo "trimmed $VENV: $((before / 1024)) MiB -> $((after / 1024)) MiB"
