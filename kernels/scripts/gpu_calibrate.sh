#!/usr/bin/env bash
# One GPU job (<= 10 minutes): build the kernels only, run every correctness check, run
# compute-sanitizer (memcheck and racecheck) on the quick check of our own kernels, and
# measure the full calibration profile.
#
# Run from the repository root on a machine with an NVIDIA GPU, CUDA (nvcc) and CMake;
# nothing is downloaded. Results go to $OUT (default ./build-gpu-out):
#   profile.csv  the calibration profile (docs/kernels.md: "Profile CSV")
#   summary.txt  exit codes and timings of each step, device, commit
#   build.log check.log sanitizer.log bench.log
# The provenance commit is $SERVESIM_GIT_COMMIT if set, else `git rev-parse HEAD` if the
# tree is a git checkout, else the commit recorded at configure time.
# SERVESIM_CUDA_ARCH overrides the target architecture (default 90; the kernels need 80+).
# Exit status: 0 when the checks and the bench passed, 1 otherwise.
set -u -o pipefail

START=$(date +%s)
DEADLINE=$((START + 570))  # leave half a minute of the 10 for copying results
OUT=${OUT:-$PWD/build-gpu-out}
BUILD=${SERVESIM_GPU_BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((DEADLINE - $(date +%s))); }
step() {  # step NAME LOG TIMEOUT CMD...
  local name=$1 log=$2 limit=$3
  shift 3
  if [ "$limit" -le 5 ]; then
    note "$name: SKIPPED (no time left)"
    return 124
  fi
  local t0=$(date +%s)
  timeout --signal=TERM --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - t0 )) s)"
  return $rc
}

note "servesim gpu_calibrate $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$SUMMARY" || true
COMMIT=${SERVESIM_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
note "commit: ${COMMIT:-unknown}"

GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
JOBS=$(nproc 2>/dev/null || echo 8)
: >"$OUT/build.log"
step configure "$OUT/build.log" 120 cmake -S kernels -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${SERVESIM_CUDA_ARCH:-90}" -DSERVESIM_CUDA=ON || { note "FAILED: configure"; exit 1; }
step build "$OUT/build.log" 300 cmake --build "$BUILD" -j "$JOBS" --target servesim-kernels || { note "FAILED: build"; exit 1; }
BIN="$BUILD/servesim-kernels"

STATUS=0
: >"$OUT/check.log"
step check "$OUT/check.log" $(( $(left) < 150 ? $(left) : 150 )) "$BIN" check || STATUS=1

: >"$OUT/sanitizer.log"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -n "$SAN" ]; then
  step memcheck "$OUT/sanitizer.log" $(( $(left) < 150 ? $(left) - 60 : 90 )) \
    "$SAN" --tool memcheck --error-exitcode 3 "$BIN" check --quick --family decode,prefill,ceilings || STATUS=1
  step racecheck "$OUT/sanitizer.log" $(( $(left) < 150 ? $(left) - 60 : 90 )) \
    "$SAN" --tool racecheck --error-exitcode 3 "$BIN" check --quick --family decode,prefill || STATUS=1
else
  note "compute-sanitizer: not found, SKIPPED"
fi

: >"$OUT/bench.log"
step bench "$OUT/bench.log" "$(left)" "$BIN" bench -o "$OUT/profile.csv" ${COMMIT:+--git-commit "$COMMIT"} || STATUS=1
ROWS=0
[ -f "$OUT/profile.csv" ] && ROWS=$(awk '!/^#/ { n++ } END { print (n > 0 ? n - 1 : 0) }' "$OUT/profile.csv")
note "profile data rows: $ROWS"
note "total: $(( $(date +%s) - START )) s, status $STATUS"
exit $STATUS
