#!/usr/bin/env python3
# compare_public.py - our measured H100 kernel profile against AIConfigurator's public
# H100 SXM measurements (ai-dynamo/aiconfigurator, vLLM 0.14.0 kernels), shape by shape.
#
# What it does
#   Reads our profile (servesim-kernel-profile CSV, schema 1: '# key=value' provenance
#   lines, then a header row) and three files of the public corpus
#   (<measured>/aiconfigurator/h100_sxm/...):
#     gemm/vllm/0.14.0/gemm_perf.csv                       m,n,k,latency
#     attention/vllm/0.14.0/context_attention_perf.csv     batch_size,isl,num_heads,
#                                                          num_key_value_heads,head_dim,latency
#     attention/vllm/0.14.0/generation_attention_perf.csv  batch_size,step,num_heads,
#                                                          num_key_value_heads,head_dim,latency
#   and prints, for each family, how many of our shapes have an EXACT counterpart and the
#   ratio ours / theirs of the matched shapes (ratio > 1: ours slower).
#     GEMM     our gemm/cublaslt rows, key (m, n, k); summary by token band
#              (m <= 16, 17-256, 257-2048, > 2048) and a table of representative shapes.
#     prefill  our prefill rows with prefix 0 and ragged=0, per variant (fa2, fa2_m64,
#              fa2_m128, fa2_qreg, hopper_wgmma), key (batch, q_len = isl, heads,
#              kv_heads, head_dim).
#     decode   our decode/splitkv rows with ragged=0, key (batch, ctx = step, heads,
#              kv_heads, head_dim). The corpus' steps are 2^k - 1 (its collector passes
#              s - 1 as the sequence length, new token included), ours 2^k, so exact matches
#              are counted first; a second, separately labelled table pairs our ctx with
#              their step = ctx - 1 (their sequences attend one KV token fewer). Nothing is
#              interpolated.
#
# Contract
#   Units: our median_us is microseconds (median of L2-flushed, CUDA-event-timed samples);
#   AIConfigurator's latency is milliseconds per kernel call (mean over CUDA-graph
#   replays). The script converts theirs to microseconds and never rescales anything else.
#   Only exact key matches enter a ratio; unmatched shapes are counted and reported, never
#   estimated. The two engine stacks are never averaged together. Statistics: median and
#   the 10th/90th percentiles (statistics.quantiles, inclusive method) of the ratios.
#   Duplicate keys in the corpus (the context file repeats some MHA shapes) are reported;
#   a matched shape with duplicates would use the median of its duplicates and be flagged.
#   Reads only; writes nothing. Standard library only.
#
# Usage (from the repository root)
#   python3 kernels/scripts/compare_public.py [--profile costmodel/profiles/h100-sxm/profile.csv]
#       [--measured ../shared/data/measured] [--markdown]
# Exit status: 0 on success; 2 if a file is missing, a required column is absent, or a
# value does not parse (the message names the file and the column).

import argparse
import csv
import statistics
import sys
from pathlib import Path

AIC_GEMM = "aiconfigurator/h100_sxm/gemm/vllm/0.14.0/gemm_perf.csv"
AIC_CTX = "aiconfigurator/h100_sxm/attention/vllm/0.14.0/context_attention_perf.csv"
AIC_GEN = "aiconfigurator/h100_sxm/attention/vllm/0.14.0/generation_attention_perf.csv"

PROFILE_COLS = ["kernel", "variant", "batch", "ctx", "q_len", "prefix", "heads",
                "kv_heads", "head_dim", "m", "n", "k", "params", "median_us", "bytes", "flops"]
