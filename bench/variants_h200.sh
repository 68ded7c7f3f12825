#!/bin/bash
# SPDX-License-Identifier: MIT
# variants_h200.sh REPS "BENCH ARGS" NAME=SRC ...: builds each flashcl tree SRC and runs
# `flashcl bench BENCH ARGS --algos flash --json` on each, interleaved (tree after tree, REPS rounds) so
# that drift hits every tree alike, in one device session: how the design pages' before/after kernel
# measurements are taken (e.g. bench/variants_h200.sh 3 "--preset serving --only plain,mask" old=../a
# new=.). Each tree keeps its compiled programs in $OUT/variants/cache-NAME (the sm_90a programs' PTX:
# ptxas -v on them says registers and spills). Run on the GPU machine after `source .gpu/gpu-env.sh`;
# writes $OUT/variants/NAME-ROUND.json and prints each tree's median TFLOP/s per shape (the median of
# its rounds' medians, with their range). Each run has RUN_LIMIT seconds (150 by default). REUSE=1 keeps
# a tree's build from an earlier call (/tmp/fcl-var-NAME) where it was made from the same SRC.
set -euo pipefail
reps=$1
args=$2
shift 2
out=${OUT:-/tmp}/variants
mkdir -p "$out"
names=()
for v in "$@"; do
  name=${v%%=*}
  src=$(cd "${v#*=}" && pwd)
  names+=("$name")
  if [ -z "${REUSE:-}" ] || [ "$(cat "/tmp/fcl-var-$name/.src" 2>/dev/null)" != "$src" ]; then
    rm -rf "/tmp/fcl-var-$name"
    meson setup "/tmp/fcl-var-$name" "$src" -Dtests=disabled --buildtype=release >/dev/null
    echo "$src" > "/tmp/fcl-var-$name/.src"
  fi
  ninja -C "/tmp/fcl-var-$name" tools/flashcl >/dev/null
done
for ((r = 1; r <= reps; ++r)); do
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086
    FLASHCL_CACHE_DIR="$out/cache-$name" timeout "${RUN_LIMIT:-150}" "/tmp/fcl-var-$name/tools/flashcl" bench $args \
      --algos flash --json "$out/$name-$r.json" > "$out/$name-$r.txt" 2>&1 || echo "$name round $r: exit $?"
  done
done
python3 - "$out" "$reps" "${names[@]}" <<'PY'
import json, statistics, sys
out, reps, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def key(r):
    feats = [f"{k}={r[k]}" for k in ('varlen', 'page_size', 'softcap', 'alibi', 'window_left', 'sinks', 'mask',
                                      'key_padding', 'head_dim_v', 'kv_dtype') if k in r]
    return f"d={r['head_dim']} Sq={r.get('seq_q', r['seq'])} Sk={r['seq']} " + " ".join(feats)
table = {}
for n in names:
    for i in range(1, reps + 1):
        try:
            res = json.load(open(f"{out}/{n}-{i}.json"))['results']
        except Exception:
            continue
        for r in res:
            if r.get('ran'):
                table.setdefault(key(r), {}).setdefault(n, []).append((r['tflops'], r.get('kernel', '')))
print('shape'.ljust(48) + ''.join(n.rjust(22) for n in names))
for k, row in table.items():
    cells = []
    for n in names:
        v = [t for t, _ in row.get(n, [])]
        cells.append(f"{statistics.median(v):7.1f} [{min(v):.1f}-{max(v):.1f}]" if v else '-')
    print(k.ljust(48) + ''.join(c.rjust(22) for c in cells))
PY
