#!/usr/bin/env python3
"""Run-to-run difference of two measured kernel profiles (servesim-kernels bench CSVs).

    python3 tools/profile_diff.py A.csv B.csv

Rows are matched on the profile's shape key (kernel, variant and every shape column,
params included); for each kernel family present in both, prints the signed median of
(B - A) / A of median_us, and the median, p90 and max of its absolute value. Rows present
in only one file are counted, not compared. Used to measure how far two measurements of
the same GPU model (two cards, two days) differ: the floor under any validated error
(docs/costmodel.md, "Repeatability of a profile"). Exit status 2 on a missing file or a
file without the profile's columns.
"""
import csv
import statistics
import sys

KEY = ("kernel", "variant", "batch", "ctx", "q_len", "prefix", "heads", "kv_heads", "head_dim",
       "page_size", "budget", "m", "n", "k", "params")


def load(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            missing = [c for c in KEY + ("median_us",) if c not in (reader.fieldnames or [])]
            if missing:
                sys.exit(f"profile_diff: {path}: not a kernel profile (no column {missing[0]})")
            rows = {}
            for row in reader:
                rows.setdefault(tuple(row[c] for c in KEY), float(row["median_us"]))
            return rows
    except OSError as e:
        print(f"profile_diff: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)


def p90(sorted_values):
    return sorted_values[int(0.9 * (len(sorted_values) - 1))]


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = load(sys.argv[1]), load(sys.argv[2])
    families = {}
    for key, tb in b.items():
        ta = a.get(key)
        if ta is not None and ta > 0:
            families.setdefault(key[0], []).append((tb - ta) / ta)
    print("family,rows,signed_median_pct,abs_median_pct,abs_p90_pct,abs_max_pct")
    everything = []
    for fam in sorted(families):
        d = families[fam]
        ab = sorted(abs(x) for x in d)
        everything += ab
        print(f"{fam},{len(d)},{100 * statistics.median(d):+.2f},{100 * statistics.median(ab):.2f},"
              f"{100 * p90(ab):.2f},{100 * ab[-1]:.2f}")
    if everything:
        everything.sort()
        print(f"all,{len(everything)},,{100 * statistics.median(everything):.2f},{100 * p90(everything):.2f},"
              f"{100 * everything[-1]:.2f}")
    only_a = sum(1 for k in a if k not in b)
    only_b = sum(1 for k in b if k not in a)
    print(f"# rows only in {sys.argv[1]}: {only_a}; only in {sys.argv[2]}: {only_b}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
