/* SPDX-License-Identifier: MIT */
/*
 * problem.c: checks a problem description at the API boundary and resolves its layout (default
 * strides, minimum buffer sizes). All offset math is 64-bit and overflow-checked.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

flashcl_status flashcl_problem_default_abi(const flashcl_abi *abi, flashcl_problem *p)
{
    flashcl_status st = fcl_abi_guard(abi, "flashcl_problem_default");
    if (st != FLASHCL_SUCCESS)
        return st;
    if (!p)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_problem_default: problem is NULL");
    *p = (flashcl_problem){0};
    p->batch = p->heads_q = p->seq_q = 1;
    p->heads_kv = p->seq_kv = 0; /* the query side's (fcl_problem_sides): setting heads_q alone is MHA */
    p->head_dim = 64;
    p->dtype = FLASHCL_DTYPE_F32;
    p->window_left = p->window_right = -1;
    return FLASHCL_SUCCESS;
}

const flashcl_problem *fcl_problem_sides(const flashcl_problem *p, flashcl_problem *scratch)
{
    if (!p || (p->heads_kv != 0 && p->seq_kv != 0))
        return p;
    *scratch = *p;
    if (!scratch->heads_kv)
        scratch->heads_kv = scratch->heads_q;
    if (!scratch->seq_kv)
        scratch->seq_kv = scratch->seq_q;
    return scratch;
}

/* The longest a sequence's queries and keys can be: the padded lengths, or the packed totals. */
static void longest(const flashcl_problem *p, int64_t *sq, int64_t *skv)
{
    *sq = p->varlen && p->total_q > p->seq_q ? p->total_q : p->seq_q;
    *skv = p->varlen && p->total_kv > p->seq_kv ? p->total_kv : p->seq_kv;
}

void fcl_visible_window(const flashcl_problem *p, int32_t *left, int32_t *right)
{
    *left = p->window ? p->window_left : -1;
    *right = p->window ? p->window_right : -1;
    if (p->causal) /* min(window_right, 0), and 0 when unbounded */
        *right = 0;
    /* A window wider than the sequences sees what a window as wide as them sees: clamped, so that the
     * kernels' positions stay within 32 bits. Query i stands at pos = i + skv - sq (bottom-right, pos in
     * [skv - sq, skv - 1]) or pos = i (top-left, pos in [0, sq - 1]); the left side reaches key 0 from
     * every row once window_left >= the largest pos, the right side key skv - 1 once window_right >=
     * skv - 1 - the smallest pos. So bottom-right clamps left to skv and right to sq, top-left left to
     * sq and right to skv: each bound one past what a row can need, and no row's range changes. */
    int64_t sq, skv;
    longest(p, &sq, &skv);
    const int top_left = p->alignment == FLASHCL_ALIGN_TOP_LEFT;
    const int64_t left_max = top_left ? sq : skv, right_max = top_left ? skv : sq;
    if (*left > left_max)
        *left = (int32_t)left_max;
    if (*right > right_max)
        *right = (int32_t)right_max;
}

size_t fcl_mask_elem(const flashcl_problem *p)
{
    return p->mask_dtype == FLASHCL_MASK_BOOL ? 1 : p->mask_dtype == FLASHCL_MASK_F16 ? 2 : 4;
}

int fcl_wide_positions(const flashcl_problem *p)
{
    int64_t sq, skv;
    longest(p, &sq, &skv);
    return sq + 2 * skv + 2 > INT32_MAX;
}

size_t flashcl_dtype_size(flashcl_dtype dtype)
{
    switch (dtype) {
    case FLASHCL_DTYPE_F32:
        return 4;
    case FLASHCL_DTYPE_F16:
    case FLASHCL_DTYPE_BF16:
        return 2;
    }
    return 0;
}

flashcl_dtype fcl_kv_dtype(const flashcl_problem *p)
{
    return p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : (flashcl_dtype)p->dtype;
}

int32_t fcl_head_dim_v(const flashcl_problem *p)
{
    return p->head_dim_v ? p->head_dim_v : p->head_dim;
}

int fcl_kv_mixed(const flashcl_problem *p)
{
    return p->kv_dtype && fcl_kv_dtype(p) != (flashcl_dtype)p->dtype;
}

size_t fcl_kv_elem(const flashcl_problem *p)
{
    return p->qkv_format || p->kv_format ? 1 : flashcl_dtype_size(fcl_kv_dtype(p));
}

size_t fcl_kv_scale_elem(const flashcl_problem *p)
{
    return p->kv_format == FLASHCL_KV_INT8 ? flashcl_dtype_size((flashcl_dtype)p->kv_scale_dtype) : 1;
}

