# syntax=docker/dockerfile:1
# Yahtzee scoring service: build with `docker build -t yahtzee-scoring:4.0.0 .`
# (docs/deploy.md). The build stage makes a virtualenv and the advisor's tables, then trims the
# virtualenv of what the runtime never loads; the runtime stage copies both onto a clean slim
# image and runs gunicorn as an unprivileged user. Nothing is written outside /tmp at run time,
# so the root filesystem can be mounted read-only. CI builds and runs this image with buildah
# (scripts/check_image.py), no Docker engine needed.
# The base, pinned by its digest (the multi-platform index of python:3.11-slim-bookworm, Python
# 3.11.16, 2026-09): a build next month starts from the same bytes as the one tested. Bump it
# on purpose, with the digest `docker buildx imagetools inspect python:3.11-slim-bookworm`
# prints (docs/deploy.md, "Pinning the image").
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${PYTHON_IMAGE} AS build
ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VENV=/opt/venv \
    ADVISOR_TABLE_DIR=/app/tables \
    NUMBA_CACHE_DIR=/app/numba-cache \
    SBOM=/app/sbom.cdx.json
WORKDIR /src
COPY pyproject.toml README.md ./
COPY requirements/ requirements/
COPY service/ service/
COPY docker/ docker/
RUN sh docker/build-venv.sh && sh docker/build-tables.sh && sh docker/trim-venv.sh \
    && sh docker/build-sbom.sh

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="yahtzee-scoring-service" \
      org.opencontainers.image.description="Scoring and strategy service for the Yahtzee family of dice games"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PORT=8000 \
    ADVISOR_TABLE_DIR=/app/tables \
    PROMETHEUS_MULTIPROC_DIR=/tmp/prometheus \
    ADVISOR_CPU_TARGET=portable \
    NUMBA_CACHE_SEED=/app/numba-cache.tar.xz \
    NUMBA_CACHE_DIR=/tmp/numba-cache
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin app
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app/tables /app/tables
# The kernels compiled while building the tables, for fixed CPU baselines
# (ADVISOR_CPU_TARGET=portable: any node, not just one with the build machine's CPU), in one
# archive: gunicorn.conf.py extracts it into the writable NUMBA_CACHE_DIR at start, so no
# process compiles them again. The tables are packed too: the app unpacks them at start into
# the build directory under /tmp (service/advisor/tables/packing.py).
COPY --from=build /app/numba-cache.tar.xz /app/numba-cache.tar.xz
# What the image ships, as a CycloneDX SBOM (docker/build-sbom.sh)
COPY --from=build /app/sbom.cdx.json /app/sbom.cdx.json
COPY gunicorn.conf.py ./
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
CMD ["gunicorn", "--config", "gunicorn.conf.py", "service.web.app:create_app()"]
