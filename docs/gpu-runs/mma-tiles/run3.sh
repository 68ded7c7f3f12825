#!/bin/bash
# For the next session's device time (written after this one's was spent): flash_mma with two m16 tiles a
# warp (MT=2, rows_per_item 4: 4 warps x 32 rows, Q's block in local memory) against 4/8 warps x 16 rows,
# at d=64 and 128 (and 192/256, Q in local memory), with the plan's local-memory fix (tiles past 48 KiB no longer shrunk); the mma cases
# of test_flash on the real PTX; PyTorch SDPA in the same session. Prediction: docs/NOTES.md.
source .gpu/gpu-env.sh >/dev/null
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
FLASHCL_TEST_FEATURES=mma FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 60 build-gpu/tests/test_flash > "$OUT/test_flash_mma.log" 2>&1
echo "test_flash mma rc $? $(grep -E '^[0-9]+%|F:' "$OUT/test_flash_mma.log" | tail -3)"
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
LD_LIBRARY_PATH=build-gpu FLASHCL_BUILD_OPTIONS=-cl-nv-verbose FLASHCL_BUILD_LOG=1 FLASHCL_CACHE=0 timeout 240 /tmp/mma_tiles 64 128 192 256 > "$OUT/mma_tiles.txt" 2> "$OUT/mma_tiles.log"
grep -E "^d=" "$OUT/mma_tiles.txt"
grep -E "Used [0-9]+ registers|spill" "$OUT/mma_tiles.log" | sort | uniq -c | head -20
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > "$OUT/sdpa.jsonl" 2> "$OUT/sdpa.log"
echo "sdpa rc $?"
# the swizzled layout on the default d<=128 kernel (-DSWIZZLE=1; it follows Q_LOCAL otherwise): validated
# against the naive kernel and timed beside the padded rows. (FLASHCL_BUILD_OPTIONS reaches every program;
# the host's local-memory formula counts padded rows, an overestimate, harmless.)
LD_LIBRARY_PATH=build-gpu FLASHCL_BUILD_OPTIONS=-DSWIZZLE=1 timeout 120 /tmp/mma_tiles 64 128 > "$OUT/mma_tiles_swizzle.txt" 2>&1
grep -E "^d=" "$OUT/mma_tiles_swizzle.txt" | head -8
