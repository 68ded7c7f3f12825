#!/bin/bash
# Sixth H200 run of 2026-12-01: (1) the decode table after decode-mma-5 (E4M3 by sm_89's pair conversion,
# 4 tiles), every format and paged cache beside PyTorch SDPA in one session, for bench/decode-mma/;
# (2) the static local memory probe (profile.local_mem_static: expected 232448) and its disk cache, and
# the device suites with the larger local-memory budget it gives the chooser (116736 B a work-group).
# One tarball in $OUT. From the repository root.
R=/tmp/h200-6
rm -rf "$R"; mkdir -p "$R"
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*" | tee -a "$R/summary.txt"; }
trap 'tar -C /tmp -czf "$OUT/h200-6.tgz" h200-6' EXIT
[ -d build-gpu ] || meson setup build-gpu -Dbuildtype=release >/dev/null
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
s built
F=build-gpu/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
export FLASHCL_CACHE_DIR=/tmp/h200-6-cache
rm -rf "$FLASHCL_CACHE_DIR"
for i in 1 2; do
  t0=$(date +%s.%N); $F devices --json > "$R/devices_$i.json" 2>&1; t1=$(date +%s.%N)
  s "devices $i: $(echo "$t1 - $t0" | bc) s; $(grep -o '"local_mem_[a-z_]*": [0-9]*' "$R/devices_$i.json" | tr '\n' ' ')"
done
$F devices > "$R/devices.txt" 2>&1
$F tiles --all > "$R/tiles.txt" 2>&1
s "tiles: $(grep -c flash "$R/tiles.txt") rows"
T="FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no"
for t in kernels mma plan; do
  env FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_$t > "$R/test_$t.log" 2>&1
  s "test_$t rc $? $(grep -E '^[0-9]+%' "$R/test_$t.log" | tail -1)"
done
D="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072"
one() { local tag=$1; shift; timeout 30 $F bench $D "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s:%s ", $3, $8, $11}')"; }
for b in 8 1; do
  one h200_b${b}_auto -b $b
  one h200_b${b}_int8 -b $b --kv-dtype int8
  one h200_b${b}_int8f16 -b $b --kv-dtype int8-f16
  one h200_b${b}_fp8e5m2 -b $b --kv-dtype fp8e5m2
  one h200_b${b}_fp8e4m3 -b $b --kv-dtype fp8e4m3
  one h200_b${b}_paged256 -b $b --paged 256
  one h200_b${b}_paged16 -b $b --paged 16
done
timeout 80 /opt/torch/.venv/bin/python bench/anchors/sdpa_decode.py 8192,32768,131072 flash,cudnn > "$R/h200_sdpa.jsonl" 2> "$R/sdpa.log"
s "sdpa rc $?"
env FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 170 build-gpu/tests/test_flash > "$R/test_flash.log" 2>&1
s "test_flash rc $? $(grep -E '^[0-9]+%' "$R/test_flash.log" | tail -1)"
