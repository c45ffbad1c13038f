#!/usr/bin/env bash
# Behaviour fingerprint of a servesim build: runs every shipped scenario
# (configs/scenarios/*.yaml, full length, from the repository root so trace
# paths resolve) and prints one line "<scenario>/<file> <sha256>" per output
# file, sorted. Deterministic: same build + same inputs => same lines.
#
#   tools/scenario_hashes.sh BUILD/servesim > before.txt      # fingerprint one build
#   tools/scenario_hashes.sh --compare OLD/servesim NEW/servesim
#        # fingerprints both, prints the differing lines, exits 1 if any differ
#
# Refactors that must not change behaviour are checked with --compare (or by
# diffing two saved fingerprints). Extra arguments after the binary go to
# every `servesim run` (e.g. --set seed=7).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fingerprint() {  # BIN [run args...]
  local bin="$1"; shift
  local tmp; tmp="$(mktemp -d)"
  for s in configs/scenarios/*.yaml; do
    local name; name="$(basename "$s" .yaml)"
    if ! "$bin" run "$s" --quiet --out "$tmp/$name" "$@" >"$tmp/$name.log" 2>&1; then
      echo "$name/RUN-FAILED $(tail -1 "$tmp/$name.log")"
      continue
    fi
    (cd "$tmp" && find "$name" -type f -print0 | sort -z | xargs -0 sha256sum | awk '{print $2, $1}')
  done
  rm -rf "$tmp"
}

if [[ "${1:-}" == "--compare" ]]; then
  [[ $# -ge 3 ]] || { echo "usage: $0 --compare OLD_BIN NEW_BIN [run args...]" >&2; exit 2; }
  old="$2"; new="$3"; shift 3
  a="$(mktemp)"; b="$(mktemp)"
  fingerprint "$old" "$@" >"$a"
  fingerprint "$new" "$@" >"$b"
  if diff "$a" "$b"; then
    echo "identical: $(wc -l <"$a") output files of $(ls configs/scenarios/*.yaml | wc -l) scenarios"
    rm -f "$a" "$b"
  else
    echo "DIFFERENT (see lines above; < old, > new)"; rm -f "$a" "$b"; exit 1
  fi
else
  [[ $# -ge 1 ]] || { echo "usage: $0 BIN [run args...] | --compare OLD_BIN NEW_BIN [run args...]" >&2; exit 2; }
  bin="$1"; shift
  fingerprint "$bin" "$@"
fi
