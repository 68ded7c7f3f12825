#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/enqueue_probe on the test device ($FLASHCL_TEST_PLATFORM): its JSON parses and holds every
measurement, each with 0 < p10 <= median <= p90 (microseconds), the round trips last longer than the
calls they are made of, and an empty kernel's profiled run is shorter than its round trip. Exits 77
(skipped) where there is no device."""
import json
import os
import subprocess
import sys

args = [sys.argv[1]] + ([os.environ['FLASHCL_TEST_PLATFORM']] if os.environ.get('FLASHCL_TEST_PLATFORM') else [])
run = subprocess.run(args + ['--json'], capture_output=True, text=True)
if run.returncode == 77:
    print(run.stderr.strip() or 'no device: skipped')
    sys.exit(77)
assert run.returncode == 0, run.stderr
doc = json.loads(run.stdout)
res = {r['name']: r for r in doc['results']}
want = {'set_arg_buffer', 'set_arg_int', 'set_arg_struct256', 'mem_info', 'enqueue', 'enqueue_event', 'enqueue_event_plain_queue', 'enqueue_plain_queue',
        'step_one', 'step_two', 'step_marker', 'step_15_buffers', 'step_one_plain_queue', 'step_wide', 'kernel_empty',
        'kernel_grid', 'kernel_padded'}
assert set(res) == want, sorted(set(res) ^ want)
for r in res.values():
    assert 0 < r['p10_us'] <= r['median_us'] <= r['p90_us'], r
assert res['step_one']['median_us'] > res['enqueue_event']['p10_us'], res
assert res['kernel_empty']['median_us'] < res['step_one']['median_us'], res  # (the kernel inside its round trip)
assert res['kernel_padded']['median_us'] >= res['kernel_empty']['p10_us'], res  # (the kernel's own run, at least)
assert doc['device'] and doc['reps'] > 0
bad = subprocess.run([sys.argv[1], '--no-such-option'], capture_output=True, text=True)
assert bad.returncode == 2 and 'usage' in bad.stderr, bad
print(f"{doc['device']}: one empty kernel {res['step_one']['median_us']:.1f} us enqueue to completion")
