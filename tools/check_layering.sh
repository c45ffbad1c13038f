#!/usr/bin/env bash
# Layering check: every module's non-test sources include only headers of the
# modules its CMake target links (docs/architecture.md, "Layers"). Prints each
# offending include and exits 1 if there is any. Run from anywhere; CTest runs it.
#
# module      may include (besides itself)
#   sim/core    -                      (servesim_core, servesim_yaml)
#   costmodel   sim/core               (servesim_costmodel)
#   traces      sim/core               (servesim_traces)
#   policies    sim/core costmodel     (servesim_policies)
#   sim         sim/core costmodel policies   (servesim_sim: the engine drives their interfaces)
#   reports     sim/core sim           (servesim_reports)
#   configs     all of the above       (servesim_configs: the wiring)
#   sim/cli     everything             (the servesim program)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

declare -A allowed=(
  [sim/core]="sim/core"
  [costmodel]="costmodel sim/core"
  [traces]="traces sim/core"
  [policies]="policies sim/core costmodel"
  [sim]="sim sim/core costmodel policies"
  [reports]="reports sim/core sim"
  [configs]="configs sim/core sim costmodel policies traces reports"
)

bad=0
for module in "${!allowed[@]}"; do
  depth=(-maxdepth 1)
  [[ "$module" == traces ]] && depth=()  # traces/, traces/readers/, traces/generators/
  files=$(find "$module" "${depth[@]}" -type f \( -name '*.h' -o -name '*.cc' \) ! -name '*_test.cc' ! -name '*_bench.cc' \
          ! -name 'test_harness.h' ! -name 'test_files.h' ! -name '*test_util.h')
  for f in $files; do
    while IFS= read -r inc; do
      # The module an include belongs to: sim/core/x.h -> sim/core, sim/x.h -> sim, traces/x.h -> traces.
      target=${inc%/*}
      [[ "$target" == "$inc" ]] && continue          # not a project header
      [[ "$target" == traces/* ]] && target=traces
      ok=0
      for a in ${allowed[$module]}; do [[ "$target" == "$a" ]] && ok=1; done
      if ((!ok)); then echo "$f: includes $inc ($module may include: ${allowed[$module]})"; bad=1; fi
    done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "$f")
  done
done
if ((bad)); then exit 1; fi
echo "layering ok"
