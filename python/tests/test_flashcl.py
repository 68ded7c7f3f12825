# SPDX-License-Identifier: MIT
"""The Python binding on an OpenCL device (CI: PoCL, from the installed wheel): results against a float64
numpy reference on random inputs, LSE, strided views (numpy and PyOpenCL, outputs NaN-poisoned first),
the PyOpenCL path against the numpy one, the library the binding loaded, the ABI check, and errors with
the library's words."""
import ctypes
import os

import numpy as np
import pytest

import flashcl


def reference(q, k, v, causal=False, scale=None, window=None, softcap=None, top_left=False, mask=None,
              lse=False):
    """float64 attention: (batch, seq, heads, dim) in and out; GQA by repeating K/V heads. lse=True: also
    the log-sum-exp of each row's scores, (batch, heads, seq_q), -inf for a row that sees no key."""
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
        mask = np.asarray(mask)
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
    out = np.einsum("bhqk,bkhd->bqhd", p, v)
    if not lse:
        return out
    with np.errstate(divide="ignore"):
        return out, np.where(l[..., 0] > 0, np.log(np.where(l[..., 0] > 0, l[..., 0], 1)) + m[..., 0], -np.inf)


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def check(out, ref, dtype):
    tol = 2e-6 if dtype == np.float32 else 2e-3
    assert out.shape == ref.shape and np.all(np.isfinite(out)), "NaN or inf (an element left unwritten?)"
    err = np.abs(out.astype(np.float64) - ref).max()
    assert err <= tol * max(1.0, np.abs(ref).max()), f"max error {err}"


def check_lse(lse, ref):
    assert lse.dtype == np.float32 and lse.shape == ref.shape
    assert np.array_equal(np.isneginf(lse), np.isneginf(ref)) and not np.any(np.isnan(lse))
    fin = np.isfinite(ref)
    err = np.abs(lse[fin].astype(np.float64) - ref[fin]).max()
    assert err <= 2e-6 * max(1.0, np.abs(ref[fin]).max()), f"LSE max error {err}"


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


def test_lse():
    rng = np.random.default_rng(6)
    q, k, v = rand(rng, (2, 37, 4, 32), np.float32), rand(rng, (2, 53, 2, 32), np.float32), rand(rng, (2, 53, 2, 32), np.float32)
    out, lse = flashcl.attention(q, k, v, causal=True, return_lse=True)
    ref, ref_lse = reference(q, k, v, causal=True, lse=True)
    check(out, ref, np.float32)
    check_lse(lse, ref_lse)
    keep = rng.random((2, 1, 37, 53)) > 0.3
    keep[1, 0, 5] = False  # a row that sees no key: zeros, LSE -inf
    out, lse = flashcl.attention(q, k, v, mask=keep, softcap=5.0, scale=0.3, return_lse=True)
    ref, ref_lse = reference(q, k, v, mask=keep, softcap=5.0, scale=0.3, lse=True)
    check(out, ref, np.float32)
    check_lse(lse, ref_lse)
    assert np.all(out[1, 5] == 0) and np.all(np.isneginf(lse[1, :, 5]))


def test_numpy_strided_views():
    """(batch, heads, seq, dim) arrays transposed to (batch, seq, heads, dim), a slice of the keys, K and V
    heads broadcast by a stride 0, a poisoned non-contiguous out: strides go to flashcl, nothing reordered."""
    rng = np.random.default_rng(7)
    qh, kh, vh = rand(rng, (2, 4, 37, 32), np.float32), rand(rng, (2, 2, 60, 32), np.float32), rand(rng, (2, 2, 60, 32), np.float32)
    q, k, v = (a.transpose(0, 2, 1, 3) for a in (qh, kh, vh))
    k, v = k[:, 7:], v[:, 7:]  # 53 keys from row 7 of each sequence
    assert not q.flags.c_contiguous and flashcl._element_strides(q, (0, 1, 2)) == (4 * 37 * 32, 32, 37 * 32)
    out_bhsd = np.full((2, 4, 37, 32), np.nan, np.float32)
    out = out_bhsd.transpose(0, 2, 1, 3)
    got, lse = flashcl.attention(q, k, v, causal=True, return_lse=True, out=out)
    assert got is out
    ref, ref_lse = reference(q, k, v, causal=True, lse=True)
    check(out_bhsd.transpose(0, 2, 1, 3), ref, np.float32)
    check_lse(lse, ref_lse)
    # one KV head broadcast to two by a zero head stride (MQA as a view), and an fp16 transposed Q
    kb = np.broadcast_to(kh[:, :1].transpose(0, 2, 1, 3), (2, 60, 2, 32))
    assert flashcl._element_strides(kb, (0, 1, 2))[2] == 0
    check(flashcl.attention(q, kb, kb), reference(q, kb, kb), np.float32)
    q16 = q.astype(np.float16, order="K")  # (keeps the transposed layout)
    assert not q16.flags.c_contiguous
    k16, v16 = k.astype(np.float16), v.astype(np.float16)
    check(flashcl.attention(q16, k16, v16, causal=True), reference(q16, k16, v16, causal=True), np.float16)
    # what flashcl cannot take is copied: a last dim that is not contiguous, negative strides
    qs = np.repeat(q, 2, axis=3)[..., ::2]
    check(flashcl.attention(qs, k[:, ::-1], v[:, ::-1]), reference(qs, k[:, ::-1], v[:, ::-1]), np.float32)


