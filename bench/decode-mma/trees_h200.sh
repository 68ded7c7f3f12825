#!/bin/bash
# SPDX-License-Identifier: MIT
# trees_h200.sh NAME=TREE ...: decode steps of several flashcl source trees built here and run interleaved
# (bench/variants_h200.sh: tree after tree, ROUNDS rounds), at batch 1 and 8 over 8192, 32768 and 131072
# keys (Hq 32, Hkv 8, d 128, fp16 queries) with fp16, int8 and E4M3 caches: decode-mma-19's tiles (int8 and
# E4M3 two 16-key tiles a warp against three and four) and decode-mma-20's merge in the kernel past 16
# splits (fp16 batch 1 × 32768 and 131072), docs/design/decode_mma.md. Then, on the last tree, E5M2's four
# tiles against two (TILES_OVERRIDE, batch 8, whose splits do not depend on the tile count), and the
# driver's registers and spills for every tree's batch-8 programs (tools/nv_driver_sass.py on their PTX).
# Make the trees here and carry them in .gpu, e.g.
#   mkdir -p .gpu/t-before && git archive d0a3270 | tar -x -C .gpu/t-before
#   bench/decode-mma/trees_h200.sh before=.gpu/t-before tiles=.gpu/t-tiles now=.
# BATCHES (default "1 8") and E5M2=0 (no E5M2 comparison) split the work across calls (about 15 s a run,
# 36 runs for three trees and both batches). Run on the GPU machine from the repository root after
# `source .gpu/gpu-env.sh`; writes $OUT/trees/ and
# prints, per shape, each tree's step (ms: the median of the rounds' medians [their range]) with its ratio
# to the same tree's fp16 step, and its host step less its enqueue call (µs), as decode-mma-17 reads it.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: trees_h200.sh NAME=TREE ..."; exit 2; }
out=${OUT:-/tmp}/trees
mkdir -p "$out"
dev=${FLASHCL_DEVICE:-NVIDIA}
args="--device $dev --decode -H 32 --heads-kv 8 -d 128 --dtype f16 -n 8192,32768,131072 --iters 20 --warmup 3"
# (each tree built once, by the first call below, then reused: REUSE, bench/variants_h200.sh)
for b in ${BATCHES:-1 8}; do
  for kv in f16 int8 fp8e4m3; do
    REUSE=1 OUT=$out/b$b-$kv RUN_LIMIT=${RUN_LIMIT:-60} bash bench/variants_h200.sh "${ROUNDS:-2}" "$args -b $b --kv-dtype $kv" \
      "$@" > "$out/b$b-$kv.log"
    grep "exit" "$out/b$b-$kv.log" | sed "s/^/B=$b $kv: /" # (a run that failed or ran out of time)
  done
done
last=${*: -1}
last=${last%%=*}
[ "${E5M2:-1}" = 0 ] || BUILD=/tmp/fcl-var-$last OUT=$out/e5m2 RUN_LIMIT=${RUN_LIMIT:-60} bash bench/options_h200.sh \
  "${ROUNDS:-2}" "${args/-n 8192,32768,131072/-n 131072} -b 8 --kv-dtype fp8e5m2" base= t2=-DTILES_OVERRIDE=2 > "$out/e5m2.log"
grep -s "exit" "$out/e5m2.log" | sed "s/^/e5m2: /"
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
t = {}  # (batch, keys, cache) -> {tree: [(median ms, host step less enqueue, us)]}
for f in sorted(glob.glob(os.path.join(out, '*', '*', '*-[0-9]*.json'))):
    tree = os.path.basename(f).rsplit('-', 1)[0]
    try:
        res = json.load(open(f))['results']
    except (OSError, ValueError):
        continue
    for r in res:
        if r.get('ran'):
            t.setdefault((r['batch'], r['seq'], r.get('kv_format', 'f16')), {}).setdefault(tree, []).append(
                (r['median_ms'], r.get('host_step_us', float('nan')) - r.get('host_enqueue_us', float('nan')),
                 bool(r.get('passed'))))
med = lambda v: statistics.median(v)
for (b, n, kv), row in sorted(t.items()):
    cells = []
    for tree, v in row.items():
        ms = [m for m, _, _ in v]
        f16 = t.get((b, n, 'f16'), {}).get(tree)
        ratio = f" {med(ms) / med([m for m, _, _ in f16]):.3f}x" if f16 and kv != 'f16' else ''
        failed = '' if all(ok for _, _, ok in v) else ' (FAILED validation)'
        cells.append(f"{tree} {med(ms):.4f} [{min(ms):.4f}-{max(ms):.4f}]{ratio} after-enqueue "
                     f"{med([s for _, s, _ in v]):.1f} us{failed}")
    print(f"B={b} x {n} {kv}: " + "; ".join(cells))
PY
for c in "$out"/b8-*/variants/cache-*; do
  case $c in *-sass) continue ;; esac
  [ -d "$c" ] || continue
  echo "== $c"
  mkdir -p "$c-sass" && OUT_DIR="$c-sass" timeout 120 python3 tools/nv_driver_sass.py "$c" 2>&1 |
    grep "flash_decode_mma: [0-9]* registers" | head -4
done
