#!/usr/bin/env python3
"""Checks that libflashcl exports exactly the symbols listed in tests/symbols.txt (and that each is
declared in include/flashcl.h): nothing internal leaks, nothing public goes missing; and that it does
not need CLBlast or the C++ runtime (standard attention loads CLBlast when first asked for)."""
import re
import subprocess
import sys

lib, listing, header = sys.argv[1:4]
installed_static = sys.argv[4] if len(sys.argv) > 4 else None
out = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True, check=True).stdout
exported = {line.split()[-1] for line in out.splitlines() if re.search(r' [TDB] ', line)}
expected = {line.strip() for line in open(listing) if line.strip() and not line.startswith('#')}
declared = set(re.findall(r'FLASHCL_API [^;]*?\b(flashcl_\w+)\s*\(', open(header).read(), re.S))
ok = True
for name in sorted(exported - expected):
    print(f'exported but not in symbols.txt: {name}')
    ok = False
for name in sorted(expected - exported):
    print(f'in symbols.txt but not exported: {name}')
    ok = False
for name in sorted(expected - declared):
    print(f'in symbols.txt but not declared FLASHCL_API in the header: {name}')
    ok = False
if installed_static:  # the prelinked archive: its global definitions are the API too (meson.build, static/)
    out = subprocess.run(['nm', '-g', '--defined-only', installed_static], capture_output=True, text=True,
                         check=True).stdout
    archived = {line.split()[-1] for line in out.splitlines() if re.search(r' [TDBRC] ', line)}
    for name in sorted(archived - expected):
        print(f'the installed libflashcl.a defines a global that is not the API: {name}')
        ok = False
    for name in sorted(expected - archived):
        print(f'the installed libflashcl.a lacks {name}')
        ok = False
dyn = subprocess.run(['readelf', '-d', lib], capture_output=True, text=True, check=True).stdout
needed = re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', dyn)
for name in needed:
    if 'clblast' in name or 'stdc++' in name:
        print(f'the library needs {name}: an engine without standard attention would load it')
        ok = False
print(f'{len(exported)} symbols exported, needs {", ".join(needed)}' + ('' if ok else ': MISMATCH'))
sys.exit(0 if ok else 1)
