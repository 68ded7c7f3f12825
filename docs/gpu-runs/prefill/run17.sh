#!/bin/bash
# run16's SGEMM again: CLBlast's returned event covers its last kernel only; markers around the call now.
source .gpu/gpu-env.sh >/dev/null
gcc -O2 docs/gpu-runs/prefill/sgemm.c -o /tmp/sgemm -lclblast -lOpenCL -w && timeout 120 /tmp/sgemm
PYTHONPATH=bench/anchors timeout 120 /opt/torch/.venv/bin/python docs/gpu-runs/prefill/sgemm_torch.py
timeout 120 /tmp/sgemm
