#!/usr/bin/env bash
# One GPU job (<= 10 minutes): build the kernels only, run every correctness check,
# measure the calibration profile, then run compute-sanitizer (memcheck, racecheck) on the
# quick check of our own kernels with the time that is left. docs/kernels.md, "Running the
# calibration", has the exact device-tool invocations (one call, or two calls back to back).
#
#   SERVESIM_GIT_COMMIT=<sha> bash kernels/scripts/gpu_calibrate.sh [--phase P] [--families F,..] [--plan]
#
#   --phase all     (default) preflight, build, check, bench, merge, sanitizers
#   --phase checks  call 1 of two: preflight, build, check, sanitizers (no profile)
#   --phase bench   call 2 of two: preflight, build (incremental: reuses build-gpu/ when the
#                   machine is still warm), bench, merge - the whole call for the bench
#   --families a,b  only these families (check and bench); the full bench needs two bench
#                   calls: --families ceilings,gemm,gemm_dense,elementwise,elementwise_queued,
#                   decode,decode_ragged,decode_batches,prefill,prefill_hopper
#                   then quest,minference,andpro,
#                   joined with `servesim-kernels merge`
#   --plan          print the time plan (budgets, per-family shares) and exit; runs nothing
#   --preflight     stop after the preflight (exit 0 when nothing is missing, else 2)
#
# Run from the repository root on a machine with an NVIDIA GPU, CUDA (nvcc, cuBLASLt) and
# CMake >= 3.25; nothing is downloaded. Results go to $OUT (default ./build-gpu-out), at
# most 7 files: summary.txt profile.csv build.log check.log bench.log sanitizer.log (and
# profile-parts.tar only if the merge failed).
#
# Provenance: the device machines copy the tree without .git, so the commit must come in
# the command string, expanded where the checkout is: SERVESIM_GIT_COMMIT=$(git rev-parse
# HEAD). Phases that write a profile refuse to start without a commit (exit 2), and the
# merge refuses a profile whose commit is unknown.
#
# Isolation: every family runs in its own process (`servesim-kernels bench --family F`),
# so a sticky CUDA error in one cannot lose the others; the per-family CSVs are joined by
# `servesim-kernels merge`. Time: the bench gets a global budget (what is left before the
# deadline, less a grace period and, in --phase all, a sanitizer reserve), shared between
# the families still to run in proportion to FAMILY_WEIGHT (estimated seconds of each full
# grid; a family that finishes early leaves its time to the next). A family stops starting
# grid points when its share is spent; summary.txt lists every skipped point.
#
# Environment: OUT, SERVESIM_KERNELS_BIN (a servesim-kernels built elsewhere, e.g. on the CPU
# machine with the same nvcc and carried with the call: configure and build are skipped, which
# saves the device minutes a fresh machine spends compiling), SERVESIM_GPU_BUILD_DIR
# (build-gpu), SERVESIM_CUDA_ARCH (90; the kernels
# need 80+), SERVESIM_GPU_DEADLINE_S (570: half a minute of the 10 for copying results),
# CUDA_HOME (where to look for nvcc, libcublasLt and compute-sanitizer when they are not on
# PATH; default /usr/local/cuda).
# Exit status: 0 when every step ran and passed, 1 when a step failed, 2 when preflight
# or provenance refused to start.
set -u -o pipefail

PHASE=all
PLAN=0
PREFLIGHT_ONLY=0
ONLY_FAMILIES=""  # --families a,b: run (and plan) only these families, in the binary's order
while [ $# -gt 0 ]; do
  case "$1" in
    --phase) PHASE=${2:-}; shift 2 || shift ;;
    --plan) PLAN=1; shift ;;
    --preflight) PREFLIGHT_ONLY=1; shift ;;
    --families) ONLY_FAMILIES=${2:-}; shift 2 || shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_calibrate: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$PHASE" in
  all | checks | bench) ;;
  *) echo "gpu_calibrate: --phase must be all, checks or bench, got '$PHASE'" >&2; exit 2 ;;
esac

START=$(date +%s)
DEADLINE_S=${SERVESIM_GPU_DEADLINE_S:-570}
DEADLINE=$((START + DEADLINE_S))
OUT=${OUT:-$PWD/build-gpu-out}
BUILD=${SERVESIM_GPU_BUILD_DIR:-build-gpu}
PARTS="$BUILD/profile-parts"

