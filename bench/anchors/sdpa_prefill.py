"""PyTorch SDPA on flashcl's prefill shapes (B*N = 16384 tokens, hidden 2048: d=64 H=32, d=128 H=16, d=256 H=8), for
the side-by-side figures in BENCHMARKS.md. Median of CUDA events over 20 runs after 5 warm-ups; TFLOP/s
counts 4*B*H*N^2*d (half of it causal, FlashAttention's convention). One JSON line per result."""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import time_ms

dev = torch.device("cuda")
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
cases = [(d, n, False) for d in (128, 64, 256) for n in (1024, 4096, 16384)] + [(128, n, True) for n in (1024, 4096, 16384)]
runs = [("flash", SDPBackend.FLASH_ATTENTION, torch.float16), ("flash", SDPBackend.FLASH_ATTENTION, torch.bfloat16),
        ("cudnn", SDPBackend.CUDNN_ATTENTION, torch.float16), ("cudnn", SDPBackend.CUDNN_ATTENTION, torch.bfloat16),
        ("efficient", SDPBackend.EFFICIENT_ATTENTION, torch.float32)]
# optional: python sdpa_prefill.py [BACKENDS [HEAD_DIMS]], e.g. "efficient" "128,64": only those
only = sys.argv[1].split(",") if len(sys.argv) > 1 else None
dims = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else None
for d, n, causal in cases:
    if dims and d not in dims:
        continue
    heads, batch = 2048 // d, 16384 // n
    for name, be, dtype in runs:
        if only and name not in only:
            continue
        q, k, v = (torch.randn(batch, heads, n, d, device=dev, dtype=dtype) for _ in range(3))
        flops = 4 * batch * heads * n * n * d / (2 if causal else 1)
        try:
            with sdpa_kernel(be):
                med, lo, hi = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 5, 20)
            print(json.dumps({"backend": name, "dtype": str(dtype).split(".")[1], "d": d, "n": n, "causal": causal,
                              "median_ms": med, "min_ms": lo, "max_ms": hi, "tflops": flops / med / 1e9}), flush=True)
        except Exception as ex:  # a backend that refuses the shape is a result too
            print(json.dumps({"backend": name, "dtype": str(dtype).split(".")[1], "d": d, "n": n, "causal": causal, "error": str(ex)[:160]}), flush=True)
        del q, k, v
        torch.cuda.empty_cache()
sys.exit(0)