GEMM_COLS = ["m", "n", "k", "latency"]
CTX_COLS = ["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "latency"]
GEN_COLS = ["batch_size", "step", "num_heads", "num_key_value_heads", "head_dim", "latency"]

PREFILL_VARIANTS = ["fa2", "fa2_m64", "fa2_m128", "fa2_qreg", "hopper_wgmma"]
GEMM_BANDS = [("m <= 16", 1, 16), ("17-256", 17, 256), ("257-2048", 257, 2048),
              ("> 2048", 2049, 10 ** 12)]

# Representative GEMM shapes: (label, n, k, [m ...]); printed when present in both.
REPRESENTATIVE = [
    ("Llama-3-8B QKV", 6144, 4096, [1, 32, 256, 2048, 8192]),
    ("Llama-3-8B O", 4096, 4096, [1, 256, 8192]),
    ("Llama-3-8B gate+up", 28672, 4096, [1, 1024]),
    ("Llama-3-8B down", 4096, 14336, [1, 1024]),
    ("Llama-3-8B gate+up TP4", 7168, 4096, [1, 1024]),
    ("Llama-3-8B down TP2", 4096, 7168, [1, 1024]),
    ("Llama-3-70B QKV", 10240, 8192, [1, 4096]),
    ("Llama-3-70B O", 8192, 8192, [16, 8192]),
]


class InputError(Exception):
    pass


def die(msg):
    print(f"compare_public.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_csv(path, required, skip_comments=False):
    """Rows of a CSV as dicts; checks that every required column exists."""
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    provenance = {}
    with path.open(newline="") as f:
        lines = []
        for line in f:
            if skip_comments and line.startswith("#"):
                body = line[1:].strip()
                if "=" in body:
                    key, _, val = body.partition("=")
                    provenance[key.strip()] = val.strip()
                continue
            lines.append(line)
    reader = csv.DictReader(lines)
    if reader.fieldnames is None:
        raise InputError(f"{path}: no header row")
    missing = [c for c in required if c not in reader.fieldnames]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} "
                         f"(have: {', '.join(reader.fieldnames)})")
    return list(reader), provenance


def num(row, col, path, conv=float):
    try:
        return conv(row[col])
    except (TypeError, ValueError):
        raise InputError(f"{path}: column {col}: cannot parse {row.get(col)!r} in row {row}")


def params_of(row):
    out = {}
    for item in (row.get("params") or "").split(";"):
        if "=" in item:
            key, _, val = item.partition("=")
            out[key] = val
    return out


def stats(values):
    """(n, median, p10, p90, min, max) of a list of ratios."""
    vals = sorted(values)
    if not vals:
        return (0, None, None, None, None, None)
    if len(vals) == 1:
        v = vals[0]
        return (1, v, v, v, v, v)
    dec = statistics.quantiles(vals, n=10, method="inclusive")
    return (len(vals), statistics.median(vals), dec[0], dec[8], vals[0], vals[-1])


def index_corpus(rows, key_cols, path):
    """key -> list of latencies (us); also the number of duplicated keys."""
    idx = {}
    for r in rows:
        key = tuple(num(r, c, path, int) for c in key_cols)
        idx.setdefault(key, []).append(num(r, "latency", path) * 1000.0)
    dups = sum(1 for v in idx.values() if len(v) > 1)
    return idx, dups


def their_value(lat_list):
    return statistics.median(lat_list), len(lat_list) > 1


NONMONO_MARGIN = 1.2


def non_monotone(idx, keys):
    """Keys whose corpus latency is more than NONMONO_MARGIN x that of another row of the
    same corpus file whose every key field is >= (a shape with at least as much work in
    every dimension measured clearly faster). Plain fact about the corpus; such rows stay
    in the statistics and are also shown excluded."""
    lat = {k: their_value(v)[0] for k, v in idx.items()}
    flagged = set()
    for k in keys:
        mine = lat[k]
        for k2, t2 in lat.items():
            if k2 != k and t2 * NONMONO_MARGIN < mine and all(a >= b for a, b in zip(k2, k)):
                flagged.add(k)
                break
    return flagged


def band_cells(items):
    """items: list of (ratio, ours_us - theirs_us, flagged) -> table cells."""
    ratios = [r for r, _, _ in items]
    kept = [r for r, _, f in items if not f]
    diffs = [d for _, d, _ in items]
    n, med, p10, p90, lo, hi = stats(ratios)
    nf = len(ratios) - len(kept)
    return [str(n), f2(med), f2(p10), f2(p90), f2(lo), f2(hi),
            f"{statistics.median(diffs):+.1f}" if diffs else "",
            str(nf), f2(stats(kept)[1]) if nf else f2(med)]


BAND_HDR = ["matched", "median", "p10", "p90", "min", "max", "median ours-AIC us",
            "non-monotone AIC rows", "median without them"]


