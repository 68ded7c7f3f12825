"""The timing both anchor scripts use: CUDA events around one call, after warm-up calls; and the host's
side of a call."""
import statistics
import time

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


def host_us(fn, warmup, runs):
    """Median in microseconds of the host's time from a call of fn() to its work finished (the call, then
    torch.cuda.synchronize()), after `warmup` untimed calls: what a loop that waits on each step pays
    (flashcl bench's host_step_us)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def graph_us(fn, runs, repeat=20):
    """Median in microseconds of one call's device time without its host dispatch (flashcl bench's
    device_us counterpart): fn() captured once in a CUDA graph, then `repeat` replays back to back
    between two CUDA events (the GPU kept busy, so each replay's launch hides under the one before), over
    `runs` such rounds; None where the call cannot be captured."""
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):  # (warm-up on a side stream, as graph capture asks)
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
    except Exception:  # a backend whose call cannot be captured has no such figure
        return None
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(repeat):
            graph.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3 / repeat)
    return statistics.median(times)
