#!/usr/bin/env bash
# CPU test of kernels/scripts/gpu_calibrate.sh (CTest; no GPU, builds nothing): the script
# parses (bash -n, and shellcheck where installed), its --plan gives every family a share
# and fits the full grids in the two-call bench phase, a profile-writing phase refuses
# to start without a commit (the device copy of the tree has no .git), and the preflight
# names every missing tool on a PATH that has none of them.
set -u -o pipefail
SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gpu_calibrate.sh
fail() { echo "FAIL: $*"; exit 1; }

bash -n "$SCRIPT" || fail "bash -n"
if command -v shellcheck >/dev/null 2>&1; then shellcheck "$SCRIPT" || fail "shellcheck"; fi

for phase in all bench; do
  plan=$(bash "$SCRIPT" --plan --phase "$phase") || fail "--plan --phase $phase exited $?"
  echo "$plan"
  for f in ceilings gemm gemm_dense elementwise elementwise_queued decode decode_ragged decode_batches prefill \
    prefill_hopper quest minference andpro; do
    share=$(echo "$plan" | awk -v f="$f" '$1 == "share" && $2 == f { print $3 }')
    if [ -z "$share" ] || [ "$share" -lt 10 ]; then fail "--phase $phase: family $f has share '$share'"; fi
  done
  budget=$(echo "$plan" | awk '/bench budget:/ { print $3 }')
  sum=$(echo "$plan" | awk '$1 == "share" { s += $3 } END { print s }')
  [ "$sum" -le "$((budget + 10))" ] || fail "--phase $phase: shares sum to $sum s over the ${budget} s budget"
done
# The full grids (issue 20's head shapes and models) need two bench calls split by family;
# each must fit, and together they must name every family exactly once.
bench_a=ceilings,gemm,gemm_dense,elementwise,elementwise_queued,decode,decode_ragged,decode_batches,prefill,prefill_hopper
bench_b=quest,minference,andpro
for sel in "$bench_a" "$bench_b"; do
  plan=$(bash "$SCRIPT" --plan --phase bench --families "$sel") || fail "--plan --families $sel exited $?"
  echo "$plan" | grep -q "budget fits: yes" || fail "bench call for $sel does not fit the estimated grids: $plan"
  got=$(echo "$plan" | awk '$1 == "share" { printf "%s%s", sep, $2; sep = "," }')
  [ "$got" = "$sel" ] || fail "--families $sel planned '$got'"
done
bash "$SCRIPT" --plan --phase bench | grep -q "budget fits: no" ||
  fail "one bench call claims to fit the full grids; the FAMILY_WEIGHT estimates say it does not"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(cd "$tmp" && env -u SERVESIM_GIT_COMMIT OUT="$tmp/out" bash "$SCRIPT" --phase bench 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "without a commit the bench phase exited $rc, not 2"
echo "$out" | grep -q "REFUSED: no commit" || fail "no refusal line: $out"
[ ! -e "$tmp/out/profile.csv" ] || fail "a profile was written without a commit"
bash "$SCRIPT" --phase nonsense >/dev/null 2>&1 && fail "an unknown phase was accepted"

# Preflight on a PATH with only the shell tools the script needs, and no CUDA root.
mkdir -p "$tmp/bin"
for tool in date mkdir tee dirname awk sort head grep find cat; do
  src=$(command -v "$tool") || fail "test needs $tool"
  ln -s "$src" "$tmp/bin/$tool"
done
out=$(cd "$tmp" && env PATH="$tmp/bin" CUDA_HOME="$tmp/no-cuda" OUT="$tmp/out2" SERVESIM_GIT_COMMIT=0123456789abcdef \
  "$BASH" "$SCRIPT" --preflight 2>&1)
rc=$?
echo "$out"
[ "$rc" = 2 ] || fail "preflight with nothing installed exited $rc, not 2"
for piece in "MISSING nvcc" "MISSING cmake" "MISSING C++ compiler" "MISSING libcublasLt" "MISSING compute-sanitizer" \
  "MISSING nvidia-smi" "REFUSED: preflight failed"; do
  [ "$(echo "$out" | grep -c "$piece")" = 1 ] || fail "preflight did not say '$piece' exactly once"
done
[ ! -e "$tmp/build-gpu" ] || fail "preflight failure still built"
echo "gpu_calibrate.sh: all script checks passed"