# Time plan (seconds). Estimates for an H100 with 16 cores; the first run's summary.txt
# records the real figures, which should replace these.
CONFIGURE_LIMIT=120
BUILD_LIMIT=300
CHECK_FAMILY_LIMIT=90     # per family, full check
BENCH_GRACE=40            # the last admitted point may overrun its share; merge follows
SANITIZER_RESERVE=100     # --phase all keeps this for memcheck + racecheck after the bench
FAMILY_POINT_GRACE=30     # a family's process may run this long past its budget (its last point)
# Estimated seconds of each family's full grid; the bench budget is shared in these ratios.
# Issue 20 added llama2-7b's 13 GEMM shapes (53 in all, was 40), the 16/2, 32/4 and 32/32 head
# shapes to decode (+54 points), prefill (+14) and Quest (+288 points, was 352, plus the
# fused and tc variants' 5 rows per KV-head point), and MInference's mma variant (attention and
# end-to-end again per point); the weights grew in proportion. The full grids (520 s) no
# longer fit one bench call: split them with --families over two bench calls
# (docs/kernels.md, "Running the calibration").
# prefill_hopper (issue 20, prefill variant hopper_wgmma, sm_90a; its own family so a fault
# of the new kernel cannot cost prefill its rows): 30 points, estimated like prefill's.
# Measured on the first H100 run (2026-11-25, costmodel/profiles/h100-sxm/summary.txt: seconds
# each family's full grid took, rounded up): ceilings 0, gemm 44, decode 3, prefill 33,
# prefill_hopper 5, quest 15, minference 284, andpro 7; elementwise (a later session) ~1.
# The weights are those seconds with a little headroom; the full grids (~400 s) still need
# the two bench calls below: MInference alone is 284 s.
declare -A FAMILY_WEIGHT=([ceilings]=2 [gemm]=45 [gemm_dense]=24 [decode]=5 [decode_ragged]=4 [decode_batches]=4 [elementwise]=3 [elementwise_queued]=8 [prefill]=35 [prefill_hopper]=6 [quest]=16 [minference]=285 [andpro]=8)
DEFAULT_WEIGHT=30
MIN_SHARE=10

now() { date +%s; }
left() { echo $((DEADLINE - $(now))); }
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }
weight_of() { echo "${FAMILY_WEIGHT[$1]:-$DEFAULT_WEIGHT}"; }

# Keeps the families named by --families (all when it is empty), in the order given on stdin.
select_families() {
  local f
  while read -r f; do
    [ -z "$ONLY_FAMILIES" ] || [[ ",$ONLY_FAMILIES," == *",$f,"* ]] && echo "$f"
  done
}

