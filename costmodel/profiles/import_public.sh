#!/usr/bin/env bash
# Rebuilds the imported profiles under costmodel/profiles/<hardware>/<stack>/ from
# the public measured corpus (../shared/data/measured; its README holds sources,
# commits and units). Usage: costmodel/profiles/import_public.sh [SERVESIM_BIN]
# Each profile is one (GPU, engine stack) pair; a part the stack lacks is borrowed
# from another stack of the same GPU and marked so (docs/costmodel.md, "Engine stacks").
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build/servesim}
M=../shared/data/measured
P=costmodel/profiles
imp() { "$BIN" calibrate import --provenance "$M/README.md" "$@"; }

# A100: vLLM 0.14 (AIConfigurator, BF16); elementwise ops borrowed from Vidur (the
# AIConfigurator tables have none).
imp -o $P/a100-80gb/vllm-0.14/profile.csv --gpu "NVIDIA A100-SXM4-80GB" --gpu-sms 108 --stack vllm-0.14 \
  --stack-description "vLLM 0.14.0 kernels + NCCL 2.27.3; BF16; NVIDIA AIConfigurator tables" \
  $M/aiconfigurator/a100_sxm --borrow $M/vidur/compute/a100 --borrowed-stack vidur-2024 --borrow-kernels elementwise
# A100: Vidur / Sarathi-Serve (PyTorch, FP16, 2024): per-op tables of six models, DGX
# all-reduce, the legacy FlashAttention table (Llama-2-70B at TP 2) and CPU overheads.
imp -o $P/a100-80gb/vidur-2024/profile.csv --gpu "NVIDIA A100 80GB" --gpu-sms 108 --stack vidur-2024 \
  --stack-description "Vidur profiles (Sarathi-Serve branch vidur; PyTorch; FP16)" \
  $M/vidur/compute/a100 $M/vidur/network/a100_dgx/all_reduce.csv $M/vidur_legacy/a100/attention.csv \
  $M/vidur_legacy/a100/cpu_overheads.csv
# H100: vLLM 0.14 (AIConfigurator); elementwise ops borrowed from Vidur's H100 tables.
imp -o $P/h100-sxm/vllm-0.14/profile.csv --gpu "NVIDIA H100 80GB HBM3" --gpu-sms 132 --stack vllm-0.14 \
  --stack-description "vLLM 0.14.0 kernels + NCCL 2.27.3; BF16; NVIDIA AIConfigurator tables" \
  $M/aiconfigurator/h100_sxm --borrow $M/vidur/compute/h100 --borrowed-stack vidur-2024 --borrow-kernels elementwise
# H100: Vidur (no attention table for H100: borrowed from vLLM 0.14's).
imp -o $P/h100-sxm/vidur-2024/profile.csv --gpu "NVIDIA H100 80GB" --gpu-sms 132 --stack vidur-2024 \
  --stack-description "Vidur profiles (Sarathi-Serve branch vidur; PyTorch; FP16)" \
  $M/vidur/compute/h100 $M/vidur/network/h100_dgx/all_reduce.csv \
  --borrow $M/aiconfigurator/h100_sxm/attention --borrowed-stack vllm-0.14 --borrow-kernels decode,prefill