class Out:
    def __init__(self, markdown):
        self.md = markdown

    def heading(self, text, level=3):
        if self.md:
            print(f"\n{'#' * level} {text}\n")
        else:
            print(f"\n== {text} ==")

    def para(self, text):
        print(text if not self.md else text + "\n")

    def table(self, header, rows):
        rows = [[("" if c is None else str(c)) for c in r] for r in rows]
        if self.md:
            print("| " + " | ".join(header) + " |")
            print("|" + "|".join("---" for _ in header) + "|")
            for r in rows:
                print("| " + " | ".join(r) + " |")
            print()
        else:
            widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                      for i, h in enumerate(header)]
            print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
            for r in rows:
                print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def f2(x):
    return "" if x is None else f"{x:.2f}"


def fus(x):
    if x is None:
        return ""
    return f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def stat_cells(values):
    n, med, p10, p90, lo, hi = stats(values)
    return [str(n), f2(med), f2(p10), f2(p90), f2(lo), f2(hi)]


STAT_HDR = ["matched", "median", "p10", "p90", "min", "max"]


def corpus_commit(measured):
    """Commit of the aiconfigurator rows in the corpus README's provenance table."""
    readme = measured / "README.md"
    if not readme.is_file():
        return "unknown (README.md not found)"
    commits = set()
    for line in readme.read_text().splitlines():
        if line.startswith("| aiconfigurator/h100_sxm/") and ("/vllm/0.14.0/" in line):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) >= 4:
                commits.add(cells[3])
    return ", ".join(sorted(commits)) if commits else "unknown (not in README table)"


