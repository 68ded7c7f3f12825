"""PyTorch SDPA with V's head dim apart from Q's and K's (DeepSeek's MLA prefill: d_qk 192, d_v 128), for the
head_dim_v figures in BENCHMARKS.md: B*N = 16384 tokens, 16 heads, N = 4096, causal and not, fp16. Median of CUDA
events over 20 runs after 5 warm-ups; TFLOP/s counts 2*B*H*pairs*(d_qk + d_v) (pairs halved when causal), as
flashcl bench counts them. A backend that refuses the shape prints its error. One JSON line per result."""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import time_ms

dev = torch.device("cuda")
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
d, dv, heads, n = 192, 128, 16, 4096
batch = 16384 // n
runs = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
        ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
for causal in (False, True):
    q, k = (torch.randn(batch, heads, n, d, device=dev, dtype=torch.float16) for _ in range(2))
    v = torch.randn(batch, heads, n, dv, device=dev, dtype=torch.float16)
    flops = 2 * batch * heads * n * n * (d + dv) / (2 if causal else 1)
    for name, be in runs:
        row = {"backend": name, "dtype": "float16", "d": d, "dv": dv, "n": n, "causal": causal}
        try:
            with sdpa_kernel(be):
                med, lo, hi = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 5, 20)
            row.update({"median_ms": med, "min_ms": lo, "max_ms": hi, "tflops": flops / med / 1e9})
        except Exception as ex:  # a backend that refuses the shape is a result too
            row["error"] = str(ex)[:160]
        print(json.dumps(row), flush=True)
    del q, k, v
    torch.cuda.empty_cache()
sys.exit(0)
