#!/bin/bash
# Seventh H200 run: why the static local memory probe found 231424 B, not 232448 (probe.c: the build
# logs of both probe kernels near 227 KiB); test_plan after its budget assertions were brought to the
# probe's rule. From the repository root.
source .gpu/gpu-env.sh >/dev/null
gcc -O1 -w -o /tmp/probe docs/gpu-runs/h200-7/probe.c -lOpenCL && /tmp/probe > "$OUT/probe.txt" 2>&1
grep -E "^==|shared|error" "$OUT/probe.txt" | head -40
ninja -C build-gpu > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
FLASHCL_DEVICE=NVIDIA FLASHCL_TEST_PLATFORM=NVIDIA CK_FORK=no timeout 120 build-gpu/tests/test_plan > "$OUT/test_plan.log" 2>&1
echo "test_plan rc $? $(grep -E '^[0-9]+%|F:' "$OUT/test_plan.log" | tail -3)"
