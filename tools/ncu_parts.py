#!/usr/bin/env python3
"""Split an ncu kernel-duration CSV of `servesim-kernels replay` into the cost model's parts.

docs/costmodel.md, "GEMM time is not monotone in tokens". Input: the CSV that
  ncu --clock-control none --metrics gpu__time_duration.sum --csv --cache-control none \\
      build-gpu/servesim-kernels replay RECORD.csv --model llama3-8b --warmup 1 --reps 1 -o r.csv > ncu.csv
writes (Llama-3-8B, one GPU). Every forward pass starts at its embedding kernel; inside a
pass the k-th fused add+RMSNorm opens layer k's attention half (odd k) or MLP half (even
k), the 65th is the final norm, and the cuBLASLt kernels after each norm are, in order,
qkv then o (attention half), gate_up then down (MLP half), lm_head (after the final norm).
Prints one line per forward pass: µs per part and their sum, to read beside the
calibrated_<part>_us columns of `servesim calibrate fidelity`'s iterations.csv.

  python3 tools/ncu_parts.py costmodel/profiles/h100-sxm/logs/session8-ncu.csv
"""
import csv
import sys
from collections import defaultdict


def passes(path):
    rows = list(csv.DictReader(line for line in open(path) if line.startswith('"')))
    out, cur = [], None
    for r in rows:
        name = r["Kernel Name"].split("(")[0]
        if "fill_uniform" in name:  # weight initialisation, before the first pass
            continue
        if "embedding_kernel" in name:
            cur = []
            out.append(cur)
        if cur is not None:
            cur.append((name, float(r["Metric Value"].replace(",", "")) / 1000.0))
    return out


# Kernels other than norms and GEMMs: the first name fragment found decides the part.
OTHER_PARTS = [("embedding", "embedding"), ("rope", "rope"), ("kv_append", "kv_write"),
               ("prefill", "attention_prefill"), ("decode_", "attention_decode"), ("silu", "activation"),
               ("argmax", "sampling")]
# The GEMMs after a norm, in order, per half of a layer; the final norm's GEMM is the LM head.
GEMMS = {"attn": ["qkv", "o"], "mlp": ["gate_up", "down"], "final": ["lm_head"]}


def split(kernels):
    parts = defaultdict(float)
    norms, half, gemm_index = 0, None, 0
    for name, us in kernels:
        if "add_rmsnorm" in name:
            norms += 1
            parts["norms"] += us
            half, gemm_index = ("final" if norms >= 65 else ("attn" if norms % 2 else "mlp")), 0
        elif "nvjet" in name or "gemm" in name.lower() or "cutlass" in name:
            names = GEMMS.get(half, [])
            parts[names[min(gemm_index, len(names) - 1)] if names else "gemm_other"] += us
            gemm_index += 1
        else:
            part = next((p for fragment, p in OTHER_PARTS if fragment in name), "other")
            parts[part] += us
    return parts


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for i, p in enumerate(passes(sys.argv[1])):
        parts = split(p)
        print(f"pass {i}: " + " ".join(f"{k}={v:.0f}" for k, v in parts.items()) + f" sum={sum(parts.values()):.0f} us")


if __name__ == "__main__":
    main()