# Share of `budget` for the first of the families given, in proportion to the weights of
# all of them (the families still to run).
# MIN_SHARE is kept back for each family after the first, so a heavy family early in the
# order (minference) cannot starve the ones after it.
share_of() {  # share_of BUDGET FAMILY...
  local budget=$1 total=0 f
  shift
  for f in "$@"; do total=$((total + $(weight_of "$f"))); done
  [ "$total" -gt 0 ] || total=1
  local avail=$((budget - MIN_SHARE * ($# - 1)))
  [ "$avail" -gt 0 ] || avail=0
  local s=$((avail * $(weight_of "$1") / total))
  # Every family gets a start (the ceilings' copy rows are cheap and essential).
  [ "$s" -lt "$MIN_SHARE" ] && s=$(min "$MIN_SHARE" "$budget")
  echo "$s"
}

if [ "$PLAN" = 1 ]; then
  # Every family with a bench, in the binary's order (`servesim-kernels list`: replay_tiny has no bench).
  mapfile -t families < <(printf '%s\n' ceilings gemm gemm_dense elementwise elementwise_queued decode decode_ragged \
    decode_batches prefill prefill_hopper quest minference andpro | select_families)
  echo "gpu_calibrate plan (--phase $PHASE): deadline ${DEADLINE_S} s after start"
  echo "  configure <= ${CONFIGURE_LIMIT} s, build <= ${BUILD_LIMIT} s (seconds when a warm build-gpu/ is reused)"
  if [ "$PHASE" != bench ]; then
    echo "  check: one process per family, <= ${CHECK_FAMILY_LIMIT} s each"
  fi
  if [ "$PHASE" = checks ]; then
    echo "  sanitizers: memcheck then racecheck with the time left"
    exit 0
  fi
  reserve=0
  [ "$PHASE" = all ] && reserve=$SANITIZER_RESERVE
  # Expected case (estimates: build 150 s, checks 40 s); at run time every share is
  # recomputed from the clock, so a slow build shrinks the bench, never the deadline.
  used=$((5 + 150))
  [ "$PHASE" = all ] && used=$((used + 40))
  budget=$((DEADLINE_S - used - BENCH_GRACE - reserve))
  [ "$budget" -lt 0 ] && budget=0
  echo "  bench budget: ${budget} s (expected ${used} s before it), then ${BENCH_GRACE} s grace, ${reserve} s sanitizer reserve"
  remaining=("${families[@]}")
  left_budget=$budget
  total=0
  for f in "${families[@]}"; do
    s=$(share_of "$left_budget" "${remaining[@]}")
    echo "    share $f ${s} s (full grid estimated at $(weight_of "$f") s)"
    left_budget=$((left_budget - s))
    remaining=("${remaining[@]:1}")
    total=$((total + $(weight_of "$f")))
  done
  echo "  full grids estimated at ${total} s in all; budget fits: $([ "$budget" -ge "$total" ] && echo yes || echo "no, points will be skipped")"
  exit 0
fi

mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
step() {  # step NAME LOG TIMEOUT CMD...
  local name=$1 log=$2 limit=$3 t0 rc
  shift 3
  if [ "$limit" -le 5 ]; then
    note "$name: SKIPPED (no time left)"
    return 124
  fi
  t0=$(now)
  timeout --signal=TERM --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  note "$name: rc=$rc ($(($(now) - t0)) s)"
  return $rc
}

note "servesim gpu_calibrate --phase $PHASE $(date -u +%Y-%m-%dT%H:%M:%SZ), deadline ${DEADLINE_S} s"

# ---- provenance -------------------------------------------------------------------------
COMMIT=${SERVESIM_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
if [ -z "$COMMIT" ] || [ "$COMMIT" = unknown ]; then
  if [ "$PHASE" != checks ]; then
    note "REFUSED: no commit. This tree has no .git (device copy?): pass the commit in the command string,"
    note "  SERVESIM_GIT_COMMIT=\$(git rev-parse HEAD) expanded where the checkout is (docs/kernels.md)."
    exit 2
  fi
  COMMIT=unknown
fi
note "commit: $COMMIT"

# ---- preflight: one line per missing piece, before any build ------------------------------
MISSING=0
missing() { note "preflight: MISSING $*"; MISSING=1; }
CUDA_HOME_GUESS=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x "$CUDA_HOME_GUESS/bin/nvcc" ] && NVCC=$CUDA_HOME_GUESS/bin/nvcc
[ -n "$NVCC" ] || missing "nvcc: no CUDA compiler on PATH or at $CUDA_HOME_GUESS/bin/nvcc"
CUDA_ROOT=$CUDA_HOME_GUESS
[ -n "$NVCC" ] && [ ! -d "$CUDA_ROOT" ] && CUDA_ROOT=$(cd "$(dirname "$NVCC")/.." && pwd)
if command -v cmake >/dev/null 2>&1; then
  cmake_version=$(cmake --version | awk 'NR == 1 { print $3 }')
  if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -n 1)" != 3.25 ]; then
    missing "cmake >= 3.25: found $cmake_version (kernels/CMakeLists.txt needs 3.25)"
  fi
else
  missing "cmake: not on PATH (needs >= 3.25)"
fi
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || missing "C++ compiler: neither c++ nor g++ on PATH"
LT=$( (ldconfig -p 2>/dev/null | grep -o '/[^ ]*libcublasLt\.so[^ ]*' | head -n 1) || true)
if [ -z "$LT" ] && [ -d "$CUDA_ROOT" ]; then
  LT=$(find "$CUDA_ROOT/lib64" "$CUDA_ROOT/lib" "$CUDA_ROOT/targets" -name 'libcublasLt.so*' 2>/dev/null | head -n 1)
fi
[ -n "$LT" ] || missing "libcublasLt: not in the linker cache nor under ${CUDA_ROOT:-the CUDA root} (cuBLAS is part of the CUDA toolkit)"
SAN=$(command -v compute-sanitizer || true)
[ -z "$SAN" ] && [ -x "$CUDA_ROOT/bin/compute-sanitizer" ] && SAN=$CUDA_ROOT/bin/compute-sanitizer
if [ -z "$SAN" ] && [ "$PHASE" != bench ]; then
  note "preflight: MISSING compute-sanitizer: not on PATH nor in ${CUDA_ROOT:-the CUDA root}/bin; sanitizer steps will be SKIPPED"
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
  missing "nvidia-smi: no NVIDIA driver tools, so probably no GPU"
elif ! nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader >>"$SUMMARY" 2>&1; then
  missing "GPU: nvidia-smi found no usable device"
fi
if [ "$MISSING" = 1 ]; then
  note "REFUSED: preflight failed (lines above); nothing was built"
  exit 2
fi
note "preflight: nvcc $NVCC, cmake $cmake_version, cublasLt $LT, compute-sanitizer ${SAN:-none}"
[ "$PREFLIGHT_ONLY" = 1 ] && exit 0

# ---- build --------------------------------------------------------------------------------
mkdir -p "$BUILD"
: >"$OUT/build.log"
if [ -n "${SERVESIM_KERNELS_BIN:-}" ]; then
  [ -x "$SERVESIM_KERNELS_BIN" ] || { note "FAILED: SERVESIM_KERNELS_BIN=$SERVESIM_KERNELS_BIN is not an executable"; exit 1; }
  BIN=$SERVESIM_KERNELS_BIN
  note "build: SKIPPED (prebuilt $BIN)"
else
  GEN=()
  command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
  [ -f "$BUILD/CMakeCache.txt" ] && GEN=()  # keep the generator of a warm build directory
  JOBS=$(nproc 2>/dev/null || echo 8)
  step configure "$OUT/build.log" "$(min "$CONFIGURE_LIMIT" "$(left)")" cmake -S kernels -B "$BUILD" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="${SERVESIM_CUDA_ARCH:-90}" \
    -DSERVESIM_CUDA=ON || { note "FAILED: configure (build.log)"; exit 1; }
  step build "$OUT/build.log" "$(min "$BUILD_LIMIT" "$(left)")" cmake --build "$BUILD" -j "$JOBS" --target servesim-kernels ||
    { note "FAILED: build (build.log)"; exit 1; }
  BIN="$BUILD/servesim-kernels"
fi
mapfile -t FAMILIES < <("$BIN" list | awk '{ print $1 }' | select_families)
note "families: ${FAMILIES[*]}"

STATUS=0

# ---- check: one process per family --------------------------------------------------------
if [ "$PHASE" != bench ]; then
  : >"$OUT/check.log"
  for f in "${FAMILIES[@]}"; do
    step "check $f" "$OUT/check.log" "$(min "$CHECK_FAMILY_LIMIT" "$(($(left) - 30))")" "$BIN" check --family "$f" || STATUS=1
  done
fi

# ---- bench: one process per family, a shared time budget, then merge ----------------------
if [ "$PHASE" != checks ]; then
  : >"$OUT/bench.log"
  rm -rf "$PARTS"
  mkdir -p "$PARTS"
  reserve=0
  [ "$PHASE" = all ] && reserve=$SANITIZER_RESERVE
  budget_end=$(($(now) + $(left) - BENCH_GRACE - reserve))
  note "bench: budget $((budget_end - $(now))) s for ${#FAMILIES[@]} families"
  remaining=("${FAMILIES[@]}")
  parts=()
  SKIPPED_ALL=0
  for f in "${FAMILIES[@]}"; do
    share=$(share_of $((budget_end - $(now))) "${remaining[@]}")
    remaining=("${remaining[@]:1}")
    if [ "$share" -lt 5 ]; then
      note "bench $f: SKIPPED (no budget left)"
      STATUS=1
      continue
    fi
    flog="$PARTS/$f.log"
    t0=$(now)
    timeout --signal=TERM --kill-after=10 $((share + FAMILY_POINT_GRACE)) \
      "$BIN" bench --family "$f" --budget-s "$share" --git-commit "$COMMIT" -o "$PARTS/$f.csv" >"$flog" 2>&1
    rc=$?
    cat "$flog" >>"$OUT/bench.log"
    rows=0
    [ -f "$PARTS/$f.csv" ] && rows=$(awk '!/^#/ { n++ } END { print (n > 0 ? n - 1 : 0) }' "$PARTS/$f.csv")
    skipped=$(grep -c '^budget-skip:' "$flog")
    SKIPPED_ALL=$((SKIPPED_ALL + skipped))
    case $rc in
      0) state=ok ;;
      124 | 137) state="TIMEOUT (killed past its share + ${FAMILY_POINT_GRACE} s)" ;;
      *) state="FAILED rc=$rc" ;;
    esac
    note "bench $f: $state, $rows rows, $skipped points skipped, $(($(now) - t0)) s of a ${share} s share"
    grep '^budget-skip:' "$flog" | sed "s/^budget-skip: /  skipped (budget): /" >>"$SUMMARY"
    [ "$rc" = 0 ] || STATUS=1
    [ -s "$PARTS/$f.csv" ] && parts+=("$PARTS/$f.csv")
  done
  note "bench: $SKIPPED_ALL points skipped in all"
  # gemm_dense a second time on this card, when the time is there: the merge keeps only its
  # rows that repeated within 5 % (`merge --repeat`; docs/kernels.md). Otherwise its rows go
  # in unchecked, and summary.txt says so.
  repeat_args=()
  if [ -s "$PARTS/gemm_dense.csv" ]; then
    if [ $((budget_end - $(now))) -ge "$(weight_of gemm_dense)" ]; then
      t0=$(now)
      if timeout --signal=TERM --kill-after=10 $(($(weight_of gemm_dense) * 2)) \
        "$BIN" bench --family gemm_dense --seed 2 --git-commit "$COMMIT" -o "$PARTS/gemm_dense.repeat" \
        >"$PARTS/gemm_dense.repeat.log" 2>&1; then
        repeat_args=(--repeat "$PARTS/gemm_dense.repeat")
        note "bench gemm_dense (seed 2, the repeat check): ok, $(($(now) - t0)) s"
      else
        note "bench gemm_dense (seed 2): FAILED; its rows are merged without the repeat check"
      fi
      cat "$PARTS/gemm_dense.repeat.log" >>"$OUT/bench.log"
    else
      note "bench gemm_dense (seed 2): SKIPPED (no budget left); its rows are merged without the repeat check"
    fi
  fi
  if [ ${#parts[@]} -gt 0 ] && "$BIN" merge "${repeat_args[@]}" -o "$OUT/profile.csv" "${parts[@]}" >>"$OUT/bench.log" 2>&1; then
    ROWS=$(awk '!/^#/ { n++ } END { print (n > 0 ? n - 1 : 0) }' "$OUT/profile.csv")
    note "profile.csv: $ROWS rows from ${#parts[@]} families"
    grep '^# repeat=' "$OUT/profile.csv" | sed 's/^# repeat=/  repeat check: /' >>"$SUMMARY"
  else
    note "FAILED: no merged profile (bench.log); per-family CSVs kept in profile-parts.tar"
    tar -cf "$OUT/profile-parts.tar" -C "$PARTS" . 2>/dev/null
    STATUS=1
  fi
fi

# ---- sanitizers, with the time that is left -----------------------------------------------
if [ "$PHASE" != bench ]; then
  : >"$OUT/sanitizer.log"
  if [ -n "$SAN" ]; then
    step memcheck "$OUT/sanitizer.log" "$(min 150 "$(($(left) * 2 / 3))")" \
      "$SAN" --tool memcheck --error-exitcode 3 "$BIN" check --quick --family ceilings,decode,prefill,prefill_hopper,quest,minference,andpro ||
      STATUS=1
    # prefill_hopper is left out of racecheck on purpose: its shared memory is written by TMA
    # and read by wgmma, both async-proxy traffic ordered by mbarriers, and how racecheck
    # reports that has not been seen yet. Try it by hand once memcheck passes.
    step racecheck "$OUT/sanitizer.log" "$(min 120 "$(left)")" \
      "$SAN" --tool racecheck --error-exitcode 3 "$BIN" check --quick --family decode,prefill,quest,minference,andpro ||
      STATUS=1
  else
    note "sanitizers: SKIPPED (no compute-sanitizer)"
  fi
fi

note "total: $(($(now) - START)) s, status $STATUS"
exit $STATUS
