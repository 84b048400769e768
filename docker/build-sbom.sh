#!/bin/sh
# Build stage, step 4: the image's SBOM, a CycloneDX JSON document of every package in the
# virtualenv at $VENV (after the trim: what the image ships), the service as its root
# component (from pyproject.toml), written to $SBOM; the runtime stage copies it beside the
# service (/app/sbom.cdx.json). Made by cyclonedx-py (CycloneDX's own tool), installed alone
# into a scratch virtualenv from requirements/sbom.lock (exact versions and hashes), used and
# removed: nothing of it is in $VENV or the image.
#   VENV       the virtualenv made by build-venv.sh
#   SBOM       where the SBOM goes (the image uses /app/sbom.cdx.json)
#   SBOM_TOOL  a cyclonedx-py to use instead of installing one (default none)
# tests/deploy/test_container_steps.py runs this same script outside Docker.
set -eu
: "${VENV:?set VENV to the virtualenv directory}"
: "${SBOM:?set SBOM to the file the SBOM goes to}"
tool="${SBOM_TOOL:-}"
scratch=""
if [ -z "$tool" ]; then
    scratch=$(mktemp -d)
    python -m venv "$scratch"
    "$scratch/bin/python" -m pip install --no-cache-dir --disable-pip-version-check \
        --require-hashes --no-deps --quiet -r requirements/sbom.lock
    tool="$scratch/bin/cyclonedx-py"
fi
mkdir -p "$(dirname "$SBOM")"
"$tool" environment --pyproject pyproject.toml --output-reproducible --of JSON \
    --output-file "$SBOM" "$VENV/bin/python"
[ -z "$scratch" ] || rm -rf "$scratch"
echo "SBOM of $VENV: $SBOM"
