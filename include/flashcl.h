/* SPDX-License-Identifier: MIT */
/*
 * flashcl: exact attention (FlashAttention-2 semantics) through OpenCL, on any vendor's GPU and on CPUs.
 *
 * Read top to bottom: version, status codes, types, then the functions of each object.
 *
 * The model is plan-then-enqueue. A context wraps the application's own OpenCL context, device and
 * queue. A plan is built once per problem shape: it validates the description, chooses tile sizes that
 * fit the device and compiles (or loads from the cache) the kernel. Enqueueing a plan only sets kernel
 * arguments and launches on the caller's buffers: no allocation, no host synchronisation, nothing of
 * size seq_q x seq_kv, ever (validation mode, which blocks, is the one documented exception).
 *
 * Every function returns a flashcl_status. On failure nothing is launched and nothing is leaked, and
 * flashcl_context_last_error() holds a message naming the argument and the reason (or the OpenCL
 * compiler's build log). One exception: a step of several launches (kv_append's, split-KV's merge,
 * standard attention's GEMMs, softmax and conversions) whose later launch the OpenCL driver (or CLBlast)
 * refuses after the first was enqueued; the call then waits for what was enqueued (clFinish) before it
 * returns the error, and the step's outputs, the cache rows it appends and the workspace hold undefined
 * values.
 */
#ifndef FLASHCL_H
#define FLASHCL_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------
 * Version. meson reads the numbers from these lines.
 */
#define FLASHCL_VERSION_MAJOR 0
#define FLASHCL_VERSION_MINOR 7
#define FLASHCL_VERSION_PATCH 1
#define FLASHCL_VERSION_NUMBER \
    (FLASHCL_VERSION_MAJOR * 10000 + FLASHCL_VERSION_MINOR * 100 + FLASHCL_VERSION_PATCH)

/* Windows: the build defines FLASHCL_BUILDING_DLL while it compiles the library (exports); an application
 * linking the DLL gets imports; one linking the static library defines FLASHCL_STATIC itself (the meson
 * dependency of a static subproject does it for the parent). Elsewhere: default visibility, the rest
 * hidden. */
#if defined(_WIN32)
#if defined(FLASHCL_BUILDING_DLL)
#define FLASHCL_API __declspec(dllexport)
#elif defined(FLASHCL_STATIC)
#define FLASHCL_API
#else
#define FLASHCL_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define FLASHCL_API __attribute__((visibility("default")))
#else
#define FLASHCL_API
#endif

/** The version of the library linked at run time, as FLASHCL_VERSION_NUMBER encodes it. */
FLASHCL_API unsigned flashcl_version(void);
/** The same as a string, "major.minor.patch". Static storage. The shared library's file name follows
 * the ABI, not the release: release 0.4.0 of ABI 6 is libflashcl.so.6.4.0 (soname libflashcl.so.6). */
FLASHCL_API const char *flashcl_version_string(void);

/* ---------------------------------------------------------------------------------------------------
 * Status codes. Numbers are stable and never reused. When the failure came from OpenCL, the OpenCL
 * error code is kept: flashcl_context_last_cl_error() returns it.
 */
#define FLASHCL_STATUS_MAP(X)                                                                         \
    X(SUCCESS, 0, "success")                                                                          \
    X(INVALID_ARGUMENT, 1, "invalid argument")                                                        \
    X(UNSUPPORTED, 2, "unsupported problem or device")                                                \
    X(OUT_OF_HOST_MEMORY, 3, "out of host memory")                                                    \
    X(OUT_OF_DEVICE_MEMORY, 4, "out of device memory or resources")                                   \
    X(OPENCL_ERROR, 5, "OpenCL call failed")                                                          \
    X(BUILD_FAILED, 6, "kernel build failed")                                                         \
    X(NO_DEVICE, 7, "no OpenCL device found")                                                         \
    X(BUFFER_TOO_SMALL, 8, "buffer smaller than the problem needs")                                   \
    X(VALIDATION_FAILED, 9, "result differs from the naive kernel beyond tolerance")                  \
    X(CACHE_ERROR, 10, "program cache error")                                                        \
    X(ABI_MISMATCH, 11, "the caller's flashcl.h does not match the library")

typedef enum flashcl_status {
#define FLASHCL_STATUS_ENUM_(name, value, text) FLASHCL_##name = value,
    FLASHCL_STATUS_MAP(FLASHCL_STATUS_ENUM_)
#undef FLASHCL_STATUS_ENUM_
} flashcl_status;

/** A short description of a status. Never NULL; unknown codes give "unknown status". */
FLASHCL_API const char *flashcl_status_string(flashcl_status status);
/** The enumerator's name without the prefix ("INVALID_ARGUMENT"). Never NULL. */
FLASHCL_API const char *flashcl_status_name(flashcl_status status);

/* ---------------------------------------------------------------------------------------------------
 * ABI guard. Every call that starts an application's use of flashcl (context creation, the *_default
 * initialisers, device profiles, the chooser, the tuning store, the local-memory formula) is a macro
 * that passes the header's view of the ABI: FLASHCL_ABI_VERSION and the size of each public struct as
 * the caller's compiler laid it out. The library compares it with its own and refuses a mismatch with
 * FLASHCL_ABI_MISMATCH and a message naming the struct, before reading or writing any of them. The
 * exported functions behind the macros end in _abi and take that descriptor first, so bindings
 * (ctypes, cffi) pass the sizes of their own mirrors and find out when a mirror drifts. ABI policy:
 * docs/ABI.md.
 */
#define FLASHCL_ABI_VERSION 9
typedef struct flashcl_abi flashcl_abi;
static inline const flashcl_abi *flashcl_abi_of_header(void);

/* ---------------------------------------------------------------------------------------------------
 * Problem description.
 */
typedef enum flashcl_dtype {
    FLASHCL_DTYPE_F32 = 0, /* float */
    FLASHCL_DTYPE_F16 = 1, /* IEEE half, read with vload_half: no cl_khr_fp16 needed */
    FLASHCL_DTYPE_BF16 = 2 /* bfloat16, stored as the upper 16 bits of a float */
} flashcl_dtype;

/** Bytes per element of a dtype, 0 for an unknown one. */
FLASHCL_API size_t flashcl_dtype_size(flashcl_dtype dtype);
/** "f32", "f16", "bf16", or "?" */
FLASHCL_API const char *flashcl_dtype_name(flashcl_dtype dtype);

/*
 * Element strides of a 4-D tensor (batch, seq, heads, head_dim). The head_dim stride is always 1.
 * All three zero means the default, FlashAttention's contiguous (batch, seq, heads, head_dim) layout.
 * Strides are in elements, never negative; reading tensors (Q, K, V) may alias rows (stride 0 to
 * broadcast, say), the output may not.
 */
/*
 * Storage of a KV cache's K and V (problem.kv_format; with kv_cache, decode steps). Element (row j,
 * KV head hk, dim d) of K is:
 *   PLAIN     the problem's dtype;
 *   INT8      int8 q times the row's scale: q * k_scale[s], with s = (b * seq_kv + j) * heads_kv + hk for a
 *             contiguous cache and (page * page_size + j % page_size) * heads_kv + hk for a paged one
 *             (page = block_table[b][j / page_size]); scales in kv_scale_dtype (fp32 or fp16); V alike
 *             with v_scale;
 *   FP8_E4M3  OCP 8-bit float E4M3 (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinities,
 *             S.1111.111 is NaN; largest 448), no scale;
 *   FP8_E5M2  OCP 8-bit float E5M2 (bias 15, 2 mantissa bits: the upper byte of an IEEE half; largest
 *             finite 57344), no scale.
 * One byte per element; the cache's strides count elements (bytes). kv_append quantizes the step's
 * k_new/v_new (the problem's dtype) on the way in: INT8 with the scale max|x| * fp32(1/127) of each (row,
 * KV head), rounded to kv_scale_dtype first, and q = round-to-nearest-even(x / scale); FP8 by rounding to
 * nearest even, saturating to the largest finite value (NaN stays NaN).
 */
typedef enum flashcl_kv_format {
    FLASHCL_KV_PLAIN = 0,
    FLASHCL_KV_INT8 = 1,
    FLASHCL_KV_FP8_E4M3 = 2,
    FLASHCL_KV_FP8_E5M2 = 3
} flashcl_kv_format;

/** K and V in a float type of their own (problem.kv_dtype, ABI 2): ggml's fp32 queries over an fp16
 *  cache, an fp16 model over an fp32 cache. 0 keeps the problem's dtype. */
typedef enum flashcl_kv_dtype {
    FLASHCL_KV_DTYPE_SAME = 0,
    FLASHCL_KV_DTYPE_F32 = 1,
    FLASHCL_KV_DTYPE_F16 = 2,
    FLASHCL_KV_DTYPE_BF16 = 3
} flashcl_kv_dtype;

/** "plain", "int8", "fp8e4m3", "fp8e5m2"; NULL for an unknown format. */
FLASHCL_API const char *flashcl_kv_format_name(flashcl_kv_format format);

typedef struct flashcl_strides {
    int64_t batch, seq, head;
} flashcl_strides;

