"""The timing both anchor scripts use: CUDA events around one call, after warm-up calls."""
import statistics

import torch


def time_ms(fn, warmup, runs):
    """Median, min and max in milliseconds of `runs` timed calls of fn() after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times), min(times), max(times)
