#!/usr/bin/env bash
# One GPU job (<= 10 minutes) for issue 19, separate from gpu_calibrate.sh (whose one-call
# budget the calibration bench takes): build the kernels only, run the replay's check
# (replay_tiny: the tiny model's GPU logits against the CPU reference) with the dense
# attention checks it relies on, then replay a batch record as real forward passes.
#
#   bash kernels/scripts/gpu_replay.sh BATCHES.csv [MODEL] [TP]
#
# BATCHES.csv: written by `servesim run SCENARIO --record-batches BATCHES.csv
# --record-every K` on a CPU machine, committed or carried into the tree (choose K so that
# about 2,000 iterations are recorded: each takes (warm-up + reps) forward passes). MODEL
# defaults to llama3-8b, TP to 1. Results in $OUT (default ./build-gpu-out): build.log,
# check.log, replay.csv, replay.log. Then, on any machine:
#   servesim calibrate fidelity OUT/replay.csv --scenario SCENARIO --out OUT/fidelity
# (docs/costmodel.md, "Fidelity against real execution").
# Environment: OUT, SERVESIM_KERNELS_BIN (prebuilt binary: no build), SERVESIM_GPU_BUILD_DIR (build-gpu), SERVESIM_CUDA_ARCH (90),
# SERVESIM_REPLAY_DEADLINE_S (540: the replay is stopped then; replay.csv keeps the rows
# written so far). Exit status: 0 all ran and passed, 1 a step failed, 2 bad arguments.
set -u -o pipefail

BATCHES=${1:-}
MODEL=${2:-llama3-8b}
TP=${3:-1}
if [ -z "$BATCHES" ] || [ ! -f "$BATCHES" ]; then
  echo "gpu_replay: usage: bash kernels/scripts/gpu_replay.sh BATCHES.csv [MODEL] [TP] (no such file: '$BATCHES')" >&2
  exit 2
fi
OUT=${OUT:-./build-gpu-out}
BUILD=${SERVESIM_GPU_BUILD_DIR:-build-gpu}
ARCH=${SERVESIM_CUDA_ARCH:-90}
DEADLINE=${SERVESIM_REPLAY_DEADLINE_S:-540}
START=$(date +%s)
mkdir -p "$OUT"

BIN=${SERVESIM_KERNELS_BIN:-$BUILD/servesim-kernels}
if [ -n "${SERVESIM_KERNELS_BIN:-}" ]; then
  echo "gpu_replay: prebuilt $BIN, no build" >"$OUT/build.log"
elif ! { cmake -S kernels -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" &&
       cmake --build "$BUILD" -j "$(nproc)" --target servesim-kernels; } >"$OUT/build.log" 2>&1; then
  echo "gpu_replay: build failed (see $OUT/build.log)" >&2
  exit 1
fi
rc=0
"$BIN" check --family replay_tiny,decode,prefill --quick >"$OUT/check.log" 2>&1 || rc=1
left=$((DEADLINE - ($(date +%s) - START)))
if [ "$left" -le 30 ]; then
  echo "gpu_replay: no time left for the replay after the build and checks" >&2
  exit 1
fi
timeout "$left" "$BIN" replay "$BATCHES" --model "$MODEL" --tp "$TP" -o "$OUT/replay.csv" \
  >"$OUT/replay.log" 2>&1 || rc=1
tail -n 3 "$OUT/check.log" "$OUT/replay.log"
exit $rc
