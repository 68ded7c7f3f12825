#!/bin/bash
# SPDX-License-Identifier: MIT
# compare_h200.sh BEFORE_SRC [AFTER_SRC]: builds two flashcl trees (default AFTER_SRC: this checkout) and
# times their flash kernels on the headline shapes, interleaved shape by shape so that drift hits both,
# beside PyTorch SDPA (bench/anchors), in one device session: fp16 prefill at d = 64, 128, 256 with N =
# 4096 and 16384 (B*N = 16384 tokens, hidden 2048), and a decode step (Hq 32, Hkv 8, d 128, fp16) at
# batch 1 and 8 over 131072 keys. Run on the GPU machine after `source .gpu/gpu-env.sh`; writes
# $OUT/compare/*.json (flashcl bench's, one a tree and shape), sdpa_*.jsonl and prints a table.
set -euo pipefail
before=$1
after=${2:-.}
out=${OUT:-/tmp}/compare
mkdir -p "$out"
for t in before after; do
  src=$([ $t = before ] && echo "$before" || echo "$after")
  meson setup "/tmp/fcl-$t" "$src" -Dtests=disabled --buildtype=release >/dev/null
  ninja -C "/tmp/fcl-$t" tools/flashcl >/dev/null
done
shapes=(
  "p64:-d 64 --dtype f16 -n 4096,16384"
  "p128:-d 128 --dtype f16 -n 4096,16384"
  "p256:-d 256 --dtype f16 -n 4096,16384"
  "dec1:--decode -H 32 --heads-kv 8 -d 128 --dtype f16 -b 1 -n 131072"
  "dec8:--decode -H 32 --heads-kv 8 -d 128 --dtype f16 -b 8 -n 131072"
)
for s in "${shapes[@]}"; do
  name=${s%%:*}
  args=${s#*:}
  for t in before after; do
    # shellcheck disable=SC2086
    "/tmp/fcl-$t/tools/flashcl" bench $args --algos flash --iters 30 --warmup 5 --json "$out/$t-$name.json" \
      > "$out/$t-$name.txt" 2>&1 || echo "$t $name: exit $?"
  done
done
py=/opt/torch/.venv/bin/python
$py "$after/bench/anchors/sdpa_prefill.py" flash 64,128,256 > "$out/sdpa_prefill.jsonl" 2>&1 || true
$py "$after/bench/anchors/sdpa_decode.py" 131072 flash > "$out/sdpa_decode.jsonl" 2>&1 || true
python3 - "$out" <<'PY'
import json, glob, os, sys
out = sys.argv[1]
def rows(path):
    try:
        d = json.load(open(path))
    except Exception as e:
        return {}
    res = {}
    for r in d.get('results', d if isinstance(d, list) else []):
        if r.get('algorithm', r.get('algo')) not in (None, 'flash'):
            continue
        key = (r.get('head_dim'), r.get('seq_kv', r.get('seq')), r.get('batch'))
        res[key] = r
    return res
print('%-6s %-22s %12s %12s %8s' % ('shape', 'key (d, N, B)', 'before ms', 'after ms', 'after/before'))
for name in ['p64', 'p128', 'p256', 'dec1', 'dec8']:
    b, a = rows(f'{out}/before-{name}.json'), rows(f'{out}/after-{name}.json')
    for k in sorted(set(b) | set(a), key=str):
        mb = b.get(k, {}).get('median_ms'); ma = a.get(k, {}).get('median_ms')
        ratio = ma / mb if mb and ma else float('nan')
        print('%-6s %-22s %12s %12s %8.3f' % (name, k, mb, ma, ratio))
PY