typedef struct flashcl_problem {
    int32_t batch;      /* >= 1 */
    int32_t heads_q;    /* >= 1 */
    int32_t heads_kv;   /* divides heads_q (GQA/MQA): query head h reads kv head h/(heads_q/heads_kv); 0 (the
                           default): heads_q (ABI 4: flashcl_problem_default set 1, silently MQA) */
    int32_t seq_q;      /* >= 1 */
    int32_t seq_kv;     /* >= 1; 0 (the default): seq_q (ABI 4: the default was 1, one key) */
    int32_t head_dim;   /* a multiple of 8, 8 to 256 */
    flashcl_dtype dtype; /* storage type of Q, K, V and O; arithmetic is fp32 */
    float scale;        /* 0 means 1/sqrt(head_dim); the scores times the scale within FLT_MAX / log2(e) (about
                           2.36e38) in magnitude: past it the flash kernels' base-2 exponent overflows and such a
                           row reads as one that sees no key (zeros, LSE -inf) */
    int32_t causal;     /* nonzero: bottom-right aligned, query i sees key j iff j <= i + seq_kv - seq_q */
    int32_t return_lse; /* nonzero: write fp32 log-sum-exp, (batch, heads_q, seq_q) contiguous */
    /* Sliding window (FlashAttention's (left, right), with the causal mask's alignment): when
     * `window` is nonzero, query i sees key j iff i + seq_kv - seq_q - window_left <= j <=
     * i + seq_kv - seq_q + window_right; -1 leaves that side unbounded. With causal, the right side is
     * min(window_right, 0). Tiles wholly outside the window are skipped. */
    int32_t window;
    int32_t window_left, window_right;
    float softcap;      /* > 0: each scaled score s becomes softcap * tanh(s / softcap); 0: none */
    /* Biases and masks added to the (softcapped) scores, in this order; their buffers are passed to
     * flashcl_plan_enqueue_tensors(). Flash and naive support them; standard attention does not. */
    int32_t alibi;      /* 0: none; 1: ALiBi slopes per query head (heads_q fp32); 2: per batch and head
                           (batch * heads_q fp32). The score of (i, j) gains -slope * |i + seq_kv - seq_q - j| */
    int32_t attn_mask;  /* nonzero: a mask over the pairs, of type mask_dtype (flashcl_mask_dtype, below):
                           an additive one (fp32 or fp16; -inf removes a pair) or a boolean one */
    flashcl_strides mask_strides; /* the mask's element strides (batch, seq = query row, head); keys are
                                     contiguous; 0 broadcasts; all zero: (batch, heads_q, seq_q, seq_kv)
                                     unless mask_strides_explicit is set */
    int32_t key_padding; /* nonzero: a uint8 (batch, seq_kv) mask, contiguous; nonzero marks a padding
                            key that no query sees (PyTorch's key_padding_mask) */
    /* Variable-length batches (FlashAttention's varlen): when `varlen` is nonzero, Q and O hold
     * total_q rows and K and V total_kv rows, packed: sequence b is rows cu_seqlens_q[b] ..
     * cu_seqlens_q[b+1]-1 of Q/O and cu_seqlens_k[b] .. of K/V (int32 buffers of batch + 1 entries,
     * nondecreasing, from 0 to total; passed to flashcl_plan_enqueue_tensors). seq_q and seq_kv are
     * then the longest lengths (no sequence may be longer). Strides: q_strides.seq is the row stride,
     * .head the head stride, .batch unused (all zero: (total, heads, head_dim) contiguous). The causal
     * mask and window align each sequence on its own lengths. LSE is (heads_q, total_q). Not with
     * attn_mask or key_padding (a padding mask is what varlen replaces). With kv_cache too (chunked
     * prefill) only Q and O are packed: sequence b's keys are the cache's, filled to cache_seqlens[b];
     * total_kv is then 0, cu_seqlens_k NULL, and kv_append and a quantized kv_format are refused. */
    int32_t varlen;
    int64_t total_q, total_kv;
    /* Split-KV (flash-decoding): the keys of each (batch, head) are split across this many
     * work-groups whose partial results are merged through their log-sum-exp. 0: chosen from the
     * device (splits only where one work-group per (batch, head, query block) would leave compute
     * units idle: decode steps); 1: never; n: n (flash only, up to 1024). */
    int32_t kv_splits;
    /* KV cache (FlashAttention's flash_attn_with_kvcache): when `kv_cache` is nonzero, K and V hold
     * seq_kv rows per sequence (the capacity) of which cache_seqlens[b] are filled (int32, batch
     * entries). With `kv_append`, k_new and v_new ((batch, seq_q, heads_kv, head_dim), the problem's
     * dtype, contiguous) are first written into the cache at rows cache_seqlens[b] .. + seq_q - 1 (rows
     * past the capacity are dropped) and the attention sees cache_seqlens[b] + seq_q keys; flashcl
     * does not update cache_seqlens. Masks and windows align on each sequence's own key count. Not with
     * varlen; flash and naive only. */
    int32_t kv_cache;
    int32_t kv_append;
    /* Paged cache (with kv_cache): page_size > 0, a multiple of 16, makes K and V (num_pages,
     * page_size, heads_kv, head_dim): k_strides.batch is the page stride, .seq the row stride. The
     * block table (int32, batch x ceil(seq_kv / page_size)) gives the page of each sequence's p-th
     * block of page_size rows; entries are clamped to 0 .. num_pages - 1. */
    int32_t page_size;
    int32_t num_pages;
    flashcl_strides q_strides, k_strides, v_strides, o_strides;
    /* A quantized KV cache (flashcl_kv_format above): with kv_cache, for decode steps (seq_q <= 16)
     * without attn_mask, flash and naive. kv_scale_dtype: the INT8 scales' type, FLASHCL_DTYPE_F32 or
     * FLASHCL_DTYPE_F16. */
    int32_t kv_format;
    flashcl_dtype kv_scale_dtype;
    /* Where query i stands among the keys, for the causal mask, sliding windows and ALiBi's distances
     * (flashcl_alignment): bottom-right (0, the default: at key i + seq_kv - seq_q, FlashAttention's;
     * with a KV cache, on each sequence's own key count) or top-left (1: at key i, PyTorch's is_causal
     * and a mask-free transformers call over a preallocated cache). The formulas above read i for
     * i + seq_kv - seq_q under top-left. */
    int32_t alignment;
    /* The attn_mask buffer's element type (flashcl_mask_dtype): what an engine holds, read as it is. */
    int32_t mask_dtype;
    /* Attention sinks (gpt-oss; FlashAttention's and ggml's sinks): nonzero: one fp32 logit per query
     * head (tensors.sinks, heads_q values, natural log, in the units of the scaled scores) joins every
     * row's softmax denominator and adds nothing to its output: O = sum_j e^s_j v_j / (e^sink +
     * sum_j e^s_j), LSE = log(e^sink + sum_j e^s_j). A row that sees no key writes zeros with LSE = the
     * sink. Flash and naive; standard attention does not take them. (ABI 2) */
    int32_t sinks;
    /* flash_attn_with_kvcache's cache options (with kv_cache, a contiguous cache: not paged, not int8):
     * cache_batch_idx nonzero: tensors.cache_batch_idx (int32, batch) says which of the cache's
     * cache_batch sequences (K/V are (cache_batch, seq_kv, heads_kv, head_dim); 0: batch) serves each
     * batch entry (entries clamped to the cache); the append writes there too. cache_leftpad nonzero:
     * tensors.cache_leftpad (int32, batch) is where each sequence's keys start in its cache row: the
     * keys are rows cache_leftpad[b] .. cache_seqlens[b] - 1 (then the appended ones), the rows before
     * are padding no query sees, and masks and windows align on the key count that remains. (ABI 2) */
    int32_t cache_batch_idx;
    int32_t cache_batch;
    int32_t cache_leftpad;
    /* K's and V's own float type (flashcl_kv_dtype; 0: dtype, the default), Q and O staying in dtype
     * (k_new and v_new too): fp32 queries over fp16 or bf16 keys and values, or the reverse. Read and
     * written (kv_append) by the portable and decode kernels and the naive one; the prefill matrix-unit
     * kernels take fp16/bf16 K and V, rounding Q to K's type as it is loaded (to nearest even), O in
     * dtype. Not with a quantized kv_format, not by standard attention. (ABI 2) */
    int32_t kv_dtype;
    /* V's and O's head dim when it is not head_dim (0: head_dim, the default; else a multiple of 8, 8 to
     * 256): V is (batch, seq_kv, heads_kv, head_dim_v) and O (batch, seq_q, heads_q, head_dim_v), their
     * default strides and sizes by it, v_new too (DeepSeek's MLA: 192-wide queries and keys over 128-wide
     * values). The scale stays 1/sqrt(head_dim). Flash (the portable kernel, flash_mma for head dims that are
     * multiples of 16 and flash_wgmma for 64, 80, 96, 128, 192 or 256; not the decode kernels), naive and standard
     * attention; not with a quantized kv_format. (ABI 3: it took the struct's tail padding, so the size
     * did not change and only the version tells the layouts apart) */
    int32_t head_dim_v;
    /* Nonzero: mask_strides are taken as they are, all zero included, so one row of seq_kv values
     * broadcasts over batch, heads and query rows (a (1, 1, 1, seq_kv) mask). 0: all-zero strides mean
     * the default layout. (ABI 4) */
    int32_t mask_strides_explicit;
    /* How fp32 Q, K and V may be multiplied (flashcl_precision, below; 0, the default: in fp32). Like
     * PyTorch's allow_tf32, a permission: kernels that have no TF32 path compute in fp32 whatever it
     * says. (ABI 6: it took the struct's tail padding, so the size did not change) */
    int32_t precision;
    /* fp8 attention (ABI 7): nonzero, FLASHCL_KV_FP8_E4M3 or FLASHCL_KV_FP8_E5M2 (flashcl_kv_format's
     * formats, above), makes Q, K and V (and a KV cache) bytes of that format, one a element, their strides
     * in bytes; O and LSE stay in dtype (f32, f16 or bf16). Each tensor's values are its bytes times its
     * descale factor (fp8_descale, below): scores (q . k) * q_descale * k_descale * scale, outputs
     * sum_j p_j v_j * v_descale / l. Not with kv_format (this is the format), kv_dtype, head_dim_v,
     * kv_append, a TF32 precision or standard attention. Run by the portable kernel and the naive one,
     * and on sm_90a GPUs by flash_wgmma on fp8 wgmma products (head dims 64, 128, 256 with O in fp16 or
     * bf16, rows of 16-byte multiples), which rounds the softmax's weights P to E4M3 for P*V as
     * FlashAttention-3 does: each output moves by up to 2^-4 of the row's |V| mix (validated at 2^-2 of
     * the row scale; docs/design/fp8.md). */
    int32_t qkv_format;
    /* The descale factors of fp8 attention (flashcl_descale): NONE (0: all 1), TENSOR (tensors.descale holds
     * three fp32: Q's, K's, V's) or HEAD (tensors.descale holds three (batch, heads_kv) fp32 arrays, Q's, K's,
     * V's: FlashAttention-3's q/k/v_descale, a query head taking its KV head's). A buffer, so that an engine
     * changes them from call to call without a new plan. (ABI 7) */
    int32_t fp8_descale;
} flashcl_problem;

