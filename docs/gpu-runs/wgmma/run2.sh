#!/bin/bash
# Issue 17, wgmma-4: P*V's form (A from registers, B N-major with trans-b) and the throughput of
# m64n256k16 from OpenCL C (wgmma_pv.c).
source .gpu/gpu-env.sh >/dev/null
gcc -O2 docs/gpu-runs/wgmma/wgmma_pv.c -o /tmp/wgmma_pv -lOpenCL -lm -w && timeout 120 /tmp/wgmma_pv
