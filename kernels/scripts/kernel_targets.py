#!/usr/bin/env python3
"""Kernel targets of issue 29, item 3, read off a measured profile (no GPU needed).

Usage, from the repository root:
    python3 kernels/scripts/kernel_targets.py [--profile costmodel/profiles/h100-sxm/profile.csv]

Prints one markdown row per target: what is compared, the measured numbers (rows of the
profile, by kernel/variant/shape), the target and whether it is met. Contract: every
number printed is a profile row's median_us (or a ratio of two such medians, or the
profile's own gbps/tflops columns); a target whose rows are missing prints "not
measured", never an estimate. Exits 2 when the profile cannot be read.
"""
import argparse
import csv
import sys


def load(path):
    try:
        with open(path) as f:
            lines = [l for l in f if not l.startswith('#')]
    except OSError as e:
        sys.exit(f"kernel_targets: cannot read {path}: {e}")
    return list(csv.DictReader(lines))


def find(rows, **want):
    out = []
    for r in rows:
        ok = True
        for k, v in want.items():
            if k == 'params_has':
                ok = ok and all(p in r['params'].split(';') for p in v)
            elif r.get(k) != str(v):
                ok = False
        if ok:
            out.append(r)
    return out


def one(rows, **want):
    got = find(rows, **want)
    return got[0] if got else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--profile', default='costmodel/profiles/h100-sxm/profile.csv')
    a = ap.parse_args()
    rows = load(a.profile)
    out = ["| target | measured | goal | met |", "|---|---|---|---|"]

    def add(target, measured, goal, met):
        out.append(f"| {target} | {measured} | {goal} | {met} |")

    copy = one(rows, kernel='ceiling', variant='copy_memcpy')
    dec = [r for r in find(rows, kernel='decode', variant='splitkv') if int(r['batch']) >= 128]
    if copy and dec:
        best = max(dec, key=lambda r: float(r['gbps']))
        frac = float(best['gbps']) / float(copy['gbps'])
        add("dense decode, large batch, vs measured copy bandwidth",
            f"{float(best['gbps']):.0f} GB/s (batch {best['batch']}, ctx {best['ctx']}, {best['heads']}/{best['kv_heads']} heads) / "
            f"copy {float(copy['gbps']):.0f} GB/s = {frac:.1%}", ">= 85%", "yes" if frac >= 0.85 else "no")
    else:
        add("dense decode vs copy bandwidth", "not measured", ">= 85%", "-")
    for variant, goal, name in (('hopper_wgmma', 450, 'Hopper prefill (wgmma)'), ('fa2', 300, 'mma.sync prefill (fa2)')):
        r = one(rows, kernel='prefill', variant=variant, batch='1', q_len='8192', prefix='0', heads='32', kv_heads='8',
                head_dim='128')
        if r:
            t = float(r['tflops'])
            add(f"{name}, causal, 8K, hd 128, 32/8 heads", f"{t:.0f} TFLOP/s ({float(r['median_us']):.0f} us)",
                f">= {goal} TFLOP/s", "yes" if t >= goal else "no")
        else:
            add(f"{name}, causal 8K", "not measured", f">= {goal} TFLOP/s", "-")
    for heads, kvh, model, goal in (('32', '8', 'llama3-8b', 6), ('32', '32', 'llama2-7b', 7)):
        dense = one(rows, kernel='quest_dense_decode', batch='1', ctx='32768', heads=heads, kv_heads=kvh)
        quest = [r for r in find(rows, batch='1', ctx='32768', heads=heads, kv_heads=kvh, budget='2048')
                 if r['kernel'] == 'quest_e2e']
        if dense and quest:
            best = min(quest, key=lambda r: float(r['median_us']))
            sp = float(dense['median_us']) / float(best['median_us'])
            kind = 'GQA' if heads != kvh else 'MHA'
            add(f"Quest vs dense decode, batch 1, 32K, budget 2048, {kind} ({model})",
                f"{sp:.2f}x (dense {float(dense['median_us']):.1f} us, best quest_e2e/{best['variant']} {float(best['median_us']):.1f} us)",
                f">= {goal}x", "yes" if sp >= goal else "no")
    dense = {r['q_len']: float(r['median_us']) for r in find(rows, kernel='minf_dense_prefill')}
    for pattern, label, goal in (('vs_30_2048', 'vertical-slash', 10), ('vs_3000_200', 'vertical-slash', 10),
                                 ('bs_100', 'block-sparse', 20)):
        e2e = [r for r in rows if r['kernel'] in ('minf_e2e', 'minf_e2e_mma') and r['variant'] == pattern
               and 'data=structured' in r['params'].split(';')]
        if not e2e:
            continue
        n_max = max(int(r['q_len']) for r in e2e)
        at_1m = [r for r in e2e if r['q_len'] == '1048576']
        common = [r for r in e2e if r['q_len'] in dense]
        nd = max(int(r['q_len']) for r in common) if common else None
        if at_1m and '1048576' in dense:
            best = min(at_1m, key=lambda r: float(r['median_us']))
            sp = dense['1048576'] / float(best['median_us'])
            add(f"MInference {label} {pattern} vs dense at 1M", f"{sp:.1f}x", f">= {goal}x", "yes" if sp >= goal else "no")
        elif nd:
            best = min((r for r in common if int(r['q_len']) == nd), key=lambda r: float(r['median_us']))
            sp = dense[str(nd)] / float(best['median_us'])
            note = (f"1M not measured against dense (dense rows stop at {max(int(k) for k in dense):,}; "
                    f"{pattern} measured up to {n_max:,})")
            add(f"MInference {label} {pattern} vs dense", f"{sp:.1f}x at {nd:,} tokens ({best['kernel']}); {note}",
                f">= {goal}x at 1M", "not measured at 1M")
    for k in ('andpro_select', 'andpro_compact', 'andpro_select_layer', 'andpro_compact_ragged'):
        r = [x for x in find(rows, kernel=k, variant='w32')]
        if r:
            add(f"AnDPro {k.replace('andpro_', '')} (window 32, budget 2048, 32/8)",
                ", ".join(f"{int(x['ctx'])//1024}K {float(x['median_us']):.1f} us" for x in r), "(time reported)", "-")
    print("\n".join(out))


if __name__ == '__main__':
    main()