/** problem.fp8_descale: where fp8 attention's descale factors come from. */
typedef enum flashcl_descale {
    FLASHCL_DESCALE_NONE = 0,
    FLASHCL_DESCALE_TENSOR = 1,
    FLASHCL_DESCALE_HEAD = 2
} flashcl_descale;

/*
 * problem.precision, for fp32 Q, K and V (dtype fp32, no kv_dtype of another type):
 *   FP32    every product in fp32 (the portable kernel on every device);
 *   TF32X3  each product as three TF32 products on NVIDIA's matrix units (compute capability 8.0 and up,
 *           flash_mma: mma.sync m16n8k8): x = big + small, both TF32 (10 explicit mantissa bits: big x
 *           rounded to nearest, ties away, small the rest truncated), a*b = a_big*b_big + a_big*b_small +
 *           a_small*b_big; the dropped a_small*b_small and the truncation of the small parts leave each
 *           product within about 2^-20 of its value relative to |a*b|, against fp32's 2^-24: PyTorch's
 *           fp32 memory-efficient kernel computes this way (CUTLASS's fast fp32). The matrix unit's own
 *           sums do not round to nearest: each tile's partial sums are added in fp32. Against float64 at
 *           4096 keys (N(0,1) inputs, H100, 2026-12-05/06) outputs were within 6.4e-6 of the row's largest
 *           |value| at head dim 64 and 1.8e-5 at 128 (PyTorch's fp32 kernel: 2.4e-6 and 2.3e-6; fp32's
 *           portable kernel: 3.9e-6 and 3.5e-6); the validator allows TF32X3 2^-14 (6.1e-5) of the row's
 *           scale, fp32's 8 + 2 sqrt(N) ulps where that is more: docs/design/mma.md, tf32-2 to tf32-5.
 *   TF32    each operand rounded to TF32 and one product (PyTorch's allow_tf32): Q, K, V and the weights P
 *           each carry a relative error up to 2^-11, as fp16 operands do (with fp32's range), so outputs
 *           move by up to about 2^-10 of the row's |V|; about 1.5x TF32X3's speed (H100, BENCHMARKS.md).
 * Problems that the matrix-unit kernel does not take (decode steps, head dims not a multiple of 16) and
 * devices without it compute in fp32. A precision other than FP32 with fp16/bf16 data is an error.
 */
typedef enum flashcl_precision {
    FLASHCL_PRECISION_FP32 = 0,
    FLASHCL_PRECISION_TF32X3 = 1,
    FLASHCL_PRECISION_TF32 = 2
} flashcl_precision;

/** "fp32", "tf32x3", "tf32"; NULL for an unknown precision. */
FLASHCL_API const char *flashcl_precision_name(flashcl_precision precision);

typedef enum flashcl_mask_dtype {
    FLASHCL_MASK_F32 = 0,  /* fp32, added to the scaled scores (the default) */
    FLASHCL_MASK_F16 = 1,  /* IEEE half, added the same way (ggml's masks) */
    FLASHCL_MASK_BOOL = 2  /* uint8: nonzero keeps the pair, zero removes it (PyTorch's bool attn_mask) */
} flashcl_mask_dtype;

typedef enum flashcl_alignment {
    FLASHCL_ALIGN_BOTTOM_RIGHT = 0,
    FLASHCL_ALIGN_TOP_LEFT = 1
} flashcl_alignment;

/** Fills a problem with defaults: everything 1 but head_dim 64, fp32, default scale and layout. */
FLASHCL_API flashcl_status flashcl_problem_default_abi(const flashcl_abi *abi, flashcl_problem *problem);
#define flashcl_problem_default(problem) flashcl_problem_default_abi(flashcl_abi_of_header(), (problem))

/* ---------------------------------------------------------------------------------------------------
 * Device profile: what the tile choice depends on, the device's facts only (what the driver reports
 * and what a test compile proves). A pure value, so that tools and tests can build a fake one (another
 * vendor's limits) and ask what the chooser would do. What a user or a context decides (the kernel
 * path, a cap on local memory, a tuning database) is the policy, flashcl_policy below.
 */
typedef enum flashcl_vendor {
    FLASHCL_VENDOR_OTHER = 0,
    FLASHCL_VENDOR_NVIDIA = 1,
    FLASHCL_VENDOR_AMD = 2,
    FLASHCL_VENDOR_INTEL = 3,
    FLASHCL_VENDOR_POCL = 4,  /* PoCL's CPU device */
    FLASHCL_VENDOR_MESA = 5,  /* rusticl / clover */
    FLASHCL_VENDOR_APPLE = 6,
    FLASHCL_VENDOR_ARM = 7,
    FLASHCL_VENDOR_QUALCOMM = 8
} flashcl_vendor;

/* Which flash kernel a plan uses. AUTO: where the device has matrix units, the matrix-unit decode
 * kernel (cl/flash_decode_mma.cl) for decode steps (16 queries or fewer, no additive mask, no packed
 * sequences) with fp16/bf16 storage and a head dim a multiple of 64, and the matrix-unit kernel
 * (cl/flash_mma.cl, or on Hopper cl/flash_wgmma.cl) for prefill problems that suit it (fp16/bf16,
 * head_dim a multiple of 16 up to 256, more than 16 queries, no forced splits; every score modifier,
 * packed sequences and KV caches included); the
 * decode kernel (cl/flash_decode.cl) for other decode steps where it measured faster; else the
 * portable kernel.
 * PORTABLE: always the portable kernel. MMA: the matrix-unit kernels wherever the problem suits them,
 * emulated (correct, slow) on a device without matrix units, so that their logic can be tested
 * anywhere. DECODE: the decode kernel (cl/flash_decode.cl) wherever the problem suits it, else the
 * portable kernel. WGMMA: the warpgroup kernel (cl/flash_wgmma.cl: Hopper's wgmma through programs
 * finished for sm_90a) for prefill problems it takes, where the device proved sm_90a programs
 * (matrix_units 2), emulated elsewhere; else as auto, with the reason. Auto takes it too where the
 * device proved sm_90a programs (faster than flash_mma at head dims 64, 128 and 256 on the H200: 1.2x to
 * 2.3x, BENCHMARKS.md). MFMA: AMD CDNA's kernel (cl/flash_amd.cl's flash_mfma: MFMA 32x32x8 through clang's amdgcn
 * built-in) for the prefill problems flash_mma takes, where the device proved AMD's matrix cores
 * (matrix_units on an AMD device with wavefronts of 64), emulated elsewhere (for testing); else as auto, with
 * the reason. Auto takes it on such a device. WMMA: the same for RDNA3/4's kernel (cl/flash_amd.cl's
 * flash_wmma: WMMA 16x16x16; matrix_units on an AMD device with wavefronts of 32). DPAS: Intel's kernel
 * (cl/flash_dpas.cl: cl_intel_subgroup_matrix_multiply_accumulate; matrix_units on an Intel GPU). */
typedef enum flashcl_path {
    FLASHCL_PATH_AUTO = 0,
    FLASHCL_PATH_PORTABLE = 1,
    FLASHCL_PATH_MMA = 2,
    FLASHCL_PATH_DECODE = 3,
    FLASHCL_PATH_WGMMA = 4,
    FLASHCL_PATH_MFMA = 5,
    FLASHCL_PATH_WMMA = 6,
    FLASHCL_PATH_DPAS = 7
} flashcl_path;