size_t fcl_q_elem(const flashcl_problem *p)
{
    return p->qkv_format ? 1 : flashcl_dtype_size((flashcl_dtype)p->dtype);
}

const char *flashcl_kv_format_name(flashcl_kv_format format)
{
    switch (format) {
    case FLASHCL_KV_PLAIN:
        return "plain";
    case FLASHCL_KV_INT8:
        return "int8";
    case FLASHCL_KV_FP8_E4M3:
        return "fp8e4m3";
    case FLASHCL_KV_FP8_E5M2:
        return "fp8e5m2";
    }
    return NULL;
}

const char *flashcl_dtype_name(flashcl_dtype dtype)
{
    switch (dtype) {
    case FLASHCL_DTYPE_F32:
        return "f32";
    case FLASHCL_DTYPE_F16:
        return "f16";
    case FLASHCL_DTYPE_BF16:
        return "bf16";
    }
    return "?";
}

int fcl_is_decode(const flashcl_problem *p)
{
    return p->seq_q <= FCL_DECODE_MAX_QUERIES;
}

float fcl_effective_scale(const flashcl_problem *p)
{
    return p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)p->head_dim);
}

/* Number of elements from the first to one past the last addressed element, or 0 on overflow. */
static int tensor_extent(const flashcl_strides *s, int64_t nb, int64_t ns, int64_t nh, int64_t d,
                         uint64_t *elements)
{
    int64_t a, b, c, sum;
    if (__builtin_mul_overflow(nb - 1, s->batch, &a) || __builtin_mul_overflow(ns - 1, s->seq, &b) ||
        __builtin_mul_overflow(nh - 1, s->head, &c) || __builtin_add_overflow(a, b, &sum) ||
        __builtin_add_overflow(sum, c, &sum) || __builtin_add_overflow(sum, d, &sum))
        return 0;
    *elements = (uint64_t)sum;
    return 1;
}

/*
 * Nonzero when two different indices of a strided layout map to one element: n dimensions (strides and
 * extents, strides not negative) over a last one of stride 1 and extent d. Sort the dimensions of extent > 1
 * by stride; the layout is injective iff each stride is at least the span of all smaller ones (the usual
 * sufficient test, exact for the layouts people use).
 */
int fcl_layout_overlaps(const int64_t *strides, const int64_t *extents, int n, int64_t d)
{
    int64_t stride[FCL_LAYOUT_DIMS], extent[FCL_LAYOUT_DIMS];
    if (n > FCL_LAYOUT_DIMS)
        return 1;
    for (int i = 0; i < n; ++i) {
        stride[i] = strides[i];
        extent[i] = extents[i];
    }
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            if (stride[j] < stride[i]) {
                int64_t t = stride[i];
                stride[i] = stride[j];
                stride[j] = t;
                t = extent[i];
                extent[i] = extent[j];
                extent[j] = t;
            }
    int64_t span = d; /* the last dimension: stride 1, extent d */
    for (int i = 0; i < n; ++i) {
        if (extent[i] <= 1)
            continue;
        if (stride[i] < span)
            return 1;
        int64_t add;
        if (__builtin_mul_overflow(extent[i] - 1, stride[i], &add) || __builtin_add_overflow(span, add, &span))
            return 1;
    }
    return 0;
}

static int strides_overlap(const flashcl_strides *s, int64_t nb, int64_t ns, int64_t nh, int64_t d)
{
    const int64_t stride[3] = {s->batch, s->seq, s->head}, extent[3] = {nb, ns, nh};
    return fcl_layout_overlaps(stride, extent, 3, d);
}

