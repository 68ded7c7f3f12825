#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that no two of the library's source files depend on each other, directly or through others:
each file's undefined symbols, resolved to the member of the static library that defines them, must
form a graph without cycles (src/ is layered: error, problem, diskcache, program, kernels, ...).
Usage: check_layering.py libflashcl.a"""
import collections
import subprocess
import sys

out = subprocess.run(['nm', '-A', sys.argv[1]], capture_output=True, text=True, check=True).stdout
defs, uses = {}, collections.defaultdict(set)
for line in out.splitlines():  # "archive:member:address T name" or "archive:member:   U name"
    fields = line.split(':', 2)
    if len(fields) < 3:
        continue
    member = fields[1].replace('src_', '').replace('.c.o', '')
    parts = fields[2].split()
    if len(parts) == 3 and parts[1] in 'TDBR':
        defs[parts[2]] = member
    elif len(parts) == 2 and parts[0] == 'U':
        uses[member].add(parts[1])
deps = {m: {defs[u] for u in us if u in defs and defs[u] != m} for m, us in uses.items()}


def cycle_from(start):
    """A path start -> ... -> start, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in deps.get(node, ()):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


cycles = {tuple(c) for c in (cycle_from(m) for m in deps) if c}
for c in sorted(cycles):
    print('cycle: ' + ' -> '.join(c))
print(f'{len(deps)} files, {sum(len(d) for d in deps.values())} dependencies, {len(cycles)} cycles')
sys.exit(1 if cycles else 0)
