#!/bin/bash
# Eighth H200 run: what the larger local-memory budget (116736 B: the static probe, half an SM) does to
# the portable kernel where no tuned entry decides (d=32, 192, 256 is tuned; fp32 and fp16), against
# the old 48 KiB budget (FLASHCL_LOCAL_MEM_LIMIT=49152), side by side. Prediction: within +-10% either
# way (the heuristic takes bigger row blocks and a resident Q; one work-group an SM fewer).
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*" | tee -a "$OUT/summary.txt"; }
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
for d in 32 192; do for t in f32 f16; do for lim in 0 49152; do
  FLASHCL_LOCAL_MEM_LIMIT=$([ $lim = 0 ] || echo $lim) timeout 60 $F bench -d $d --dtype $t -n 4096 --path portable --algos flash --iters 10 --warmup 2 --max-seconds 2 --json "$OUT/d${d}_${t}_lim$lim.json" > "$OUT/d${d}_${t}_lim$lim.txt" 2>&1
  s "d=$d $t limit=$lim rc $? $(grep -E '\| flash' "$OUT/d${d}_${t}_lim$lim.txt" | head -1 | tr -s ' ' | cut -c1-160)"
done; done; done