static flashcl_status resolve_tensor(flashcl_context *ctx, const char *name, const flashcl_strides *given,
                                     int64_t nb, int64_t ns, int64_t nh, int64_t d, size_t elem,
                                     int is_output, flashcl_strides *out, uint64_t *bytes)
{
    /* (is_output's bit 1: an output, whose elements may not overlap; bit 2: the strides as given, all
     * zero included: problem.mask_strides_explicit) */
    if (!(is_output & 2) && given->batch == 0 && given->seq == 0 && given->head == 0) {
        out->head = d;
        validate_or_return(ctx,
                           !__builtin_mul_overflow(nh, d, &out->seq) && !__builtin_mul_overflow(ns, out->seq, &out->batch),
                           FLASHCL_INVALID_ARGUMENT,
                           "problem.%s: seq x heads x head_dim = %lld x %lld x %lld elements overflows 64 bits", name,
                           (long long)ns, (long long)nh, (long long)d);
    } else {
        *out = *given;
    }
    validate_or_return(ctx, out->batch >= 0 && out->seq >= 0 && out->head >= 0, FLASHCL_INVALID_ARGUMENT,
                       "problem.%s_strides = {%lld, %lld, %lld}: strides must not be negative", name,
                       (long long)out->batch, (long long)out->seq, (long long)out->head);
    uint64_t elements;
    validate_or_return(ctx, tensor_extent(out, nb, ns, nh, d, &elements), FLASHCL_INVALID_ARGUMENT,
                       "problem.%s_strides = {%lld, %lld, %lld}: the tensor's extent overflows 64 bits",
                       name, (long long)out->batch, (long long)out->seq, (long long)out->head);
    validate_or_return(ctx, elements <= (uint64_t)INT64_MAX / elem && elements * elem <= SIZE_MAX,
                       FLASHCL_INVALID_ARGUMENT, "problem.%s: %llu elements do not fit in memory", name,
                       (unsigned long long)elements);
    if (is_output & 1)
        validate_or_return(ctx, !strides_overlap(out, nb, ns, nh, d), FLASHCL_INVALID_ARGUMENT,
                           "problem.%s_strides = {%lld, %lld, %lld}: %s elements overlap (each "
                           "stride must cover the span of the smaller dimensions, head_dim %lld)",
                           name, (long long)out->batch, (long long)out->seq, (long long)out->head,
                           name[0] == 'o' ? "output" : "the cache's (kv_append writes it)", (long long)d);
    *bytes = elements * elem;
    return FLASHCL_SUCCESS;
}

/* The sizes, heads and head dims, the dtype, and the scalar options: scale, window, alignment, split
 * count, softcap; batch x heads within the kernels' int work-group indices. */
static flashcl_status check_shape(flashcl_context *ctx, const flashcl_problem *p)
{
    validate_or_return(ctx, p->batch >= 1, FLASHCL_INVALID_ARGUMENT, "problem.batch = %d: must be >= 1",
                       (int)p->batch);
    validate_or_return(ctx, p->heads_q >= 1, FLASHCL_INVALID_ARGUMENT,
                       "problem.heads_q = %d: must be >= 1", (int)p->heads_q);
    validate_or_return(ctx, p->heads_kv >= 1, FLASHCL_INVALID_ARGUMENT,
                       "problem.heads_kv = %d: must be >= 1 (0: heads_q)", (int)p->heads_kv);
    validate_or_return(ctx, p->heads_q % p->heads_kv == 0, FLASHCL_INVALID_ARGUMENT,
                       "problem.heads_q = %d is not a multiple of problem.heads_kv = %d (GQA needs "
                       "whole groups)",
                       (int)p->heads_q, (int)p->heads_kv);
    validate_or_return(ctx, p->seq_q >= 1, FLASHCL_INVALID_ARGUMENT, "problem.seq_q = %d: must be >= 1",
                       (int)p->seq_q);
    validate_or_return(ctx, p->seq_kv >= 1, FLASHCL_INVALID_ARGUMENT,
                       "problem.seq_kv = %d: must be >= 1 (0: seq_q)", (int)p->seq_kv);
    validate_or_return(ctx, p->head_dim >= 8 && p->head_dim <= 256 && p->head_dim % 8 == 0,
                       FLASHCL_UNSUPPORTED,
                       "problem.head_dim = %d: supported head dims are the multiples of 8 from 8 to 256",
                       (int)p->head_dim);
    validate_or_return(ctx, p->head_dim_v == 0 || (p->head_dim_v >= 8 && p->head_dim_v <= 256 && p->head_dim_v % 8 == 0),
                       FLASHCL_UNSUPPORTED,
                       "problem.head_dim_v = %d: 0 (head_dim) or a multiple of 8 from 8 to 256", (int)p->head_dim_v);
    validate_or_return(ctx, flashcl_dtype_size(p->dtype) != 0, FLASHCL_INVALID_ARGUMENT,
                       "problem.dtype = %d: not a flashcl_dtype", (int)p->dtype);
    /* (the kernels take scale and softcap times log2(e) too: both finite) */
    const float log2e_max = FLT_MAX / 1.44269504088896340736f;
    validate_or_return(ctx, isfinite(p->scale) && fabsf(p->scale) <= log2e_max, FLASHCL_INVALID_ARGUMENT,
                       "problem.scale = %g: must be finite, at most %g in magnitude (0 means 1/sqrt(head_dim))",
                       (double)p->scale, (double)log2e_max);
    validate_or_return(ctx, !p->window || (p->window_left >= -1 && p->window_right >= -1),
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.window_left = %d, window_right = %d: each must be >= 0, or -1 for unbounded",
                       (int)p->window_left, (int)p->window_right);
    validate_or_return(ctx, p->alignment == FLASHCL_ALIGN_BOTTOM_RIGHT || p->alignment == FLASHCL_ALIGN_TOP_LEFT,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.alignment = %d: FLASHCL_ALIGN_BOTTOM_RIGHT (0) or FLASHCL_ALIGN_TOP_LEFT (1)",
                       (int)p->alignment);
    validate_or_return(ctx, p->kv_splits >= 0 && p->kv_splits <= 1024, FLASHCL_INVALID_ARGUMENT,
                       "problem.kv_splits = %d: 0 (chosen), 1 (none) to 1024", (int)p->kv_splits);
    validate_or_return(ctx, isfinite(p->softcap) && p->softcap >= 0.0f && p->softcap <= log2e_max,
                       FLASHCL_INVALID_ARGUMENT, "problem.softcap = %g: must be from 0 (no softcap) to %g",
                       (double)p->softcap, (double)log2e_max);
    /* Work-group indices along batch x heads are int in the kernels. */
    validate_or_return(ctx, (int64_t)p->batch * p->heads_q <= INT32_MAX, FLASHCL_INVALID_ARGUMENT,
                       "problem.batch * problem.heads_q = %lld: must fit in 31 bits",
                       (long long)p->batch * p->heads_q);
    return FLASHCL_SUCCESS;
}

