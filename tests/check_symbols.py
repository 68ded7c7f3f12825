#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that libflashcl exports exactly the symbols listed in tests/symbols.txt (and that each is
declared in include/flashcl.h): nothing internal leaks, nothing public goes missing; and that it does
not need CLBlast or the C++ runtime (standard attention loads CLBlast when first asked for)."""
import re
import subprocess
import sys

lib, listing, header = sys.argv[1:4]
installed_static = sys.argv[4] if len(sys.argv) > 4 else None


def defined(args, kinds):
    out = subprocess.run(['nm', *args, '--defined-only'], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if re.search(rf' [{kinds}] ', line)}


def differences(have, want, extra, missing):
    """Prints each name in one set and not the other; True when there is none."""
    for name in sorted(have - want):
        print(f'{extra}: {name}')
    for name in sorted(want - have):
        print(f'{missing}: {name}')
    return have == want


exported = defined(['-D', lib], 'TDB')
expected = {line.strip() for line in open(listing) if line.strip() and not line.startswith('#')}
declared = set(re.findall(r'FLASHCL_API [^;]*?\b(flashcl_\w+)\s*\(', open(header).read(), re.S))
ok = differences(exported, expected, 'exported but not in symbols.txt', 'in symbols.txt but not exported')
for name in sorted(expected - declared):
    print(f'in symbols.txt but not declared FLASHCL_API in the header: {name}')
    ok = False
if installed_static:  # the prelinked archive: its global definitions are the API too (meson.build, static/)
    ok &= differences(defined(['-g', installed_static], 'TDBRC'), expected,
                      'the installed libflashcl.a defines a global that is not the API',
                      'the installed libflashcl.a lacks')
dyn = subprocess.run(['readelf', '-d', lib], capture_output=True, text=True, check=True).stdout
needed = re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', dyn)
for name in needed:
    if 'clblast' in name or 'stdc++' in name:
        print(f'the library needs {name}: an engine without standard attention would load it')
        ok = False
print(f'{len(exported)} symbols exported, needs {", ".join(needed)}' + ('' if ok else ': MISMATCH'))
sys.exit(0 if ok else 1)