typedef struct flashcl_device_profile {
    char name[128];
    char vendor_name[64];
    char platform_name[64];
    char driver_version[64];
    char device_version[128];
    flashcl_vendor vendor;
    int is_cpu;                   /* CL_DEVICE_TYPE_CPU */
    uint64_t local_mem_size;      /* CL_DEVICE_LOCAL_MEM_SIZE as reported */
    int local_mem_is_global;      /* CL_DEVICE_LOCAL_MEM_TYPE == CL_GLOBAL (emulated, e.g. on CPUs) */
    uint64_t global_mem_size;
    uint64_t max_alloc_size;
    size_t max_work_group_size;
    size_t wg_multiple;           /* warp / wavefront / subgroup width, or the preferred multiple */
    uint32_t compute_units;
    int nv_cc_major, nv_cc_minor; /* NVIDIA compute capability, 0 if unknown */
    char arch[32];                /* "sm_90" (NVIDIA), "gfx90a" (AMD), the CPU's LLVM name (PoCL), else "" */
    int has_fp16, has_fp64, has_subgroups;
    int has_intel_subgroup_matrix; /* cl_intel_subgroup_matrix_multiply_accumulate */
    int compiler_available;       /* CL_DEVICE_COMPILER_AVAILABLE: flashcl compiles its kernels at run time */
    int opencl_major, opencl_minor; /* from CL_DEVICE_VERSION */
    /* The matrix units, by level: 1 where the device runs mma.sync.m16n8k16 from inline PTX (NVIDIA,
     * compute capability 8.0 and up: cl/flash_mma.cl), proven by compiling that kernel when the profile
     * is queried; 2 where, beyond that, programs finished for sm_90a (Hopper's wgmma and setmaxnreg,
     * written in marked PTX comments; compute capability 9.x) build, run and give the right answer, proven
     * by a tiny finished program at the same time (kept in the disk cache). On an AMD device, 1 where it
     * is CDNA (gfx90a, gfx94x, gfx950 in CL_DEVICE_NAME; wavefronts of 64) or RDNA3/4 (gfx11, gfx12;
     * wavefronts of 32), its kernel of cl/flash_amd.cl (flash_mfma, flash_wmma) builds with clang's
     * built-in and a tiny program of the instruction runs right (AMD's matrix cores, never the NVIDIA
     * kernels). On an Intel GPU that lists cl_intel_subgroup_matrix_multiply_accumulate, 1 where
     * cl/flash_dpas.cl builds with its built-ins and a tiny DPAS program runs right (in Intel's AUB mode,
     * where nothing runs, where it builds). 0 otherwise. */
    int matrix_units;
    /* The local memory a work-group's static __local arrays may take (every flashcl kernel's tiles are
     * static arrays): on NVIDIA GPUs of compute capability 7.0 and up found by compile probes, which
     * NVIDIA's OpenCL allows past the size it reports for a __local argument (232448 bytes on the H200
     * against 49152), the result kept in the disk cache once per device and driver; elsewhere
     * local_mem_size. */
    uint64_t local_mem_static;
    /* Local memory a compute unit holds for all its work-groups (NVIDIA: shared memory per SM by compute
     * capability, 233472 on Hopper), for occupancy; local_mem_size where not known. */
    uint64_t local_mem_per_cu;
} flashcl_device_profile;

/**
 * Whether flashcl can run on a device with this profile: it needs OpenCL 1.2 or later, an OpenCL C
 * compiler, and local memory and work-groups large enough for the smallest tile. Returns
 * FLASHCL_SUCCESS or FLASHCL_UNSUPPORTED with the reason in `why` (may be NULL), which is also the
 * calling thread's flashcl_context_last_error(NULL).
 */
FLASHCL_API flashcl_status flashcl_device_supported_abi(const flashcl_abi *abi, const flashcl_device_profile *profile,
                                                        char *why, size_t why_len);
#define flashcl_device_supported(profile, why, why_len) \
    flashcl_device_supported_abi(flashcl_abi_of_header(), (profile), (why), (why_len))

/** "nvidia", "amd", "intel", "pocl", "mesa", "apple", "arm", "qualcomm" or "other". */
FLASHCL_API const char *flashcl_vendor_name(flashcl_vendor vendor);

/** Reads a device's profile: its limits from the driver, matrix_units from a test compile of the
 * matrix-unit kernel (NVIDIA, compute capability 8.0+, and AMD CDNA only; in a temporary OpenCL context), and
 * local_mem_static from compile probes (NVIDIA 7.0+; read from the disk cache after the first time,
 * unless $FLASHCL_CACHE is 0). */
FLASHCL_API flashcl_status flashcl_device_profile_query_abi(const flashcl_abi *abi, cl_device_id device,
                                                            flashcl_device_profile *profile);
#define flashcl_device_profile_query(device, profile) \
    flashcl_device_profile_query_abi(flashcl_abi_of_header(), (device), (profile))

/* ---------------------------------------------------------------------------------------------------
 * Kernel configuration: what a plan runs. flashcl_choose_config_policy() is the one chooser, a pure
 * function of (profile, policy, problem); plans call it through flashcl_context_choose_config().
 */
typedef enum flashcl_algorithm {
    FLASHCL_ALGO_FLASH = 0,   /* tiled, online softmax, O(seq) memory */
    FLASHCL_ALGO_NAIVE = 1,   /* the textbook computation, one row per work-item: the validator */
    FLASHCL_ALGO_STANDARD = 2 /* S = Q*K^T and O = P*V as CLBlast GEMMs around a softmax: the n x n
                                 matrix in device memory, the baseline (needs CLBlast at build time) */
} flashcl_algorithm;

/** "flash", "naive", "standard" or "?". */
FLASHCL_API const char *flashcl_algorithm_name(flashcl_algorithm algorithm);
/** "auto", "portable", "mma", "decode", "wgmma", "mfma", "wmma" or "dpas"; parse returns FLASHCL_INVALID_ARGUMENT for any other name. */
FLASHCL_API const char *flashcl_path_name(flashcl_path path);
FLASHCL_API flashcl_status flashcl_path_parse(const char *name, flashcl_path *path);
/** Nonzero when this build of the library has the algorithm (standard needs CLBlast). */
FLASHCL_API int flashcl_algorithm_available(flashcl_algorithm algorithm);

/* The kernel a configuration runs (ABI 5; ABI 4 and before said it in the config's mma and decode
 * numbers). The flash kernels, then the naive validator and standard attention. */
typedef enum flashcl_kernel {
    FLASHCL_KERNEL_PORTABLE = 0,   /* cl/flash_fwd.cl: every problem, any OpenCL 1.2 device */
    FLASHCL_KERNEL_MMA = 1,        /* cl/flash_mma.cl: matrix units (mma.sync), prefill */
    FLASHCL_KERNEL_WGMMA = 2,      /* cl/flash_wgmma.cl: Hopper's warpgroup MMA, prefill */
    FLASHCL_KERNEL_DECODE = 3,     /* cl/flash_decode.cl: decode steps, K/V straight to registers */
    FLASHCL_KERNEL_DECODE_MMA = 4, /* cl/flash_decode_mma.cl: decode steps on the matrix units */
    FLASHCL_KERNEL_NAIVE = 5,      /* cl/naive.cl (FLASHCL_ALGO_NAIVE) */
    FLASHCL_KERNEL_STANDARD = 6,   /* CLBlast's GEMMs around cl/standard.cl (FLASHCL_ALGO_STANDARD) */
    FLASHCL_KERNEL_MFMA = 7,       /* cl/flash_amd.cl: AMD CDNA's matrix cores (MFMA), prefill */
    FLASHCL_KERNEL_WMMA = 8,       /* cl/flash_amd.cl: AMD RDNA3/4's matrix cores (WMMA), prefill */
    FLASHCL_KERNEL_DPAS = 9        /* cl/flash_dpas.cl: Intel's matrix engines (DPAS), prefill */
} flashcl_kernel;

/** "portable", "mma", "wgmma", "decode", "decode_mma", "naive", "standard", "mfma", "wmma", "dpas" or "?". */
FLASHCL_API const char *flashcl_kernel_name(flashcl_kernel kernel);

