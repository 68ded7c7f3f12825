#!/bin/bash
# Issues 18/19, engine-7: the device suites on the session's final library (the chooser's copy cap for
# small work-groups, CLBlast loaded at run time, the memo removed): test_plan, test_tiles, test_kernels,
# and the test_flash lists whose plans the copy cap can reach (decode, split, cache, dimv, kvopts).
source .gpu/gpu-env.sh >/dev/null
R=/tmp/r; mkdir -p $R
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
export FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no
for t in test_plan test_tiles test_kernels; do
  s=$(date +%s); timeout 100 build-gpu/tests/$t > $R/$t.log 2>&1
  echo "$t rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/$t.log | tail -1)"; grep -E ':[EF]:' $R/$t.log | head -5
done
for l in decode split cache dimv kvopts; do
  s=$(date +%s); FLASHCL_TEST_FEATURES=$l timeout 100 build-gpu/tests/test_flash > $R/test_flash_$l.log 2>&1
  echo "test_flash $l rc $? $(( $(date +%s) - s )) s: $(grep -E '^[0-9]+%' $R/test_flash_$l.log | tail -1)"; grep -E ':[EF]:' $R/test_flash_$l.log | head -5
done
