#!/usr/bin/env bash
# Sourced by the README's two commands: installs missing Debian 12 packages
# (we run as root), configures and builds servesim into ./build.
# CUDA kernels are built when nvcc exists (/usr/local/cuda/bin/nvcc or PATH);
# set SERVESIM_CUDA=OFF in the environment to skip them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(cmake ninja-build g++ git libyaml-cpp-dev libfmt-dev libeigen3-dev doctest-dev libcli11-dev
          libboost-graph-dev gnuplot-nox clang libclang-rt-14-dev  # clang: fuzz targets (docs/fuzzing.md)
          libbenchmark-dev   # Google Benchmark: servesim_pricing_bench (docs/performance.md)
          libsimdjson-dev    # simdjson On Demand: the JSON Lines trace readers
          chromium)          # headless browser: the HTML report's rendering test (docs/reports.md)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "servesim setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cuda_flag=()
if [ -n "${SERVESIM_CUDA:-}" ]; then
  cuda_flag=(-DSERVESIM_CUDA="${SERVESIM_CUDA}")
fi
# RelWithDebInfo with line tables only (-g1; nvcc passes it to the host compiler): the
# same machine code as -g (debug options do not change code generation), backtraces
# and profiles keep file:line, and it compiles ~22% faster (CI time, docs/ci.md).
# For full debug info configure a build folder of your own without these two flags.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda_flag[@]}" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DCMAKE_CUDA_FLAGS_RELWITHDEBINFO="-O2 -Xcompiler=-g1 -DNDEBUG" --no-warn-unused-cli >&2
cmake --build build -j "$(nproc)" >&2
