#!/usr/bin/env python3
"""What-if of the two calibrated-model fixes docs/costmodel.md proposed ("Long context on an
H200"), estimated offline on the committed GPU replays before the model had them. Since commit
433053b the model does both (cost_model.decode_attention / launch_excess, `auto`); the exact
figures are `servesim calibrate fidelity REPLAY --scenario S [--set cost_model.launch_excess=none]
[--set cost_model.decode_attention=fit]` ("Decode rows and launch excess"). Kept as the record
of the estimate (it counts the replay's launches, the model one per priced row):

  table         decode attention priced from the profile's uniform Llama-3-8B 32/8/128 decode
                rows (linear in log batch and log context between measured points, clamped
                at the grid's edges; a ragged batch as its mean context) instead of the
                linear fit;
  launch only   the measured launch excess taken off each of the iteration's launches:
                launch_alone - (launch_queued - launch_queued_spin) / launches, from the
                GPU's committed ceiling rows (logs/session5-launch-ceilings-*.csv), the
                mean over its runs (printed);
  table+launch  both.

    python3 tools/fidelity_whatif.py

Uses each replay's recorded per-part prediction (batches.csv), so it is only valid where
the record was priced by the current model: not for h100-sxm/fidelity/ (recorded before
later model changes; `servesim calibrate fidelity` re-prices those). Prints per-iteration
|predicted - measured| / measured, median and p90, and the signed median.
"""
import csv
import glob
import math
import statistics as st


def rows(p): return list(csv.DictReader(l for l in open(p) if not l.startswith('#')))


def launch_excess(gpu_dir):
    """Mean over the committed ceiling runs of launch_alone - queued cost per launch (us)."""
    per_run = []
    for f in sorted(glob.glob(f"{gpu_dir}/logs/session5-launch-ceilings-*.csv")):
        v = {r['variant']: r for r in rows(f) if r['kernel'] == 'ceiling'}
        n = int(dict(kv.split('=') for kv in v['launch_queued']['params'].split(';'))['launches'])
        queued = (float(v['launch_queued']['median_us']) - float(v['launch_queued_spin']['median_us'])) / n
        per_run.append(float(v['launch_alone']['median_us']) - queued)
    if not per_run:
        raise SystemExit(f"fidelity_whatif: no launch ceiling rows under {gpu_dir}/logs")
    return sum(per_run) / len(per_run)
def table(profile):
    t={}
    for r in rows(profile):
        if r['kernel']!='decode' or 'llama3-8b' not in r['params'] or r['heads']!='32' or r['kv_heads']!='8' or 'ragged=0' not in r['params']: continue
        t[(int(r['batch']),int(r['ctx']))]=float(r['median_us'])
    return t
def interp(t,b,c):
    bs=sorted({k[0] for k in t}); 
    def at(bb,c):
        cs=sorted(k[1] for k in t if k[0]==bb)
        c=min(max(c,cs[0]),cs[-1])
        for lo,hi in zip(cs,cs[1:]):
            if lo<=c<=hi:
                w=(math.log(c)-math.log(lo))/(math.log(hi)-math.log(lo)) if hi>lo else 0
                return t[(bb,lo)]*(1-w)+t[(bb,hi)]*w
        return t[(bb,cs[-1])]
    b=min(max(b,bs[0]),bs[-1])
    for lo,hi in zip(bs,bs[1:]):
        if lo<=b<=hi:
            w=(math.log(b)-math.log(lo))/(math.log(hi)-math.log(lo))
            return at(lo,c)*(1-w)+at(hi,c)*w
    return at(bs[-1],c)
def run(profile, batches, replay, excess):
    t=table(profile); rec={(r['iteration'],r['worker']):r for r in rows(batches)}
    out={'fit':[], 'table':[], 'table+launch':[], 'launch only':[]}
    for r in rows(replay):
        q=rec[(r['iteration'],r['worker'])]; m=float(r['measured_us']); p=float(r['predicted_us'])
        dec=float(q['attention_decode_us'])
        ctx=[int(x) for x in q['decodes'].split(';')] if q['decodes'] else []
        tab=32*interp(t,len(ctx),sum(ctx)/len(ctx)+1) if ctx else 0
        L=int(r['launches'])
        out['fit'].append((p-m)/m); out['table'].append((p-dec+tab-m)/m)
        out['table+launch'].append((p-dec+tab-excess*L-m)/m); out['launch only'].append((p-excess*L-m)/m)
    for k,v in out.items():
        a=sorted(abs(x) for x in v)
        print(f"  {k:14s} median {100*st.median(a):5.2f}%  p90 {100*a[int(.9*(len(a)-1))]:5.2f}%  signed {100*st.median(v):+5.2f}%")
for name, gpu, fid in [("H200 default", 'costmodel/profiles/h200', 'fidelity'),
                       ("H200 mooncake", 'costmodel/profiles/h200', 'fidelity_mooncake'),
                       ("H100 mooncake", 'costmodel/profiles/h100-sxm', 'fidelity_mooncake')]:
    ex = launch_excess(gpu)
    print(f"{name} (launch excess {ex:.3f} us)")
    run(f"{gpu}/profile.csv", f"{gpu}/{fid}/batches.csv", f"{gpu}/{fid}/replay.csv", ex)