def compare_gemm(out, prof, prof_path, gemm_rows, gemm_path):
    theirs, dups = index_corpus(gemm_rows, ["m", "n", "k"], gemm_path)
    ours = {}      # (m, n, k) -> (median_us, labels, probe)
    work = {}      # (m, n, k) -> (bytes, flops) from our profile (same shape, same work)
    for r in prof:
        if r["kernel"] != "gemm" or r["variant"] != "cublaslt":
            continue
        key = (num(r, "m", prof_path, int), num(r, "n", prof_path, int),
               num(r, "k", prof_path, int))
        p = params_of(r)
        label = f"{p.get('model', '?')} {p.get('layer', '?')} tp{p.get('tp', '?')}"
        us = num(r, "median_us", prof_path)
        if key in ours:
            prev_us, labels, probe = ours[key]
            if prev_us != us:
                raise InputError(f"{prof_path}: gemm {key} has two different medians "
                                 f"({prev_us} and {us})")
            labels.append(label)
        else:
            ours[key] = (us, [label], p.get("probe") == "1")
            work[key] = (num(r, "bytes", prof_path), num(r, "flops", prof_path))
    out.heading("GEMM (cuBLASLt bf16, Y = X W^T) vs AIConfigurator gemm_perf (vLLM 0.14.0)")
    matched = {k: v for k, v in ours.items() if k in theirs}
    nk_ours = {(n, k) for (_, n, k) in ours}
    nk_both = {(n, k) for (_, n, k) in matched}
    m_ours = {m for (m, _, _) in ours}
    m_theirs = {m for (m, _, _) in theirs}
    out.para(f"Our distinct (m, n, k): {len(ours)} ({len(nk_ours)} (n, k) x {len(m_ours)} m). "
             f"Corpus shapes: {len(theirs)}. Exact matches: {len(matched)} "
             f"({len(nk_both)} (n, k) pairs x m in "
             f"{{{', '.join(str(m) for m in sorted(m_ours & m_theirs))}}}); "
             f"ours without counterpart: {len(ours) - len(matched)} "
             f"({len(nk_ours - nk_both)} of our (n, k) pairs are absent from the corpus; "
             f"{len(m_ours - m_theirs)} of our m values are not on its m grid). "
             f"Duplicate corpus keys: {dups}.")
    flagged = non_monotone(theirs, matched)
    items = {}
    for key, v in matched.items():
        t = their_value(theirs[key])[0]
        items[key] = (v[0] / t, v[0] - t, key in flagged)
    rows = []
    for name, lo, hi in GEMM_BANDS:
        rows.append([name] + band_cells([it for key, it in items.items() if lo <= key[0] <= hi]))
    rows.append(["all"] + band_cells(list(items.values())))
    allv = [it[0] for it in items.values()]
    out.para("Ratio ours / theirs by token band (m = tokens). Non-monotone AIC rows: corpus "
             f"rows more than {NONMONO_MARGIN}x slower than a corpus row with m, n and k all >= "
             "(kept in the statistics; the last column drops them):")
    out.table(["m band"] + BAND_HDR, rows)
    if flagged:
        out.para("Non-monotone corpus rows among the matches (m, n, k: ours us / AIC us): "
                 + "; ".join(f"{k[0]}, {k[1]}, {k[2]}: {fus(matched[k][0])} / "
                             f"{fus(their_value(theirs[k])[0])}"
                             for k in sorted(flagged)) + ".")

    # Per (n, k): median ratio in each band, to show which shapes carry the gap.
    per_nk = []
    for n, k in sorted(nk_both, key=lambda x: (x[1], x[0])):
        cells = [f"{n} x {k}"]
        labels = set()
        for name, lo, hi in GEMM_BANDS:
            vals = [v[0] / their_value(theirs[key])[0] for key, v in matched.items()
                    if key[1] == n and key[2] == k and lo <= key[0] <= hi]
            cells.append(f2(statistics.median(vals)) if vals else "")
        for key, v in matched.items():
            if key[1] == n and key[2] == k:
                labels.update(v[1])
        cells.append(f"{2 * n * k / 2 ** 20:.0f}")
        cells.append("; ".join(sorted(labels)))
        per_nk.append(cells)
    out.para("Median ratio per (n, k) and band (W MiB: one bf16 weight; AIConfigurator "
             "times 6 weight copies in turn, ours flushes L2 before every sample):")
    out.table(["n x k"] + [b[0] for b in GEMM_BANDS] + ["W MiB", "our labels"], per_nk)

    rep = []
    absent = []
    for label, n, k, ms in REPRESENTATIVE:
        for m in ms:
            key = (m, n, k)
            if key in ours and key in theirs:
                t, dup = their_value(theirs[key])
                o = ours[key][0]
                b, fl = work[key]
                rep.append([label, m, n, k, fus(o), fus(t) + (" (dup)" if dup else ""),
                            f2(o / t), f"{b / o / 1e3:.0f} / {b / t / 1e3:.0f}",
                            f"{fl / o / 1e6:.0f} / {fl / t / 1e6:.0f}"])
            elif key in ours:
                absent.append(f"{label} (n={n}, k={k}, m={m})")
    out.para("Representative shapes (us; ratio ours / theirs; GB/s and TFLOP/s are our "
             "profile's bytes and flops of the shape divided by each time):")
    out.table(["shape", "m", "n", "k", "ours us", "AIC us", "ratio", "GB/s ours / AIC",
               "TFLOP/s ours / AIC"], rep)
    if absent:
        out.para("Not in the corpus (no exact counterpart, not compared): " + "; ".join(absent) + ".")
    # Our ceiling GEMM (same LtGemm call, family `ceilings`) at a corpus shape, for reference.
    ceil = []
    for r in prof:
        if r["kernel"] == "ceiling" and r["variant"] == "gemm_bf16":
            key = (num(r, "m", prof_path, int), num(r, "n", prof_path, int),
                   num(r, "k", prof_path, int))
            c_us = num(r, "median_us", prof_path)
            if key in theirs:
                t = their_value(theirs[key])[0]
                g = ours.get(key)
                ceil.append(f"{key[0]}^3: ceiling {fus(c_us)} us, gemm family "
                            f"{fus(g[0]) if g else 'not measured'} us, AIC {fus(t)} us "
                            f"(ceiling / AIC {f2(c_us / t)})")
    if ceil:
        out.para("Our own ceiling row (ceiling/gemm_bf16, the same cuBLASLt wrapper, another "
                 "process and input data) at a shape the corpus has: " + "; ".join(ceil) + ".")
    return allv


