#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""model.py: flash_mfma's, flash_wmma's and flash_dpas's performance model, written before any AMD or Intel
GPU has run them (docs/design/mfma.md).

For each target, the program tools/vendor_check.sh writes for fp16 prefill at d=128 (the chooser's
configuration on the CDNA or RDNA3/4 profile) is compiled (CDNA: clang 15 and ROCm's device libraries;
RDNA3: clang 19 and libclc, which vendor_check fetches), with the edge-masking branch's body removed (an
interior tile's work); isa_counts.py counts the key loop's instructions by class; the vendor's peak
figures turn them into clocks a SIMD:

  matrix core: matrix instructions x the clocks one takes (its FLOP over the dense fp16 peak a SIMD: the
               peak over CUs x SIMDs x the clock)
  VALU:        (VALU + AGPR moves + the tile copies' VALU) x the clocks a wave's instruction takes (CDNA:
               4, wave64 on 16 lanes; RDNA: 1, wave32 on 32), v_exp_f32 at a quarter of that rate (an
               assumption)

With two waves a SIMD (the occupancy clang reports), the prediction is a range: the matrix core's share of
the time with the VALU work fully hidden under the other wave's MFMAs (the upper end), and with none of it
hidden (the lower end). Writes bench/amd/predictions.json, which tools/benchmarks_md.py turns into
BENCHMARKS.md's predictions section. flash_dpas's row (pvc) comes from IGC's assembly, which vendor_check
also keeps.

Usage, after `tools/vendor_check.sh build` (its programs in $VENDOR_TMP, default /tmp/flashcl-vendor):
  python3 bench/amd/model.py [VENDOR_TMP] > bench/amd/predictions.json
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isa_counts  # noqa: E402

CLANG = os.environ.get("AMD_CLANG", "/usr/lib/llvm-15/bin/clang")
LIBS = os.environ.get("AMD_DEVICE_LIBS", "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
EDGE = "        if (edge) {\n            UNROLL\n            for (int st = 0; st < ST; ++st)"

# AMD's published figures: compute units, SIMDs a CU, peak engine clock (MHz), dense fp16 matrix TFLOP/s
# (MI300X, MI250X: AMD's datasheets; RX 7900 XTX: AMD's specification, 122.8 TFLOP/s fp16)
GPUS = [
    {"gpu": "MI300X", "target": "gfx940", "isa": "CDNA3: gfx942's instructions", "cus": 304, "simds": 4, "mhz": 2100,
     "fp16": 1307.4, "program": "amd-cdna__prefill-d128-f16__flash_mfma", "flop": 2 * 32 * 32 * 8, "valu_clk": 4},
    {"gpu": "MI250X", "target": "gfx90a", "isa": "CDNA2", "cus": 220, "simds": 4, "mhz": 1700, "fp16": 383.0,
     "program": "amd-cdna__prefill-d128-f16__flash_mfma", "flop": 2 * 32 * 32 * 8, "valu_clk": 4},
    {"gpu": "RX 7900 XTX", "target": "gfx1100", "isa": "RDNA3", "cus": 96, "simds": 2, "mhz": 2500, "fp16": 122.8,
     "program": "amd-rdna__prefill-d128-f16__flash_wmma", "flop": 2 * 16 * 16 * 16, "valu_clk": 1, "llvm19": True},
]
ANCHOR = "aiter bf16 d=128 forward on MI300X: up to 592 TFLOP/s (ROCm/aiter op_tests/cpp/mha/README.md)"

# Intel's Data Center GPU Max 1550 (pvc): 1024 matrix engines of 4096 bits (8 an Xe-core, 128 Xe-cores) at
# 1.6 GHz (Intel's figures, as glennklockwood.com/garden/processors/pvc quotes them). The engine's width
# taken as 256 fp16 multiply-adds a clock (an inference from the width, not a figure of Intel's): 838.9
# TFLOP/s dense fp16, and one dpas.8x8 at SIMD16 (8 x 16 x 16 multiply-adds) 8 clocks of its engine; a
# SIMD16 instruction one clock of the EU's 512-bit vector engine, extended math (exp) four.
# The Arc A770 (acm-g10, Xe-HPG): 512 matrix engines of 1024 bits (16 an Xe-core, 32 Xe-cores) at 2.1 GHz
# (Intel's specifications, as svethardware.cz reports them); the width taken as 64 fp16 multiply-adds a clock
# (the same inference): 137.6 TFLOP/s, one dpas.8x8 at SIMD8 (8 x 8 x 16) 16 clocks, a SIMD8 instruction one
# clock of the EU's 256-bit vector engine. Its program splits O's columns between two sub-groups (CSPLIT 2),
# each computing S for its rows: "useful" is the share of a sub-group's dpas that are not the other's too.
# The Arc B580 (bmg-g21, Xe2): 160 matrix engines (8 an Xe2-core, 20 Xe2-cores) at 2.67 GHz, 437.45 INT4
# TOPS (hmc-tech.com's and fpsbench.com's specification pages): 109.4 fp16 TFLOP/s, 128 multiply-adds an
# engine a clock; one dpas.8x8 at SIMD16 (8 x 16 x 16) 16 clocks, a SIMD16 instruction one clock of the
# XVE's 16 lanes. Its program is Xe-HPC's (128 KiB of local memory: sub-groups of 16), compiled for
# bmg-g21 by Debian unstable's IGC 2.x (vendor_check's Xe2 target; IGC's own listing, "dump").
INTELS = [
    {"gpu": "Max 1550", "target": "pvc", "isa": "Xe-HPC", "engines": 1024, "mhz": 1600, "fma_clk": 256,
     "dpas_clk": 8, "program": "intel-pvc__prefill-d128-f16__flash_dpas", "s_dpas": 8, "o_dpas": 8, "split": 1},
    {"gpu": "Arc A770", "target": "acm-g10", "isa": "Xe-HPG", "engines": 512, "mhz": 2100, "fma_clk": 64,
     "dpas_clk": 16, "program": "intel-hpg__prefill-d128-f16__flash_dpas", "s_dpas": 16, "o_dpas": 8, "split": 2},
    {"gpu": "Arc B580", "target": "bmg-g21", "isa": "Xe2", "engines": 160, "mhz": 2670, "fma_clk": 128,
     "dpas_clk": 16, "program": "intel-pvc__prefill-d128-f16__flash_dpas", "s_dpas": 8, "o_dpas": 8, "split": 1,
     "dump": True},
]
INTEL_ANCHOR = "XeTLA d=64 on a Max 1550: 88 TFLOP/s (intel-xpu-backend-for-triton#773)"


def intel_row(tmp, INTEL):
    """The key loop of flash_dpas in IGC's assembly (tools/vendor_check.sh keeps it): the instructions
    between the label of the last backward jump and that jump, by opcode."""
    import glob
    if INTEL.get("dump"):  # (IGC's listing of the kernel at its SIMD width: vendor_check's Xe2 target)
        asm = [a for a in glob.glob(os.path.join(tmp, "xe2", "out", INTEL["target"], INTEL["program"], "dump",
                                                 "*_simd16_entry_*.asm"))
               if "//.kernel flash_dpas\n" in open(a).read()]
    else:
        asm = glob.glob(os.path.join(tmp, "intel", "out", INTEL["target"], INTEL["program"], "dis", "*.asm"))
    if not asm:
        return None
    lines = open(asm[0]).read().splitlines()
    # (labels: "L1234:" in ocloc's disassembly, "_0_219:" in IGC's listing)
    where = {l.split(":")[0]: i for i, l in enumerate(lines) if re.match(r"^(L\d+|_[0-9_]+):", l)}
    body = None
    for i, l in enumerate(lines):
        m = re.search(r"jmpi\s+(L\d+|_[0-9_]+)", l)
        if m and m.group(1) in where and where[m.group(1)] < i:
            candidate = lines[where[m.group(1)]:i + 1]
            if any(" dpas" in x for x in candidate):
                body = candidate
    if body is None:
        return None
    ops = {}
    for l in body:
        m = re.match(r"^\s+(?:\([^)]*\)\s*)?([a-z_]+)", l)
        if m:
            ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    dpas, math, send = ops.get("dpas", 0), ops.get("math", 0), ops.get("send", 0) + ops.get("sends", 0)
    alu = sum(ops.values()) - dpas - math - send - ops.get("sync", 0)
    if dpas != INTEL["s_dpas"] + INTEL["o_dpas"]:
        sys.exit("model.py: %s's key loop holds %d dpas, not the %d + %d of its tile" %
                 (INTEL["target"], dpas, INTEL["s_dpas"], INTEL["o_dpas"]))
    peak = INTEL["engines"] * 2 * INTEL["fma_clk"] * INTEL["mhz"] * 1e6 / 1e12
    # (the share of the matrix work that is the problem's: with O split, S is computed once a sub-group)
    useful = (INTEL["s_dpas"] + INTEL["split"] * INTEL["o_dpas"]) / (INTEL["split"] * dpas)
    m_clk, v_clk = dpas * INTEL["dpas_clk"], alu + 4 * math
    return {"gpu": INTEL["gpu"], "target": INTEL["target"], "isa": INTEL["isa"], "occupancy": 1, "vgprs": 0,
            "agprs": 0, "mfma": dpas, "mfma_clocks": INTEL["dpas_clk"], "valu": alu, "agpr_moves": 0, "exp": math,
            "lds_reads": send, "lds_writes": 0, "global_loads": 0, "barriers": ops.get("sync", 0),
            "matrix_clocks": m_clk, "valu_clocks": v_clk, "limit": "VALU" if v_clk > m_clk else "matrix core",
            "predicted_tflops": [round(useful * m_clk / (m_clk + v_clk) * peak),
                                 round(useful * m_clk / max(m_clk, v_clk) * peak)],
            "useful": round(useful, 3), "peak_tflops": round(peak, 1)}


def loop_counts(tmp, g):
    program, target = g["program"], g["target"]
    index = open(os.path.join(tmp, "index.tsv")).read().splitlines()
    opts = next(line.split("\t")[4] for line in index if line.split("\t")[1] == program)
    src = open(os.path.join(tmp, "programs", program + ".cl")).read()
    if EDGE not in src:
        sys.exit("model.py: the edge-masking branch is not where model.py looks for it (cl/flash_amd.cl)")
    interior = os.path.join(tmp, program + ".interior.cl")
    open(interior, "w").write(src.replace(EDGE, EDGE.replace("if (edge)", "if (0)")))
    asm = os.path.join(tmp, program + ".interior." + target + ".s")
    if g.get("llvm19"):  # (vendor_check's unpacked clang 19 with libclc: Mesa's triple)
        root = os.path.join(tmp, "llvm19", "root")
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, "usr/lib/x86_64-linux-gnu") + ":" +
                   os.path.join(root, "usr/lib/llvm-19/lib"))
        cmd = [os.path.join(root, "usr/lib/llvm-19/bin/clang"), "-x", "cl", *opts.split(), "-Xclang",
               "-finclude-default-header", "-target", "amdgcn-mesa-mesa3d", "-mcpu=" + target, "-O3", "-nogpulib",
               "-Xclang", "-mlink-builtin-bitcode", "-Xclang",
               os.path.join(root, "usr/lib/clc", target + "-amdgcn-mesa-mesa3d.bc")]
    else:
        env = None
        cmd = [CLANG, "-x", "cl", *opts.split(), "-target", "amdgcn-amd-amdhsa", "-mcpu=" + target, "-O3",
               "--rocm-device-lib-path=" + LIBS]
    r = subprocess.run(cmd + ["-Rpass-analysis=kernel-resource-usage", "-S", interior, "-o", asm],
                       capture_output=True, text=True, check=True, env=env)
    occ = int(re.search(r"Occupancy \[waves/SIMD\]: (\d+)", r.stderr).group(1))
    vgprs = int(re.search(r"VGPRs: (\d+)", r.stderr).group(1))
    agprs = int(re.search(r"AGPRs: (\d+)", r.stderr).group(1)) if "AGPRs:" in r.stderr else 0
    _, counts = isa_counts.loop_counts(open(asm).read().splitlines())
    return counts, occ, vgprs, agprs, opts


