"""PyTorch on the serving shape of flashcl's `bench/serving_h200.sh` (B=4, N=4096, Hq=32, Hkv=8, d=128,
fp16, causal): FlexAttention (`torch.compile(flex_attention)`, score_mod for softcap and ALiBi,
create_block_mask for causal, the window and packed sequences) and SDPA's FlashAttention-2 and cuDNN
backends (plain, and FlashAttention-2 at d=80 and 96, cuDNN at d=192 over d_v=128 with 16 heads); a
boolean mask and key padding through mask_mod.
Median of CUDA events over 20 runs after 5 warm-ups; TFLOP/s counts 4*d per visible (query, key) pair
(d_v for the second product: 2*(d+d_v)), as flashcl bench counts them. One JSON line per result."""
import json
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from cuda_timing import time_ms

dev = torch.device("cuda")
B, N, HQ, HKV, D = 4, 4096, 32, 8, 128
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
flex = torch.compile(flex_attention, dynamic=False)


def emit(name, backend, ms, pairs, d, dv, heads, batch=1):
    flops = 2.0 * (d + dv) * pairs * heads * batch
    med, lo, hi = ms
    print(json.dumps({"feature": name, "backend": backend, "median_ms": med, "min_ms": lo, "max_ms": hi,
                      "tflops": flops / (med * 1e-3) / 1e12}), flush=True)


def causal_pairs(n):
    return n * (n + 1) / 2


def qkv(batch, n, hq, hkv, d, dv=None):
    q = torch.randn(batch, hq, n, d, device=dev, dtype=torch.float16)
    k = torch.randn(batch, hkv, n, d, device=dev, dtype=torch.float16)
    v = torch.randn(batch, hkv, n, dv or d, device=dev, dtype=torch.float16)
    return q, k, v


def run_flex(name, pairs, score_mod=None, mask_mod=None, batch=B, n=N):
    q, k, v = qkv(batch, n, HQ, HKV, D)
    bm = create_block_mask(mask_mod, None, None, n, n, device=dev)
    fn = lambda: flex(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=True)
    try:
        emit(name, "flex", time_ms(fn, 5, 20), pairs, D, D, HQ, batch)
    except Exception as e:  # (a feature FlexAttention cannot compile here is reported, not fatal)
        print(json.dumps({"feature": name, "backend": "flex", "error": str(e)[:200]}), flush=True)


def causal(b, h, qi, ki):
    return qi >= ki


def window(b, h, qi, ki):
    return (qi >= ki) & (qi - ki <= 1024)


def softcap(score, b, h, qi, ki):
    return 50.0 * torch.tanh(score / 50.0)


slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / HQ) for i in range(HQ)], device=dev)


def alibi(score, b, h, qi, ki):
    return score - slopes[h] * (qi - ki).abs()


# packed sequences, as documents of lengths N/2 .. N in one row of B*N tokens at most
gen = torch.Generator().manual_seed(1)
lens = [N] + [int(N // 2 + torch.randint(0, N // 2 + 1, (1,), generator=gen)) for _ in range(B - 1)]
doc_id = torch.cat([torch.full((n,), i, dtype=torch.int32) for i, n in enumerate(lens)]).to(dev)
total = int(sum(lens))


def doc_mask(b, h, qi, ki):
    return (doc_id[qi] == doc_id[ki]) & (qi >= ki)


run_flex("plain", causal_pairs(N), mask_mod=causal)
run_flex("softcap 50", causal_pairs(N), score_mod=softcap, mask_mod=causal)
run_flex("alibi", causal_pairs(N), score_mod=alibi, mask_mod=causal)
run_flex("window 1024,0", sum(min(i, 1024) + 1 for i in range(N)), mask_mod=window)
run_flex("varlen", sum(causal_pairs(n) for n in lens), mask_mod=doc_mask, batch=1, n=total)

# a boolean (N, N) mask for every batch and head (a key removed with probability 1/16), and key padding
# of each sequence's last eighth, both with the causal mask; FLOPs as flashcl counts them (causal pairs)
keep = torch.rand(N, N, generator=gen).ge(1.0 / 16).to(dev)
pad_from = N - N // 8


def bool_mask(b, h, qi, ki):
    return (qi >= ki) & keep[qi, ki]


def key_padding(b, h, qi, ki):
    return (qi >= ki) & (ki < pad_from)


run_flex("bool mask", causal_pairs(N), mask_mod=bool_mask)
run_flex("key padding", causal_pairs(N), mask_mod=key_padding)

# SDPA: FlashAttention-2 and cuDNN, plain (GQA), and the head dims
for d, dv, heads, hkv in [(128, 128, HQ, HKV), (80, 80, HQ, HKV), (96, 96, HQ, HKV), (192, 128, 16, 16)]:
    q, k, v = qkv(B, N, heads, hkv, d, dv)
    for name, be in [("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
        def fn():
            with sdpa_kernel(be):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=hkv != heads)
        try:
            emit(f"d{d}/{dv}" if d != 128 else "plain", name, time_ms(fn, 5, 20), causal_pairs(N), d, dv, heads, B)
        except Exception as e:
            print(json.dumps({"feature": f"d{d}/{dv}", "backend": name, "error": str(e)[:200]}), flush=True)
