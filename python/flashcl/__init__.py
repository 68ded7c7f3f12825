# SPDX-License-Identifier: MIT
"""flashcl from Python: exact attention through OpenCL on any GPU or CPU.

A ctypes binding over libflashcl's C API; the wheel (pip install ./python) carries the library in this
package's directory. At import every struct the binding mirrors is checked against the library's own
layout (flashcl_abi_check): a mirror that drifted from the library is an ImportError naming the struct,
never corrupted memory.

    import numpy as np, flashcl
    q = np.random.randn(2, 128, 8, 64).astype(np.float32)      # (batch, seq, heads, head_dim)
    o = flashcl.attention(q, q, q, causal=True)                  # numpy in, numpy out
    o, lse = flashcl.attention(q, q, q, return_lse=True)         # lse: float32 (batch, heads, seq_q)

Tensors may be strided views (a (batch, heads, seq, head_dim) array transposed to (batch, seq, heads,
head_dim), a slice, a broadcast): any array whose last dimension is contiguous is passed with its
strides, not reordered (numpy arrays that cannot be are copied). With PyOpenCL arrays
(`pyopencl.array.Array`) the work stays on the device and the call returns the output and the OpenCL
event of its last command:

    o, event = flashcl.attention(q_dev, k_dev, v_dev, causal=True)

Plans (compiled kernels for one shape) are cached by problem, per context; a context is made per
PyOpenCL command queue (or, for numpy inputs, on flashcl's default device, without PyOpenCL).

The library: the one in this package's directory (the wheel's), else $FLASHCL_LIBRARY, else the
system's (libflashcl.so.9); `flashcl.library_path` says which was loaded.
"""
import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["attention", "Context", "FlashclError", "library_version", "library_path"]

ABI_VERSION = 9
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1}  # FLASHCL_DTYPE_F32, _F16 (bf16: dtype="bf16")
PRECISIONS = {"fp32": 0, "tf32x3": 1, "tf32": 2}  # problem.precision: FLASHCL_PRECISION_FP32, _TF32X3, _TF32
FP8 = {"e4m3": 2, "e5m2": 3}  # problem.qkv_format: FLASHCL_KV_FP8_E4M3, _E5M2


