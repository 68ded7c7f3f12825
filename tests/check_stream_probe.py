#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/stream_probe on the test device ($FLASHCL_TEST_PLATFORM), at a small cache: its JSON parses and
holds every variant (loads at three depths, bulk copies at two depths and two stages), each run's bytes
checked by the probe against the host's fold (a wrong word fails the probe), with 0 < p10 <= median <= p90
and a positive rate; a bad option is a usage error. Exits 77 (skipped) where there is no device."""
import json
import os
import subprocess
import sys

args = [sys.argv[1]] + ([os.environ['FLASHCL_TEST_PLATFORM']] if os.environ.get('FLASHCL_TEST_PLATFORM') else [])
small = ['--keys', '1000', '--heads', '3', '--splits', '5', '--warps', '4', '--copies', '2', '--reps', '3']
run = subprocess.run(args + small + ['--json'], capture_output=True, text=True)
if run.returncode == 77:
    print(run.stderr.strip() or 'no device: skipped')
    sys.exit(77)
assert run.returncode == 0, run.stderr
doc = json.loads(run.stdout)
assert doc['keys'] == 1000 and doc['heads'] == 3 and doc['splits'] == 5 and doc['warps'] == 4, doc
assert doc['bytes'] == 1000 * 3 * 256, doc
got = {(r['kernel'], r['depth'], r['stages']) for r in doc['results']}
want = {('stream_loads', 8, 1), ('stream_loads', 16, 1), ('stream_loads', 32, 1), ('stream_bulk', 16, 1),
        ('stream_bulk', 16, 2), ('stream_bulk', 32, 1)}
assert got == want, sorted(got ^ want)
for r in doc['results']:
    assert r['checked'] and 0 < r['p10_us'] <= r['median_us'] <= r['p90_us'] and r['gb_per_s'] > 0, r
for bad in (['--keys', '0'], ['--warps', 'x'], ['--no-such-option']):
    b = subprocess.run(args + bad, capture_output=True, text=True)
    assert b.returncode == 2 and 'usage' in b.stderr, (bad, b)
print(f"{doc['device']}: loads and bulk copies read {doc['bytes'] * 2} bytes, each run's fold checked")
