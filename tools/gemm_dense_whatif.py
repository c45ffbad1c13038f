#!/usr/bin/env python3
"""What would gemm_dense rows change on a GPU that has none? An offline what-if.

docs/costmodel.md, "GEMM time is not monotone in tokens". Takes a profile that has
gemm_dense rows (params dense=1; Llama-3-8B TP 1) and iterations.csv files of
`servesim calibrate fidelity` priced by a model without them. For every prefill-heavy
iteration of 129-2,048 tokens (M = prefill tokens + decodes), each of the qkv, o,
gate_up and down parts of the calibrated prediction is scaled by the dense profile's
ratio dense(M) / grid(M) for that layer (both linear between measured M: the grid rows
alone, and grid plus dense rows). Prints the signed and absolute median error of those
iterations as priced and under the what-if. Used with the H100's rows on the H200's
replays it borrows one GPU's cuBLASLt choices for another: evidence of what to measure,
never a price.

  python3 tools/gemm_dense_whatif.py costmodel/profiles/h100-sxm/profile.csv \\
      costmodel/profiles/h200/fidelity/iterations.csv ...
"""
import bisect
import csv
import statistics
import sys

LAYERS = {"qkv": (6144, 4096), "o": (4096, 4096), "gate_up": (28672, 4096), "down": (4096, 14336)}


def gemm_rows(path):
    shapes = {}
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        if r["kernel"] == "gemm" and r["params"].startswith("model=llama3-8b;") and ";tp=1" in r["params"]:
            dense = "dense=1" in r["params"]
            shapes.setdefault((int(r["n"]), int(r["k"])), {})[int(r["m"])] = (float(r["median_us"]), dense)
    return shapes


def linear(points, m):
    ms = sorted(points)
    if m <= ms[0]:
        return points[ms[0]]
    if m >= ms[-1]:
        return points[ms[-1]] * m / ms[-1]
    i = bisect.bisect_left(ms, m)
    if ms[i] == m:
        return points[m]
    lo, hi = ms[i - 1], ms[i]
    return points[lo] + (points[hi] - points[lo]) * (m - lo) / (hi - lo)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    shapes = gemm_rows(sys.argv[1])
    if not any(d for pts in shapes.values() for _, d in pts.values()):
        sys.exit(f"{sys.argv[1]}: no gemm_dense rows (params dense=1)")

    def ratio(layer, m):
        pts = shapes[LAYERS[layer]]
        grid = {k: t for k, (t, dense) in pts.items() if not dense}
        return linear({k: t for k, (t, _) in pts.items()}, m) / linear(grid, m)

    for path in sys.argv[2:]:
        now, whatif = [], []
        for r in csv.DictReader(open(path)):
            if r["kind"] != "prefill_heavy" or r["batch_tokens"] not in ("129-512", "513-2048"):
                continue
            m = int(r["prefill_tokens"]) + int(r["decodes"])
            predicted, measured = float(r["predicted_calibrated_us"]), float(r["measured_us"])
            delta = sum(float(r[f"calibrated_{layer}_us"]) * (ratio(layer, m) - 1) for layer in LAYERS)
            now.append(predicted / measured - 1)
            whatif.append((predicted + delta) / measured - 1)
        if not now:
            print(f"{path}: no prefill-heavy iterations of 129-2,048 tokens")
            continue

        def fmt(v):
            return "signed %+.2f %%, |median| %.2f %%" % (100 * statistics.median(v),
                                                         100 * statistics.median(abs(e) for e in v))
        print(f"{path}: {len(now)} iterations; now {fmt(now)}; with the dense/grid ratio {fmt(whatif)}")


if __name__ == "__main__":
    main()