def compare_prefill(out, prof, prof_path, ctx_rows, ctx_path):
    theirs, dups = index_corpus(
        ctx_rows, ["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"], ctx_path)
    out.heading("Prefill attention (causal, no prior KV) vs AIConfigurator context_attention")
    per_var = {}
    other = {}
    flops_of = {}
    for r in prof:
        if r["kernel"] != "prefill":
            continue
        v = r["variant"]
        p = params_of(r)
        if v not in PREFILL_VARIANTS:
            other[v] = other.get(v, 0) + 1
            continue
        d = per_var.setdefault(v, {"rows": 0, "prefix": 0, "ragged": 0, "shapes": {}})
        d["rows"] += 1
        if num(r, "prefix", prof_path, int) != 0:
            d["prefix"] += 1
            continue
        if p.get("ragged", "0") != "0":
            d["ragged"] += 1
            continue
        key = (num(r, "batch", prof_path, int), num(r, "q_len", prof_path, int),
               num(r, "heads", prof_path, int), num(r, "kv_heads", prof_path, int),
               num(r, "head_dim", prof_path, int))
        d["shapes"][key] = num(r, "median_us", prof_path)
        flops_of[key] = num(r, "flops", prof_path)
    isl_max = max(k[1] for k in theirs) if theirs else 0
    out.para(f"Corpus shapes: {len(theirs)} (isl up to {isl_max}, head_dim "
             f"{sorted({k[4] for k in theirs})}); duplicate corpus keys: {dups}. Their "
             "num_heads / num_key_value_heads are the heads one GPU computes (the collector "
             "builds a single-GPU attention layer with exactly these counts), so 8/1 is "
             "Llama-3-70B's TP8 share, as in our rows.")
    summary = []
    allkeys = set()
    flagged = False
    nonmono = non_monotone(theirs, [k for d in per_var.values() for k in d["shapes"]
                                    if k in theirs])
    for v in PREFILL_VARIANTS:
        if v not in per_var:
            summary.append([v, 0, "", "", "", "", "", "", "", "", "no rows in profile"])
            continue
        d = per_var[v]
        m = {k: u for k, u in d["shapes"].items() if k in theirs}
        unmatched = sorted(set(d["shapes"]) - set(m))
        allkeys.update(m)
        ratios = []
        for k, u in m.items():
            t, dup = their_value(theirs[k])
            flagged |= dup
            ratios.append(u / t)
        why = []
        if unmatched:
            big = [k for k in unmatched if k[1] > isl_max]
            if big:
                why.append(f"{len(big)} with q_len > {isl_max}")
            rest = len(unmatched) - len(big)
            if rest:
                why.append(f"{rest} other")
        kept = [u / their_value(theirs[k])[0] for k, u in m.items() if k not in nonmono]
        summary.append([v, d["rows"], d["prefix"] + d["ragged"], len(d["shapes"]),
                        len(unmatched)] + stat_cells(ratios)[:4]
                       + [str(len(ratios) - len(kept)), f2(stats(kept)[1]), "; ".join(why)])
    out.para("Per variant (rows: all prefill rows of the variant; chunk/varlen: rows with a "
             "prefix or ragged batch, which the corpus has no counterpart for):")
    out.table(["variant", "rows", "chunk/varlen", "prompt shapes", "no counterpart",
               "matched", "median", "p10", "p90", "non-monotone AIC rows",
               "median without them", "unmatched because"], summary)
    if other:
        out.para("Other prefill variants in the profile (not compared): "
                 + ", ".join(f"{k} ({n})" for k, n in sorted(other.items())))
    # Matched shapes, all variants side by side.
    present = [v for v in PREFILL_VARIANTS if v in per_var]
    rows = []
    for key in sorted(allkeys, key=lambda k: (k[2], k[3], k[0], k[1])):
        b, q, h, kv, hd = key
        t, dup = their_value(theirs[key])
        cells = [f"{h}/{kv}", b, q, fus(t) + (" (dup)" if dup else "")
                 + (" *" if key in nonmono else ""), f"{flops_of[key] / t / 1e6:.0f}"]
        for v in present:
            u = per_var[v]["shapes"].get(key)
            cells.append("" if u is None else f"{fus(u)} ({f2(u / t)})")
        rows.append(cells)
    out.para("Matched shapes: AIConfigurator us (* = non-monotone: more than "
             f"{NONMONO_MARGIN}x slower than a corpus row with batch, isl, heads and KV heads "
             "all >=) and its TFLOP/s (our profile's causal flops of the shape / its time), "
             "then ours us (ratio ours / theirs) per variant; empty = variant not measured "
             "at that shape:")
    out.table(["heads/kv", "batch", "isl", "AIC us", "AIC TFLOP/s"] + present, rows)
    if flagged:
        out.para("(dup): the corpus has several rows for this key; their median is used.")