typedef struct flashcl_config {
    flashcl_algorithm algorithm;
    flashcl_kernel kernel;   /* the kernel it runs (an override's: portable, mma, wgmma, mfma, wmma or dpas) */
    int32_t emulated;        /* nonzero: a matrix-unit kernel emulated on a device without matrix units (a
                                forced path, for testing: correct, slow) */
    int32_t block_m;         /* query rows per work-group */
    int32_t block_n;         /* keys per tile (the decode kernels: per step of the whole work-group) */
    int32_t threads_per_row; /* work-items sharing a group of rows: each holds block_n/threads_per_row
                                scores and head_dim/threads_per_row output columns of each of its rows
                                (the matrix-unit kernels: the 4 lanes of a fragment's row; decode: team) */
    int32_t rows_per_item;   /* query rows each work-item owns (its register block is rows x columns) */
    int32_t d_chunk;         /* head-dimension columns of Q and K in local memory at once (head_dim: Q
                                stays in local memory for the whole run) */
    int32_t v_chunk;         /* keys of V in local memory at once (the matrix-unit kernels: kv_stages x
                                block_n; decode: keys_per_step) */
    int32_t work_group_size; /* block_m / rows_per_item * threads_per_row; flash_mma: block_m / m_tiles x 2;
                                flash_wgmma: 2 x block_m, + 128 with its producer warpgroup (an
                                override's 0: the chooser's choice) */
    int32_t kv_splits;       /* key splits (split-KV); 1: none. Set by the chooser from the problem */
    int32_t gqa_pack;        /* decode with GQA: the heads_q / heads_kv query heads of a KV head share a
                                work-group (K/V read once for them); 1: none. Set by the chooser */
    uint64_t local_mem_bytes;  /* from the kernel's exact formula */
    uint64_t local_mem_budget; /* what the chooser was allowed */
    char kernel_name[32];      /* the kernel's entry point: "flash_fwd", "flash_mma", "flash_wgmma",
                                  "flash_decode", "flash_decode_mma", "naive_fwd" or "standard" */
    char source[48];           /* "heuristic", "override", or "tuning-db:<user|shipped>:<device|arch|vendor>" */
    char reason[160];          /* why these tiles, in words */
    char path_reason[128];     /* why this kernel (matrix units or portable), in words */
    int32_t sub_group;         /* the sub-group size the kernel asks the compiler for (Intel Xe-HPC GPUs:
                                  16, where IGC would pick 32 lanes and keep the register block in memory);
                                  0: the compiler's choice */
    /* The kernels' own choices (ABI 5), each read by its kernel only: */
    int32_t kv_stages;     /* mma, wgmma: K/V tiles in local memory at once, each loaded ahead (1 to 3;
                              an override's 0 reads as 1) */
    int32_t m_tiles;       /* mma: m16 row tiles a warp (1 or 2; an override's 0 reads as 1) */
    int32_t producer;      /* wgmma: nonzero where a producer warpgroup issues the copies */
    int32_t team;          /* decode: lanes that share a key (head_dim / 8, a power of two) */
    int32_t keys_per_step; /* decode: keys a team takes a step; decode_mma: keys a warp takes a step */
    int32_t shuffles;      /* decode: team sums by the device's shuffles (else through local memory) */
    int32_t tf32;          /* mma: TF32 products a product with fp32 operands (3: problem.precision TF32X3,
                              1: TF32), 0: fp16/bf16 operands; set from the problem (ABI 6, in the
                              struct's tail padding) */
    int32_t qkv_format;    /* wgmma: fp8 operands (the problem's qkv_format: FLASHCL_KV_FP8_E4M3 or _E5M2,
                              byte tiles, V's stored transposed), 0: 16-bit ones; set from the problem, read
                              by the local-memory formula (ABI 8) */
    int32_t persistent;    /* wgmma: n > 0, a grid of at most n work-groups, each running row blocks in turn
                              (its index, then on by the grid's size; the chooser's n: the device's compute
                              units); 0: a work-group a row block (ABI 9, in the struct's tail padding) */
} flashcl_config;

/*
 * The policy a configuration is chosen under: what the user decides, apart from the device's facts.
 * A context's policy (flashcl_context_policy) is what its plans use, from its settings and the
 * environment; flashcl_policy_default gives the same a context with default settings has, but no
 * tuning database.
 */
typedef struct flashcl_tuning_db flashcl_tuning_db;
typedef struct flashcl_policy {
    int path;                 /* -1: $FLASHCL_PATH ("auto", "portable", "mma", "decode", "wgmma", "mfma", "wmma" or "dpas"; unset: auto); else a
                                 flashcl_path */
    uint64_t local_mem_limit; /* a cap on the local memory tiles may use; 0: $FLASHCL_LOCAL_MEM_LIMIT or none.
                                 Tiles use at most min(the device's local memory, 64 KiB, this cap) */
    const flashcl_tuning_db *tuning_db; /* consulted for the portable kernel's tiles; NULL: heuristic only */
} flashcl_policy;

/** Fills a policy with defaults: path and cap from the environment, no tuning database. */
FLASHCL_API flashcl_status flashcl_policy_default_abi(const flashcl_abi *abi, flashcl_policy *policy);
#define flashcl_policy_default(policy) flashcl_policy_default_abi(flashcl_abi_of_header(), (policy))

/**
 * Chooses the configuration for `problem` on a device with `profile` under `policy` (NULL: the
 * default policy): the matrix-unit kernel where the path, the device and the problem allow it, else
 * the tuning database's entry, else the heuristic. A pure function of its arguments (and, through a
 * default policy, the environment): with a context's profile and policy it returns exactly what a
 * plan on that context gets (before any shrink after compiling).
 */
FLASHCL_API flashcl_status flashcl_choose_config_policy_abi(const flashcl_abi *abi,
                                                            const flashcl_device_profile *profile,
                                                        const flashcl_policy *policy,
                                                        const flashcl_problem *problem,
                                                        flashcl_algorithm algorithm, flashcl_config *config);
#define flashcl_choose_config_policy(profile, policy, problem, algorithm, config) \
    flashcl_choose_config_policy_abi(flashcl_abi_of_header(), (profile), (policy), (problem), (algorithm), (config))
/** flashcl_choose_config_policy with the default policy. */
FLASHCL_API flashcl_status flashcl_choose_config_abi(const flashcl_abi *abi, const flashcl_device_profile *profile,
                                                 const flashcl_problem *problem,
                                                 flashcl_algorithm algorithm, flashcl_config *config);
#define flashcl_choose_config(profile, problem, algorithm, config) \
    flashcl_choose_config_abi(flashcl_abi_of_header(), (profile), (problem), (algorithm), (config))

/* ---------------------------------------------------------------------------------------------------
 * Tuning database: tuned flash configurations keyed by device identity (vendor, architecture, device
 * name) and problem class (head dim, dtype, causal, seq_kv bucket, prefill or decode). A shipped table
 * is built into the library; a user's file overrides it: $FLASHCL_TUNING_DB, else
 * $XDG_CONFIG_HOME/flashcl/tuning.db, else ~/.config/flashcl/tuning.db. Lookup goes from the most to
 * the least specific identity (device, architecture, vendor), the user's entries before the shipped
 * ones at each level, then falls back to the heuristic. One entry per line:
 *   vendor=nvidia arch=sm_90 device="NVIDIA H200" head_dim=128 dtype=f32 causal=0 seq=long mode=prefill
 *     : block_m=64 block_n=64 tpr=16 rows=4 dchunk=32 vchunk=32   # an optional comment
 * (on one line). Match fields other than vendor and head_dim may be left out or set to *.
 * seq is short (seq_kv <= 512), medium (<= 4096) or long; mode is decode (seq_q <= 16) or prefill.
 * Thread-safety: a loaded database is immutable and may be read from any thread; stores from several
 * threads into one file each replace the file whole (a unique temporary name, then a rename).
 */
/**
 * Loads the shipped table (when with_shipped) and the user's file: user_path, or NULL for the default
 * location above. A missing user file is not an error. Lines that do not parse are skipped and listed
 * in flashcl_tuning_db_warnings(); a file that cannot be read is reported there too. Never fails on
 * content; fails only on NULL out or out of memory.
 */
FLASHCL_API flashcl_status flashcl_tuning_db_load(const char *user_path, int with_shipped, flashcl_tuning_db **out);
FLASHCL_API void flashcl_tuning_db_destroy(flashcl_tuning_db **db);
/** Problems found while loading, one per line ("" if none). Owned by the database. */
FLASHCL_API const char *flashcl_tuning_db_warnings(const flashcl_tuning_db *db);
/** Number of entries (shipped and user). */
FLASHCL_API size_t flashcl_tuning_db_size(const flashcl_tuning_db *db);
/** The user file the database read (or would read), never NULL. */
FLASHCL_API const char *flashcl_tuning_db_user_path(const flashcl_tuning_db *db);
/**
 * Writes an entry for (profile's device, problem's class) with config's tiles into the file at path,
 * replacing an entry with the same key; the file is rewritten atomically (temporary file, rename).
 */
FLASHCL_API flashcl_status flashcl_tuning_db_store_abi(const flashcl_abi *abi, const char *path,
                                                       const flashcl_device_profile *profile,
                                                   const flashcl_problem *problem, const flashcl_config *config,
                                                   const char *comment);
#define flashcl_tuning_db_store(path, profile, problem, config, comment) \
    flashcl_tuning_db_store_abi(flashcl_abi_of_header(), (path), (profile), (problem), (config), (comment))

/** The exact local-memory bytes the flash kernel uses for a tile configuration of `config` (its mma,
 * block_m, block_n, threads_per_row, d_chunk and v_chunk) at `head_dim`, V's head dim the same (for a
 * head_dim_v of its own, the chosen config's local_mem_bytes holds the figure). */
FLASHCL_API uint64_t flashcl_flash_local_mem_bytes_abi(const flashcl_abi *abi, int32_t head_dim,
                                                       const flashcl_config *config);
#define flashcl_flash_local_mem_bytes(head_dim, config) \
    flashcl_flash_local_mem_bytes_abi(flashcl_abi_of_header(), (head_dim), (config))

