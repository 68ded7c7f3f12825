#!/bin/bash
# flash_mma's tiles set by an override (the API now takes mma = 1 with block_m/block_n): 4 and 8 warps
# x 32/64/128-key tiles at d=64 and 128, beside PyTorch SDPA in the same session; the mma feature cases
# of test_flash (the override cases included) on the real PTX. Prediction in docs/NOTES.md.
source .gpu/gpu-env.sh >/dev/null
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
FLASHCL_TEST_FEATURES=mma FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 60 build-gpu/tests/test_flash > "$OUT/test_flash_mma.log" 2>&1
echo "test_flash mma rc $? $(grep -E '^[0-9]+%|F:' "$OUT/test_flash_mma.log" | tail -3)"
gcc -O2 -Iinclude docs/gpu-runs/mma-tiles/mma_tiles.c -o /tmp/mma_tiles -Lbuild-gpu -lflashcl -lOpenCL -w
LD_LIBRARY_PATH=build-gpu timeout 120 /tmp/mma_tiles 64 128 2>&1 | tee "$OUT/mma_tiles.txt"
timeout 150 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py > "$OUT/sdpa.jsonl" 2> "$OUT/sdpa.log"
echo "sdpa rc $?"; cut -c1-200 "$OUT/sdpa.jsonl"