def compare_decode(out, prof, prof_path, gen_rows, gen_path):
    theirs, dups = index_corpus(
        gen_rows, ["batch_size", "step", "num_heads", "num_key_value_heads", "head_dim"], gen_path)
    out.heading("Decode attention (paged, one token per sequence) vs AIConfigurator generation_attention")
    ours = {}
    bytes_of = {}
    ragged = 0
    for r in prof:
        if r["kernel"] != "decode" or r["variant"] != "splitkv":
            continue
        if params_of(r).get("ragged", "0") != "0":
            ragged += 1
            continue
        key = (num(r, "batch", prof_path, int), num(r, "ctx", prof_path, int),
               num(r, "heads", prof_path, int), num(r, "kv_heads", prof_path, int),
               num(r, "head_dim", prof_path, int))
        ours[key] = num(r, "median_us", prof_path)
        bytes_of[key] = num(r, "bytes", prof_path)
    exact = {k: u for k, u in ours.items() if k in theirs}
    near = {}
    for k, u in ours.items():
        k1 = (k[0], k[1] - 1, k[2], k[3], k[4])
        if k not in exact and k1 in theirs:
            near[k] = (u, k1)
    steps = sorted({k[1] for k in theirs})
    kvh = sorted({k[3] for k in theirs})
    out.para(f"Our uniform decode shapes: {len(ours)} (plus {ragged} ragged batches, not "
             f"compared). Corpus shapes: {len(theirs)}; duplicate corpus keys: {dups}; its "
             f"steps: {', '.join(str(s) for s in steps)}; its KV heads: {kvh}. "
             f"Exact matches (ctx = step): {len(exact)}. Our shapes without an exact "
             f"counterpart: {len(ours) - len(exact)}.")
    if exact:
        rows = []
        for k in sorted(exact):
            t, _ = their_value(theirs[k])
            rows.append([f"{k[2]}/{k[3]}", k[0], k[1], fus(exact[k]), fus(t), f2(exact[k] / t)])
        out.table(["heads/kv", "batch", "ctx", "ours us", "AIC us", "ratio"], rows)
    neither = [k for k in ours if k not in exact and k not in near]
    max_step = {}
    for k in theirs:
        g = (k[0], k[2], k[3], k[4])
        max_step[g] = max(max_step.get(g, 0), k[1])
    mha = sum(1 for k in neither if k[3] not in kvh)
    longer = sum(1 for k in neither if k[3] in kvh
                 and max_step.get((k[0], k[2], k[3], k[4]), 0) < k[1] - 1)
    rest = len(neither) - mha - longer
    out.para(f"Near counterparts, step = ctx - 1 (their sequence attends one KV token fewer "
             f"than ours: <= 0.2% less KV at ctx >= 512; NOT an exact match, reported "
             f"separately): {len(near)}; ours with neither: {len(neither)} ({mha} with more "
             f"than {max(kvh)} KV heads (MHA), which the corpus' decode file does not have; "
             f"{longer} longer than the corpus' longest step for that batch and head shape "
             f"(its grid shrinks the context as batch x heads grows)"
             + (f"; {rest} other" if rest else "") + ").")
    nonmono = non_monotone(theirs, [k1 for (_, k1) in near.values()])
    by_heads = {}
    for k, (u, k1) in near.items():
        t = their_value(theirs[k1])[0]
        by_heads.setdefault((k[2], k[3]), []).append((u / t, u - t, k1 in nonmono))
    rows = [[f"{h}/{kv}"] + band_cells(v) for (h, kv), v in
            sorted(by_heads.items(), key=lambda x: (-x[0][0], -x[0][1]))]
    rows.append(["all"] + band_cells([it for v in by_heads.values() for it in v]))
    out.para("Ratio ours / theirs (step = ctx - 1) by head shape (non-monotone AIC rows: more "
             f"than {NONMONO_MARGIN}x slower than a corpus row with batch, step, heads and KV "
             "heads all >=):")
    out.table(["heads/kv"] + BAND_HDR, rows)
    bands = [("ctx <= 2K", 0, 2048), ("2K < ctx <= 16K", 2049, 16384),
             ("ctx > 16K", 16385, 10 ** 12)]
    bb = [("batch 1-8", 1, 8), ("batch 16-64", 16, 64), ("batch >= 128", 128, 10 ** 9)]
    rows = []
    for bname, blo, bhi in bb:
        cells = [bname]
        for _, clo, chi in bands:
            vals = [u / their_value(theirs[k1])[0] for k, (u, k1) in near.items()
                    if blo <= k[0] <= bhi and clo <= k[1] <= chi]
            n, med, p10, p90, _, _ = stats(vals)
            cells.append(f"{f2(med)} (n={n})" if n else "")
        rows.append(cells)
    out.para("Median ratio (step = ctx - 1) by batch and context, all head shapes:")
    out.table(["batch"] + [b[0] for b in bands], rows)
    rows = []
    for k in sorted(near, key=lambda k: (-k[2], -k[3], k[0], k[1])):
        u, k1 = near[k]
        if k[1] in (1024, 8192, 32768, 131072) and k[0] in (1, 8, 32, 128, 256):
            t, _ = their_value(theirs[k1])
            b = bytes_of[k]
            rows.append([f"{k[2]}/{k[3]}", k[0], k[1], k1[1], fus(u),
                         fus(t) + (" *" if k1 in nonmono else ""), f2(u / t),
                         f"{b / 2 ** 20:.0f}", f"{b / u / 1e3:.0f} / {b / t / 1e3:.0f}"])
    out.para("Selected shapes (us; KV MiB and GB/s from our profile's bytes of our shape, "
             "divided by each time; * = non-monotone AIC row):")
    out.table(["heads/kv", "batch", "our ctx", "their step", "ours us", "AIC us", "ratio",
               "MiB", "GB/s ours / AIC"], rows)