/* ---------------------------------------------------------------------------------------------------
 * Context.
 * Thread-safety: a context may be used from several threads at once: plan creation, enqueue of
 * different plans, flashcl_context_override_config and flashcl_context_set_validation included (its
 * program cache, statistics and override are locked, the validation flag is atomic; compiles run
 * outside the lock, so one plan's compile never holds up another plan's creation from cached
 * programs or any enqueue, and two plans needing the same program compile it once); its destruction
 * must come after every other thread's last use. The last error is kept per thread:
 * flashcl_context_last_error(ctx) is the calling thread's last failure on ctx, so two threads failing
 * at once on one context each read their own message.
 */
typedef struct flashcl_context flashcl_context;

typedef struct flashcl_settings {
    int validate;              /* -1: FLASHCL_VALIDATE from the environment (default off); 0 off; 1 on */
    int disk_cache;            /* -1: on unless FLASHCL_CACHE=0; 0 off; 1 on */
    const char *cache_dir;     /* NULL: $FLASHCL_CACHE_DIR, else $XDG_CACHE_HOME/flashcl, else ~/.cache/flashcl */
    uint64_t local_mem_limit;  /* bytes the tile chooser may use; 0: FLASHCL_LOCAL_MEM_LIMIT or no cap */
    int32_t validate_max_rows; /* validation checks every row up to this many, else a sample; 0: 4096 */
    const char *extra_build_options; /* appended to every kernel build (diagnostics, fault injection);
                                        NULL: $FLASHCL_BUILD_OPTIONS. With $FLASHCL_BUILD_LOG set, the
                                        compiler's log of each successful build goes to stderr (with
                                        -cl-nv-verbose, NVIDIA's register and spill counts) */
    int tuning_db;             /* -1 or 1: shipped table and user file; 0: heuristic only */
    const char *tuning_db_path; /* NULL: $FLASHCL_TUNING_DB or the default location */
    int path;                  /* -1: $FLASHCL_PATH ("auto", "portable", "mma", "decode", "wgmma", "mfma", "wmma" or "dpas"; unset: auto); else a
                                  flashcl_path */
} flashcl_settings;

/** Fills settings with defaults (everything from the environment). */
FLASHCL_API flashcl_status flashcl_settings_default_abi(const flashcl_abi *abi, flashcl_settings *settings);
#define flashcl_settings_default(settings) flashcl_settings_default_abi(flashcl_abi_of_header(), (settings))

/**
 * Makes a context on the application's own OpenCL objects. They are retained (clRetain*) and released
 * on destroy; flashcl never replaces them. The queue must belong to `context` and `device`.
 * settings may be NULL (defaults). On failure *out is NULL.
 */
FLASHCL_API flashcl_status flashcl_context_create_abi(const flashcl_abi *abi, cl_context context, cl_device_id device,
                                                  cl_command_queue queue,
                                                  const flashcl_settings *settings,
                                                  flashcl_context **out);
#define flashcl_context_create(context, device, queue, settings, out) \
    flashcl_context_create_abi(flashcl_abi_of_header(), (context), (device), (queue), (settings), (out))

/**
 * Makes a context on a device flashcl picks: `selector` is "P:D" (platform and device index), or a
 * case-insensitive substring of "platform name / device name"; NULL or "" means $FLASHCL_DEVICE, and
 * if that is unset, the first GPU, else the first CPU, else the first device. The queue is created
 * with profiling enabled. Returns FLASHCL_NO_DEVICE when nothing matches.
 */
FLASHCL_API flashcl_status flashcl_context_create_default_abi(const flashcl_abi *abi, const char *selector,
                                                          const flashcl_settings *settings,
                                                          flashcl_context **out);
#define flashcl_context_create_default(selector, settings, out) \
    flashcl_context_create_default_abi(flashcl_abi_of_header(), (selector), (settings), (out))

/** Destroys a context and sets *ctx to NULL. Accepts NULL and a pointer to NULL. Plans must be destroyed first. */
FLASHCL_API void flashcl_context_destroy(flashcl_context **ctx);

/** The calling thread's last failure on ctx ("" if none since ctx was created), valid until this
 * thread's next failing flashcl call or ctx's destruction. A thread keeps the messages of the last 8
 * contexts it failed on (older ones read ""). With ctx NULL: the calling thread's last failure that
 * had no context (context creation, a NULL context or plan). */
FLASHCL_API const char *flashcl_context_last_error(const flashcl_context *ctx);
/** The OpenCL error code behind that failure (CL_SUCCESS if it did not come from OpenCL); per thread
 * as flashcl_context_last_error(). */
FLASHCL_API cl_int flashcl_context_last_cl_error(const flashcl_context *ctx);

/** The context's OpenCL objects (not retained for the caller). Any argument may be NULL. */
FLASHCL_API void flashcl_context_cl_objects(const flashcl_context *ctx, cl_context *context,
                                            cl_device_id *device, cl_command_queue *queue);
/** The profile of the context's device (its facts; the context's choices are its policy). */
FLASHCL_API const flashcl_device_profile *flashcl_context_profile(const flashcl_context *ctx);
/** The policy the context's plans choose under: its path, local-memory cap and tuning database
 * (owned by the context). Its override, when set, comes before it (flashcl_context_choose_config). */
FLASHCL_API flashcl_status flashcl_context_policy(const flashcl_context *ctx, flashcl_policy *policy);

/**
 * The configuration a plan for `problem` gets on this context: the context's override if set (the tiles
 * of the kernel its `kernel` names: flashcl_context_override_config); else the matrix-unit kernel where
 * the path, the device and the problem allow it; else the tuning database, else the heuristic:
 * flashcl_choose_config_policy() with the context's profile and policy. This is the function plans call.
 */
FLASHCL_API flashcl_status flashcl_context_choose_config(flashcl_context *ctx, const flashcl_problem *problem,
                                                         flashcl_algorithm algorithm, flashcl_config *config);
/**
 * Forces the flash tiles of plans created from now on; NULL clears the override. `kernel` names the
 * kernel whose tiles are forced, and only its fields are read (the rest is derived):
 *   FLASHCL_KERNEL_PORTABLE  block_m, block_n, threads_per_row, rows_per_item, d_chunk, v_chunk
 *                            (threads_per_row divides head_dim and block_n, rows_per_item block_m;
 *                            d_chunk a multiple of 4 dividing head_dim, v_chunk one dividing block_n);
 *   FLASHCL_KERNEL_MMA       block_m (16 to 128 query rows, a multiple of 16 x m_tiles) and block_n (16
 *                            to 256 keys, a multiple of 16), m_tiles (1 or 2; 1 with fp32 operands) and
 *                            kv_stages (1 or 2);
 *   FLASHCL_KERNEL_WGMMA     block_m (64, 128, or 192 at head dims 64 without fp8), block_n (64 or 128;
 *                            192 with 16-bit operands, head_dim_v up to 128, block_m up to 128, no
 *                            boolean mask or key padding), kv_stages (1 to 3, 4 with the producer),
 *                            producer (-1: where it fits, 0, 1)
 *                            and persistent (0, or n > 0 work-groups running the row blocks in turn);
 *   FLASHCL_KERNEL_MFMA, _WMMA, _DPAS  block_m and block_n (multiples of the kernel's matrix shape;
 *                            DPAS also sub_group 8 or 16).
 * Every tile must fit local memory and the work-group limit. A plan whose problem the override does not
 * fit, or whose problem the named kernel does not take on this device and path, fails with
 * FLASHCL_INVALID_ARGUMENT and a message naming the field. May be called while other threads create
 * plans: each plan gets the override as it was before or after the call, never a mix.
 */
FLASHCL_API flashcl_status flashcl_context_override_config(flashcl_context *ctx, const flashcl_config *config);
/** The tuning database the context consults (NULL when off). */
FLASHCL_API const flashcl_tuning_db *flashcl_context_tuning_db(const flashcl_context *ctx);

/** Turns validation mode on or off for plans enqueued from now on (an enqueue running in another
 * thread at the time sees the old or the new setting). */
FLASHCL_API void flashcl_context_set_validation(flashcl_context *ctx, int enabled);
FLASHCL_API int flashcl_context_validation(const flashcl_context *ctx);

typedef struct flashcl_stats {
    uint64_t programs_built;      /* compiled from source */
    uint64_t programs_from_disk;  /* loaded from the disk cache as binaries */
    uint64_t program_cache_hits;  /* served from the context's in-memory cache */
    uint64_t disk_cache_writes;
    uint64_t disk_cache_rejected; /* files found but unusable (torn, stale, corrupt): rebuilt */
    uint64_t disk_cache_write_failures; /* programs that could not be written (the first is also
                                           reported once per process on stderr); flashcl goes on */
    uint64_t programs_from_blob; /* loaded by flashcl_context_load_programs (ABI 2) */
} flashcl_stats;

FLASHCL_API void flashcl_context_stats(const flashcl_context *ctx, flashcl_stats *stats);
/** The disk cache directory in use, or NULL when the disk cache is off. */
FLASHCL_API const char *flashcl_context_cache_dir(const flashcl_context *ctx);

/*
 * Program blobs (ABI 2): the context's compiled programs as one block of bytes that the application
 * keeps where it likes (an asset, a file, a database: sandboxed and mobile applications that may not
 * write ~/.cache, engines that ship prebuilt kernels for a known device), and loads into a later context
 * of the same device and driver, whose plans then compile nothing. The blob holds each program's device
 * binary with its key (kernel sources and build options), the hash of the library's kernel sources it
 * was built from, and the device's identity (platform, device, driver); it is for this library version
 * and machine kind (host byte order). The disk cache is the same idea, kept by flashcl per program.
 */

