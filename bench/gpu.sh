#!/usr/bin/env bash
# bench/gpu.sh: whisper.cpp on an NVIDIA GPU against the CPU of the same machine, in one run
# (issue 33). It builds whisper.cpp's whisper-cli twice from the sources Parley's addon
# compiles (nodejs-whisper's copy), with the addon's flags (Release, static, GGML_NATIVE,
# OpenMP; decision 046): once for the CPU, once with GGML_CUDA for this machine's GPU only.
# It writes random-weight models with the exact shapes of base.en and small (f16, as
# published; make_model.py, numpy), 60 s of speech-like audio, and prints for each model the
# backend each build loaded (from whisper.cpp's own log) and the real-time factor (wall time
# of transcription / audio length, model load excluded; greedy, no fallback) on GPU and CPU.
#
# The machine needs nvcc, CMake 3.18+, a C++ compiler and python3 with numpy; no bun, no
# network. The LLM is not measured here: llama.cpp's CUDA build (node-llama-cpp's prebuild,
# 181 MB) and a JS runtime do not fit the 60 MB folder; `parley doctor` on a GPU box prints
# the backend node-llama-cpp loaded.
#
# Usage, in a checkout (packs what the GPU machine needs, about 35 MB):
#   bash bench/gpu.sh --pack DIR
# then on the GPU machine:
#   bash DIR/gpu.sh [--cpu-only]      (--cpu-only: the CPU half, for a dry run without a GPU;
#                                      GPU_BENCH_CPU_CLI=path/to/whisper-cli skips its build)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = "--pack" ]; then
  out=${2:?usage: bench/gpu.sh --pack DIR}
  src=$HERE/../node_modules/nodejs-whisper/cpp/whisper.cpp
  [ -d "$src" ] || { echo "no whisper.cpp sources at $src (npm install first)" >&2; exit 1; }
  mkdir -p "$out"
  cp "$HERE/gpu.sh" "$HERE/gpu/make_model.py" "$out/"
  # The bindings (Go, Java, Ruby...) are not built; everything else stays, as CMake lists it.
  (cd "$src" && tar --exclude=./bindings --exclude='*.bin' -cf - .) | (mkdir -p "$out/whisper.cpp" && cd "$out/whisper.cpp" && tar -xf -)
  bash "$HERE/gpu/parakeet.sh" --pack "$out" # Parakeet's part (below)
  size=$(du -sm "$out" | cut -f1)
  echo "packed $out: ${size} MB"
  [ "$size" -le 60 ] || { echo "over 60 MB" >&2; exit 1; }
  exit 0
fi

cpu_only=0
[ "${1:-}" = "--cpu-only" ] && cpu_only=1
started=$(date +%s)
work=${GPU_BENCH_WORK:-$(mktemp -d)}
jobs=$(nproc)
threads=$(( jobs < 8 ? jobs : 8 ))
echo "bench/gpu.sh: $(date -u +%FT%TZ), $(nproc) cores, work in $work"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /' || echo "gpu: none seen (nvidia-smi absent)"

build() { # build DIR [cmake flags...]: whisper-cli with the addon's flags
  local dir=$1; shift
  cmake -S "$HERE/whisper.cpp" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DGGML_OPENMP=ON \
    -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_SERVER=OFF -DWHISPER_SDL2=OFF -DWHISPER_CURL=OFF "$@" >"$dir.log" 2>&1
  cmake --build "$dir" --parallel "$jobs" --target whisper-cli >>"$dir.log" 2>&1 || { tail -20 "$dir.log"; exit 1; }
}

t0=$(date +%s)
if [ -n "${GPU_BENCH_CPU_CLI:-}" ]; then
  # A dry run on a checkout that built whisper-cli already (npm run build:whisper -- --cli).
  mkdir -p "$work/cpu/bin" && ln -sf "$GPU_BENCH_CPU_CLI" "$work/cpu/bin/whisper-cli"
else
  build "$work/cpu"
  echo "built cpu whisper-cli in $(( $(date +%s) - t0 )) s"
fi
if [ $cpu_only = 0 ]; then
  # This GPU's architecture only: all of them would take most of the time limit to compile.
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  t0=$(date +%s)
  build "$work/cuda" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch"
  echo "built cuda whisper-cli (sm_$arch) in $(( $(date +%s) - t0 )) s"
fi

# 60 s (GPU_BENCH_SECONDS) of speech-like bursts (8 s voiced, 2 s pause), 16 kHz mono 16-bit.
seconds=${GPU_BENCH_SECONDS:-60}
python3 - "$work/clip.wav" "$seconds" <<'PY'
import sys, wave, numpy as np
sr, secs = 16000, int(sys.argv[2])
t = np.arange(sr * secs) / sr
f0 = 120 + 30 * np.sin(2 * np.pi * 0.5 * t)
voice = sum(np.sin(2 * np.pi * k * np.cumsum(f0) / sr) / k for k in range(1, 12)) * 0.1
voice *= (t % 10) < 8
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(sr)
    w.writeframes((np.clip(voice, -1, 1) * 32767).astype("<i2").tobytes())
PY

# Decoding stops after 100 tokens a window, as a real model does after about that much conversation.
for shape in base.en small; do python3 "$HERE/make_model.py" "$work/$shape.bin" "$shape" 100 >/dev/null; done

run() { # run BUILD MODEL: prints "backend rtf"
  local log="$work/run-$1-$2.log"
  "$work/$1/bin/whisper-cli" -m "$work/$2.bin" -f "$work/clip.wav" -l en -t "$threads" -bs 1 -bo 1 -tp 0 -tpi 0 >/dev/null 2>"$log"
  local total load
  total=$(grep -m1 'total time' "$log" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)
  load=$(grep -m1 'load time' "$log" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)
  local backend=cpu
  grep -qiE 'using CUDA|CUDA0|ggml_cuda_init: found' "$log" && backend=cuda
  awk -v b="$backend" -v t="$total" -v l="$load" -v s="$seconds" 'BEGIN { printf "%s %.4f\n", b, (t - l) / 1000 / s }'
}

printf '%-10s %-8s %-10s %-8s\n' model build backend rtf
for shape in base.en small; do
  for b in cpu $([ $cpu_only = 0 ] && echo cuda); do
    read -r backend rtf < <(run "$b" "$shape")
    printf '%-10s %-8s %-10s %-8s\n' "$shape" "$b" "$backend" "$rtf"
  done
done
echo "rtf: seconds of transcription per second of audio (lower is faster); $threads CPU threads; done in $(( $(date +%s) - started )) s"

# ---- Parakeet (issue 28, decision 199): Parley's addon built with GGML_CUDA, parakeet-cli on GPU and CPU
bash "$HERE/parakeet.sh" "$work" "$work/clip.wav" $([ $cpu_only = 1 ] && echo --cpu-only)