def test_mask_broadcast_and_strided():
    """A (seq_kv,) mask for every batch, head and row (all-zero strides: mask_strides_explicit), a (1, 1,
    seq_q, seq_kv) one, a broadcast_to view, a mask transposed from (batch, seq_q, heads, seq_kv)."""
    rng = np.random.default_rng(8)
    q, k, v = rand(rng, (2, 20, 4, 32), np.float32), rand(rng, (2, 30, 2, 32), np.float32), rand(rng, (2, 30, 2, 32), np.float32)
    row = (rng.standard_normal(30) * 2).astype(np.float32)
    row[[3, 17]] = -np.inf
    for m in (row, row[None, None, None, :], np.broadcast_to(row, (2, 4, 20, 30))):
        p = flashcl._problem(q, k, v, 0, False, None, None, None, "bottom-right", False)
        flashcl._mask_problem(p, m)
        assert p.mask_strides_explicit == 1 and (p.mask_strides.batch, p.mask_strides.seq, p.mask_strides.head) == (0, 0, 0)
        check(flashcl.attention(q, k, v, mask=m), reference(q, k, v, mask=np.broadcast_to(row, (2, 4, 20, 30))), np.float32)
    rows = rng.random((20, 30)) > 0.4  # (seq_q, seq_kv) boolean, for every batch and head
    check(flashcl.attention(q, k, v, mask=rows, causal=True), reference(q, k, v, mask=rows, causal=True), np.float32)
    bshk = (rng.standard_normal((2, 20, 4, 30)) * 2).astype(np.float32)
    m = bshk.transpose(0, 2, 1, 3)  # PyTorch's (batch, heads, seq_q, seq_kv) view of another layout
    p = flashcl._problem(q, k, v, 0, False, None, None, None, "bottom-right", False)
    flashcl._mask_problem(p, m)
    assert (p.mask_strides.batch, p.mask_strides.seq, p.mask_strides.head) == (20 * 4 * 30, 4 * 30, 30)
    check(flashcl.attention(q, k, v, mask=m), reference(q, k, v, mask=m), np.float32)


def _device_context():
    cl = pytest.importorskip("pyopencl")
    ctx = cl.create_some_context(interactive=False)
    return cl, ctx, cl.CommandQueue(ctx)


def test_pyopencl_strided_lse_and_out():
    """Device arrays in (batch, heads, seq, dim) transposed, an offset slice of the keys, the output written
    in place through a transposed view of a NaN-filled buffer, LSE; a non-contiguous last dim refused."""
    cl, ctx, queue = _device_context()
    import pyopencl.array as cla
    rng = np.random.default_rng(9)
    qh, kh, vh = rand(rng, (2, 4, 37, 32), np.float32), rand(rng, (2, 2, 60, 32), np.float32), rand(rng, (2, 2, 60, 32), np.float32)
    dq, dk, dv = (cla.to_device(queue, a).transpose((0, 2, 1, 3)) for a in (qh, kh, vh))
    dk, dv = dk[:, 7:], dv[:, 7:]
    assert dk.offset == 7 * 32 * 4 and not dq.flags.c_contiguous
    obuf = cla.empty(queue, (2, 4, 37, 32), np.float32)
    obuf.fill(np.nan)
    out = obuf.transpose((0, 2, 1, 3))
    got, lse, event = flashcl.attention(dq, dk, dv, causal=True, return_lse=True, out=out)
    event.wait()
    assert got is out and isinstance(lse, cla.Array) and lse.shape == (2, 4, 37)
    q, k, v = qh.transpose(0, 2, 1, 3), kh.transpose(0, 2, 1, 3)[:, 7:], vh.transpose(0, 2, 1, 3)[:, 7:]
    ref, ref_lse = reference(q, k, v, causal=True, lse=True)
    check(obuf.get().transpose(0, 2, 1, 3), ref, np.float32)
    check_lse(lse.get(), ref_lse)
    # the same on the numpy path: one function
    assert np.array_equal(flashcl.attention(q, k, v, causal=True), obuf.get().transpose(0, 2, 1, 3))
    wide = cla.to_device(queue, np.repeat(q, 2, axis=3))[:, :, :, ::2]
    with pytest.raises(ValueError, match="last dim is contiguous"):
        flashcl.attention(wide, dk, dv)
    with pytest.raises(ValueError, match="out is"):
        flashcl.attention(dq, dk, dv, out=cla.empty(queue, (2, 37, 4, 16), np.float32))