/**
 * Writes the blob of every program the context holds (built, or loaded from disk or a blob). With
 * `buffer` NULL, *size is set to the bytes needed; otherwise the blob is written if *size is at least
 * that (BUFFER_TOO_SMALL, with *size set to it, when not) and *size becomes its length. A program whose
 * driver gives no binary is left out.
 */
FLASHCL_API flashcl_status flashcl_context_save_programs(flashcl_context *ctx, void *buffer, size_t *size);

/**
 * Adds a blob's programs to the context's cache; *loaded (may be NULL) is how many. A blob that is not
 * one (its header) or is cut short is refused with INVALID_ARGUMENT and a blob of another device or
 * driver with UNSUPPORTED, both before anything is loaded; programs of other kernel sources (another
 * flashcl version) or that the driver refuses to load are skipped (built again when a plan needs them),
 * as are programs the context already has. The context works the same afterwards either way.
 */
FLASHCL_API flashcl_status flashcl_context_load_programs(flashcl_context *ctx, const void *blob, size_t size,
                                                         size_t *loaded);

/**
 * Builds (or loads from the caches) the programs of the flash plans of `n` problems, as
 * flashcl_plan_create would, without keeping the plans: before saving a blob, or to move compilation
 * out of a latency-sensitive path. The first problem that fails stops it, named by its index.
 */
FLASHCL_API flashcl_status flashcl_context_precompile(flashcl_context *ctx, const flashcl_problem *problems,
                                                      size_t n);

/* ---------------------------------------------------------------------------------------------------
 * Plan.
 * Thread-safety: a plan may be enqueued by one thread at a time (it owns a cl_kernel whose arguments
 * are set at enqueue). Different plans of one context may be enqueued concurrently.
 */
typedef struct flashcl_plan flashcl_plan;

/**
 * Builds a plan for `problem`: validates it, chooses the configuration, gets the program (memory
 * cache, disk cache, or compile). On failure *out is NULL and the context's last error says why.
 */
FLASHCL_API flashcl_status flashcl_plan_create(flashcl_context *ctx, const flashcl_problem *problem,
                                               flashcl_plan **out);

/**
 * The same with an explicit algorithm: FLASHCL_ALGO_NAIVE runs the validator kernel as the result;
 * FLASHCL_ALGO_STANDARD allocates its n x n score matrices here, at plan time, and fails with
 * FLASHCL_OUT_OF_DEVICE_MEMORY (naming the bytes) when the device cannot hold them; it needs an
 * in-order queue. Without CLBlast it fails with FLASHCL_UNSUPPORTED.
 */
FLASHCL_API flashcl_status flashcl_plan_create_algo(flashcl_context *ctx, const flashcl_problem *problem,
                                                    flashcl_algorithm algorithm, flashcl_plan **out);

/** Destroys a plan and sets *plan to NULL. Accepts NULL. */
FLASHCL_API void flashcl_plan_destroy(flashcl_plan **plan);

/** The context the plan was made on. */
FLASHCL_API flashcl_context *flashcl_plan_context(const flashcl_plan *plan);

/** The configuration the plan runs. */
FLASHCL_API flashcl_status flashcl_plan_config(const flashcl_plan *plan, flashcl_config *config);
/** The plan's problem with defaults resolved (scale, strides). */
FLASHCL_API flashcl_status flashcl_plan_problem(const flashcl_plan *plan, flashcl_problem *problem);

/** What the compiled kernel reports (CL_KERNEL_WORK_GROUP_SIZE, _LOCAL_MEM_SIZE, _PRIVATE_MEM_SIZE). */
typedef struct flashcl_kernel_info {
    size_t max_work_group_size;
    uint64_t local_mem_bytes;
    uint64_t private_mem_bytes; /* per work-item; more than a few hundred bytes means register spills */
} flashcl_kernel_info;
FLASHCL_API flashcl_status flashcl_plan_kernel_info(const flashcl_plan *plan, flashcl_kernel_info *info);

/**
 * Device memory the plan allocated beyond the caller's buffers, in bytes: for standard attention the
 * score matrices (and fp32 copies for fp16/bf16); for flash under split-KV its partial results once an
 * enqueue ran without a caller workspace, and where the matrix-unit decode kernel merges its splits
 * itself (flash_decode_mma, up to 16 splits) a 4-byte counter a block of rows once an enqueue ran;
 * otherwise 0.
 * Validation's scratch is not counted.
 */
FLASHCL_API uint64_t flashcl_plan_extra_device_bytes(const flashcl_plan *plan);

/**
 * The scratch memory an enqueue of the plan needs, in bytes (0: none): split-KV's partial outputs and
 * log-sum-exps, (kv_splits, rows, head_dim_v + 1) fp32. An engine that owns its memory passes a buffer of
 * at least this size from tensors.offsets.workspace (a multiple of 4 bytes) as tensors.workspace, and the
 * plan allocates nothing but, for flash_decode_mma, its splits' counters (4 bytes a block of rows, the
 * plan's own: flashcl_plan_extra_device_bytes); without one the plan allocates its own on the first enqueue that needs it and
 * keeps it. The workspace is written by the enqueue and read by its own later commands only: it may be
 * reused once the enqueue's event has completed (or by later commands on the same in-order queue).
 * Standard attention's score chunks and validation's scratch stay the plan's. (ABI 2)
 */
FLASHCL_API uint64_t flashcl_plan_workspace_bytes(const flashcl_plan *plan);

/** Minimum buffer sizes in bytes for the plan's Q, K, V, O and LSE (LSE 0 when not requested). */
FLASHCL_API void flashcl_plan_buffer_sizes(const flashcl_plan *plan, size_t *q, size_t *k, size_t *v,
                                           size_t *o, size_t *lse);

struct flashcl_offsets;
/**
 * Every buffer's minimum size in bytes from its offset (what the enqueue checks), one member per
 * flashcl_tensors buffer, named as in flashcl_tensors.offsets: Q to LSE as above, the ALiBi slopes, the
 * mask, key padding, cu_seqlens, cache lengths, block table, k_new/v_new, the int8 scales, sinks, the
 * cache's batch index and left padding, and the workspace (flashcl_plan_workspace_bytes); 0 for a
 * buffer the problem does not use. FLASHCL_INVALID_ARGUMENT when plan or bytes is NULL. (ABI 4)
 */
FLASHCL_API flashcl_status flashcl_plan_tensor_bytes(const flashcl_plan *plan, struct flashcl_offsets *bytes);

/**
 * Enqueues the attention on caller buffers. lse must be non-NULL iff the problem asked for it.
 * Sizes and contexts of the buffers are checked (CL_MEM_SIZE, CL_MEM_CONTEXT) before anything is
 * launched; the events of the wait list must be valid events of the context's cl_context.
 * `event` (may be NULL) receives the event of the attention's last command (the caller releases it).
 * In validation mode the naive kernel recomputes a sample of rows after the attention, the call waits
 * for both and returns FLASHCL_VALIDATION_FAILED when the result is outside the tolerance; `event` is
 * still the attention's own (complete by then); the report is read with flashcl_plan_last_validation().
 */
FLASHCL_API flashcl_status flashcl_plan_enqueue(flashcl_plan *plan, cl_mem q, cl_mem k, cl_mem v, cl_mem o,
                                                cl_mem lse, cl_uint num_events_in_wait_list,
                                                const cl_event *event_wait_list, cl_event *event);

/** Every buffer an enqueue may read or write. Optional ones are NULL unless the problem asks for them. */
typedef struct flashcl_tensors {
    cl_mem q, k, v, o;
    cl_mem lse;          /* iff problem.return_lse */
    cl_mem alibi_slopes; /* iff problem.alibi: fp32, heads_q (alibi 1) or batch * heads_q (alibi 2) */
    cl_mem mask;         /* iff problem.attn_mask: problem.mask_dtype (fp32, fp16 or uint8), laid out by
                            problem.mask_strides */
    cl_mem key_padding;  /* iff problem.key_padding: uint8, (batch, seq_kv) */
    cl_mem cu_seqlens_q; /* iff problem.varlen: int32, batch + 1 */
    cl_mem cu_seqlens_k; /* iff problem.varlen without kv_cache: int32, batch + 1 */
    cl_mem cache_seqlens; /* iff problem.kv_cache: int32, batch */
    cl_mem block_table;   /* iff problem.page_size: int32, batch x ceil(seq_kv / page_size) */
    cl_mem k_new, v_new;  /* iff problem.kv_append: (batch, seq_q, heads_kv, head_dim), contiguous */
    cl_mem k_scale, v_scale; /* iff problem.kv_format is FLASHCL_KV_INT8: kv_scale_dtype, one per (cache row,
                                KV head): (batch, seq_kv, heads_kv), or (num_pages, page_size, heads_kv) */
    cl_mem sinks;            /* iff problem.sinks: fp32, heads_q (ABI 2) */
    cl_mem cache_batch_idx;  /* iff problem.cache_batch_idx: int32, batch (ABI 2) */
    cl_mem cache_leftpad;    /* iff problem.cache_leftpad: int32, batch (ABI 2) */
    cl_mem descale;          /* iff problem.fp8_descale: fp32, 3 (TENSOR) or 3 x batch x heads_kv (HEAD): Q's,
                                K's, V's (ABI 7) */
    cl_mem workspace;        /* optional: the plan's scratch (flashcl_plan_workspace_bytes), owned by the
                                caller; NULL: the plan allocates its own on the first enqueue that needs
                                it. Ignored by a plan that needs none (ABI 2) */
    /* Where each tensor starts in its buffer, in bytes (0: at the start): tensors that live at offsets
     * inside an engine's pooled buffers, with no sub-buffer (whose origin OpenCL restricts to
     * CL_DEVICE_MEM_BASE_ADDR_ALIGN). Each a multiple of its tensor's element size; Q's, K's and V's
     * also of 16 bytes where the plan's kernel copies rows in 16-byte pieces (flashcl_plan_config's
     * kernel is flash_mma, flash_wgmma or flash_decode_mma), and O's where it writes them so (flash_mma
     * and flash_wgmma: see flashcl_plan_enqueue_on). The buffer must hold the offset plus the tensor
     * (flashcl_plan_buffer_sizes). */
    struct flashcl_offsets { /* the buffers' order (ABI 4; ABI 2-3 had workspace after sinks; ABI 7 descale) */
        uint64_t q, k, v, o, lse, alibi_slopes, mask, key_padding, cu_seqlens_q, cu_seqlens_k, cache_seqlens,
            block_table, k_new, v_new, k_scale, v_scale, sinks, cache_batch_idx, cache_leftpad, descale, workspace;
    } offsets;
} flashcl_tensors;