class FlashclError(RuntimeError):
    """A flashcl call failed: .status is the flashcl_status name, the message the library's."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


_HERE = os.path.dirname(os.path.abspath(__file__))
_BUNDLED = ("libflashcl.so", "libflashcl.dylib", "flashcl.dll")  # (python/meson.build's names)


def _library():
    """(path, where from): the package's own library, else $FLASHCL_LIBRARY, else the system's."""
    for name in _BUNDLED:
        path = os.path.join(_HERE, name)
        if os.path.isfile(path):
            return path, "package"
    if os.environ.get("FLASHCL_LIBRARY"):
        return os.environ["FLASHCL_LIBRARY"], "FLASHCL_LIBRARY"
    return ctypes.util.find_library("flashcl") or f"libflashcl.so.{ABI_VERSION}", "system"


def _load():
    path, where = _library()
    try:
        return ctypes.CDLL(path), path
    except OSError as ex:
        hint = {"package": "the wheel's own library (is the OpenCL ICD loader, libOpenCL.so.1, installed?)",
                "FLASHCL_LIBRARY": "$FLASHCL_LIBRARY"}.get(where, "not in the package (installed without its "
                                                              "library?) and not found by the system's loader; "
                                                              "set FLASHCL_LIBRARY to its path")
        raise ImportError(f"flashcl: cannot load the library ({path}; {hint}): {ex}") from ex


_lib, library_path = _load()

# --- the public structs, mirrored field by field from flashcl.h (ABI 9) ---------------------------------
c_int, c_i32, c_u32, c_i64, c_u64, c_f32, c_f64, c_size, c_vp = (ctypes.c_int, ctypes.c_int32, ctypes.c_uint32,
                                                                  ctypes.c_int64, ctypes.c_uint64, ctypes.c_float,
                                                                  ctypes.c_double, ctypes.c_size_t, ctypes.c_void_p)


class Strides(ctypes.Structure):
    _fields_ = [("batch", c_i64), ("seq", c_i64), ("head", c_i64)]


class Problem(ctypes.Structure):
    _fields_ = [("batch", c_i32), ("heads_q", c_i32), ("heads_kv", c_i32), ("seq_q", c_i32), ("seq_kv", c_i32),
                ("head_dim", c_i32), ("dtype", c_int), ("scale", c_f32), ("causal", c_i32), ("return_lse", c_i32),
                ("window", c_i32), ("window_left", c_i32), ("window_right", c_i32), ("softcap", c_f32),
                ("alibi", c_i32), ("attn_mask", c_i32), ("mask_strides", Strides), ("key_padding", c_i32),
                ("varlen", c_i32), ("total_q", c_i64), ("total_kv", c_i64), ("kv_splits", c_i32),
                ("kv_cache", c_i32), ("kv_append", c_i32), ("page_size", c_i32), ("num_pages", c_i32),
                ("q_strides", Strides), ("k_strides", Strides), ("v_strides", Strides), ("o_strides", Strides),
                ("kv_format", c_i32), ("kv_scale_dtype", c_int), ("alignment", c_i32), ("mask_dtype", c_i32),
                ("sinks", c_i32), ("cache_batch_idx", c_i32), ("cache_batch", c_i32), ("cache_leftpad", c_i32),
                ("kv_dtype", c_i32), ("head_dim_v", c_i32), ("mask_strides_explicit", c_i32),
                ("precision", c_i32), ("qkv_format", c_i32), ("fp8_descale", c_i32)]


class DeviceProfile(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 128), ("vendor_name", ctypes.c_char * 64),
                ("platform_name", ctypes.c_char * 64), ("driver_version", ctypes.c_char * 64),
                ("device_version", ctypes.c_char * 128), ("vendor", c_int), ("is_cpu", c_int),
                ("local_mem_size", c_u64), ("local_mem_is_global", c_int), ("global_mem_size", c_u64),
                ("max_alloc_size", c_u64), ("max_work_group_size", c_size), ("wg_multiple", c_size),
                ("compute_units", c_u32), ("nv_cc_major", c_int), ("nv_cc_minor", c_int),
                ("arch", ctypes.c_char * 32), ("has_fp16", c_int), ("has_fp64", c_int), ("has_subgroups", c_int),
                ("has_intel_subgroup_matrix", c_int), ("compiler_available", c_int), ("opencl_major", c_int),
                ("opencl_minor", c_int), ("matrix_units", c_int), ("local_mem_static", c_u64),
                ("local_mem_per_cu", c_u64)]


class Config(ctypes.Structure):
    _fields_ = [("algorithm", c_int), ("kernel", c_int), ("emulated", c_i32), ("block_m", c_i32), ("block_n", c_i32),
                ("threads_per_row", c_i32), ("rows_per_item", c_i32), ("d_chunk", c_i32), ("v_chunk", c_i32),
                ("work_group_size", c_i32), ("kv_splits", c_i32), ("gqa_pack", c_i32), ("local_mem_bytes", c_u64),
                ("local_mem_budget", c_u64), ("kernel_name", ctypes.c_char * 32), ("source", ctypes.c_char * 48),
                ("reason", ctypes.c_char * 160), ("path_reason", ctypes.c_char * 128), ("sub_group", c_i32)] + \
        [(n, c_i32) for n in ("kv_stages", "m_tiles", "producer", "team", "keys_per_step", "shuffles", "tf32",
                              "qkv_format", "persistent")]


class Policy(ctypes.Structure):
    _fields_ = [("path", c_int), ("local_mem_limit", c_u64), ("tuning_db", c_vp)]


class Settings(ctypes.Structure):
    _fields_ = [("validate", c_int), ("disk_cache", c_int), ("cache_dir", ctypes.c_char_p),
                ("local_mem_limit", c_u64), ("validate_max_rows", c_i32), ("extra_build_options", ctypes.c_char_p),
                ("tuning_db", c_int), ("tuning_db_path", ctypes.c_char_p), ("path", c_int)]


class Stats(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in ("programs_built", "programs_from_disk", "program_cache_hits",
                                     "disk_cache_writes", "disk_cache_rejected", "disk_cache_write_failures",
                                     "programs_from_blob")]


class KernelInfo(ctypes.Structure):
    _fields_ = [("max_work_group_size", c_size), ("local_mem_bytes", c_u64), ("private_mem_bytes", c_u64)]


# (flashcl_tensors' buffers, in their order; struct flashcl_offsets has a member for each, in the same
# order since ABI 4)
_BUFFER_NAMES = ("q", "k", "v", "o", "lse", "alibi_slopes", "mask", "key_padding", "cu_seqlens_q", "cu_seqlens_k",
                 "cache_seqlens", "block_table", "k_new", "v_new", "k_scale", "v_scale", "sinks", "cache_batch_idx",
                 "cache_leftpad", "descale", "workspace")


class Offsets(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in _BUFFER_NAMES]


class Tensors(ctypes.Structure):
    _fields_ = [(n, c_vp) for n in _BUFFER_NAMES] + [("offsets", Offsets)]


class Validation(ctypes.Structure):
    _fields_ = [("ran", c_int), ("passed", c_int), ("rows_checked", c_i64), ("rows_total", c_i64),
                ("nan_count", c_i64), ("failures", c_i64), ("max_abs_error", c_f64), ("max_rel_error", c_f64),
                ("worst_row", c_i64), ("worst_col", c_i32), ("worst_out", c_f64), ("worst_ref", c_f64),
                ("atol", c_f64), ("rtol", c_f64)]


class Abi(ctypes.Structure):
    _fields_ = [("version", c_u32), ("count", c_u32), ("sizes", c_u32 * 9)]


# (flashcl_abi_struct's order)
MIRRORS = [Problem, DeviceProfile, Config, Policy, Settings, Stats, KernelInfo, Tensors, Validation]


def abi_of(mirrors=None):
    """The descriptor of these mirrors (default: the binding's), as flashcl_abi_of_header() is C's."""
    mirrors = mirrors or MIRRORS
    return Abi(ABI_VERSION, len(mirrors), (c_u32 * 9)(*[ctypes.sizeof(m) for m in mirrors]))


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


_P = ctypes.POINTER
_abi_check = _fn("flashcl_abi_check", c_int, _P(Abi), ctypes.c_char_p, c_size)
_status_name = _fn("flashcl_status_name", ctypes.c_char_p, c_int)
_version_string = _fn("flashcl_version_string", ctypes.c_char_p)
_last_error = _fn("flashcl_context_last_error", ctypes.c_char_p, c_vp)
_problem_default = _fn("flashcl_problem_default_abi", c_int, _P(Abi), _P(Problem))
_settings_default = _fn("flashcl_settings_default_abi", c_int, _P(Abi), _P(Settings))
_context_create = _fn("flashcl_context_create_abi", c_int, _P(Abi), c_vp, c_vp, c_vp, _P(Settings), _P(c_vp))
_context_create_default = _fn("flashcl_context_create_default_abi", c_int, _P(Abi), ctypes.c_char_p, _P(Settings),
                              _P(c_vp))
_context_destroy = _fn("flashcl_context_destroy", None, _P(c_vp))
_context_cl_objects = _fn("flashcl_context_cl_objects", None, c_vp, _P(c_vp), _P(c_vp), _P(c_vp))
_plan_create = _fn("flashcl_plan_create", c_int, c_vp, _P(Problem), _P(c_vp))
_plan_destroy = _fn("flashcl_plan_destroy", None, _P(c_vp))
_plan_release_tensors = _fn("flashcl_plan_release_tensors", None, c_vp)
_plan_config = _fn("flashcl_plan_config", c_int, c_vp, _P(Config))
_plan_buffer_sizes = _fn("flashcl_plan_buffer_sizes", None, c_vp, _P(c_size), _P(c_size), _P(c_size), _P(c_size),
                         _P(c_size))
_plan_enqueue_on = _fn("flashcl_plan_enqueue_on", c_int, c_vp, c_vp, _P(Tensors), c_u32, _P(c_vp), _P(c_vp))


def check_abi(mirrors=None):
    """Raises ImportError when the mirrors' layout is not the library's (the first difference named)."""
    why = ctypes.create_string_buffer(256)
    abi = abi_of(mirrors)
    if _abi_check(ctypes.byref(abi), why, len(why)) != 0:
        raise ImportError(f"flashcl: the binding's structs do not match the library: {why.value.decode()}")


check_abi()


def library_version():
    """The linked library's version, "major.minor.patch"."""
    return _version_string().decode()


def _check(status, ctx=None):
    if status != 0:
        msg = _last_error(ctx)
        raise FlashclError(_status_name(status).decode(), msg.decode() if msg else "")


class Context:
    """A flashcl context: on PyOpenCL's queue (its context and device), or on flashcl's default device
    ("P:D" or a name substring in `device`). Plans are cached by problem and live with the context."""

    def __init__(self, queue=None, device=None, validate=False):
        s = Settings()
        _check(_settings_default(ctypes.byref(_ABI), ctypes.byref(s)))
        s.validate = 1 if validate else 0
        self._ptr = c_vp()
        if queue is not None:
            _check(_context_create(ctypes.byref(_ABI), c_vp(queue.context.int_ptr), c_vp(queue.device.int_ptr),
                                   c_vp(queue.int_ptr), ctypes.byref(s), ctypes.byref(self._ptr)))
        else:
            _check(_context_create_default(ctypes.byref(_ABI), device.encode() if device else None, ctypes.byref(s),
                                           ctypes.byref(self._ptr)))
        self.queue = queue
        self._plans = {}

    def cl_objects(self):
        """The context's cl_context, cl_device_id and cl_command_queue handles (ints)."""
        c, d, q = c_vp(), c_vp(), c_vp()
        _context_cl_objects(self._ptr, ctypes.byref(c), ctypes.byref(d), ctypes.byref(q))
        return c.value, d.value, q.value

    def plan(self, problem):
        """The cached plan for a Problem (made on first use)."""
        key = bytes(problem)
        plan = self._plans.get(key)
        if plan is None:
            plan = c_vp()
            _check(_plan_create(self._ptr, ctypes.byref(problem), ctypes.byref(plan)), self._ptr)
            self._plans[key] = plan
        return plan

    def config(self, problem):
        """The tiles and kernel a problem's plan got (a Config)."""
        c = Config()
        _check(_plan_config(self.plan(problem), ctypes.byref(c)), self._ptr)
        return c

    def close(self):
        for plan in self._plans.values():
            _plan_destroy(ctypes.byref(plan))
        self._plans.clear()
        if self._ptr:
            _context_destroy(ctypes.byref(self._ptr))

    def __del__(self):
        try:
            self.close()
        except Exception:  # (interpreter shutdown)
            pass


_ABI = abi_of()
_contexts = {}

# OpenCL's C API for the numpy path (the loader flashcl itself uses)
_cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
_cl.clCreateBuffer.restype = c_vp
_cl.clCreateBuffer.argtypes = [c_vp, ctypes.c_uint64, c_size, c_vp, _P(ctypes.c_int32)]
_cl.clEnqueueReadBuffer.restype = ctypes.c_int32
_cl.clEnqueueReadBuffer.argtypes = [c_vp, c_vp, c_u32, c_size, c_size, c_vp, c_u32, _P(c_vp), _P(c_vp)]
_cl.clReleaseMemObject.argtypes = [c_vp]
_cl.clReleaseEvent.argtypes = [c_vp]


_CL_MEM_READ_WRITE, _CL_MEM_COPY_HOST_PTR = 1 << 0, 1 << 5


def _cl_buffer(context, nbytes, host_ptr=None):
    """A device buffer of nbytes, copied from host memory at host_ptr (or uninitialised)."""
    err = ctypes.c_int32()
    if host_ptr is not None and nbytes < 4:  # (at least 4 bytes, copied from 4 bytes of host memory: pad)
        pad = (ctypes.c_uint8 * 4)()
        ctypes.memmove(pad, host_ptr, nbytes)
        host_ptr, nbytes = ctypes.addressof(pad), 4
    flags = _CL_MEM_READ_WRITE | (_CL_MEM_COPY_HOST_PTR if host_ptr is not None else 0)
    buf = _cl.clCreateBuffer(c_vp(context), flags, max(nbytes, 4), None if host_ptr is None else c_vp(host_ptr),
                             ctypes.byref(err))
    if not buf:
        raise FlashclError("OPENCL_ERROR", f"clCreateBuffer failed: {err.value}")
    return buf


def _context_for(queue):
    key = queue.int_ptr if queue is not None else None
    if key not in _contexts:
        _contexts[key] = Context(queue)
    return _contexts[key]


def _is_device_array(a):
    return hasattr(a, "base_data") and hasattr(a, "queue") and not isinstance(a, np.ndarray)


def _element_strides(a, dims):
    """flashcl's element strides (batch, seq, head) of a 4-D array whose dims `dims` (indices into its
    shape) are flashcl's batch, seq and head and whose last dim is contiguous; None when its strides
    cannot be (a last dim that is not contiguous, a negative stride or one that is not a multiple of the
    element). Dims of extent 1 get stride 0 (what they are does not matter); a C-contiguous array gets
    (0, 0, 0), the default layout."""
    item = a.dtype.itemsize
    if a.flags.c_contiguous:
        return (0, 0, 0)
    if a.shape[3] > 1 and a.strides[3] != item:
        return None
    out = []
    for i in dims:
        n, st = a.shape[i], a.strides[i]
        if n == 1:
            out.append(0)
        elif st < 0 or st % item:
            return None
        else:
            out.append(st // item)
    return tuple(out)


def _layout(name, a, dims=(0, 1, 2), mask=False):
    """(the array to pass, its Strides): numpy arrays flashcl cannot take as they are are copied to C order
    (the host copy the upload makes anyway); PyOpenCL arrays are refused. All-zero strides mean the
    default layout to flashcl, so a Q, K or V broadcast over every row (stride 0 everywhere) is copied
    too (masks say so with mask_strides_explicit instead)."""
    st = _element_strides(a, dims)
    if st == (0, 0, 0) and not mask and not a.flags.c_contiguous and a.shape[0] * a.shape[1] * a.shape[2] > 1:
        st = None  # (broadcast over every row: not the default layout)
    if st is None:
        if _is_device_array(a):
            raise ValueError(f"flashcl.attention: {name} is a PyOpenCL array of shape {a.shape} and byte strides "
                             f"{a.strides}: flashcl takes strided tensors whose last dim is contiguous (its stride "
                             f"the element size, {a.dtype.itemsize}) and whose other strides are non-negative "
                             f"multiples of the element size, and does not copy device arrays: pass a contiguous "
                             f"copy")
        a = np.ascontiguousarray(a)
        st = (0, 0, 0)
    return a, Strides(*st)


def _problem(q, k, v, dtype, causal, scale, window, softcap, alignment, return_lse):
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("flashcl.attention: q, k and v must be (batch, seq, heads, head_dim)")
    b, sq, hq, d = q.shape
    bk, skv, hkv, dk = k.shape
    if bk != b or dk != d or v.shape[:3] != k.shape[:3]:
        raise ValueError(f"flashcl.attention: shapes q {q.shape}, k {k.shape}, v {v.shape} do not fit together")
    p = Problem()
    _check(_problem_default(ctypes.byref(_ABI), ctypes.byref(p)))
    p.batch, p.seq_q, p.heads_q, p.head_dim = b, sq, hq, d
    p.seq_kv, p.heads_kv = skv, hkv
    p.head_dim_v = v.shape[3] if v.shape[3] != d else 0
    p.dtype = dtype
    p.causal = 1 if causal else 0
    p.scale = 0.0 if scale is None else float(scale)
    p.alignment = 1 if alignment == "top-left" else 0
    if window is not None:
        p.window, (p.window_left, p.window_right) = 1, window
    p.softcap = float(softcap or 0.0)
    p.return_lse = 1 if return_lse else 0
    return p


MASK_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.bool_): 2, np.dtype(np.uint8): 2}