def test_library_loaded():
    """The wheel's own library when the package has one (CI runs the installed wheel), else
    $FLASHCL_LIBRARY, else the system's; and it is the ABI the binding mirrors."""
    here = os.path.dirname(flashcl.__file__)
    bundled = [n for n in flashcl._BUNDLED if os.path.isfile(os.path.join(here, n))]
    if bundled:
        assert flashcl.library_path == os.path.join(here, bundled[0])
    elif os.environ.get("FLASHCL_LIBRARY"):
        assert flashcl.library_path == os.environ["FLASHCL_LIBRARY"]
    if os.environ.get("FLASHCL_TEST_WHEEL"):  # (.ci/run: the installed wheel's package and library)
        source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "flashcl")
        assert not (os.path.isdir(source) and os.path.samefile(here, source)), f"flashcl imported from {here}"
        assert bundled and os.path.samefile(os.path.join(here, bundled[0]), flashcl.library_path)
    assert flashcl.ABI_VERSION == 9 and flashcl.library_version().count(".") == 2


def test_abi_mirrors():
    """ABI 4's layout: the offsets in the buffers' order; ABI 5's config: its kernel by enum after the
    algorithm, the kernels' own choices last; ABI 6: precision last in the problem, tf32 last in the config,
    each in its struct's tail padding; ABI 7: fp8 attention's qkv_format and fp8_descale after precision, the
    descale buffer before the workspace; ABI 8: qkv_format last in the config; ABI 9: persistent after it, in
    the tail padding (the library's size check at import holds the rest)."""
    assert [f for f, _ in flashcl.Offsets._fields_] == [f for f, _ in flashcl.Tensors._fields_[:-1]]
    assert [f for f, _ in flashcl.Offsets._fields_][-5:] == ["sinks", "cache_batch_idx", "cache_leftpad", "descale",
                                                             "workspace"]
    assert [f for f, _ in flashcl.Problem._fields_][-4:] == ["mask_strides_explicit", "precision", "qkv_format",
                                                            "fp8_descale"]
    p = flashcl.Problem()
    flashcl._check(flashcl._problem_default(ctypes.byref(flashcl._ABI), ctypes.byref(p)))
    assert p.heads_kv == 0 and p.seq_kv == 0 and p.mask_strides_explicit == 0  # (ABI 4: the query side's)
    assert p.precision == 0 and p.qkv_format == 0 and p.fp8_descale == 0  # (fp32 products; no fp8)
    names = [f for f, _ in flashcl.Config._fields_]
    assert names[:3] == ["algorithm", "kernel", "emulated"] and "mma" not in names and "decode" not in names
    assert names[-9:] == ["kv_stages", "m_tiles", "producer", "team", "keys_per_step", "shuffles", "tf32",
                          "qkv_format", "persistent"]


def test_precision():
    """precision="tf32x3" and "tf32" on float32 against float64: where the matrix units run them (NVIDIA) three
    TF32 products are held near fp32's error and one near fp16's; elsewhere the library computes in fp32,
    within both. float16 data with a TF32 precision is the library's refusal, an unknown name a ValueError."""
    rng = np.random.default_rng(7)
    q, k, v = (rand(rng, (2, 40, 2, 64), np.float32) for _ in range(3))
    ref = reference(q, k, v)
    for precision, tol in (("tf32x3", 2e-5), ("tf32", 4e-3)):
        o = flashcl.attention(q, k, v, precision=precision)
        assert np.max(np.abs(o - ref)) <= tol * np.max(np.abs(ref)), precision
    with pytest.raises(flashcl.FlashclError, match="problem.precision = tf32"):
        flashcl.attention(q.astype(np.float16), k.astype(np.float16), v.astype(np.float16), precision="tf32")
    with pytest.raises(ValueError, match="precision"):
        flashcl.attention(q, k, v, precision="fp16")


