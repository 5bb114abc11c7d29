#!/usr/bin/env python3
"""Per-size medians of an old/new A/B of mpigpu-sweep runs (benchmarks/device/steps.sh's `ab` output, or
this folder's exp*.txt): for each series and size, old and new medians, their range, the ratio
new/old, and a Mann-Whitney U test (normal approximation, two-sided) of old vs new values.
  ab_median.py host.txt [more.txt ...]
A header line is '== ...' naming OLD or NEW (any case); the rest of it, without round numbers,
names the series. Data lines: size, then mpigpu's value."""
import math
import re
import statistics
import sys


def load(paths):
    series = {}  # name -> {'old'|'new': {size: [values]}}
    for path in paths:
        name = side = None
        for line in open(path):
            if line.startswith('== '):
                words = line[3:].split()
                sides = [w.lower() for w in words if w.lower() in ('old', 'new')]
                side = sides[0] if sides else None
                name = ' '.join(w for w in words
                                if w.lower() not in ('old', 'new', 'round') and not w.isdigit())
                continue
            f = line.split()
            if side and len(f) >= 2 and f[0].isdigit():
                series.setdefault(name, {}).setdefault(side, {}).setdefault(int(f[0]), []).append(
                    float(f[1]))
    return series


def mann_whitney_p(a, b):
    values = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    rank_of, i = [0.0] * len(values), 0
    while i < len(values):
        j = i
        while j < len(values) and values[j][0] == values[i][0]:
            j += 1
        for k in range(i, j):
            rank_of[k] = (i + j + 1) / 2
        i = j
    n1, n2 = len(a), len(b)
    u = sum(r for r, (_, g) in zip(rank_of, values) if g == 0) - n1 * (n1 + 1) / 2
    sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return math.erfc(abs((u - n1 * n2 / 2) / sd) / math.sqrt(2)) if sd else 1.0


def main():
    for name, sides in load(sys.argv[1:]).items():
        if 'old' not in sides or 'new' not in sides:
            continue
        print(f'# {name}: size  old median [min-max] n  new median [min-max] n  new/old  p')
        for size in sorted(set(sides['old']) & set(sides['new'])):
            o, n = sides['old'][size], sides['new'][size]
            mo, mn = statistics.median(o), statistics.median(n)
            print(f'{size:>9}  {mo:7.3f} [{min(o):.3f}-{max(o):.3f}] {len(o):2}  '
                  f'{mn:7.3f} [{min(n):.3f}-{max(n):.3f}] {len(n):2}  {mn / mo:5.3f}  '
                  f'{mann_whitney_p(o, n):.2f}')


if __name__ == '__main__':
    main()