def _mask_problem(p, mask):
    """problem.attn_mask for a mask of PyTorch's (batch, heads, seq_q, seq_kv) shape, each of the first
    three dims its full size or 1 (broadcast; a numpy mask of fewer dims gets leading 1s): an additive
    float32/float16 one, or a boolean/uint8 one (nonzero keeps the pair). Its strides are passed as they
    are, keys contiguous; one broadcast over batch, heads and rows at once (all-zero strides) is flagged
    with mask_strides_explicit. Returns the mask to pass."""
    code = MASK_DTYPES.get(np.dtype(mask.dtype))
    if code is None:
        raise TypeError(f"flashcl.attention: a mask of {mask.dtype}: float32, float16, bool or uint8")
    if isinstance(mask, np.ndarray) and 1 <= mask.ndim < 4:
        mask = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
    if mask.ndim != 4 or mask.shape[3] != p.seq_kv or mask.shape[0] not in (1, p.batch) or \
            mask.shape[1] not in (1, p.heads_q) or mask.shape[2] not in (1, p.seq_q):
        raise ValueError(f"flashcl.attention: mask {mask.shape}: (batch or 1, heads or 1, seq_q or 1, seq_kv) = "
                         f"({p.batch} or 1, {p.heads_q} or 1, {p.seq_q} or 1, {p.seq_kv})")
    # (the mask's dims are (batch, heads, rows, keys); flashcl's strides are (batch, seq = row, head))
    if mask.flags.c_contiguous and mask.shape[:3] == (p.batch, p.heads_q, p.seq_q):
        st = Strides(0, 0, 0)  # the default layout
    else:
        if mask.flags.c_contiguous:
            mb, mh, mq, mk = mask.shape
            st = (0 if mb == 1 else mh * mq * mk, 0 if mq == 1 else mk, 0 if mh == 1 else mq * mk)
        else:
            st = _element_strides(mask, (0, 2, 1))
        if st is None:
            if _is_device_array(mask):
                raise ValueError(f"flashcl.attention: the mask is a PyOpenCL array of shape {mask.shape} and byte "
                                 f"strides {mask.strides}: its keys must be contiguous and its other strides "
                                 f"non-negative multiples of the element size: pass a contiguous copy")
            mask = np.ascontiguousarray(mask)
            return _mask_problem(p, mask)
        st = Strides(*st)
        if st.batch == 0 and st.seq == 0 and st.head == 0:
            p.mask_strides_explicit = 1  # (one row of seq_kv values for every batch, head and query)
    p.attn_mask, p.mask_dtype, p.mask_strides = 1, code, st
    return mask


