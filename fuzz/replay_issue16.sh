#!/usr/bin/env bash
# Replays the bad inputs listed in issue 16 ("undefined behaviour on big
# numbers", and the holes found after it) through the whole servesim program:
# `servesim run` (and `servesim trace stats` for trace files). Each input must
# exit 2 with a message naming the file, line (where the input has lines) and
# field, and print no sanitizer report. CTest runs it in every build
# (fuzz/CMakeLists.txt); in the ASan+UBSan build (.ci/test, docs/fuzzing.md)
# the same run proves there is no undefined behaviour on the way.
#
# usage: replay_issue16.sh SERVESIM_BINARY
set -uo pipefail
bin=${1:?usage: replay_issue16.sh SERVESIM_BINARY}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/servesim_replay16.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0 n=0

base="name: replay
model: llama-3-8b
hardware: h100-sxm
cluster: {workers: 1}
cost_model: {backend: roofline}
"
synthetic="workload: {type: synthetic, requests: 10, clients: [{name: a, rate: 1}]}"

# expect NAME WANT -- CMD...: CMD must exit 2, its stderr must contain WANT and
# no sanitizer report.
expect() {
  local name=$1 want=$2
  shift 3
  n=$((n + 1))
  local err="$work/err.txt" code
  "$@" >/dev/null 2>"$err"
  code=$?
  if ((code != 2)); then
    echo "FAIL $name: exit $code, want 2: $(head -c 600 "$err")"
    fail=1
  elif ! grep -qF -- "$want" "$err"; then
    echo "FAIL $name: message lacks '$want': $(head -c 600 "$err")"
    fail=1
  elif grep -qE "runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer" "$err"; then
    echo "FAIL $name: sanitizer report: $(head -c 600 "$err")"
    fail=1
  fi
}

# scenario NAME YAML: writes the scenario and echoes its path.
scenario() {
  printf '%s%s\n' "$base" "$2" >"$work/$1.yaml"
  echo "$work/$1.yaml"
}

# trace NAME FORMAT CONTENT WANT: the trace through `run` and `trace stats`.
trace() {
  local name=$1 format=$2 content=$3 want=$4
  printf '%s' "$content" >"$work/$name"
  local s
  s=$(scenario "run_$name" "workload: {type: trace, path: $work/$name, format: $format}")
  expect "run $name" "$want" -- "$bin" run "$s" --out "$work/out_$name" -q
  expect "trace stats $name" "$want" -- "$bin" trace stats "$work/$name" -f "$format"
}

big=9223372036854775807
# Token counts near 2^63, in every reader.
trace n.csv native_csv "id,arrival_ns,prompt_tokens,output_tokens
0,0,$big,5
" "n.csv:2: field 'prompt_tokens'"
trace v.csv vtc "req_id,arrival_ns,prompt_tokens,output_tokens
0,0,4,$big
" "v.csv:2: field 'output_tokens'"
trace n.jsonl native_jsonl "{\"arrival_ns\": 0, \"prompt_tokens\": 5, \"output_tokens\": 9.2e18}
" "n.jsonl:1: field 'output_tokens'"
trace m.jsonl mooncake "{\"timestamp\": 0, \"input_length\": 9223372036854775000, \"output_length\": 3, \"hash_ids\": [0]}
" "m.jsonl:1: field 'input_length'"
trace a.csv azure "TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:17:03,4,4000000000
" "a.csv:2: field 'GeneratedTokens'"
trace b.csv burstgpt "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
0,ChatGPT,$big,5,10,Conversation log
" "b.csv:2: field 'Request tokens'"
# Azure timestamps outside ~1678-2262 (int64 ns since 1970).
trace a2300.csv azure "TIMESTAMP,ContextTokens,GeneratedTokens
2300-01-01 00:00:00,4,4
" "a2300.csv:2: field 'TIMESTAMP'"
trace a1600.csv azure "TIMESTAMP,ContextTokens,GeneratedTokens
1600-01-01 00:00:00,4,4
" "a1600.csv:2: field 'TIMESTAMP'"
# Arrivals and think times past int64 nanoseconds.
trace t.csv native_csv "arrival_ns,prompt_tokens,output_tokens,think_time_ns
0,4,4,9000000000000000000
" "t.csv:2: field 'think_time_ns'"
trace s.csv native_csv "arrival_s,prompt_tokens,output_tokens
5e9,4,4
" "s.csv:2: field 'arrival_s'"
trace mt.jsonl mooncake "{\"timestamp\": 9000000000000000, \"input_length\": 4, \"output_length\": 3, \"hash_ids\": [0]}
" "mt.jsonl:1: field 'timestamp'"
# Empty traces: a header alone, an empty JSONL file.
trace h.csv native_csv "id,arrival_ns,prompt_tokens,output_tokens
" "h.csv:1: header: no native_csv data rows"
trace e.jsonl native_jsonl "" "e.jsonl: empty file"

