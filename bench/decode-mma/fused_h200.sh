#!/bin/bash
# SPDX-License-Identifier: MIT
# fused_h200.sh BEFORE AFTER: the decode step of two builds of flashcl (BEFORE, AFTER: build folders with
# tools/flashcl) taken in turns, three rounds each, at batch 1 and 8 x 8192, 32768 and 131072 keys (Hq=32,
# Hkv=8, d=128, fp16, the chooser's splits), beside PyTorch SDPA's cuDNN and FlashAttention-2 backends in the
# same device session (docs/design/decode_mma.md, "The merge in the kernel"). Run on the GPU machine after
# `source .gpu/gpu-env.sh`. Writes $OUT/fused/{before,after}_b{1,8}_r{1,2,3}.json and h200_sdpa.jsonl, and
# prints a table of medians (the middle round of three by median time, with the rounds' range).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
before=$1
after=$2
out=${OUT:-/tmp}/fused
mkdir -p "$out"
for r in 1 2 3; do
  for b in 1 8; do
    for which in before after; do
      build=$([ $which = before ] && echo "$before" || echo "$after")
      "$build/tools/flashcl" bench --device NVIDIA --decode -n 8192,32768,131072 -b $b -H 32 --heads-kv 8 -d 128 \
        --dtype f16 --algos flash --iters 50 --warmup 10 --json "$out/${which}_b${b}_r$r.json" \
        > "$out/${which}_b${b}_r$r.txt" 2>&1 || echo "flashcl bench $which b=$b round $r: exit $?"
    done
  done
done
(cd "$src/bench/anchors" && /opt/torch/.venv/bin/python sdpa_decode.py 8192,32768,131072 flash,cudnn \
  > "$out/h200_sdpa.jsonl" 2> "$out/sdpa.err") || echo "sdpa: exit $?"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
sdpa = {}
for line in open(os.path.join(out, "h200_sdpa.jsonl")):
    r = json.loads(line)
    if "median_ms" in r:
        sdpa[(r["backend"], r["batch"], r["cache"])] = r
print("| batch | keys | before µs (GB/s) | after µs (GB/s) | after / before time | cuDNN µs (GB/s) | FA2 µs (GB/s) |")
print("|---|---|---|---|---|---|---|")
for b in (1, 8):
    for n in (8192, 32768, 131072):
        cell = {}
        for which in ("before", "after"):
            runs = []
            for r in (1, 2, 3):
                try:
                    res = json.load(open(os.path.join(out, "%s_b%d_r%d.json" % (which, b, r))))["results"]
                    x = next(x for x in res if x.get("ran") and x["seq"] == n)
                    runs.append((x["median_ms"] * 1e3, x["gb_per_s"]))
                except Exception:
                    pass
            runs.sort()
            cell[which] = runs
        def fmt(runs):
            if not runs:
                return "–"
            mid = runs[len(runs) // 2]
            return "%.1f (%.0f) [%.1f–%.1f]" % (mid[0], mid[1], runs[0][0], runs[-1][0])
        ratio = (cell["after"][len(cell["after"]) // 2][0] / cell["before"][len(cell["before"]) // 2][0]
                 if cell["after"] and cell["before"] else float("nan"))
        def anchor(name):
            x = sdpa.get((name, b, n))
            return "%.1f (%.0f)" % (x["median_ms"] * 1e3, x["gb_per_s"]) if x else "–"
        print("| %d | %d | %s | %s | %.3f | %s | %s |" % (b, n, fmt(cell["before"]), fmt(cell["after"]), ratio,
                                                   anchor("cudnn"), anchor("flash")))
PY