def main():
    ap = argparse.ArgumentParser(
        description="Compare our measured kernel profile with AIConfigurator's public H100 "
                    "SXM measurements (vLLM 0.14.0) on exactly matching shapes.")
    ap.add_argument("--profile", default="costmodel/profiles/h100-sxm/profile.csv",
                    help="our profile CSV (default: %(default)s)")
    ap.add_argument("--measured", default="../shared/data/measured",
                    help="root of the public measured corpus (default: %(default)s)")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    args = ap.parse_args()
    prof_path = Path(args.profile)
    measured = Path(args.measured)
    try:
        prof, prov = read_csv(prof_path, PROFILE_COLS, skip_comments=True)
        gemm_rows, _ = read_csv(measured / AIC_GEMM, GEMM_COLS)
        ctx_rows, _ = read_csv(measured / AIC_CTX, CTX_COLS)
        gen_rows, _ = read_csv(measured / AIC_GEN, GEN_COLS)
        out = Out(args.markdown)
        out.para(f"Ours: {prof_path} - gpu {prov.get('gpu', '?')}, driver "
                 f"{prov.get('nvidia_driver', '?')} (CUDA {prov.get('driver_cuda_version', '?')}), "
                 f"cuBLASLt {prov.get('cublaslt_version', '?')}, git_commit "
                 f"{prov.get('git_commit', '?')}, {prov.get('date_utc', '?')}, mode "
                 f"{prov.get('mode', '?')}; median_us of L2-flushed samples.")
        out.para(f"Theirs: AIConfigurator (ai-dynamo/aiconfigurator, commit "
                 f"{corpus_commit(measured)}), h100_sxm, vLLM 0.14.0 kernels, BF16; latency "
                 f"ms per call (shown here in us), mean over CUDA-graph replays.")
        compare_gemm(out, prof, prof_path, gemm_rows, measured / AIC_GEMM)
        compare_prefill(out, prof, prof_path, ctx_rows, measured / AIC_CTX)
        compare_decode(out, prof, prof_path, gen_rows, measured / AIC_GEN)
    except InputError as e:
        die(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
