#!/bin/bash
# SPDX-License-Identifier: MIT
# versions_h200.sh SRC...: one decode step's time on several versions of flashcl at once, to find which
# commit changed it (docs/design/decode_mma.md, decode-mma-8: int8 with fp16 scales). Each SRC is a source
# tree (e.g. `git archive C | tar -x -C build-src-C`, carried to the GPU machine); each is built (release,
# no tests) side by side, then every build runs the same steps in turns, three rounds. Run on the GPU
# machine after `source .gpu/gpu-env.sh`. STEPS (default: batch 8 x 131072, Hq 32, Hkv 8, d 128, fp16 queries
# over an int8 cache with fp16 scales, and the fp16 cache beside it) are `flashcl bench` arguments, one step
# a line. Writes $OUT/versions/<src>_<step>_r<round>.json and prints each build's middle round per step.
set -uo pipefail
out=${OUT:-/tmp}/versions
mkdir -p "$out"
STEPS=${STEPS:-"--kv-dtype int8-f16
--kv-dtype plain"}
common="--device NVIDIA --decode -b 8 -n 131072 -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3"
for src in "$@"; do
  name=$(basename "$src")
  # (the tests option: a feature since 0.3, a boolean before)
  ({ meson setup "/tmp/v-$name" "$src" --buildtype=release -Dtests=disabled >"/tmp/v-$name.log" 2>&1 ||
     { rm -rf "/tmp/v-$name"; meson setup "/tmp/v-$name" "$src" --buildtype=release -Dtests=false >>"/tmp/v-$name.log" 2>&1; }; } &&
     ninja -C "/tmp/v-$name" tools/flashcl >>"/tmp/v-$name.log" 2>&1) || { echo "$name: build failed"; tail -5 "/tmp/v-$name.log"; } &
done
wait
for r in 1 2 3; do
  i=0
  while IFS= read -r step; do
    i=$((i + 1))
    for src in "$@"; do
      name=$(basename "$src")
      [ -x "/tmp/v-$name/tools/flashcl" ] || continue
      # shellcheck disable=SC2086
      "/tmp/v-$name/tools/flashcl" bench $common $step --json "$out/${name}_s${i}_r$r.json" >/dev/null 2>&1 ||
        echo "$name step $i round $r: exit $?"
    done
  done <<< "$STEPS"
done
python3 - "$out" "$STEPS" "$@" <<'PY'
import json, os, sys
out, steps, srcs = sys.argv[1], sys.argv[2].splitlines(), [os.path.basename(s) for s in sys.argv[3:]]
print("| version | " + " | ".join("step %d: %s" % (i + 1, s) for i, s in enumerate(steps)) + " |")
print("|---" * (len(steps) + 1) + "|")
for name in srcs:
    cells = []
    for i in range(len(steps)):
        t = []
        for r in (1, 2, 3):
            try:
                res = json.load(open(os.path.join(out, "%s_s%d_r%d.json" % (name, i + 1, r))))["results"]
                t += [x["median_ms"] for x in res if x.get("ran")]
            except Exception:
                pass
        t.sort()
        cells.append("%.4f ms [%.4f–%.4f]" % (t[len(t) // 2], t[0], t[-1]) if t else "–")
    print("| %s | %s |" % (name, " | ".join(cells)))
PY