/* fp8 attention: Q, K and V in one of the 8-bit float formats, with their descale factors; what it does
 * not combine with, named. */
static flashcl_status check_fp8(flashcl_context *ctx, const flashcl_problem *p)
{
    validate_or_return(ctx,
                       p->qkv_format == FLASHCL_KV_PLAIN || p->qkv_format == FLASHCL_KV_FP8_E4M3 ||
                           p->qkv_format == FLASHCL_KV_FP8_E5M2,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.qkv_format = %d: 0, FLASHCL_KV_FP8_E4M3 (2) or FLASHCL_KV_FP8_E5M2 (3)",
                       (int)p->qkv_format);
    validate_or_return(ctx, p->fp8_descale >= FLASHCL_DESCALE_NONE && p->fp8_descale <= FLASHCL_DESCALE_HEAD,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.fp8_descale = %d: FLASHCL_DESCALE_NONE (0), _TENSOR (1) or _HEAD (2)",
                       (int)p->fp8_descale);
    if (!p->qkv_format) {
        validate_or_return(ctx, !p->fp8_descale, FLASHCL_INVALID_ARGUMENT,
                           "problem.fp8_descale = %d without problem.qkv_format: descale factors are fp8 "
                           "attention's", (int)p->fp8_descale);
        return FLASHCL_SUCCESS;
    }
    const char *f = flashcl_kv_format_name((flashcl_kv_format)p->qkv_format), *no = NULL;
    if (p->kv_format)
        no = "kv_format (qkv_format is K's and V's format too)";
    else if (p->kv_dtype)
        no = "kv_dtype (K and V are fp8)";
    else if (p->head_dim_v && p->head_dim_v != p->head_dim)
        no = "head_dim_v";
    else if (p->kv_append)
        no = "kv_append (the step's rows would need a descale of their own)";
    else if (p->precision)
        no = "a TF32 precision";
    validate_or_return(ctx, no == NULL, FLASHCL_UNSUPPORTED, "problem.qkv_format = %s with %s", f, no);
    return FLASHCL_SUCCESS;
}

/* K's and V's storage: a quantized format (a decode-time KV cache without a mask, int8 with f32 or
 * f16 scales), or plain in kv_dtype; a quantized cache keeps one head dim and its own storage. */
