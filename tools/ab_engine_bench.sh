#!/usr/bin/env bash
# Old/new comparison of two servesim_engine_bench binaries (issue 35: every speed
# figure is a ratio against the previous binary, measured in the same run). The
# development box's speed drifts 10-25% within an hour, so the two binaries run
# one after the other, ROUNDS times, with the same bench arguments, and the figure
# is the median over the rounds of NEW's wall time divided by OLD's in the same
# round. The order alternates (odd rounds OLD first, even rounds NEW first), so a
# run that gains or loses from going first or second does so on both sides alike.
#
#   tools/ab_engine_bench.sh [--outputs] OLD NEW ROUNDS -- BENCH ARGS...
#   e.g. tools/ab_engine_bench.sh /tmp/old/servesim_engine_bench build/servesim_engine_bench 4 -- --requests 1000000
#        tools/ab_engine_bench.sh OLD NEW 3 -- --requests 1000000 --templates --policies fcfs,lpm
#
# Prints each round's wall times (the bench's median line; one row per system with
# --policies), then per row the medians of OLD and NEW, the median, range and
# geometric mean of NEW / OLD over the rounds, and in how many rounds NEW was faster
# (and slower; the rest are ties at the bench's 1 ms resolution), with the sign
# test's two-sided p-value for those counts (the chance of a split at least that
# uneven if the binaries were the same speed): with the box's noise, a change of a
# few percent shows as a count well off half, not as a median, and p says how far off
# (6 of 6: 0.031; 11 of 16: 0.21, which the same binary against itself reaches often).
# --outputs also compares the two binaries' run folders of the last round byte for
# byte (lock files aside) and prints "outputs: equal" or "outputs: DIFFERENT"; the
# exit status is then 1 when they differ. Not for --backends (the bench alternates
# its backends itself) or --scale.
# A maintainer tool, like scenario_hashes.sh: no ctest runs it (no test runs the
# benches; the sanitizer build leaves them out), tools/doc_commands.py --run does.
set -euo pipefail

outputs=0
if [[ "${1:-}" == "--outputs" ]]; then
  outputs=1
  shift
fi
if [[ $# -lt 4 || "$4" != "--" ]]; then
  echo "usage: $0 [--outputs] OLD NEW ROUNDS -- BENCH ARGS..." >&2
  exit 2
fi
old="$1" new="$2" rounds="$3"
shift 4
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: ROUNDS must be a positive integer, not '$rounds'" >&2
  exit 2
fi
for b in "$old" "$new"; do
  if [[ ! -x "$b" ]]; then
    echo "$0: $b is not an executable" >&2
    exit 2
  fi
done
for a in "$@"; do
  if [[ "$a" == "--out" || "$a" == --out=* || "$a" == "--backends" || "$a" == "--scale" ]]; then
    echo "$0: $a is not supported here (the tool picks the run folders; see the header)" >&2
    exit 2
  fi
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One bench run; prints "ROW SECONDS" lines: "run" for a single run (its median
# wall), one per system for --policies (its median_s column); tools/bench_log.awk reads the log.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
walls() { awk -f "$here/bench_log.awk" "$1" | awk '{ print $1, $2 }'; }

for ((r = 1; r <= rounds; ++r)); do
  order="old new"
  ((r % 2 == 0)) && order="new old"
  for side in $order; do
    bin="$old"
    [[ "$side" == new ]] && bin="$new"
    rm -rf "${tmp:?}/${side:?}"
    if ! "$bin" "$@" --out "$tmp/$side" >"$tmp/$side.log" 2>&1; then
      echo "$0: $bin failed (round $r):" >&2
      tail -5 "$tmp/$side.log" >&2
      exit 1
    fi
    walls "$tmp/$side.log" | sed "s/^/$r $side /" >>"$tmp/walls"
  done
done

# Summary in awk and sort only (no other interpreter on a fresh machine).
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
rows="$(awk '!seen[$3]++ { print $3 }' "$tmp/walls")"
if [[ -z "$rows" ]]; then
  echo "$0: no wall time found in the bench's output" >&2
  exit 1
fi
for row in $rows; do
  awk -v row="$row" '$3 == row && $2 == "old" { o[$1] = $4 } $3 == row && $2 == "new" { n[$1] = $4 }
    END { for (r = 1; r in o; ++r) print o[r], n[r] }' "$tmp/walls" >"$tmp/pairs"
  printf '%s: old %s s; new %s s\n' "$row" "$(awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 }' "$tmp/pairs")" \
    "$(awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $2 }' "$tmp/pairs")"
  mo="$(awk '{ print $1 }' "$tmp/pairs" | median)"
  mn="$(awk '{ print $2 }' "$tmp/pairs" | median)"
  awk '$1 > 0 { print $2 / $1 }' "$tmp/pairs" >"$tmp/ratios"
  line="$(printf '%s: median old %.3f s, new %.3f s' "$row" "$mo" "$mn")"
  if [[ -s "$tmp/ratios" ]]; then
    line+="$(printf '; new/old paired median %.3fx (range %.3f-%.3f, %d rounds)' "$(median <"$tmp/ratios")" \
      "$(sort -g "$tmp/ratios" | head -1)" "$(sort -g "$tmp/ratios" | tail -1)" "$(wc -l <"$tmp/ratios")")"
    # The sign test: under "no difference" each untied round is faster or slower with
    # probability 1/2, so p is twice the binomial tail of the rarer count (capped at 1).
    # Each term C(m, i) / 2^m is carried as its logarithm, so no count of rounds
    # overflows (2^m as a double would past m ~ 1,000); terms too small to matter
    # come out as 0.
    line+="$(awk '{ s += log($1); f += ($1 < 1); l += ($1 > 1) }
      END {
        m = f + l; k = (f < l ? f : l); lt = -m * log(2); tail = 0
        for (i = 0; i <= k; ++i) { tail += exp(lt); if (i < k) lt += log(m - i) - log(i + 1) }
        p = 2 * tail; if (p > 1) p = 1
        printf "; geometric mean %.3fx; new faster in %d, slower in %d of %d (sign test p = %.3g)", exp(s / NR), f, l, NR, p
      }' "$tmp/ratios")"
  fi
  echo "$line"
done

if ((outputs)); then
  if diff -rq -x .servesim.lock "$tmp/old" "$tmp/new" >/dev/null; then
    echo "outputs: equal"
  else
    echo "outputs: DIFFERENT"
    diff -rq -x .servesim.lock "$tmp/old" "$tmp/new" | head -10
    exit 1
  fi
fi
