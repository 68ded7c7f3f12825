#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ptx_loops.py PTX [PTX ...]: the loops of a kernel's machine code, each with its instruction count and the
counts of the instruction classes a tile's cost is read from (wgmma, exponentials, barriers, the uniform
datapath's arithmetic and the moves into it), for PTX such as NVIDIA's OpenCL compiler wrote it
(tools/nv_driver_sass.py brings it back from a GPU machine). ptxas refuses such a program here when its
static local memory is past 48 KB, which only the driver's own build may take, so each __local array is
first cut to 8 KB: the addresses change, the instructions and their order do not. Then ptxas (PTXAS, or the
PATH) for the PTX's target and nvdisasm (NVDISASM, or the PATH). A loop is a backward branch; those with
fewer than 40 instructions and no wgmma are left out.
Usage: PTXAS=... NVDISASM=... python3 tools/ptx_loops.py a.ptx b.ptx"""
import collections
import os
import re
import subprocess
import sys
import tempfile

CLASSES = ("HGMMA", "MUFU", "SYNCS", "BAR", "R2UR", "SHFL", "FFMA", "FMUL", "IMAD", "LOP3", "BSSY")


def ops(sass):
    """The instructions of nvdisasm's listing, in order, and the index each label points at."""
    ins, labels = [], {}
    for line in sass.splitlines():
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m:
            ins.append(m.group(1).strip())
    return ins, labels


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def report(path):
    ptx = open(path).read()
    ptx = re.sub(r"(\.shared \.align \d+ \.b8 [\w$]+)\[\d+\]", r"\1[8192]", ptx)
    target = re.search(r"^\.target (\w+)", ptx, re.M).group(1)
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        open(src, "w").write(ptx)
        res = subprocess.run([os.environ.get("PTXAS", "ptxas"), f"-arch={target}", "-v", src, "-o", cubin],
                             capture_output=True, text=True)
        used = [line.split("info    : ")[-1] for line in res.stderr.splitlines() if "Used" in line]
        if res.returncode:
            sys.exit(f"ptx_loops.py: ptxas failed on {path}:\n{res.stderr}")
        sass = subprocess.run([os.environ.get("NVDISASM", "nvdisasm"), "-c", cubin], capture_output=True,
                              text=True, check=True).stdout
    ins, labels = ops(sass)
    print(f"{path}: {len(ins)} instructions; {'; '.join(used)}")
    for i, text in enumerate(ins):
        m = re.search(r"BRA\s+(?:\S+\s+)?`?\(?(\.L_x_\d+)", text)
        if not m or m.group(1) not in labels or labels[m.group(1)] > i:
            continue
        body = ins[labels[m.group(1)]:i + 1]
        count = collections.Counter(opcode(x).split(".")[0] for x in body)
        if not count["HGMMA"] and len(body) < 40:
            continue
        uniform = sum(n for op, n in count.items() if op.startswith("U") and op not in ("UBLKCP",))
        print(f"  loop {m.group(1)} [{labels[m.group(1)]}..{i}] {len(body)} instructions: "
              + " ".join(f"{c} {count[c]}" for c in CLASSES) + f" uniform-datapath {uniform}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        report(p)