static flashcl_status check_kv_storage(flashcl_context *ctx, const flashcl_problem *p)
{
    validate_or_return(ctx, flashcl_kv_format_name((flashcl_kv_format)p->kv_format) != NULL, FLASHCL_INVALID_ARGUMENT,
                       "problem.kv_format = %d: not a flashcl_kv_format", (int)p->kv_format);
    if (p->kv_format != FLASHCL_KV_PLAIN) {
        const char *f = flashcl_kv_format_name((flashcl_kv_format)p->kv_format);
        validate_or_return(ctx, p->kv_cache, FLASHCL_INVALID_ARGUMENT,
                           "problem.kv_format = %s without problem.kv_cache: only a KV cache is quantized", f);
        validate_or_return(ctx, p->seq_q <= FCL_DECODE_MAX_QUERIES, FLASHCL_UNSUPPORTED,
                           "problem.kv_format = %s with seq_q = %d: a quantized cache is read by the decode kernels "
                           "(seq_q <= %d)",
                           f, (int)p->seq_q, FCL_DECODE_MAX_QUERIES);
        validate_or_return(ctx, !p->attn_mask, FLASHCL_UNSUPPORTED,
                           "problem.kv_format = %s with attn_mask: the decode kernels take no additive mask", f);
        validate_or_return(ctx,
                           p->kv_format != FLASHCL_KV_INT8 || p->kv_scale_dtype == FLASHCL_DTYPE_F32 ||
                               p->kv_scale_dtype == FLASHCL_DTYPE_F16,
                           FLASHCL_INVALID_ARGUMENT, "problem.kv_scale_dtype = %d: int8 scales are f32 or f16",
                           (int)p->kv_scale_dtype);
    }

    validate_or_return(ctx, p->kv_dtype >= FLASHCL_KV_DTYPE_SAME && p->kv_dtype <= FLASHCL_KV_DTYPE_BF16,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.kv_dtype = %d: 0 (the problem's dtype), FLASHCL_KV_DTYPE_F32 (1), _F16 (2) or _BF16 (3)",
                       (int)p->kv_dtype);
    validate_or_return(ctx, !p->kv_dtype || p->kv_format == FLASHCL_KV_PLAIN, FLASHCL_INVALID_ARGUMENT,
                       "problem.kv_dtype = %d with kv_format = %s: a quantized cache has its own storage",
                       (int)p->kv_dtype, flashcl_kv_format_name((flashcl_kv_format)p->kv_format));
    validate_or_return(ctx, fcl_head_dim_v(p) == p->head_dim || p->kv_format == FLASHCL_KV_PLAIN, FLASHCL_UNSUPPORTED,
                       "problem.head_dim_v = %d with kv_format = %s: a quantized cache has one head dim",
                       (int)p->head_dim_v, flashcl_kv_format_name((flashcl_kv_format)p->kv_format));
    validate_or_return(ctx, flashcl_precision_name((flashcl_precision)p->precision) != NULL, FLASHCL_INVALID_ARGUMENT,
                       "problem.precision = %d: FLASHCL_PRECISION_FP32 (0), _TF32X3 (1) or _TF32 (2)", (int)p->precision);
    validate_or_return(ctx,
                       p->precision == FLASHCL_PRECISION_FP32 ||
                           (p->dtype == FLASHCL_DTYPE_F32 && fcl_kv_dtype(p) == FLASHCL_DTYPE_F32 && !p->kv_format),
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.precision = %s: a TF32 precision is for fp32 Q, K and V (dtype %s, K and V %s)",
                       flashcl_precision_name((flashcl_precision)p->precision), flashcl_dtype_name((flashcl_dtype)p->dtype),
                       p->kv_format ? flashcl_kv_format_name((flashcl_kv_format)p->kv_format)
                                    : flashcl_dtype_name(fcl_kv_dtype(p)));
    return check_fp8(ctx, p);
}

const char *flashcl_precision_name(flashcl_precision precision)
{
    switch (precision) {
    case FLASHCL_PRECISION_FP32:
        return "fp32";
    case FLASHCL_PRECISION_TF32X3:
        return "tf32x3";
    case FLASHCL_PRECISION_TF32:
        return "tf32";
    }
    return NULL;
}

int fcl_tf32(const flashcl_problem *p)
{
    return p->precision == FLASHCL_PRECISION_TF32X3 ? 3 : p->precision == FLASHCL_PRECISION_TF32 ? 1 : 0;
}

/* The KV cache: its options (cache_batch_idx, cache_leftpad, cache_batch; kv_append and page_size)
 * only with one, and a paged cache's pages. Sets layout->max_pages and layout->cache_batch; K/V become
 * *nbk batches of *nk rows (num_pages of page_size for a paged cache). */
static flashcl_status check_cache(flashcl_context *ctx, const flashcl_problem *p, resolved_layout *layout,
                                  int64_t *nbk, int64_t *nk)
{
    layout->max_pages = 0;
    if (p->cache_batch_idx || p->cache_leftpad || p->cache_batch) {
        const char *opt = p->cache_batch_idx ? "cache_batch_idx" : p->cache_leftpad ? "cache_leftpad" : "cache_batch";
        validate_or_return(ctx, p->kv_cache, FLASHCL_INVALID_ARGUMENT, "problem.%s is set without problem.kv_cache",
                           opt);
        validate_or_return(ctx, !p->page_size, FLASHCL_UNSUPPORTED,
                           "problem.%s with a paged cache (page_size = %d): the block table already says where "
                           "each sequence's rows are",
                           opt, (int)p->page_size);
        validate_or_return(ctx, p->kv_format != FLASHCL_KV_INT8, FLASHCL_UNSUPPORTED,
                           "problem.%s with an int8 cache: its scales are laid out by batch entry", opt);
        validate_or_return(ctx, p->cache_batch >= 0 && (p->cache_batch == 0 || p->cache_batch_idx),
                           FLASHCL_INVALID_ARGUMENT,
                           "problem.cache_batch = %d: the cache's sequences, >= 1 with cache_batch_idx (0: batch), "
                           "0 without it", (int)p->cache_batch);
        if (p->cache_batch_idx && p->cache_batch)
            *nbk = p->cache_batch;
    }
    layout->cache_batch = (int32_t)*nbk;
    if (p->kv_cache) {
        validate_or_return(ctx, p->page_size >= 0 && p->page_size % 16 == 0, FLASHCL_INVALID_ARGUMENT,
                           "problem.page_size = %d: 0 (contiguous) or a multiple of 16", (int)p->page_size);
        if (p->page_size) {
            validate_or_return(ctx, p->num_pages >= 1, FLASHCL_INVALID_ARGUMENT,
                               "problem.num_pages = %d: a paged cache needs at least one page", (int)p->num_pages);
            layout->max_pages = (int32_t)(((int64_t)p->seq_kv + p->page_size - 1) / p->page_size);
            *nbk = p->num_pages;
            *nk = p->page_size;
        }
    } else {
        validate_or_return(ctx, !p->kv_append && !p->page_size, FLASHCL_INVALID_ARGUMENT,
                           "problem.%s is set without problem.kv_cache", p->kv_append ? "kv_append" : "page_size");
    }
    return FLASHCL_SUCCESS;
}

/* Packed sequences: the totals within int32 cu_seqlens and at least the longest sequences, and no
 * mask or key padding. Q/O and K/V become one batch of total_q and total_kv rows; over a KV cache
 * (chunked prefill: packed queries, the cache's batches or pages filled to cache_seqlens) only Q/O do,
 * total_kv is 0 and cu_seqlens_k unused, and the step's rows are in the cache already (no append). */
static flashcl_status check_varlen(flashcl_context *ctx, const flashcl_problem *p, int64_t *nb, int64_t *nq,
                                   int64_t *nbk, int64_t *nk)
{
    if (!p->varlen)
        return FLASHCL_SUCCESS;
    if (p->kv_cache) {
        validate_or_return(ctx, p->total_q >= 1 && p->total_q <= INT32_MAX && p->seq_q <= p->total_q,
                           FLASHCL_INVALID_ARGUMENT,
                           "problem.total_q = %lld: 1 to 2^31-1 (int32 cu_seqlens) and at least seq_q = %d (the "
                           "longest sequence)",
                           (long long)p->total_q, (int)p->seq_q);
        validate_or_return(ctx, p->total_kv == 0, FLASHCL_INVALID_ARGUMENT,
                           "problem.total_kv = %lld with varlen over a KV cache: 0 (each sequence's keys are its "
                           "cache_seqlens entry; cu_seqlens_k is not read)",
                           (long long)p->total_kv);
        validate_or_return(ctx, !p->kv_append, FLASHCL_UNSUPPORTED,
                           "problem.kv_append with varlen: the append takes padded batches; write the step's rows "
                           "into the cache first and count them in cache_seqlens");
        validate_or_return(ctx, p->kv_format == FLASHCL_KV_PLAIN, FLASHCL_UNSUPPORTED,
                           "problem.varlen with kv_format = %s: a quantized cache is read by the decode kernels, "
                           "which take padded batches",
                           flashcl_kv_format_name((flashcl_kv_format)p->kv_format));
        validate_or_return(ctx, !p->attn_mask && !p->key_padding, FLASHCL_UNSUPPORTED,
                           "problem.varlen with %s: packed sequences take neither (varlen replaces padding)",
                           p->attn_mask ? "attn_mask" : "key_padding");
        *nb = 1;
        *nq = p->total_q;
        return FLASHCL_SUCCESS;
    }
    validate_or_return(ctx, p->total_q >= 1 && p->total_kv >= 1 && p->total_q <= INT32_MAX &&
                                p->total_kv <= INT32_MAX,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.total_q = %lld, total_kv = %lld: each must be 1 to 2^31-1 (int32 cu_seqlens)",
                       (long long)p->total_q, (long long)p->total_kv);
    validate_or_return(ctx, p->seq_q <= p->total_q && p->seq_kv <= p->total_kv, FLASHCL_INVALID_ARGUMENT,
                       "problem.seq_q = %d / seq_kv = %d (the longest sequences) exceed total_q = %lld / "
                       "total_kv = %lld",
                       (int)p->seq_q, (int)p->seq_kv, (long long)p->total_q, (long long)p->total_kv);
    validate_or_return(ctx, !p->attn_mask && !p->key_padding, FLASHCL_UNSUPPORTED,
                       "problem.varlen with %s: packed sequences take neither (varlen replaces padding)",
                       p->attn_mask ? "attn_mask" : "key_padding");
    *nb = *nbk = 1;
    *nq = p->total_q;
    *nk = p->total_kv;
    return FLASHCL_SUCCESS;
}

/* Q, K, V and O's strides and sizes (Q/O nb batches of nq rows, K/V nbk of nk), then the output row
 * groups and the sizes of the buffers that follow from the problem alone: LSE, cu_seqlens, the cache's
 * index arrays and block table, int8 scales, appended keys and values. */
static flashcl_status resolve_buffers(flashcl_context *ctx, const flashcl_problem *p, resolved_layout *layout,
                                      int64_t nb, int64_t nq, int64_t nbk, int64_t nk)
{
    const size_t elem = flashcl_dtype_size(p->dtype);
    const size_t kv_elem = fcl_kv_elem(p);
    const int64_t d = p->head_dim, dv = fcl_head_dim_v(p);
    const int written = p->kv_cache && p->kv_append; /* (the cache's K and V: written by the append) */
    flashcl_status st;
    if ((st = resolve_tensor(ctx, "q", &p->q_strides, nb, nq, p->heads_q, d, fcl_q_elem(p), 0, &layout->q,
                             &layout->q_bytes)) ||
        (st = resolve_tensor(ctx, "k", &p->k_strides, nbk, nk, p->heads_kv, d, kv_elem, written, &layout->k,
                             &layout->k_bytes)) ||
        (st = resolve_tensor(ctx, "v", &p->v_strides, nbk, nk, p->heads_kv, dv, kv_elem, written, &layout->v,
                             &layout->v_bytes)) ||
        (st = resolve_tensor(ctx, "o", &p->o_strides, nb, nq, p->heads_q, dv, elem, 1, &layout->o, &layout->o_bytes)))
        return st;
    layout->kv_batches = nbk;
    layout->kv_rows = nk;
    layout->row_groups = p->varlen ? p->heads_q : (int64_t)p->batch * p->heads_q;
    layout->group_rows = p->varlen ? p->total_q : p->seq_q;
    const struct {
        const char *name;
        int used;
        uint64_t f[5];
        uint64_t *out;
    } sizes[] = {
        {"lse", p->return_lse, {(uint64_t)layout->row_groups, (uint64_t)layout->group_rows, sizeof(float), 1, 1},
         &layout->lse_bytes},
        {"cu_seqlens", p->varlen, {(uint64_t)p->batch + 1, sizeof(int32_t), 1, 1, 1}, &layout->cu_seqlens_bytes},
        {"cache_seqlens", p->kv_cache, {(uint64_t)p->batch, sizeof(int32_t), 1, 1, 1}, &layout->cache_seqlens_bytes},
        {"cache_batch_idx", p->cache_batch_idx, {(uint64_t)p->batch, sizeof(int32_t), 1, 1, 1},
         &layout->cache_batch_idx_bytes},
        {"cache_leftpad", p->cache_leftpad, {(uint64_t)p->batch, sizeof(int32_t), 1, 1, 1},
         &layout->cache_leftpad_bytes},
        {"descale", p->fp8_descale == FLASHCL_DESCALE_TENSOR || p->fp8_descale == FLASHCL_DESCALE_HEAD,
         {3, sizeof(float), p->fp8_descale == FLASHCL_DESCALE_HEAD ? (uint64_t)p->batch : 1,
          p->fp8_descale == FLASHCL_DESCALE_HEAD ? (uint64_t)p->heads_kv : 1, 1},
         &layout->descale_bytes},
        {"block_table", p->kv_cache && p->page_size,
         {(uint64_t)p->batch, (uint64_t)layout->max_pages, sizeof(int32_t), 1, 1}, &layout->block_table_bytes},
        {"k_scale and v_scale", p->kv_format == FLASHCL_KV_INT8,
         {(uint64_t)nbk, (uint64_t)nk, (uint64_t)p->heads_kv, fcl_kv_scale_elem(p), 1}, &layout->kv_scale_bytes},
        {"k_new", p->kv_cache && p->kv_append,
         {(uint64_t)p->batch, (uint64_t)p->seq_q, (uint64_t)p->heads_kv, (uint64_t)d, elem}, &layout->kv_new_bytes},
        {"v_new", p->kv_cache && p->kv_append,
         {(uint64_t)p->batch, (uint64_t)p->seq_q, (uint64_t)p->heads_kv, (uint64_t)dv, elem}, &layout->v_new_bytes},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        uint64_t bytes = sizes[i].used ? 1 : 0;
        for (int j = 0; j < 5 && sizes[i].used; ++j)
            validate_or_return(ctx, !__builtin_mul_overflow(bytes, sizes[i].f[j], &bytes), FLASHCL_INVALID_ARGUMENT,
                               "problem: %s's size in bytes overflows 64 bits", sizes[i].name);
        *sizes[i].out = bytes;
    }
    return FLASHCL_SUCCESS;
}

/* The score modifiers: the mask dtype, ALiBi slopes, sinks and key padding with their sizes, and an
 * additive mask's strides (PyTorch's layout by default). */
static flashcl_status check_masks(flashcl_context *ctx, const flashcl_problem *p, resolved_layout *layout)
{
    validate_or_return(ctx, p->mask_dtype >= FLASHCL_MASK_F32 && p->mask_dtype <= FLASHCL_MASK_BOOL,
                       FLASHCL_INVALID_ARGUMENT,
                       "problem.mask_dtype = %d: FLASHCL_MASK_F32 (0), FLASHCL_MASK_F16 (1) or FLASHCL_MASK_BOOL (2)",
                       (int)p->mask_dtype);
    validate_or_return(ctx, p->alibi >= 0 && p->alibi <= 2, FLASHCL_INVALID_ARGUMENT,
                       "problem.alibi = %d: 0 (none), 1 (slopes per head) or 2 (per batch and head)", (int)p->alibi);
    layout->alibi_bytes = p->alibi ? (uint64_t)(p->alibi == 2 ? p->batch : 1) * p->heads_q * sizeof(float) : 0;
    validate_or_return(ctx, p->sinks == 0 || p->sinks == 1, FLASHCL_INVALID_ARGUMENT,
                       "problem.sinks = %d: 0 (none) or 1 (one fp32 logit per query head)", (int)p->sinks);
    layout->sinks_bytes = p->sinks ? (uint64_t)p->heads_q * sizeof(float) : 0;
    layout->key_padding_bytes = p->key_padding ? (uint64_t)p->batch * p->seq_kv : 0;
    layout->mask_bytes = 0;
    memset(&layout->mask, 0, sizeof layout->mask);
    if (p->attn_mask) {
        /* The mask is a (batch, seq_q, heads_q, seq_kv) tensor to resolve_tensor, keys contiguous; its
         * default layout is PyTorch's (batch, heads_q, seq_q, seq_kv). */
        flashcl_strides m = p->mask_strides;
        if (m.batch == 0 && m.seq == 0 && m.head == 0 && !p->mask_strides_explicit) {
            m.seq = p->seq_kv;
            validate_or_return(ctx,
                               !__builtin_mul_overflow((int64_t)p->seq_q, (int64_t)p->seq_kv, &m.head) &&
                                   !__builtin_mul_overflow((int64_t)p->heads_q, m.head, &m.batch),
                               FLASHCL_INVALID_ARGUMENT,
                               "problem.mask: heads_q x seq_q x seq_kv elements overflow 64 bits");
        }
        return resolve_tensor(ctx, "mask", &m, p->batch, p->seq_q, p->heads_q, p->seq_kv, fcl_mask_elem(p),
                              p->mask_strides_explicit ? 2 : 0, &layout->mask, &layout->mask_bytes);
    }
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_check_problem(flashcl_context *ctx, const flashcl_problem *p, resolved_layout *layout)
{
    validate_or_return(ctx, p, FLASHCL_INVALID_ARGUMENT, "problem is NULL");
    flashcl_status st;
    if ((st = check_shape(ctx, p)) || (st = check_kv_storage(ctx, p)))
        return st;
    /* Q/O are nb batches of nq rows, K/V nbk batches of nk rows. Packed sequences are one batch of
     * total rows (the batch stride unused); a paged cache is num_pages batches of page_size rows. */
    int64_t nb = p->batch, nq = p->seq_q, nbk = p->batch, nk = p->seq_kv;
    if ((st = check_cache(ctx, p, layout, &nbk, &nk)) || (st = check_varlen(ctx, p, &nb, &nq, &nbk, &nk)) ||
        (st = resolve_buffers(ctx, p, layout, nb, nq, nbk, nk)))
        return st;
    return check_masks(ctx, p, layout);
}
