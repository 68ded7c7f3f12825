#!/bin/bash
# SPDX-License-Identifier: MIT
# scale_loads_h200.sh: one decode step over an int8 cache with fp16 scales, its scale loads built three
# ways (cl/flash_decode_mma.cl's SCALE_LOADS 0, 1, 2 through FLASHCL_BUILD_OPTIONS), beside the fp16 and
# fp8 caches' steps, three rounds in turns (docs/design/decode_mma.md, decode-mma-10; issue 34's item 3:
# a quantized step at most 0.55x the fp16 one). Run on the GPU machine from the repository root after
# `source .gpu/gpu-env.sh`; writes $OUT/scale_loads/*.json and prints each variant's middle round.
set -uo pipefail
out=${OUT:-/tmp}/scale_loads
mkdir -p "$out"
b=${BUILD:-/tmp/bs}
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release -Dtests=disabled >/dev/null && ninja -C "$b" tools/flashcl >/dev/null; } || exit 1
common="--device NVIDIA --decode -n 131072 -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3"
for r in 1 2 3; do
  for batch in 8 1; do
    for v in 0 1 2; do
      FLASHCL_BUILD_OPTIONS="-DSCALE_LOADS=$v" "$b/tools/flashcl" bench $common -b $batch --kv-dtype int8-f16 \
        --json "$out/b${batch}_int8f16_s${v}_r$r.json" >/dev/null 2>&1 || echo "b$batch s$v r$r: exit $?"
    done
    for f in plain fp8e4m3 int8; do
      "$b/tools/flashcl" bench $common -b $batch --kv-dtype $f --json "$out/b${batch}_${f}_r$r.json" >/dev/null 2>&1 ||
        echo "b$batch $f r$r: exit $?"
    done
  done
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
runs = {}
for p in glob.glob(os.path.join(out, "*.json")):
    name = os.path.basename(p)[:-5].rsplit("_r", 1)[0]
    r = next((x for x in json.load(open(p))["results"] if x.get("ran")), None)
    if r:
        runs.setdefault(name, []).append(r["median_ms"])
for batch in (8, 1):
    plain = statistics.median(runs.get(f"b{batch}_plain", [float("nan")]))
    for name in sorted(k for k in runs if k.startswith(f"b{batch}_")):
        ms = sorted(runs[name])
        print(f"{name:22s} {statistics.median(ms):.4f} ms [{ms[0]:.4f}-{ms[-1]:.4f}]  {statistics.median(ms) / plain:.2f}x fp16")
PY
