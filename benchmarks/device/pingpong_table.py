#!/usr/bin/env python3
"""Side-by-side table of two or more pingpong outputs (benchmarks/pingpong.cc,
benchmarks/peers/mpi_pingpong.c): bytes, then latency and bandwidth of each, and the ratios of
the first to the second.  Usage: pingpong_table.py NAME=FILE[,FILE...] NAME=FILE[,FILE...] ...
Several files of one name (repetitions) give the median of each column."""
import statistics
import sys

def load_one(path):
    rows = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and parts[0].isdigit():
            rows[int(parts[0])] = (float(parts[1]), float(parts[2]))
    return rows

def load(paths):
    reps = [load_one(p) for p in paths.split(',')]
    sizes = set.intersection(*[set(r) for r in reps])
    return {n: tuple(statistics.median(r[n][k] for r in reps) for k in (0, 1)) for n in sizes}

def size(n):
    for unit, name in ((1 << 20, 'MiB'), (1 << 10, 'KiB')):
        if n >= unit:
            return '%d %s' % (n // unit, name)
    return '%d B' % n

series = [(a.split('=', 1)[0], load(a.split('=', 1)[1])) for a in sys.argv[1:]]
names = [n for n, _ in series]
head = ['bytes'] + ['%s lat µs' % n for n in names] + ['%s bw GB/s' % n for n in names]
if len(series) >= 2:
    head += ['lat %s/%s' % (names[0], names[1]), 'bw %s/%s' % (names[0], names[1])]
print('| ' + ' | '.join(head) + ' |')
print('|' + '---:|' * len(head))
for n in sorted(set.intersection(*[set(s) for _, s in series])):
    row = [size(n)] + ['%.2f' % s[n][0] for _, s in series] + ['%.2f' % s[n][1] for _, s in series]
    if len(series) >= 2:
        a, b = series[0][1][n], series[1][1][n]
        row += ['%.2f' % (a[0] / b[0]), ('%.2f' % (a[1] / b[1])) if b[1] > 0.005 else '—']
    print('| ' + ' | '.join(row) + ' |')
