#!/usr/bin/env bash
# CPU test of kernels/scripts/gpu_calibrate.sh (CTest; no GPU, builds nothing): the script
# parses (bash -n, and shellcheck where installed), its --plan gives every family a share
# and fits the full grids in the two-call bench phase, and a profile-writing phase refuses
# to start without a commit (the device copy of the tree has no .git).
set -u -o pipefail
SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gpu_calibrate.sh
fail() { echo "FAIL: $*"; exit 1; }

bash -n "$SCRIPT" || fail "bash -n"
if command -v shellcheck >/dev/null 2>&1; then shellcheck "$SCRIPT" || fail "shellcheck"; fi

for phase in all bench; do
  plan=$(bash "$SCRIPT" --plan --phase "$phase") || fail "--plan --phase $phase exited $?"
  echo "$plan"
  for f in ceilings gemm decode prefill quest minference andpro; do
    share=$(echo "$plan" | awk -v f="$f" '$1 == "share" && $2 == f { print $3 }')
    [ -n "$share" ] && [ "$share" -ge 10 ] || fail "--phase $phase: family $f has share '$share'"
  done
  budget=$(echo "$plan" | awk '/bench budget:/ { print $3 }')
  sum=$(echo "$plan" | awk '$1 == "share" { s += $3 } END { print s }')
  [ "$sum" -le "$((budget + 10))" ] || fail "--phase $phase: shares sum to $sum s over the ${budget} s budget"
done
bash "$SCRIPT" --plan --phase bench | grep -q "budget fits: yes" || fail "two-call bench phase does not fit the estimated grids"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(cd "$tmp" && env -u SERVESIM_GIT_COMMIT OUT="$tmp/out" bash "$SCRIPT" --phase bench 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "without a commit the bench phase exited $rc, not 2"
echo "$out" | grep -q "REFUSED: no commit" || fail "no refusal line: $out"
[ ! -e "$tmp/out/profile.csv" ] || fail "a profile was written without a commit"
bash "$SCRIPT" --phase nonsense >/dev/null 2>&1 && fail "an unknown phase was accepted"
echo "gpu_calibrate.sh: all script checks passed"
