"""PyTorch SDPA on flashcl's decode shapes (seq_q = 1, Hq = 32, Hkv = 8, d = 128, fp16), for BENCHMARKS.md.
Median of CUDA events over 50 runs after 10 warm-ups, and of the host's time from the call to its work
finished (host_step_us: the call, then torch.cuda.synchronize()), and its device time without the host's
dispatch (device_us: replays of a CUDA graph of the call); GQA through enable_gqa (no K/V copies).
device_cold_us: the same replays over enough copies of K and V (one graph, a call on each copy in turn)
that a replay's inputs exceed the L2 cache twice over (ROTATE_BYTES, 128 MiB on GPUs of up to 64 MB of
L2), so no call reads its K and V from L2 left by the one before, as a model's layers do not; null where
one copy already does (copies: how many).
Prints one JSON line per (backend, batch, cache length). Arguments (optional): the cache lengths, comma
separated, and the backends, comma separated (default: all five lengths, all four backends)."""
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import graph_us, host_us, time_ms

dev = torch.device("cuda")
backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
            "math": SDPBackend.MATH, "cudnn": SDPBackend.CUDNN_ATTENTION}
caches = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [8192, 16384, 32768, 65536, 131072]
if len(sys.argv) > 2:
    backends = {k: v for k, v in backends.items() if k in sys.argv[2].split(",")}
rotate_bytes = int(os.environ.get("ROTATE_BYTES", 128 << 20))
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
for batch in (1, 8):
    for cache in caches:
        q = torch.randn(batch, 32, 1, 128, device=dev, dtype=torch.float16)
        k = torch.randn(batch, 8, cache, 128, device=dev, dtype=torch.float16)
        v = torch.randn(batch, 8, cache, 128, device=dev, dtype=torch.float16)
        io = (q.numel() * 2 + k.numel() + v.numel()) * 2
        copies = -(-rotate_bytes // io)  # (ceil)
        kvs = [(k, v)] + [(k.clone(), v.clone()) for _ in range(copies - 1)] if copies > 1 else []
        for name, be in backends.items():
            try:
                with sdpa_kernel(be):
                    step = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                    med, lo, hi = time_ms(step, 10, 50)
                    host = host_us(step, 10, 50)
                    device = graph_us(step, 10)
                    cold = None
                    if kvs:
                        turn = lambda: [F.scaled_dot_product_attention(q, a, b, enable_gqa=True) for a, b in kvs]
                        cold = graph_us(turn, 10, repeat=5)
                        cold = cold / len(kvs) if cold is not None else None
                print(json.dumps({"backend": name, "batch": batch, "cache": cache, "median_ms": med,
                                  "min_ms": lo, "max_ms": hi, "gb_per_s": io / med / 1e6, "host_step_us": host,
                                  "device_us": device, "device_cold_us": cold, "copies": max(copies, 1)}),
                      flush=True)
            except Exception as ex:  # a backend that refuses the shape is a result too
                print(json.dumps({"backend": name, "batch": batch, "cache": cache, "error": str(ex)[:160]}), flush=True)
        del q, k, v, kvs
        torch.cuda.empty_cache()
sys.exit(0)
