#!/bin/bash
# Third H200 run of the decode kernel: which of decode-4's two changes cost 25% at batch 8 (the hardware
# exp2, or one row lookup a step): the kernel as it is, with the exact exp2
# (FLASHCL_EXPERIMENT_EXACT_EXP, a temporary switch), and with both reverted (-DEXPERIMENT_ROW_PER_KEY);
# the portable kernel's decode path in the same session. From the repository root on the GPU machine.
R=/tmp/decode-5
mkdir -p "$R"
trap 'tar czf "$OUT/decode-5.tgz" -C /tmp decode-5' EXIT
source .gpu/gpu-env.sh >/dev/null
s() { echo "$(date +%T) $*"; }
meson setup /tmp/b -Dbuildtype=release -Dtests=false >/dev/null && ninja -C /tmp/b > "$R/build.log" 2>&1 || { tail -20 "$R/build.log"; exit 1; }
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
B="--decode -H 32 --heads-kv 8 -d 128 --dtype f16 --algos flash --iters 20 --warmup 3 --max-seconds 1 -n 8192,32768,131072"
run() { local tag=$1; shift; timeout 40 $F bench $B "$@" --json "$R/$tag.json" > "$R/$tag.txt" 2> "$R/$tag.log"; s "$tag rc $? $(grep -E '\| flash' "$R/$tag.txt" | awk '{printf "%s:%s:%s:%s ", $1, $3, $11, $15}')"; }
for b in 8 1; do
  run b$b-now -b $b --path decode
  FLASHCL_EXPERIMENT_EXACT_EXP=1 run b$b-exact -b $b --path decode
  FLASHCL_EXPERIMENT_EXACT_EXP=1 FLASHCL_BUILD_OPTIONS=-DEXPERIMENT_ROW_PER_KEY run b$b-both -b $b --path decode
  run b$b-portable -b $b --path portable
done
