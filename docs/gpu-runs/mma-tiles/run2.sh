#!/bin/bash
# mma-tiles, second run: the plan no longer shrinks a kernel past the reported 48 KiB when the static
# local memory probe allows it (the first run's d=128 x128 and 128x64 tiles and h200-8's d=192 were
# shrunk back to 48 KiB): d=128 again, and the portable kernel's d=192 under both budgets.
source .gpu/gpu-env.sh >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { meson setup build-gpu -Dbuildtype=release >/dev/null; ninja -C build-gpu > /tmp/build.log 2>&1; }
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
LD_LIBRARY_PATH=build-gpu timeout 60 /tmp/mma_tiles 128 2>&1 | tee "$OUT/mma_tiles_128.txt"
F=build-gpu/tools/flashcl
for t in f32 f16; do for lim in 0 49152; do
  FLASHCL_DEVICE=NVIDIA FLASHCL_LOCAL_MEM_LIMIT=$([ $lim = 0 ] || echo $lim) timeout 40 $F run -b 4 -H 10 -d 192 --dtype $t -n 4096 --path portable > "$OUT/d192_${t}_$lim.txt" 2>&1
  echo "d=192 $t limit=$lim: $(grep -E "^kernel|^time|^validation" "$OUT/d192_${t}_$lim.txt" | cut -c1-110 | tr '\n' ' ')"
done; done
