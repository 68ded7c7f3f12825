#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when BENCHMARKS.md differs from what tools/benchmarks_md.py makes of bench/*.json."""
import os
import subprocess
import sys

root = sys.argv[1]
made = subprocess.run([sys.executable, os.path.join(root, 'tools', 'benchmarks_md.py'), os.path.join(root, 'bench')],
                      capture_output=True, text=True, check=True, cwd=root).stdout
with open(os.path.join(root, 'BENCHMARKS.md')) as f:
    kept = f.read()
if made != kept:
    print('BENCHMARKS.md is out of date: run python3 tools/benchmarks_md.py bench > BENCHMARKS.md')
    sys.exit(1)
print('BENCHMARKS.md matches bench/*.json')
