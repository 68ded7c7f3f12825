#!/bin/bash
# SPDX-License-Identifier: MIT
# ablate_h200.sh: where a short decode step's kernel time goes (docs/design/decode_mma.md, decode-mma-15):
# flash_decode_mma at batch 1 (Hq 32, Hkv 8, d 128, fp16; 8192 keys: 16 splits merged in the kernel;
# 32768: 33 splits and flash_combine) under DEC_ABLATE's bits, interleaved (bench/options_h200.sh), beside
# the driver's own floor (tools/enqueue_probe: an empty kernel's profiling start to end, alone and over
# the step's grid). The ablations' results are wrong by design: only their time is read. Run on the GPU
# machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/ablate/.
set -uo pipefail
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}
mkdir -p "$out/ablate"
[ -f "$b/build.ninja" ] || meson setup "$b" . --buildtype=release >/dev/null || exit 1
ninja -C "$b" tools/flashcl tools/enqueue_probe >/dev/null || exit 1
timeout 120 "$b/tools/enqueue_probe" "${FLASHCL_DEVICE:-NVIDIA}" --json > "$out/ablate/probe.json" &&
  python3 -c 'import json,sys; [print(f"  {r[\"name\"]:26s} {r[\"median_us\"]:8.2f} [{r[\"p10_us\"]:.2f}-{r[\"p90_us\"]:.2f}] us") for r in json.load(open(sys.argv[1]))["results"] if r["name"].startswith("kernel")]' "$out/ablate/probe.json"
BUILD=$b OUT=$out/ablate RUN_LIMIT=${RUN_LIMIT:-90} bash bench/options_h200.sh "${ROUNDS:-3}" \
  "--device ${FLASHCL_DEVICE:-NVIDIA} --decode -b 1 -H 32 --heads-kv 8 -d 128 --dtype f16 -n 8192,32768 --iters 50 --warmup 10" \
  base= nomerge=-DDEC_ABLATE=1 nocount=-DDEC_ABLATE=3 noloop=-DDEC_ABLATE=4 bare=-DDEC_ABLATE=7
# (GB/s above are of the whole cache, whatever was read; the step times:)
python3 - "$out/ablate/options" <<'PY'
import glob, json, os, statistics, sys
t = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(f).rsplit("-", 1)[0]
    for r in json.load(open(f))["results"]:
        if r.get("ran"):
            t.setdefault(r["seq"], {}).setdefault(name, []).append(r["median_ms"] * 1e3)
for seq, per in t.items():
    print(f"B=1 x {seq}: " + "  ".join(f"{n} {statistics.median(v):.1f} us [{min(v):.1f}-{max(v):.1f}]" for n, v in per.items()))
PY
