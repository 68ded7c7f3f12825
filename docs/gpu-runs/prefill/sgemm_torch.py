"""PyTorch's fp32 GEMM (cuBLAS, TF32 off), M = N = K = 8192, beside CLBlast's SGEMM (sgemm.c) in one call."""
import torch
from cuda_timing import time_ms

torch.backends.cuda.matmul.allow_tf32 = False
n = 8192
a = torch.rand(n, n, device="cuda") - 0.5
b = torch.rand(n, n, device="cuda") - 0.5
med, lo, hi = time_ms(lambda: a @ b, 3, 10)
print(f"torch fp32 matmul {n}^3 (TF32 off): median {med:.3f} ms ({lo:.3f}-{hi:.3f}), {2 * n**3 / med / 1e9:.1f} TFLOP/s")
