#!/bin/bash
# SPDX-License-Identifier: MIT
# fp8_ablate_h200.sh: where flash_wgmma's fp8 step spends its time (docs/design/fp8.md, fp8-2 to fp8-4). One build,
# then in one device call: the driver's own assembly of the fp16 and fp8 programs at d=128 (registers,
# spills, serialized-wgmma warnings: tools/nv_driver_sass.py, the PTX of setmaxnreg programs for ptxas and
# nvdisasm here), the fp8 one also with the producer at 88 registers (the consumers at 208), and d=128 N=16384 timed under
# build-option variants, interleaved (bench/options_h200.sh, REPS rounds, 2 by default): fp8 with the
# producer at 88 and 72 registers (FP8_PRODUCER_REGS, fp8-4), with one unit a transposing work-item
# (VT_PAIR=0; the pair is the default since fp8-3) and the ablations (WG_ABLATE: 1 drops V's transpose, 2
# the softmax's exponentials, 4 the P*V products, 32 P's conversion to E4M3 bytes (fp8-5); wrong results,
# timing only), fp16's beside them. Run on
# the GPU machine from the repository root after `source .gpu/gpu-env.sh`; writes $OUT/fp8_ablate.tgz.
set -uo pipefail
b=${BUILD:-/tmp/b}
r=/tmp/fp8_ablate
mkdir -p "$r"
snap() { (cd /tmp && tar czf "${OUT:-/tmp}/fp8_ablate.tgz" fp8_ablate); }
[ -x "$b/tools/flashcl" ] || { meson setup "$b" . --buildtype=release >/dev/null && ninja -C "$b" tools/flashcl >/dev/null; } || exit 1
for v in f16 fp8 fp8p88; do
  x="" o=""
  [ $v != f16 ] && x="--fp8 e4m3 --descale head"
  [ $v = fp8p88 ] && o="-DFP8_PRODUCER_REGS=88"
  # shellcheck disable=SC2086
  FLASHCL_BUILD_OPTIONS="$o" FLASHCL_CACHE_DIR=/tmp/cache-$v timeout 90 "$b/tools/flashcl" bench --device NVIDIA --dtype f16 -d 128 -n 16384 --iters 3 \
    --algos flash $x >/dev/null 2>&1
  mkdir -p "$r/sass-$v"
  OUT_DIR=$r/sass-$v timeout 60 python3 tools/nv_driver_sass.py /tmp/cache-$v > "$r/sass-$v/log.txt" 2>&1
  grep -iE "flash_wgmma|serializ|spill|Performance" "$r/sass-$v/log.txt" | head -20
done
snap
export FLASHCL_CACHE_DIR=/tmp/fc BUILD=$b
opt() { # name seconds "bench args" variants...
  local n=$1 t=$2 a=$3
  shift 3
  OUT=/tmp timeout "$t" bash bench/options_h200.sh "${REPS:-2}" "$a" "$@"
  rm -rf "${r:?}/$n" && mv /tmp/options "$r/$n"
  snap
}
shape="-d 128 -n 16384 --dtype f16 --device NVIDIA --iters 10"
opt fp8 200 "$shape --fp8 e4m3 --descale head" base= p88=-DFP8_PRODUCER_REGS=88 p72=-DFP8_PRODUCER_REGS=72 \
  unpaired=-DVT_PAIR=0 vt=-DWG_ABLATE=1 exp=-DWG_ABLATE=2 conv=-DWG_ABLATE=32 vtexpconv=-DWG_ABLATE=35
opt f16 100 "$shape" base= exp=-DWG_ABLATE=2 pv=-DWG_ABLATE=4
