#!/usr/bin/env python3
"""Ragged decode batches against their uniform twins, inside real iterations.

docs/costmodel.md, "Ragged batches in real iterations: the twins replay".

  ragged_twins.py make [--min-decodes N] OUT.csv RECORD.csv [RECORD.csv ...]
      A batch record (servesim run --record-batches) for servesim-kernels replay: every
      decode-only iteration with at least N decodes (default 2) of each input record,
      followed by its uniform twin: the same decode count and KV sum, contexts as equal as
      integers allow. Ids: input index * 10^7 + 2 * iteration (+ 1 for the twin). The
      first record's header lines are kept; every input must have the same columns.

  ragged_twins.py compare REPLAY.csv ITERATIONS.csv
      REPLAY.csv: the replay of such a record; ITERATIONS.csv: `servesim calibrate
      fidelity REPLAY.csv --scenario ...`'s iterations.csv. Per decode-count bin: the
      measured ragged/twin time ratio, the calibrated model's ratio, and each half's
      signed error (predicted - measured) / measured, medians.
"""
import csv
import os
import statistics
import sys

BINS = [(2, 9), (9, 16), (16, 33), (33, 48), (48, 64), (64, 80), (80, 96), (96, 128), (128, 192), (192, 1 << 20)]


def make(args):
    min_decodes = 2
    if args[:1] == ['--min-decodes']:
        min_decodes, args = int(args[1]), args[2:]
    if len(args) < 2:
        sys.exit('usage: ragged_twins.py make [--min-decodes N] OUT.csv RECORD.csv [RECORD.csv ...]')
    out_path, inputs = args[0], args[1:]
    if any(os.path.exists(p) and os.path.exists(out_path) and os.path.samefile(p, out_path) for p in inputs):
        sys.exit(f'{out_path}: the output is also an input (usage: make OUT.csv RECORD.csv ...)')
    texts = []  # every input read before the output is opened, so a bad argument never truncates a file
    for path in inputs:
        try:
            with open(path) as f:
                texts.append(f.read().splitlines(keepends=True))
        except OSError as e:
            sys.exit(f'{path}: {e.strerror} (usage: make OUT.csv RECORD.csv ...)')
    header, pairs = None, 0
    with open(out_path, 'w') as out:
        for index, path in enumerate(inputs):
            cols = None
            for line in texts[index]:
                if line.startswith('#'):
                    if index == 0:
                        out.write(line)
                    continue
                if cols is None:
                    cols = line.rstrip('\n').split(',')
                    missing = [c for c in ('iteration', 'prefills', 'decodes') if c not in cols]
                    if missing:
                        sys.exit(f'{path}: not a batch record (no column {", ".join(missing)})')
                    if header is None:
                        header = line
                        out.write(line)
                    elif line != header:
                        sys.exit(f'{path}: columns differ from {inputs[0]}')
                    continue
                f = line.rstrip('\n').split(',')
                row = dict(zip(cols, f))
                if row['prefills'] or not row['decodes']:
                    continue
                ctx = [int(x) for x in row['decodes'].split(';')]
                if len(ctx) < min_decodes:
                    continue
                q, r = divmod(sum(ctx), len(ctx))
                twin = [q + 1 if i < r else q for i in range(len(ctx))]
                ident = index * 10**7 + 2 * int(row['iteration'])
                f[cols.index('iteration')] = str(ident)
                out.write(','.join(f) + '\n')
                f[cols.index('iteration')] = str(ident + 1)
                f[cols.index('decodes')] = ';'.join(map(str, twin))
                out.write(','.join(f) + '\n')
                pairs += 1
    print(f'{pairs} ragged/twin pairs -> {out_path}')


def compare(args):
    if len(args) != 2:
        sys.exit('usage: ragged_twins.py compare REPLAY.csv ITERATIONS.csv')
    rows = {int(r['iteration']): r for r in csv.DictReader(open(args[1]))}
    if not rows or 'err_calibrated' not in next(iter(rows.values())):
        sys.exit(f'{args[1]}: no calibrated column (run calibrate fidelity with --scenario)')
    pairs = []
    for ident, r in rows.items():
        if ident % 2 or ident + 1 not in rows:
            continue
        t = rows[ident + 1]
        pairs.append((int(r['decodes']),
                      float(r['measured_us']) / float(t['measured_us']),
                      float(r['predicted_calibrated_us']) / float(t['predicted_calibrated_us']),
                      float(r['err_calibrated']), float(t['err_calibrated'])))
    med = statistics.median
    print('| decodes | pairs | measured ragged/twin | model ragged/twin | ragged error | twin error |')
    print('|---|---|---|---|---|---|')
    for lo, hi in BINS:
        s = [p for p in pairs if lo <= p[0] < hi]
        if s:
            label = f'{lo}-{hi - 1}' if hi < 1 << 20 else f'>={lo}'
            print(f'| {label} | {len(s)} | {med(p[1] for p in s):.3f} | {med(p[2] for p in s):.3f} | '
                  f'{100 * med(p[3] for p in s):+.1f} % | {100 * med(p[4] for p in s):+.1f} % |')
    err = sorted(abs(p[2] / p[1] - 1) for p in pairs)
    none = sorted(abs(1 / p[1] - 1) for p in pairs)
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]
    print(f'\n{len(pairs)} pairs; |model ratio / measured ratio - 1|: median {100 * q(err, .5):.1f} %, '
          f'p90 {100 * q(err, .9):.1f} % (pricing a ragged batch as its twin: {100 * q(none, .5):.1f} % / '
          f'{100 * q(none, .9):.1f} %)')


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ('make', 'compare'):
        sys.exit(__doc__)
    (make if sys.argv[1] == 'make' else compare)(sys.argv[2:])


if __name__ == '__main__':
    main()
