# fisk-chatops: one image for every process role (slack, agent, runner, or all in one process).
#
#   docker build -t fisk-chatops .
#   docker run --rm -e SLACK_BOT_TOKEN=... -e SLACK_APP_TOKEN=... -e ANTHROPIC_API_KEY=... \
#       -e REDIS_URL=redis://redis:6379/0 -v "$PWD/config.yaml:/etc/fisk-chatops/config.yaml:ro" fisk-chatops
#
# Secrets come only from the environment at run time; none is baked into the image.
# Your fisk applications (Go CLIs) go in /opt/fisk/bin, which is on PATH, either with a derived image
#   FROM fisk-chatops
#   COPY mytool /opt/fisk/bin/
# or, on Kubernetes, through the Helm chart's fiskApps init container filling an emptyDir at /opt/fisk/bin.
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz on the health port (8080).

# The base image, pinned by digest so a rebuild gets the same bytes. Refresh it on purpose (security updates):
#   docker buildx imagetools inspect python:3.11-slim     # the "Digest:" line of the multi-arch index
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# Build stage: the locked dependencies (requirements.lock: exact versions and hashes, pip-compile) into a
# virtualenv, then the package itself without resolving anything. No embedded Redis (the `embedded` extra is
# not installed): the image always runs against REDIS_URL.
FROM ${PYTHON_IMAGE} AS build
RUN python -m venv /opt/venv
WORKDIR /src
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps .

FROM ${PYTHON_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# libsodium verifies a runner's decision signatures in ~40 us instead of OpenSSL's ~90 (bot/approvals/verify_key.py),
# on the way from every approval to its child's start; without it runners fall back to OpenSSL.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsodium23 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 fisk \
    && useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /var/lib/fisk-chatops --shell /usr/sbin/nologin fisk \
    && mkdir -p /opt/fisk/bin /opt/fisk/demo /etc/fisk-chatops /var/lib/fisk-chatops \
    && chown 10001:10001 /var/lib/fisk-chatops

# The virtualenv from the build stage (same base image, same interpreter path); no compiler in this image.
COPY --from=build /opt/venv /opt/venv

# The opsctl stand-in, so a trial install works before your own fisk applications are added.
COPY config/demo/ /opt/fisk/demo/
COPY config/fisk-chatops.yaml /etc/fisk-chatops/config.example.yaml

ENV PATH="/opt/fisk/bin:/opt/venv/bin:${PATH}" \
    FISK_CHATOPS_CONFIG=/etc/fisk-chatops/config.yaml \
    HOME=/var/lib/fisk-chatops

WORKDIR /var/lib/fisk-chatops
USER 10001:10001

# 8080: /healthz, /readyz, /metrics. 3000: Slack HTTP mode (/slack/events); Socket Mode needs no inbound port.
EXPOSE 8080 3000

ENTRYPOINT ["fisk-chatops"]
CMD ["serve"]
