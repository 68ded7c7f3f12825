#!/bin/bash
# Issue 17, wgmma-18: run16.sh's flashcl bench JSON did not come back (the call returns at most a few files
# from $OUT); on the same warm machine, from run16's disk cache, flashcl bench under auto and PyTorch SDPA
# again, written straight to $OUT (six files): BENCHMARKS.md's flash_wgmma section.
source docs/gpu-runs/wgmma/setup.sh; export FLASHCL_CACHE=1 FLASHCL_CACHE_DIR=$R/cache; mkdir -p $OUT/bench
for cfg in "128 f16 " "128 bf16 " "64 f16 " "256 f16 " "128 f16 --causal"; do
  set -- $cfg
  timeout 20 $B bench --device NVIDIA --algos flash --iters 10 -d $1 --dtype $2 $3 -n 4096,16384 --json $OUT/bench/h200_wgmma_$1_$2${3:+_causal}.json > /dev/null 2>&1
  echo "$1 $2 $3 rc $?"
done
timeout 45 /opt/torch/.venv/bin/python bench/anchors/sdpa_prefill.py flash,cudnn 128,64,256 > $OUT/bench/h200_sdpa.jsonl 2>/dev/null; echo sdpa $?
