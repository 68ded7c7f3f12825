#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source, build and script file of the repository starts with its SPDX license line (LICENSE:
MIT), within its first lines (after a shebang). Records (docs/, bench/), fuzz corpora and data files
carry none. Exits 77 (skipped) outside a git checkout, where the tracked files are not known."""
import os
import subprocess
import sys

root = sys.argv[1]
try:
    tracked = subprocess.run(['git', '-C', root, 'ls-files'], capture_output=True, text=True, check=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    print('not a git checkout: skipped')
    sys.exit(77)
SOURCES = ('.c', '.h', '.cl', '.py', '.sh', '.build', '.supp', '.wrap', '.toml', '.in', '.txt')
RECORDS = ('docs/', 'bench/', 'tests/fuzz/corpus/')
missing = []
for path in tracked:
    if path.startswith(RECORDS) or not (path.endswith(SOURCES) or path == '.ci/run'):
        continue
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
        head = ''.join(f.readline() for _ in range(3))
    if 'SPDX-License-Identifier: MIT' not in head:
        missing.append(path)
for path in missing:
    print('no SPDX-License-Identifier line:', path)
if not os.path.isfile(os.path.join(root, 'LICENSE')):
    missing.append('LICENSE')
    print('no LICENSE file')
sys.exit(1 if missing else 0)
