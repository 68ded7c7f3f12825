#!/bin/bash
# Issue 17, wgmma-1: Hopper's warpgroup MMA from OpenCL C through the finishing step (wgmma_probe.c):
# m64n8k16 and m64n16k16 from local-memory descriptors in the no-swizzle layout, checked against float64,
# under four readings of the descriptor's two byte offsets.
source .gpu/gpu-env.sh >/dev/null
gcc -O2 docs/gpu-runs/wgmma/wgmma_probe.c -o /tmp/wgmma_probe -lOpenCL -lm -w && timeout 120 /tmp/wgmma_probe
