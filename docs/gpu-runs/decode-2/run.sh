#!/bin/bash
# Second H200 decode run: the split count (forced) and a few tile shapes (through a tuning file) against
# the chooser's choice at cache 131072, and the tensor-core compiler probe.
# Run on the GPU machine from the repository root: bash docs/gpu-runs/decode-2/run.sh
# (A first version of this script ran out of its time limit drawing gigabytes of host normals for the
# batch-8 caches; bench now repeats one chunk of 2^24. Every step here has its own short limit.)
R=/tmp/decode-2
mkdir -p "$R"
trap 'tar czf "$OUT/decode-2.tgz" -C /tmp decode-2' EXIT
source .gpu/gpu-env.sh >/dev/null
date +%T; meson setup /tmp/b -Dbuildtype=release >/dev/null && ninja -C /tmp/b >/dev/null || exit 1
F=/tmp/b/tools/flashcl
export FLASHCL_DEVICE=NVIDIA
date +%T; gcc -O2 docs/gpu-runs/tc-probe/probe.c -o /tmp/probe -lOpenCL -lm && (cd docs/gpu-runs/tc-probe && timeout 30 /tmp/probe) > "$R/probe.txt" 2>&1
echo "probe rc $?"; grep -v "^ *$" "$R/probe.txt" | grep -v "^build.*: 0$" | tail -12
D="--decode -n 131072 -H 32 --heads-kv 8 -d 128 --dtype f16 --iters 10 --warmup 1 --max-seconds 1 --algos flash"
one() { # name, batch, extra options
  timeout 25 $F bench $D -b $2 $3 --json "$R/$1.json" > "$R/$1.txt" 2> "$R/$1.log"
  echo "$(date +%T) $1 rc $? $(grep flash "$R/$1.txt" | awk '{printf "%s: %s ms %s GB/s  ", $3, $8, $11}')"
}
for s in 0 128 256 512; do one b1-s$s 1 "--kv-splits $s"; done
for s in 0 32 64; do one b8-s$s 8 "--kv-splits $s"; done
dev='vendor=nvidia arch=sm_90 device="NVIDIA H200" head_dim=128 mode=decode :'
i=0
for t in "block_m=4 block_n=64 tpr=16 rows=1 dchunk=128 vchunk=32" "block_m=4 block_n=64 tpr=32 rows=1 dchunk=128 vchunk=16"; do
  i=$((i+1)); echo "$dev $t" > "$R/t$i.db"
  FLASHCL_TUNING_DB="$R/t$i.db" $F tiles --decode -n 131072 --gqa 4 -d 128 --dtype f16 2>&1 | tail -1 | cut -c1-110
  FLASHCL_TUNING_DB="$R/t$i.db" one t$i-b1-s256 1 "--kv-splits 256"
  FLASHCL_TUNING_DB="$R/t$i.db" one t$i-b8-s64 8 "--kv-splits 64"
done
