#!/bin/bash
# SPDX-License-Identifier: MIT
# splits_h200.sh [BUILD]: flash_decode_mma's step time against its split count at short caches (batch 1 and
# 8 x 8192, 16384, 32768 keys; Hq=32, Hkv=8, d=128, fp16), the chooser's count (0) and forced ones, beside
# PyTorch SDPA's cuDNN and FlashAttention-2 backends on the same shapes (bench/anchors/sdpa_decode.py), in
# one device session (docs/design/decode_mma.md, "Short caches at batch 1"). Run on the GPU machine after
# `source .gpu/gpu-env.sh`; BUILD has tools/flashcl (default: a release build in /tmp/fcl-splits). Writes
# $OUT/splits/h200_splits_b{1,8}_s{N}.json and h200_sdpa.jsonl, and prints a table.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-/tmp/fcl-splits}
out=${OUT:-/tmp}/splits
mkdir -p "$out"
if [ ! -x "$build/tools/flashcl" ]; then
  meson setup "$build" "$src" -Dtests=disabled --buildtype=release >/dev/null && ninja -C "$build" tools/flashcl >/dev/null
fi
for b in 1 8; do
  for s in 0 8 16 32 64 128; do
    "$build/tools/flashcl" bench --device NVIDIA --decode -n 8192,16384,32768 -b $b -H 32 --heads-kv 8 -d 128 \
      --dtype f16 --algos flash --kv-splits $s --iters 50 --warmup 10 --json "$out/h200_splits_b${b}_s$s.json" \
      > "$out/b${b}_s$s.txt" 2>&1 || echo "flashcl bench b=$b splits=$s: exit $?"
  done
done
(cd "$src/bench/anchors" && /opt/torch/.venv/bin/python sdpa_decode.py 8192,16384,32768 flash,cudnn \
  > "$out/h200_sdpa.jsonl" 2> "$out/sdpa.err") || echo "sdpa: exit $?"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
sdpa = {}
for line in open(os.path.join(out, "h200_sdpa.jsonl")):
    r = json.loads(line)
    if "median_ms" in r:
        sdpa[(r["backend"], r["batch"], r["cache"])] = r["gb_per_s"]
print("| batch | keys | " + " | ".join("splits %s" % s for s in (0, 8, 16, 32, 64, 128)) + " | cuDNN | FA2 |")
print("|---" * 10 + "|")
for b in (1, 8):
    for n in (8192, 16384, 32768):
        cells = []
        for s in (0, 8, 16, 32, 64, 128):
            try:
                run = json.load(open(os.path.join(out, "h200_splits_b%d_s%d.json" % (b, s))))
                r = next(x for x in run["results"] if x.get("ran") and x["seq"] == n)
                cells.append("%.0f (%.1f µs)" % (r["gb_per_s"], r["median_ms"] * 1e3))
            except Exception as ex:
                cells.append("–")
        print("| %d | %d | %s | %.0f | %.0f |" % (b, n, " | ".join(cells), sdpa.get(("cudnn", b, n), 0),
                                                  sdpa.get(("flash", b, n), 0)))
PY
