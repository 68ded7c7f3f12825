"""The Python binding on an OpenCL device (CI: PoCL): results against a float64 numpy reference on random
inputs, the PyOpenCL path against the numpy one, the ABI check, and errors with the library's words."""
import ctypes

import numpy as np
import pytest

import flashcl


def reference(q, k, v, causal=False, scale=None, window=None, softcap=None, top_left=False, mask=None):
    """float64 attention: (batch, seq, heads, dim) in and out; GQA by repeating K/V heads."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    b, sq, hq, d = q.shape
    skv, hkv = k.shape[1], k.shape[2]
    k = np.repeat(k, hq // hkv, axis=2)
    v = np.repeat(v, hq // hkv, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * (1.0 / np.sqrt(d) if scale is None else scale)
    if softcap:
        s = softcap * np.tanh(s / softcap)
    pos = np.arange(sq)[:, None] + (0 if top_left else skv - sq)
    j = np.arange(skv)[None, :]
    keep = np.ones((sq, skv), bool)
    if causal:
        keep &= j <= pos
    if window is not None:
        left, right = window
        if left >= 0:
            keep &= j >= pos - left
        if right >= 0:
            keep &= j <= pos + right
    if mask is not None:  # boolean: keep; float: added
        if mask.dtype == np.bool_:
            keep = keep & mask
        else:
            s = s + mask.astype(np.float64)
    s = np.where(keep, s, -np.inf)
    keep = keep & np.isfinite(s)
    m = s.max(axis=-1, keepdims=True)
    p = np.where(keep, np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
    l = p.sum(axis=-1, keepdims=True)
    p = np.divide(p, l, out=np.zeros_like(p), where=l > 0)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def check(out, ref, dtype):
    tol = 2e-6 if dtype == np.float32 else 2e-3
    err = np.abs(out.astype(np.float64) - ref).max()
    assert err <= tol * max(1.0, np.abs(ref).max()), f"max error {err}"


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("causal", [False, True])
def test_numpy_gqa(dtype, causal):
    rng = np.random.default_rng(1)
    q, k, v = rand(rng, (2, 37, 4, 32), dtype), rand(rng, (2, 53, 2, 32), dtype), rand(rng, (2, 53, 2, 32), dtype)
    out = flashcl.attention(q, k, v, causal=causal)
    assert out.shape == q.shape and out.dtype == np.dtype(dtype)
    check(out, reference(q, k, v, causal=causal), dtype)


def test_options():
    rng = np.random.default_rng(2)
    q, k = rand(rng, (1, 40, 2, 64), np.float32), rand(rng, (1, 60, 2, 64), np.float32)
    v = rand(rng, (1, 60, 2, 32), np.float32)  # V's own head dim: O takes it
    out = flashcl.attention(q, k, v, window=(16, 4), softcap=5.0, scale=0.2)
    assert out.shape == (1, 40, 2, 32)
    check(out, reference(q, k, v, window=(16, 4), softcap=5.0, scale=0.2), np.float32)
    out = flashcl.attention(q, k, k, causal=True, alignment="top-left")
    check(out, reference(q, k, k, causal=True, top_left=True), np.float32)


def test_masks():
    rng = np.random.default_rng(5)
    q, k, v = rand(rng, (2, 20, 4, 32), np.float32), rand(rng, (2, 30, 2, 32), np.float32), rand(rng, (2, 30, 2, 32), np.float32)
    keep = rng.random((2, 1, 20, 30)) > 0.3  # per batch, broadcast over heads (transformers' padding masks)
    keep[0, 0, 3] = False                     # a row that sees no key: zeros
    out = flashcl.attention(q, k, v, mask=keep)
    ref = reference(q, k, v, mask=keep)
    check(out, ref, np.float32)
    assert np.all(out[0, 3] == 0)
    add = (rng.standard_normal((1, 4, 20, 30)) * 2).astype(np.float32)  # additive, broadcast over batch
    check(flashcl.attention(q, k, v, mask=add, causal=True), reference(q, k, v, mask=add, causal=True), np.float32)
    with pytest.raises(ValueError, match="mask"):
        flashcl.attention(q, k, v, mask=keep[:, :, :10])


def test_pyopencl_arrays_and_plan_cache():
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla
    rng = np.random.default_rng(3)
    q, k, v = (rand(rng, (2, 33, 4, 16), np.float32) for _ in range(3))
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    dq, dk, dv = (cla.to_device(queue, a) for a in (q, k, v))
    out, event = flashcl.attention(dq, dk, dv, causal=True)
    event.wait()
    assert isinstance(out, cla.Array) and out.shape == q.shape
    check(out.get(), reference(q, k, v, causal=True), np.float32)
    fctx = flashcl._contexts[queue.int_ptr]
    plans = len(fctx._plans)
    out2, _ = flashcl.attention(dq, dk, dv, causal=True)  # the same shape: the cached plan
    assert len(fctx._plans) == plans
    assert np.array_equal(out2.get(), out.get())


def test_abi_mirror_drift_is_refused():
    class Short(ctypes.Structure):
        _fields_ = [("batch", ctypes.c_int32)]
    mirrors = list(flashcl.MIRRORS)
    mirrors[0] = Short
    with pytest.raises(ImportError, match="flashcl_problem"):
        flashcl.check_abi(mirrors)
    flashcl.check_abi()  # the binding's own mirrors match


def test_errors():
    rng = np.random.default_rng(4)
    q = rand(rng, (1, 8, 2, 16), np.float32)
    with pytest.raises(TypeError, match="float64"):
        flashcl.attention(q.astype(np.float64), q, q)
    with pytest.raises(ValueError, match="C-contiguous"):
        flashcl.attention(q, q[:, :, :, ::2].repeat(2, axis=3)[:, :, ::-1], q)
    with pytest.raises(ValueError, match="do not fit"):
        flashcl.attention(q, np.ascontiguousarray(q[:, :, :, :8]), q)
    with pytest.raises(flashcl.FlashclError) as ex:  # the library's refusal, its status and words
        bad = rand(rng, (1, 8, 2, 12), np.float32)
        flashcl.attention(bad, bad, bad)
    assert ex.value.status == "UNSUPPORTED" and "problem.head_dim = 12" in str(ex.value)
