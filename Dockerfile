# Parley's container image (decision 088). Multi-stage:
#   build-source    compiles dist/parley from this checkout (npm ci builds the whisper addon)
#   build-prebuilt  takes an already built dist/parley from the build context instead
#   cuda            runtime on an NVIDIA CUDA base (UNTESTED: no GPU where Parley is built)
#   cpu             runtime on Debian slim (the default, last stage)
#
#   docker build -t parley .                                   # CPU image, built from source
#   docker build -t parley:cuda --target cuda .                # CUDA variant (untested)
#   npm run build && docker build --build-arg PARLEY_FROM=prebuilt -t parley .
#   podman build --format docker --build-arg BASE_IMAGE=localhost/parley-base:bookworm ...
#
# BASE_IMAGE must be Debian bookworm (slim or a debootstrapped minbase root,
# scripts/container-base.sh): the executable links against its glibc.
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim
ARG CUDA_BASE_IMAGE=docker.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
ARG PARLEY_FROM=source

# --- build from source ------------------------------------------------------------------
FROM ${BASE_IMAGE} AS build-source
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates nodejs npm cmake make g++ python3 git \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The postinstall builds native/whisper with scripts/native-whisper.ts: both come before npm ci.
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
COPY native ./native
COPY src ./src
RUN npm ci --no-audit --no-fund
COPY . .
RUN mkdir -p /out && node_modules/.bin/bun scripts/build.ts /out/parley

# --- or take dist/parley as built outside -------------------------------------------------
FROM scratch AS build-prebuilt
COPY dist/parley /out/parley

FROM build-${PARLEY_FROM} AS app

# --- CUDA runtime (untested) ------------------------------------------------------------
FROM ${CUDA_BASE_IMAGE} AS cuda
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 parley \
 && useradd --system --uid 10001 --gid parley --home-dir /data --no-create-home --shell /usr/sbin/nologin parley \
 && mkdir -p /data /models && chown parley:parley /data /models
COPY --from=app /out/parley /usr/local/bin/parley
ENV PARLEY_HOST=0.0.0.0 PARLEY_PORT=8080 PARLEY_DATA_DIR=/data PARLEY_MODELS_DIR=/models \
    PARLEY_GPU=cuda NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER parley
WORKDIR /data
VOLUME ["/data", "/models"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PARLEY_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/parley"]
CMD ["serve"]

# --- CPU runtime (default) --------------------------------------------------------------
FROM ${BASE_IMAGE} AS cpu
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 parley \
 && useradd --system --uid 10001 --gid parley --home-dir /data --no-create-home --shell /usr/sbin/nologin parley \
 && mkdir -p /data /models && chown parley:parley /data /models
COPY --from=app /out/parley /usr/local/bin/parley
ENV PARLEY_HOST=0.0.0.0 PARLEY_PORT=8080 PARLEY_DATA_DIR=/data PARLEY_MODELS_DIR=/models
USER parley
WORKDIR /data
VOLUME ["/data", "/models"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PARLEY_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/parley"]
CMD ["serve"]
