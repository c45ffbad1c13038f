#!/usr/bin/env python3
"""What if the calibrated model priced elementwise launches at their queued cost?

docs/costmodel.md, "Small launches in a stream". An offline what-if, arithmetic on the
committed replays' iterations.csv (`servesim calibrate fidelity`): every elementwise part
of each iteration's calibrated prediction (norms, RoPE, KV append, SiLU·mul, embedding,
argmax) is scaled by queued(m) / (isolated(m) - launch excess), with queued from the
elementwise_queued rows of session 8 (seed 1), isolated from the profile's elementwise
rows, m the rows the kernel works on (tokens; logit rows for argmax), linear between
measured m and unchanged above 512 rows (not measured queued). Prints, per replay, the
per-iteration error (median / p90 of |predicted - measured| / measured, and the signed
median) as priced now and under the what-if.

  python3 tools/elementwise_queued_whatif.py      # from the repository root
"""
import bisect
import csv
import statistics

GPUS = [  # folder, launch excess (µs) of that profile (its identity's launch_excess)
    ("costmodel/profiles/h100-sxm", 1.716),
    ("costmodel/profiles/h200", 1.904),
]
REPLAYS = ["fidelity", "fidelity_default_1127", "fidelity_mooncake", "fidelity_azure_code"]
PARTS = {"attn_norm": "add_rmsnorm", "mlp_norm": "add_rmsnorm", "final_norm": "add_rmsnorm", "rope": "rope",
         "kv_write": "kv_append", "activation": "silu_mul", "embedding": "embedding", "sampling": "argmax"}


def rows_of(path, kernel):
    table = {}
    for r in csv.DictReader(line for line in open(path) if not line.startswith("#")):
        if r["kernel"] == kernel:
            table.setdefault(r["variant"], {})[int(r["m"])] = float(r["median_us"])
    return table


def at(table, m):
    ms = sorted(table)
    if m <= ms[0]:
        return table[ms[0]]
    if m > ms[-1]:
        return None
    i = bisect.bisect_left(ms, m)
    if ms[i] == m:
        return table[m]
    lo, hi = ms[i - 1], ms[i]
    return table[lo] + (table[hi] - table[lo]) * (m - lo) / (hi - lo)


def summary(errs):
    a = sorted(abs(e) for e in errs)
    return "%.2f / %.2f %% (signed %+.2f %%)" % (100 * statistics.median(a), 100 * a[int(0.9 * len(a))],
                                                 100 * statistics.median(errs))


def main():
    for folder, excess in GPUS:
        queued = rows_of(folder + "/logs/session8-elementwise-queued-1.csv", "elementwise_queued")
        isolated = rows_of(folder + "/profile.csv", "elementwise")
        for replay in REPLAYS:
            now, whatif = [], []
            for r in csv.DictReader(open(f"{folder}/{replay}/iterations.csv")):
                measured = float(r["measured_us"])
                predicted = float(r["predicted_calibrated_us"])  # the GPU share
                tokens = int(r["prefill_tokens"]) + int(r["decodes"])
                delta = 0.0
                for part, variant in PARTS.items():
                    us = float(r[f"calibrated_{part}_us"])
                    if us <= 0:
                        continue
                    m = tokens if variant != "argmax" else max(1, int(r["decodes"]) + (int(r["prefill_tokens"]) > 0))
                    q, iso = at(queued[variant], m), at(isolated[variant], m)
                    if q is None or iso is None:
                        continue
                    delta += us * (q / max(iso - excess, 0.1) - 1)
                now.append(predicted / measured - 1)
                whatif.append((predicted + delta) / measured - 1)
            print(f"{folder.split('/')[-1]:9s} {replay:22s} now {summary(now)}   queued elementwise {summary(whatif)}")


if __name__ == "__main__":
    main()
