#!/usr/bin/env bash
# bench/gpu/parakeet.sh: Parakeet on an NVIDIA GPU against the CPU of the same machine (issue 28,
# decision 199), run by bench/gpu.sh after its whisper part. It builds Parley's own addon
# (native/whisper: parley_whisper.node and parakeet-cli) with GGML_CUDA, as
# `npm run build:whisper -- --cli --cuda` does but with cmake alone (no bun, no network), writes
# a parakeet-tdt-0.6b-v3-shaped f16 stand-in (make_parakeet_model.py, 1.2 GB, numpy) and prints
# the backend parakeet.cpp loaded and the real-time factor (wall time of transcription / audio
# length, model load excluded) of parakeet-cli from that build on the GPU and with --no-gpu.
# Where node is installed it also loads the addon and prints the GPU Parakeet gets from it.
#
# Usage: bash bench/gpu/parakeet.sh --pack DIR     (from a checkout: adds the addon's sources, 0.1 MB)
#        bash DIR/parakeet.sh WORK CLIP.wav [--cpu-only]
#        (--cpu-only: a CPU build of the addon, for a dry run without a GPU; GPU_BENCH_PARAKEET_BUILD=
#         a build folder of the addon with bin/parakeet-cli skips the build)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = "--pack" ]; then
  out=${2:?usage: bench/gpu/parakeet.sh --pack DIR}
  root=$HERE/../..
  mkdir -p "$out/addon/node-api-headers"
  cp "$HERE/parakeet.sh" "$HERE/make_parakeet_model.py" "$out/"
  cp "$root"/native/whisper/*.c "$root"/native/whisper/*.h "$root/native/whisper/CMakeLists.txt" "$out/addon/"
  cp -r "$root"/node_modules/node-api-headers/include/. "$out/addon/node-api-headers/"
  exit 0
fi

work=${1:?usage: parakeet.sh WORK CLIP.wav [--cpu-only]}
clip=${2:?usage: parakeet.sh WORK CLIP.wav [--cpu-only]}
cpu_only=0
[ "${3:-}" = "--cpu-only" ] && cpu_only=1
jobs=$(nproc)
threads=$(( jobs < 8 ? jobs : 8 ))
build=${GPU_BENCH_PARAKEET_BUILD:-$work/parakeet-addon}

t0=$(date +%s)
if [ -z "${GPU_BENCH_PARAKEET_BUILD:-}" ]; then
  cuda=(-DGGML_CUDA=OFF)
  # This GPU's architecture only, as bench/gpu.sh: all of them would take most of the time limit.
  [ $cpu_only = 0 ] && cuda=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)")
  cmake -S "$HERE/addon" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWHISPER_SOURCE_DIR="$HERE/whisper.cpp" \
    -DNODE_API_HEADERS_DIR="$HERE/addon/node-api-headers" "${cuda[@]}" >"$build.log" 2>&1
  cmake --build "$build" --parallel "$jobs" --target parley_whisper parakeet-cli >>"$build.log" 2>&1 || { tail -20 "$build.log"; exit 1; }
  echo "built Parley's addon and parakeet-cli (${cuda[*]}) in $(( $(date +%s) - t0 )) s"
fi

python3 "$HERE/make_parakeet_model.py" "$work/parakeet.bin" >/dev/null
seconds=$(python3 -c 'import sys, wave; w = wave.open(sys.argv[1]); print(w.getnframes() / w.getframerate())' "$clip")

parakeet() { # parakeet GPU|CPU: prints "backend rtf"
  local log="$work/parakeet-$1.log"
  "$build/bin/parakeet-cli" -m "$work/parakeet.bin" -f "$clip" -t "$threads" $([ "$1" = CPU ] && echo --no-gpu) >/dev/null 2>"$log"
  local total load backend=cpu
  total=$(grep -m1 'total time' "$log" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)
  load=$(grep -m1 'load time' "$log" | grep -oE '[0-9.]+ ms' | head -1 | cut -d' ' -f1)
  grep -qiE 'using CUDA' "$log" && backend=cuda
  awk -v b="$backend" -v t="$total" -v l="$load" -v s="$seconds" 'BEGIN { printf "%s %.4f\n", b, (t - l) / 1000 / s }'
}

printf '%-22s %-8s %-10s %-8s\n' model asked backend rtf
for asked in $([ $cpu_only = 0 ] && echo GPU) CPU; do
  read -r backend rtf < <(parakeet "$asked")
  printf '%-22s %-8s %-10s %-8s\n' parakeet-tdt-0.6b-v3 "$asked" "$backend" "$rtf"
done
echo "parakeet rtf: ${seconds} s clip, $threads CPU threads, parakeet-cli from Parley's addon build"
if command -v node >/dev/null; then
  node -e 'const a = require(process.argv[1]); console.log(`the addon (node ${process.version}): parakeetGpuDevice() = ${a.parakeetGpuDevice()}`)' "$build/parley_whisper.node"
else
  echo "no node here: the addon was built but not loaded"
fi