def e4m3_values():
    """The 256 E4M3 bytes' values (flashcl.h's format: bias 7, 3 mantissa bits, S.1111.111 NaN), written here
    apart from the library's decoder."""
    vals = []
    for byte in range(256):
        e, m = (byte >> 3) & 15, byte & 7
        v = np.nan if byte & 0x7F == 0x7F else (1 + m / 8) * 2.0 ** (e - 7) if e else m / 8 * 2.0 ** -6
        vals.append(-v if byte & 0x80 else v)
    return np.array(vals)


def fp8_inputs(table):
    """E4M3 bytes of N(0, 1) values (the nearest finite ones) for Q (2, 30, 4, 32), K and V (2, 50, 2, 32), and
    descale factors per (batch, KV head) in 0.5 .. 2."""
    rng = np.random.default_rng(11)
    finite = np.flatnonzero(np.isfinite(table))

    def quantize(shape):
        x = rng.standard_normal(shape)
        return finite[np.argmin(np.abs(x[..., None] - table[finite]), axis=-1)].astype(np.uint8)

    return (quantize((2, 30, 4, 32)), quantize((2, 50, 2, 32)), quantize((2, 50, 2, 32)),
            rng.uniform(0.5, 2.0, (3, 2, 2)).astype(np.float32))


def test_fp8():
    """fp8="e4m3": uint8 bytes for Q, K and V with descale factors per (batch, KV head), causal GQA, float32
    output, against float64 over the decoded values; per-tensor factors with the default float16 output;
    the refusals: float arrays, descale without fp8 or of a wrong shape, an unknown format."""
    table = e4m3_values()
    q8, k8, v8, descale = fp8_inputs(table)
    o = flashcl.attention(q8, k8, v8, causal=True, fp8="e4m3", descale=descale, dtype=np.float32)
    qf = table[q8] * np.repeat(descale[0], 2, axis=1)[:, None, :, None]  # (query head h: KV head h // 2)
    kf = table[k8] * descale[1][:, None, :, None]
    vf = table[v8] * descale[2][:, None, :, None]
    ref = reference(qf, kf, vf, causal=True)
    assert o.dtype == np.float32 and np.max(np.abs(o - ref)) <= 1e-5 * np.max(np.abs(ref))
    d3 = np.array([0.5, 1.5, 0.75], np.float32)
    o16 = flashcl.attention(q8, k8, v8, fp8="e4m3", descale=d3)
    ref16 = reference(table[q8] * d3[0], table[k8] * d3[1], table[v8] * d3[2])
    assert o16.dtype == np.float16 and np.max(np.abs(o16 - ref16)) <= 2e-3 * np.max(np.abs(ref16))
    with pytest.raises(TypeError, match="uint8"):
        flashcl.attention(qf.astype(np.float32), kf.astype(np.float32), vf.astype(np.float32), fp8="e4m3")
    with pytest.raises(ValueError, match="descale without fp8"):
        flashcl.attention(qf.astype(np.float32), kf.astype(np.float32), vf.astype(np.float32), descale=d3)
    with pytest.raises(ValueError, match="descale is"):
        flashcl.attention(q8, k8, v8, fp8="e4m3", descale=np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="fp8="):
        flashcl.attention(q8, k8, v8, fp8="e3m4")


def test_fp8_pyopencl():
    """fp8 on PyOpenCL arrays (the descale factors one too): the numpy path's result, bit for bit."""
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla
    host = fp8_inputs(e4m3_values())
    o = flashcl.attention(*host[:3], causal=True, fp8="e4m3", descale=host[3], dtype=np.float32)
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    dev = [cla.to_device(queue, a) for a in host]
    out, event = flashcl.attention(*dev[:3], causal=True, fp8="e4m3", descale=dev[3], dtype=np.float32)
    event.wait()
    assert np.array_equal(out.get(), o)


def test_errors():
    rng = np.random.default_rng(4)
    q = rand(rng, (1, 8, 2, 16), np.float32)
    with pytest.raises(TypeError, match="float64"):
        flashcl.attention(q.astype(np.float64), q, q)
    with pytest.raises(ValueError, match="do not fit"):
        flashcl.attention(q, np.ascontiguousarray(q[:, :, :, :8]), q)
    with pytest.raises(ValueError, match="out is"):
        flashcl.attention(q, q, q, out=np.empty((1, 8, 2, 16), np.float16))
    with pytest.raises(ValueError, match="seq_q or 1"):
        flashcl.attention(q, q, q, mask=np.zeros((1, 1, 3, 8), np.float32))
    with pytest.raises(flashcl.FlashclError) as ex:  # the library's refusal, its status and words
        bad = rand(rng, (1, 8, 2, 12), np.float32)
        flashcl.attention(bad, bad, bad)
    assert ex.value.status == "UNSUPPORTED" and "problem.head_dim = 12" in str(ex.value)
