#!/usr/bin/env python3
"""Ragged / uniform decode time of each decode_ragged pair in a profile CSV (family
decode_ragged: a ragged batch, params dist=<spread>, beside the uniform batch of its size at
its mean KV length, dist=<spread>-uniform), as the table in docs/costmodel.md "Ragged decode
batches" (one row per spread, one column per batch size):

    python3 tools/ragged_pairs.py costmodel/profiles/h100-sxm/logs/session6-decode-ragged-1.csv

Also prints each pair's longest / mean KV length, the quantity the cost model reads the
factor at (costmodel/decode_grid.h, RaggedDecode).
"""
import csv
import sys


def rows(path):
    return list(csv.DictReader(line for line in open(path) if not line.startswith('#')))


def main(path):
    pairs = {}
    for r in rows(path):
        if r['kernel'] != 'decode' or 'dist=' not in r['params']:
            continue
        p = dict(kv.split('=', 1) for kv in r['params'].split(';'))
        uniform = p['dist'].endswith('-uniform')
        key = (p['dist'][:-len('-uniform')] if uniform else p['dist'], int(r['batch']))
        e = pairs.setdefault(key, {})
        e['u' if uniform else 'r'] = float(r['median_us'])
        if not uniform:
            e['spread'] = int(p['ctx_max']) * int(r['batch']) / int(p['ctx_sum'])
    if not pairs:
        sys.exit(f"ragged_pairs: no decode_ragged rows (params dist=...) in {path}")
    batches = sorted({b for _, b in pairs})
    print('| spread | ' + ' | '.join(str(b) for b in batches) + ' |')
    print('|---|' + '---|' * len(batches))
    for d in sorted({d for d, _ in pairs}):
        cells = []
        for b in batches:
            e = pairs.get((d, b), {})
            cells.append(f"{e['r'] / e['u']:.2f}" if 'r' in e and 'u' in e else '')
        print(f'| {d} | ' + ' | '.join(cells) + ' |')
    print()
    print('longest / mean KV length per pair:')
    for (d, b), e in sorted(pairs.items()):
        if 'spread' in e:
            print(f'  {d:24s} batch {b:4d}: {e["spread"]:.2f}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
