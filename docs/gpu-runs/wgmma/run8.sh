#!/bin/bash
# Issue 17, wgmma-10: the device suites with auto taking flash_wgmma on the H200 (test_mma with its
# tests updated; test_flash's grid and the lists whose fp16/bf16 cases auto now sends to flash_wgmma).
source docs/gpu-runs/wgmma/setup.sh
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
timeout 30 build-gpu/tests/test_mma > $R/test_mma.log 2>&1
echo "test_mma rc $?: $(grep -E '^[0-9]+%' $R/test_mma.log | tail -1)"; grep -E ':[EF]:' $R/test_mma.log | head -3 | cut -c1-200
for f in grid wgmma,mma,masks,window,align,offsets,mixed; do
  FLASHCL_TEST_FEATURES=$f timeout 55 build-gpu/tests/test_flash > $R/test_flash.log 2>&1
  echo "test_flash $f rc $?: $(grep -E '^[0-9]+%' $R/test_flash.log | tail -1) $(grep -c PASS $R/test_flash.log)"
  grep -E ':[EF]:' $R/test_flash.log | head -4 | cut -c1-200
done
tar czf $OUT/run.tgz -C $R .