/**
 * flashcl_plan_enqueue with every buffer in one struct: the call for problems with ALiBi, an additive
 * mask or a key-padding mask (flashcl_plan_enqueue refuses those, naming the missing buffer). The same
 * checks, events and validation as flashcl_plan_enqueue; the extra buffers are checked too.
 */
FLASHCL_API flashcl_status flashcl_plan_enqueue_tensors(flashcl_plan *plan, const flashcl_tensors *tensors,
                                                        cl_uint num_events_in_wait_list,
                                                        const cl_event *event_wait_list, cl_event *event);

/**
 * The enqueue an engine uses: flashcl_plan_enqueue_tensors on `queue` (NULL: the context's), any
 * command queue of the context's cl_context and device (in order or not: the plan's commands wait on
 * each other through events), with each tensor at its byte offset (tensors->offsets). The two calls
 * above are this one with the context's queue. Offsets are checked with the buffers (a multiple of the
 * element size; 16 bytes for Q, K and V under flash_mma, flash_wgmma and flash_decode_mma when the
 * problem's strides are multiples of 8 elements, as those kernels then copy rows in 16-byte pieces, and
 * for O under flash_mma and flash_wgmma when O's are, as they write O's rows so; offset plus tensor
 * within the buffer), the queue with clGetCommandQueueInfo (its context and device); nothing is
 * launched on a refusal. An event of another queue in the wait list needs that queue flushed first
 * (clFlush: OpenCL's rule for waits across queues). Enqueues that use the plan's own scratch (split-KV
 * without tensors.workspace, standard attention, flash_decode_mma's merge counters) are ordered by the
 * plan: each waits on the last one that used it (on the same in-order queue, by that queue's order alone),
 * flushing that one's queue where it was another; standard attention refuses an
 * out-of-order queue (FLASHCL_UNSUPPORTED); on an in-order queue a marker enqueued there stands for the
 * last use, so the wait also covers whatever the caller put on that queue after it. Validation mode runs on
 * the same queue. Outside validation mode a flash or naive plan keeps the kernel arguments of the last
 * enqueue that set them and a reference to each buffer of its tensors (clRetainMemObject; a workspace the
 * plan ignores is not held), released by the next enqueue that sets others (another buffer or offset),
 * by flashcl_plan_release_tensors or by flashcl_plan_destroy: an enqueue with the same tensors (every
 * field equal) is neither checked nor bound again, its host cost its launches alone; the caller's buffers
 * stay allocated while their plan holds them, and a refused enqueue leaves the hold as it was. Thread-safety:
 * as for every enqueue, a plan is enqueued by one thread at a time; different plans on different queues run
 * concurrently.
 */
FLASHCL_API flashcl_status flashcl_plan_enqueue_on(flashcl_plan *plan, cl_command_queue queue,
                                                   const flashcl_tensors *tensors, cl_uint num_events_in_wait_list,
                                                   const cl_event *event_wait_list, cl_event *event);

/**
 * Releases the plan's references to the buffers of its last enqueue (see flashcl_plan_enqueue_on: kept,
 * with their kernel arguments, for a next enqueue of the same tensors); the next enqueue checks and binds
 * its tensors again. For callers that make buffers for one enqueue and free them after it (the Python
 * binding's calls on numpy arrays), so that a plan kept for later does not keep them allocated. Enqueued
 * work is unaffected (OpenCL keeps a buffer until its commands finish). A NULL plan: nothing.
 */
FLASHCL_API void flashcl_plan_release_tensors(flashcl_plan *plan);

/*
 * Validation report. Tolerance for each element: |out - ref| <= rtol*|ref| + atol*row_scale, where
 * ref is the naive kernel's fp32 result, rtol is the output dtype's rounding (2^-23 fp32, 2^-10 fp16,
 * 2^-7 bf16), row_scale = max |ref| over the row (at least 1e-30), and atol = 2^-23*(8 + 2*sqrt(seq_kv)):
 * two fp32 computations of a sum of seq_kv terms in different orders differ by a few ulps growing like
 * sqrt(seq_kv) (the random-walk bound; the worst case is linear, oneDNN's (1 + n)*eps). The
 * matrix-unit kernel rounds P to the storage type for P*V: its atol is at least 4*2^-11 (fp16) or
 * 4*2^-8 (bf16). LSE, when requested, is checked with the same atol. NaN never passes.
 */
typedef struct flashcl_validation {
    int ran;              /* a validated enqueue happened */
    int passed;
    int64_t rows_checked; /* rows recomputed by the naive kernel */
    int64_t rows_total;   /* batch * heads_q * seq_q */
    int64_t nan_count;    /* NaN or inf where the reference is finite */
    int64_t failures;     /* elements outside the tolerance */
    double max_abs_error;
    double max_rel_error; /* |out - ref| / row_scale at the worst element */
    int64_t worst_row;    /* flat (batch, head, query) index of the worst element's row */
    int32_t worst_col;    /* its head_dim index, or -1 for the LSE */
    double worst_out, worst_ref;
    double atol, rtol;
} flashcl_validation;

/** The report of the plan's last validated enqueue. */
FLASHCL_API flashcl_status flashcl_plan_last_validation(const flashcl_plan *plan, flashcl_validation *report);

/* ---------------------------------------------------------------------------------------------------
 * The ABI descriptor (see "ABI guard" above): the version and each public struct's size, in the order
 * of flashcl_abi_struct. A binding that mirrors the structs fills one with its own sizes.
 */
typedef enum flashcl_abi_struct {
    FLASHCL_ABI_PROBLEM = 0,
    FLASHCL_ABI_DEVICE_PROFILE = 1,
    FLASHCL_ABI_CONFIG = 2,
    FLASHCL_ABI_POLICY = 3,
    FLASHCL_ABI_SETTINGS = 4,
    FLASHCL_ABI_STATS = 5,
    FLASHCL_ABI_KERNEL_INFO = 6,
    FLASHCL_ABI_TENSORS = 7,
    FLASHCL_ABI_VALIDATION = 8,
    FLASHCL_ABI_STRUCTS = 9 /* how many */
} flashcl_abi_struct;

struct flashcl_abi {
    uint32_t version;                     /* FLASHCL_ABI_VERSION */
    uint32_t count;                       /* FLASHCL_ABI_STRUCTS */
    uint32_t sizes[FLASHCL_ABI_STRUCTS]; /* sizeof each struct, indexed by flashcl_abi_struct */
};

/** The descriptor of the flashcl.h this translation unit was compiled with. */
static inline const flashcl_abi *flashcl_abi_of_header(void)
{
    static const flashcl_abi abi = {FLASHCL_ABI_VERSION,
                                    FLASHCL_ABI_STRUCTS,
                                    {(uint32_t)sizeof(flashcl_problem), (uint32_t)sizeof(flashcl_device_profile),
                                     (uint32_t)sizeof(flashcl_config), (uint32_t)sizeof(flashcl_policy),
                                     (uint32_t)sizeof(flashcl_settings), (uint32_t)sizeof(flashcl_stats),
                                     (uint32_t)sizeof(flashcl_kernel_info), (uint32_t)sizeof(flashcl_tensors),
                                     (uint32_t)sizeof(flashcl_validation)}};
    return &abi;
}

/**
 * FLASHCL_SUCCESS when `abi` (NULL: refused) matches the library's: the same version and the same size
 * for every struct; else FLASHCL_ABI_MISMATCH (or INVALID_ARGUMENT for NULL), with the first difference
 * in `why` (may be NULL) and in flashcl_context_last_error(NULL): "flashcl_problem is 232 bytes in the
 * caller's header and 240 in the library (ABI 1 / 2): rebuild against the installed flashcl.h".
 */
FLASHCL_API flashcl_status flashcl_abi_check(const flashcl_abi *abi, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif /* FLASHCL_H */
