#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""isa_counts.py: the instructions of flash_mfma's and flash_wmma's key loop in clang's AMDGPU assembly (tools/vendor_check.sh
keeps it: $VENDOR_TMP/programs/<program>.<target>.s), by class, for the performance model in
docs/design/mfma.md. The key loop is the outermost loop that holds the v_mfma (v_wmma) instructions; blocks of the
loops nested in it (the tile copies) are counted apart with their depth. A static count: every block of the
loop once, branches for edge tiles (masks) included, so it bounds an interior tile's work from above.
Usage: isa_counts.py FILE.s [--json]"""
import json
import re
import sys

CLASSES = [
    ("mfma", r"^v_(mfma|wmma)"),
    ("agpr_move", r"^v_accvgpr_(read|write|mov)"),
    ("exp", r"^v_exp_f32"),
    ("lds_read", r"^ds_(read|load)"),
    ("lds_write", r"^ds_(write|store)"),
    ("lds_permute", r"^ds_(bpermute|permute|swizzle)"),
    ("global_load", r"^(global_load|buffer_load|flat_load)"),
    ("global_store", r"^(global_store|buffer_store|flat_store)"),
    ("barrier", r"^s_barrier"),
    ("waitcnt", r"^s_waitcnt"),
    ("valu", r"^v_"),
    ("salu", r"^s_"),
]


def blocks(lines):
    """(label, depth, header, instructions) for each basic block."""
    out, cur = [], None
    for line in lines:
        m = re.match(r"^(\.LBB\d+_\d+|; %bb\.\d+):?\s*(;.*)?$", line)
        if m:
            note = m.group(2) or ""
            d = re.search(r"Depth=(\d+)", note)
            h = re.search(r"Header=(BB\d+_\d+)", note)
            label = m.group(1).replace(".LBB", "BB").replace("; %bb.", "BB0_")
            header = h.group(1) if h else (label if "Loop Header" in note else None)
            depth = int(d.group(1)) if d else 0
            if "Parent Loop" in note:  # (an inner loop's header: one deeper than its parent)
                depth, header = depth + 1, label
            cur = [label, depth, header, []]
            out.append(cur)
        elif cur and line.startswith("\t") and not line.strip().startswith(";"):
            ins = line.strip().split()[0]
            if not ins.startswith("."):
                cur[3].append(ins)
    return out


def classify(ins):
    for name, pat in CLASSES:
        if re.match(pat, ins):
            return name
    return "other"


def loop_counts(lines):
    """The key loop's header and its instructions by class: {"depth1": {...}, "nested": {...}}."""
    bs = blocks(lines)
    key = next((h for _, d, h, ins in bs if d == 1 and any(re.match(r"v_(mfma|wmma)", i) for i in ins)), None)
    counts = {"depth1": {}, "nested": {}}
    in_loop = False
    for _, depth, header, ins in bs:
        if depth == 1:
            in_loop = header == key
        if depth == 0:
            in_loop = False
        if not in_loop:
            continue
        where = "depth1" if depth == 1 else "nested"
        for i in ins:
            c = classify(i)
            counts[where][c] = counts[where].get(c, 0) + 1
    return key, counts


def main():
    path = sys.argv[1]
    key, counts = loop_counts(open(path).read().splitlines())
    if "--json" in sys.argv:
        print(json.dumps({"file": path, "loop": key, "counts": counts}, indent=1))
    else:
        print(f"{path}: key loop {key}")
        for where in ("depth1", "nested"):
            print(f"  {where}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts[where].items())))


if __name__ == "__main__":
    main()