def _span(a):
    """The host memory a numpy array with non-negative strides addresses: (pointer, bytes)."""
    if a.size == 0:
        return a.ctypes.data, 0
    return a.ctypes.data, sum((n - 1) * s for n, s in zip(a.shape, a.strides) if n > 1) + a.itemsize


def attention(q, k, v, causal=False, scale=None, window=None, softcap=None, alignment="bottom-right",
              mask=None, dtype=None, queue=None, wait_for=None, return_lse=False, out=None, precision="fp32",
              fp8=None, descale=None):
    """Exact attention, O = softmax(scale * Q K^T [masked]) V, on flashcl.

    q: (batch, seq_q, heads_q, head_dim); k: (batch, seq_kv, heads_kv, head_dim); v: (batch, seq_kv,
    heads_kv, head_dim_v); heads_kv divides heads_q (GQA). numpy arrays (float32 or float16) run on the
    default device and return a numpy array; pyopencl.array.Array inputs run on their queue and return
    (output array, event). Strided arrays are taken as they are when their last dim is contiguous (a
    (batch, heads, seq, dim) array transposed to (batch, seq, heads, dim), a slice): their strides go to
    flashcl in elements; other numpy arrays are copied to C order, other PyOpenCL arrays refused.
    causal aligns bottom-right unless alignment="top-left" (PyTorch's is_causal); window=(left, right) is
    FlashAttention's sliding window (-1: unbounded); softcap caps the scores; scale defaults to
    1/sqrt(head_dim). mask: (batch or 1, heads or 1, seq_q or 1, seq_kv), additive (float32, float16:
    -inf removes a pair) or boolean (True keeps it), of the inputs' kind (numpy or PyOpenCL); numpy masks
    may have fewer dims (numpy's broadcasting). dtype="bf16" reads uint16 arrays as bfloat16.
    return_lse=True also returns the log-sum-exp of each row's scaled scores, float32 (batch, heads_q,
    seq_q) (natural log; -inf for a row that sees no key): (out, lse), or (out, lse, event) on PyOpenCL.
    out: the output array to write, (batch, seq_q, heads_q, head_dim_v) of q's dtype and kind; a
    PyOpenCL one is written in place with its strides (last dim contiguous, rows not overlapping).
    precision: how float32 data may be multiplied (problem.precision): "fp32" (the default), "tf32x3" (three
    TF32 products a product on NVIDIA's tensor cores: PyTorch's fp32 memory-efficient kernel's arithmetic)
    or "tf32" (one: torch.backends.cuda.matmul.allow_tf32's accuracy); a permission, float32 only.
    fp8: "e4m3" or "e5m2" (problem.qkv_format): q, k and v are uint8 arrays of those 8-bit floats' bytes, and
    the output is dtype's (float16 by default, float32, or "bf16": uint16 bits); descale: their descale
    factors, float32 of the inputs' kind, (3,) (Q's, K's, V's) or (3, batch, heads_kv) (FlashAttention-3's,
    per KV head); None: factors of 1.
    """
    on_device = _is_device_array(q)
    if fp8 is not None:
        if fp8 not in FP8:
            raise ValueError(f"flashcl.attention: fp8={fp8!r}: 'e4m3' or 'e5m2'")
        if np.dtype(q.dtype) != np.uint8:
            raise TypeError(f"flashcl.attention: fp8 takes uint8 arrays of the bytes, q is {q.dtype}")
        odt = np.dtype(np.uint16) if dtype == "bf16" else np.dtype(dtype or np.float16)
        code = 2 if dtype == "bf16" else DTYPES.get(odt)
        if code is None:
            raise TypeError(f"flashcl.attention: fp8's output dtype={dtype!r}: float16, float32 or 'bf16'")
    elif descale is not None:
        raise ValueError("flashcl.attention: descale without fp8: descale factors are fp8 attention's")
    elif dtype == "bf16":
        code = 2
        if np.dtype(q.dtype) != np.uint16:
            raise TypeError("flashcl.attention: dtype='bf16' takes uint16 arrays holding bfloat16 bits")
    else:
        code = DTYPES.get(np.dtype(q.dtype))
        if code is None:
            raise TypeError(f"flashcl.attention: {q.dtype} is not float32 or float16 (or uint16 with dtype='bf16')")
    if fp8 is None:
        odt = np.dtype(q.dtype)
    for name, t in (("k", k), ("v", v)):
        if np.dtype(t.dtype) != np.dtype(q.dtype):
            raise TypeError(f"flashcl.attention: {name} is {t.dtype}, q is {q.dtype}: one dtype for all three")
    for name, t in (("k", k), ("v", v), ("mask", mask), ("out", out), ("descale", descale)):
        if t is not None and on_device != _is_device_array(t):
            raise TypeError(f"flashcl.attention: {name} is {'not ' if on_device else ''}a PyOpenCL array and q is"
                            f"{'' if on_device else ' not'}: numpy arrays or PyOpenCL arrays, not both")
    p = _problem(q, k, v, code, causal, scale, window, softcap, alignment, return_lse)
    if precision not in PRECISIONS:
        raise ValueError(f"flashcl.attention: precision={precision!r}: 'fp32', 'tf32x3' or 'tf32'")
    p.precision = PRECISIONS[precision]
    if fp8 is not None:
        p.qkv_format = FP8[fp8]
        if descale is not None:
            shapes = {(3,): 1, (3, q.shape[0], k.shape[2]): 2}
            if tuple(descale.shape) not in shapes or np.dtype(descale.dtype) != np.float32:
                raise ValueError(f"flashcl.attention: descale is {descale.dtype} {tuple(descale.shape)}: float32 (3,) "
                                 f"or (3, {q.shape[0]}, {k.shape[2]})")
            p.fp8_descale = shapes[tuple(descale.shape)]
            if not on_device:
                descale = np.ascontiguousarray(descale)
            elif not descale.flags.c_contiguous:
                raise ValueError("flashcl.attention: descale is a strided PyOpenCL array: pass a contiguous one")
    out_shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
    if out is not None and (tuple(out.shape) != out_shape or np.dtype(out.dtype) != odt):
        raise ValueError(f"flashcl.attention: out is {out.dtype} {tuple(out.shape)}: {odt} {out_shape}")
    q, p.q_strides = _layout("q", q)
    k, p.k_strides = _layout("k", k)
    v, p.v_strides = _layout("v", v)
    if mask is not None:
        mask = _mask_problem(p, mask)
    lse_shape = (q.shape[0], q.shape[2], q.shape[1])
    if on_device:
        import pyopencl as cl
        import pyopencl.array as cla
        queue = queue or q.queue
        if out is None:
            out = cla.empty(queue, out_shape, odt)
        else:
            out, p.o_strides = _layout("out", out)
        ctx = _context_for(queue)
        plan = ctx.plan(p)
        arrays = {"q": q, "k": k, "v": v, "o": out}
        if return_lse:
            arrays["lse"] = cla.empty(queue, lse_shape, np.float32)
        if mask is not None:
            arrays["mask"] = mask
        if descale is not None:
            arrays["descale"] = descale
        t = Tensors()
        for name, a in arrays.items():
            setattr(t, name, a.base_data.int_ptr)
            setattr(t.offsets, name, a.offset)
        waits = list(wait_for or []) + [e for a in arrays.values() for e in (a.events or [])]
        wl = (c_vp * max(len(waits), 1))(*[e.int_ptr for e in waits])
        ev = c_vp()
        _check(_plan_enqueue_on(plan, c_vp(queue.int_ptr), ctypes.byref(t), len(waits), wl if waits else None,
                                ctypes.byref(ev)), ctx._ptr)
        event = cl.Event.from_int_ptr(ev.value, retain=False)
        out.add_event(event)
        if return_lse:
            arrays["lse"].add_event(event)
            return out, arrays["lse"], event
        return out, event
    # numpy: on the default device's context and queue, through OpenCL's C API (no PyOpenCL needed); each
    # input's buffer holds the host memory it addresses (its span), read with its strides; O and LSE come
    # back contiguous, and into `out` through numpy.
    ctx = _context_for(None)
    clctx, _, clq = ctx.cl_objects()
    plan = ctx.plan(p)
    inputs = {"q": q, "k": k, "v": v}
    if mask is not None:
        inputs["mask"] = mask.view(np.uint8) if mask.dtype == np.bool_ else mask
    if descale is not None:
        inputs["descale"] = descale
    o_host = out if out is not None and out.flags.c_contiguous else np.empty(out_shape, odt)
    results = [("o", o_host)] + ([("lse", np.empty(lse_shape, np.float32))] if return_lse else [])
    bufs, t, ev = [], Tensors(), c_vp()
    try:
        for name, a in inputs.items():
            bufs.append(_cl_buffer(clctx, _span(a)[1], _span(a)[0]))
            setattr(t, name, bufs[-1])
        for name, a in results:
            bufs.append(_cl_buffer(clctx, a.nbytes))
            setattr(t, name, bufs[-1])
        _check(_plan_enqueue_on(plan, None, ctypes.byref(t), 0, None, ctypes.byref(ev)), ctx._ptr)
        for name, a in results:
            err = _cl.clEnqueueReadBuffer(c_vp(clq), c_vp(getattr(t, name)), 1, 0, a.nbytes, a.ctypes.data_as(c_vp),
                                          1, ctypes.byref(ev), None)
            if err != 0:
                raise FlashclError("OPENCL_ERROR", f"clEnqueueReadBuffer failed: {err}")
    finally:
        if ev.value:
            _cl.clReleaseEvent(ev)
        _plan_release_tensors(plan)  # (the plan's hold on this call's buffers, kept for a loop's next step)
        for b in bufs:
            _cl.clReleaseMemObject(c_vp(b))
    if out is not None and o_host is not out:
        np.copyto(out, o_host)
    o_host = out if out is not None else o_host
    return (o_host, results[1][1]) if return_lse else o_host