# Scenario numbers (file:line:key from the YAML, or the --set key).
printf 'arrival_ns,prompt_tokens,output_tokens\n0,4,4\n' >"$work/ok.csv"
s=$(scenario rate "workload: {type: trace, path: $work/ok.csv, rate_scale: 1e-300}")
expect "rate_scale 1e-300" "rate.yaml:6" -- "$bin" run "$s" --out "$work/o" -q
expect "rate_scale 1e-300 key" "workload.rate_scale: must be at least 1e-06" -- "$bin" run "$s" --out "$work/o" -q
s=$(scenario prompt "workload: {type: synthetic, requests: 10, clients: [{name: a, rate: 1, prompt: 9.2e18}]}")
expect "prompt 9.2e18" "prompt.yaml:6" -- "$bin" run "$s" --out "$work/o" -q
s=$(scenario w_in "$synthetic
report: {w_in: 1e300}")
expect "w_in 1e300" "report.w_in: must be at most" -- "$bin" run "$s" --out "$work/o" -q
s=$(scenario timeline "$synthetic
report: {timeline_interval_s: 1e-9}")
expect "timeline_interval_s 1e-9" "timeline_interval_s: must be at least 0.001 (or 0)" -- "$bin" run "$s" --out "$work/o" -q
s=$(scenario plain "$synthetic")
expect "iteration_overhead_us 1e300" "iteration_overhead_us: must be at most" -- \
  "$bin" run "$s" --out "$work/o" -q --set cost_model.iteration_overhead_us=1e300
expect "seed 1e300" "out of range" -- "$bin" run "$s" --out "$work/o" -q --set seed=1e300
expect "max_batch_tokens 1e300" "max_batch_tokens" -- "$bin" run "$s" --out "$work/o" -q --set batching.max_batch_tokens=1e300
expect "memory_efficiency 1e-300" "memory_efficiency: must be at least 0.001" -- \
  "$bin" run "$s" --out "$work/o" -q --set cost_model.memory_efficiency=1e-300
# Hardware peaks of 1e-300 (no floor before: the roofline overflowed).
for key in bf16_tflops mem_bandwidth_gbps tp_allreduce_gbps bandwidth_fraction gemm_flops_fraction; do
  sed "s/^$key:.*/$key: 1e-300/" "$src/configs/hardware/h100-sxm.yaml" >"$work/hw_$key.yaml"
  s=$(scenario "uses_hw_$key" "$synthetic")
  sed -i "s|^hardware: h100-sxm|hardware: $work/hw_$key.yaml|" "$s"
  expect "hardware $key 1e-300" "hw_$key.yaml:" -- "$bin" run "$s" --out "$work/o" -q
  expect "hardware $key 1e-300 key" "$key: must be at least 0.001" -- "$bin" run "$s" --out "$work/o" -q
done

if ((fail)); then
  echo "replay_issue16: FAILED ($n inputs)"
  exit 1
fi
echo "replay_issue16: $n inputs, each exit 2 with file, line and field, no sanitizer report"
