#!/bin/bash
# SPDX-License-Identifier: MIT
# fp8_h200.sh: flash_wgmma's fp8 operands (E4M3 Q, K and V, per-head descale factors; docs/design/fp8.md)
# against its fp16 on the same shapes, interleaved (fp16, fp8; ROUNDS rounds, 2 by default), with PyTorch's fp16 SDPA
# (cuDNN, FlashAttention-2) in the same call. First the device lists that hold the fp8 program against
# float64 on the GPU (test_flash's wgmma_fp8 and fp8: the exact cases at fp32's tolerance, the N(0,1)
# case's worst error over its row scale). Each bench run validates sampled rows against the naive kernel:
# the JSON's max_rel_error is the fp8 program's error on N(0,1) bytes at that shape. Run on the GPU
# machine from the repository root after `source .gpu/gpu-env.sh`; BUILD: a release build with tests
# (built here if missing). Writes $OUT/fp8/ and prints TFLOP/s medians (range), fp8/fp16, errors.
set -euo pipefail
py=${PYTHON:-/opt/torch/.venv/bin/python}
b=${BUILD:-/tmp/b}
out=${OUT:-/tmp}/fp8
mkdir -p "$out"
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release >/dev/null && ninja -C "$b" >/dev/null; }
FLASHCL_TEST_FEATURES=wgmma_fp8,fp8 CK_FORK=no timeout 300 "$b/tests/test_flash" > "$out/lists.txt" 2>&1 ||
  echo "lists: exit $?"
grep -E "fp8|Checks|F:" "$out/lists.txt" | tail -14
# (B*N = 16384; causal at d=128 only)
shapes="--device NVIDIA --dtype f16 -n 1024,4096,16384 --iters 10 --warmup 2"
for ((r = 1; r <= ${ROUNDS:-2}; ++r)); do
  for v in f16 fp8; do
    for c in full causal; do
      extra="-d ${DIMS:-64,128,256}"
      [ "$c" = causal ] && extra="-d 128 --causal"
      [ "$v" = fp8 ] && extra="$extra --fp8 e4m3 --descale head"
      # shellcheck disable=SC2086
      "$b/tools/flashcl" bench $shapes $extra --algos flash --json "$out/$v-$c-$r.json" > "$out/$v-$c-$r.txt" 2>&1 ||
        echo "$v $c round $r: exit $?"
    done
  done
done
python3 - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
t = {}
for f in sorted(glob.glob(f"{out}/f*-*-*.json")):
    v = f.split('/')[-1].split('-')[0]
    for r in json.load(open(f))['results']:
        if r.get('ran'):
            k = (r['head_dim'], r['seq'], 'causal' if r['causal'] else 'full')
            t.setdefault(k, {}).setdefault(v, []).append(r)
print('d     N      mask   fp16 TFLOP/s [range]   fp8 TFLOP/s [range]   fp8/fp16  fp8 kernel    fp8 max_rel_error')
for k in sorted(t):
    cell = {}
    for v in ('f16', 'fp8'):
        x = [r['tflops'] for r in t[k].get(v, [])]
        cell[v] = (statistics.median(x), min(x), max(x)) if x else None
    f16, f8 = cell['f16'], cell['fp8']
    rs = t[k].get('fp8', [{}])
    err = max((r.get('max_rel_error', 0) or 0) for r in rs)
    ok = all(r.get('passed', True) for r in rs)
    s = lambda c: f"{c[0]:7.1f} [{c[1]:.1f}-{c[2]:.1f}]" if c else '-'
    ratio = f"{f8[0] / f16[0]:.2f}" if f16 and f8 else '-'
    print(f"{k[0]:<5} {k[1]:<6} {k[2]:<6} {s(f16):>22} {s(f8):>22} {ratio:>8}  {rs[0].get('kernel', ''):<12} "
          f"{err:.2e}{'' if ok else ' FAILED'}")
PY
(cd bench/anchors && "$py" sdpa_prefill.py cudnn,flash "${DIMS:-64,128,256}") > "$out/sdpa.jsonl" 2>&1 || true
grep '"float16"' "$out/sdpa.jsonl" | head -20 || tail -3 "$out/sdpa.jsonl"