def main():
    tmp = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VENDOR_TMP", "/tmp/flashcl-vendor")
    copies = 2  # the tile copies' loop trips at d=128, 32-key tiles, 256 work-items (BLOCK_N * HEAD_DIM / 8 / 256)
    rows = []
    for g in GPUS:
        counts, occ, vgprs, agprs, opts = loop_counts(tmp, g)
        c, n = counts["depth1"], counts["nested"]
        mfma_clk = g["flop"] / (g["fp16"] * 1e12 / (g["cus"] * g["simds"] * g["mhz"] * 1e6))
        valu = c.get("valu", 0) + c.get("agpr_move", 0) + copies * n.get("valu", 0)
        valu_clk = valu * g["valu_clk"] + c.get("exp", 0) * 4 * g["valu_clk"]
        m = occ * c["mfma"] * mfma_clk
        v = occ * valu_clk
        hi, lo = m / max(m, v), m / (m + v)
        rows.append({
            "gpu": g["gpu"], "target": g["target"], "isa": g["isa"], "occupancy": occ, "vgprs": vgprs, "agprs": agprs,
            "mfma": c["mfma"], "mfma_clocks": round(mfma_clk), "valu": valu, "agpr_moves": c.get("agpr_move", 0),
            "exp": c.get("exp", 0), "lds_reads": c.get("lds_read", 0), "lds_writes": copies * n.get("lds_write", 0),
            "global_loads": copies * n.get("global_load", 0), "barriers": c.get("barrier", 0),
            "matrix_clocks": round(m), "valu_clocks": round(v),
            "limit": "VALU" if v > m else "matrix core",
            "predicted_tflops": [round(lo * g["fp16"]), round(hi * g["fp16"])], "peak_tflops": g["fp16"],
        })
    for g in INTELS:
        intel = intel_row(tmp, g)
        if intel:
            rows.append(intel)
    json.dump({"kernels": "flash_mfma (MI300X, MI250X), flash_wmma (RX 7900 XTX), flash_dpas (Max 1550, Arc A770, Arc "
                          "B580: a sub-group's 16-key tile)",
               "problem": "fp16 prefill, d=128, N=4096, non-causal, 32-key tiles, 128 queries a work-group",
               "date": "2026-12-04", "options": opts, "clang": subprocess.run([CLANG, "--version"], capture_output=True,
                                                                              text=True).stdout.splitlines()[0],
               "anchor": ANCHOR + "; " + INTEL_ANCHOR, "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
