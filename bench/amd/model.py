#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""model.py: flash_mfma's performance model, written before any AMD GPU has run it (docs/design/mfma.md).

For each CDNA target, the program tools/vendor_check.sh writes for fp16 prefill at d=128 (the chooser's
configuration on the CDNA profile) is compiled with clang 15 and ROCm's device libraries, with the
edge-masking branch's body removed (an interior tile's work); isa_counts.py counts the key loop's
instructions by class; the vendor's peak figures turn them into clocks a SIMD:

  matrix core: MFMAs x the clocks one takes (the dense fp16 peak over CUs x 4 SIMDs x the clock)
  VALU:        (VALU + AGPR moves + the tile copies' VALU) x 4 clocks (wave64 on 16 lanes), v_exp_f32 x 16
               (a quarter rate: an assumption)

With two waves a SIMD (the occupancy clang reports), the prediction is a range: the matrix core's share of
the time with the VALU work fully hidden under the other wave's MFMAs (the upper end), and with none of it
hidden (the lower end). Writes bench/amd/predictions.json, which tools/benchmarks_md.py turns into
BENCHMARKS.md's AMD section.

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
PROGRAM = "amd-cdna__prefill-d128-f16__flash_mfma"
EDGE = "        if (edge) {\n            UNROLL\n            for (int st = 0; st < ST; ++st)"

# AMD's datasheet figures: compute units, peak engine clock (MHz), dense fp16 matrix TFLOP/s
GPUS = [
    {"gpu": "MI300X", "target": "gfx940", "isa": "CDNA3: gfx942's instructions", "cus": 304, "mhz": 2100, "fp16": 1307.4},
    {"gpu": "MI250X", "target": "gfx90a", "isa": "CDNA2", "cus": 220, "mhz": 1700, "fp16": 383.0},
]
ANCHOR = "aiter bf16 d=128 forward on MI300X: up to 592 TFLOP/s (ROCm/aiter op_tests/cpp/mha/README.md)"


def loop_counts(tmp, target):
    index = open(os.path.join(tmp, "index.tsv")).read().splitlines()
    opts = next(line.split("\t")[4] for line in index if line.split("\t")[1] == PROGRAM)
    src = open(os.path.join(tmp, "programs", PROGRAM + ".cl")).read()
    if EDGE not in src:
        sys.exit("model.py: the edge-masking branch is not where model.py looks for it (cl/flash_mfma.cl)")
    interior = os.path.join(tmp, PROGRAM + ".interior.cl")
    open(interior, "w").write(src.replace(EDGE, EDGE.replace("if (edge)", "if (0)")))
    asm = os.path.join(tmp, PROGRAM + ".interior." + target + ".s")
    r = subprocess.run([CLANG, "-x", "cl", *opts.split(), "-target", "amdgcn-amd-amdhsa", "-mcpu=" + target, "-O3",
                        "--rocm-device-lib-path=" + LIBS, "-Rpass-analysis=kernel-resource-usage", "-S", interior,
                        "-o", asm], capture_output=True, text=True, check=True)
    occ = int(re.search(r"Occupancy \[waves/SIMD\]: (\d+)", r.stderr).group(1))
    vgprs = int(re.search(r"VGPRs: (\d+)", r.stderr).group(1))
    agprs = int(re.search(r"AGPRs: (\d+)", r.stderr).group(1))
    _, counts = isa_counts.loop_counts(open(asm).read().splitlines())
    return counts, occ, vgprs, agprs, opts


def main():
    tmp = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VENDOR_TMP", "/tmp/flashcl-vendor")
    copies = 2  # the tile copies' loop trips at d=128, 32-key tiles, 256 work-items (BLOCK_N * HEAD_DIM / 8 / 256)
    rows = []
    for g in GPUS:
        counts, occ, vgprs, agprs, opts = loop_counts(tmp, g["target"])
        c, n = counts["depth1"], counts["nested"]
        mfma_clk = 2 * 32 * 32 * 8 / (g["fp16"] * 1e12 / (g["cus"] * 4 * g["mhz"] * 1e6))
        valu = c.get("valu", 0) + c.get("agpr_move", 0) + copies * n.get("valu", 0)
        valu_clk = valu * 4 + c.get("exp", 0) * 16
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
    json.dump({"kernel": "flash_mfma", "problem": "fp16 prefill, d=128, N=4096, non-causal, 32-key tiles, 4 waves",
               "date": "2026-12-04", "options": opts, "clang": subprocess.run([CLANG, "--version"], capture_output=True,
                                                                              text=True).stdout.splitlines()[0],
               "anchor": ANCHOR, "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
