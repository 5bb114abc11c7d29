#!/usr/bin/env python3
"""Summarizes run.sh's TAP files (one per suite directory, written by MPICH's runtests) into a
markdown pass table (summary.md) and the list of failing entries (failures.txt).

An entry is "dir/prog np", with "#k" appended for its k-th repetition in a directory (testlists
repeat a program with other arguments or environment). Outcomes: pass (runtests said ok), fail,
timeout (failed after running for its whole limit), skip (runtests skipped it, e.g. for memory;
not a pass). With --check, exits 1 if a failure is not in the expected-failures file."""
import argparse
import os
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument('--out', required=True)
ap.add_argument('--expected', required=True)
ap.add_argument('--started', default='')
ap.add_argument('--command', default='')
ap.add_argument('--check', action='store_true')
ap.add_argument('dirs', nargs='+')
a = ap.parse_args()

line_re = re.compile(r'^(not ok|ok) \d* ?- \./(\S+?)/(\S+) ?(\d*)(.*)$')


def parse(path):
    entries, seen = [], {}
    cur = None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        m = line_re.match(line)
        if m:
            ok, d, prog, np, rest = m.groups()
            key = '%s/%s %s' % (d, prog, np or '?')
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                key += ' #%d' % seen[key]
            t = re.search(r'time=([\d.]+)', rest)
            cur = {'key': key, 'time': float(t.group(1)) if t else None, 'out': [],
                   'timeout': None}
            if ok == 'ok':
                cur['outcome'] = 'skip' if '# SKIP' in rest else 'pass'
                cur['reason'] = rest.split('# SKIP', 1)[1].strip() if '# SKIP' in rest else ''
            else:
                cur['outcome'] = 'fail'
                cur['reason'] = ''
            entries.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r'^\s+Timeout: (\d+)', line)
        if m:
            cur['timeout'] = int(m.group(1))
        elif line.startswith('## ') and not line.startswith('## Test output'):
            cur['out'].append(line[3:])
    for e in entries:
        if e['outcome'] != 'fail':
            continue
        if e['time'] is not None and e['timeout'] and e['time'] >= e['timeout'] - 1:
            e['outcome'] = 'timeout'
        first = next((l.strip() for l in e['out'] if l.strip()), '')
        if e['time'] is None:
            # runtests did not run it: the build failed. Name the first missing function.
            miss = next((re.search(r"undefined reference to `(\w+)'", l) for l in e['out']
                         if 'undefined reference' in l), None)
            impl = next((re.search(r"implicit declaration of function '?‘?(\w+)", l) for l in e['out']
                         if 'implicit declaration' in l), None)
            first = 'build failed' + (': %s undeclared' % impl.group(1) if impl else
                                      ': %s undefined' % miss.group(1) if miss else '')
        e['reason'] = first[:200]
    return entries


expected = {}
if os.path.exists(a.expected):
    for line in open(a.expected):
        line = line.rstrip('\n')
        if not line.strip() or line.startswith('#'):
            continue
        key, _, why = line.partition('|')
        expected[key.strip()] = why.strip()

rows, failures, allent = [], [], []
for d in a.dirs:
    path = os.path.join(a.out, d + '.tap')
    ents = parse(path) if os.path.exists(path) else []
    allent += ents
    c = {k: sum(1 for e in ents if e['outcome'] == k) for k in ('pass', 'fail', 'timeout', 'skip')}
    rows.append((d, len(ents), c))
    failures += [e for e in ents if e['outcome'] != 'pass']

tot = len(allent)
tp = sum(r[2]['pass'] for r in rows)
with open(os.path.join(a.out, 'summary.md'), 'w') as f:
    f.write('MPICH 4.0.2 test suite (test/mpi) against mpigpu\'s MPI interface\n\n')
    if a.started:
        f.write('Started %s; command: `%s`\n\n' % (a.started, a.command))
    f.write('| directory | entries | pass | fail | timeout | skipped | pass % |\n')
    f.write('|---|---:|---:|---:|---:|---:|---:|\n')
    for d, n, c in rows:
        pct = '%.1f' % (100.0 * c['pass'] / n) if n else '-'
        f.write('| %s | %d | %d | %d | %d | %d | %s |\n' % (d, n, c['pass'], c['fail'],
                                                         c['timeout'], c['skip'], pct))
    f.write('| **all** | %d | %d | %d | %d | %d | %s |\n' % (
        tot, tp, sum(r[2]['fail'] for r in rows), sum(r[2]['timeout'] for r in rows),
        sum(r[2]['skip'] for r in rows), '%.1f' % (100.0 * tp / tot) if tot else '-'))
    f.write('\nAn entry passes only when runtests ran it and it exited 0 printing " No Errors" '
            '(or met its resultTest); skipped entries count as not passing. basic has no '
            'testlist in MPICH 4.0.2 (no entries).\n')
with open(os.path.join(a.out, 'failures.txt'), 'w') as f:
    for e in failures:
        f.write('%s | %s | %s\n' % (e['key'], e['outcome'], e['reason']))
print(open(os.path.join(a.out, 'summary.md')).read())
unexpected = [e for e in failures if e['key'] not in expected]
fixed = [k for k in expected if any(e['key'] == k and e['outcome'] == 'pass' for e in allent)]
if fixed:
    print('passing now but listed in %s (remove them): %s' % (a.expected, ', '.join(fixed)))
if unexpected:
    print('%d failing entries not in %s:' % (len(unexpected), a.expected))
    for e in unexpected:
        print('  %s | %s | %s' % (e['key'], e['outcome'], e['reason']))
sys.exit(1 if a.check and unexpected else 0)
