#!/bin/bash
# SPDX-License-Identifier: MIT
# gpu_suites.sh BUILD [SECONDS]: runs every device suite of a build (meson setup BUILD; ninja -C BUILD)
# on the first device of the platform named by $FLASHCL_TEST_PLATFORM (default "NVIDIA"), each under a
# time limit (default 420 s), the flash suite as $SHARDS shards side by side (default 3); prints one line
# a suite, leaves the logs in $OUT/suites and one archive of them, $OUT/suites.tgz (a device call may
# return only a few files), and exits nonzero when one failed. For a GPU machine, where meson's test
# configurations (PoCL, rusticl) are not what is measured.
set -uo pipefail
build=$1
limit=${2:-420}
export FLASHCL_TEST_PLATFORM=${FLASHCL_TEST_PLATFORM:-NVIDIA} CK_FORK=no FLASHCL_TOOL="$build/tools/flashcl"
log=${OUT:-/tmp}/suites
mkdir -p "$log"
rc=0
run() { # name command...
  local name=$1
  shift
  local t0=$SECONDS
  timeout "$limit" "$@" > "$log/$name.log" 2>&1
  local r=$?
  echo "$name: exit $r, $((SECONDS - t0)) s, $(grep -h 'Checks:' "$log/$name.log" | tail -n 1)"
  [ $r -eq 0 ] || [ $r -eq 77 ] || rc=1
}
shards=${SHARDS:-3}
for ((k = 0; k < shards; ++k)); do
  (FLASHCL_TEST_SHARD=$k/$shards run "flash-$k" "$build/tests/test_flash") &
done
for s in plan validate cache edges mma mfma kernels cli; do
  run "$s" "$build/tests/test_$s"
done
wait
run threads "$build/tests/test_threads"
for ((k = 0; k < shards; ++k)); do
  grep -q "Failures: 0, Errors: 0" "$log/flash-$k.log" || rc=1
done
tar czf "${OUT:-/tmp}/suites.tgz" -C "$(dirname "$log")" suites
exit $rc
