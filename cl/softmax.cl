/* SPDX-License-Identifier: MIT */
/*
 * softmax.cl: the online softmax of the flash kernels (FlashAttention-2): per row a running maximum m
 * and a running sum l over the keys seen so far, scores in base 2, normalised once at the end.
 */
#ifndef FAST_EXP2 /* 1: the hardware's approximate exp2 (the matrix-unit kernel on the GPU) */
#define FAST_EXP2 0
#endif
#if FAST_EXP2
#define SOFTMAX_EXP2(x) native_exp2(x)
#else
#define SOFTMAX_EXP2(x) exp2(x)
#endif

/* After a tile whose own maximum is tile_max: (the new running maximum, the factor alpha that rescales
 * the sum and the output accumulated before). A row that has seen no key yet keeps m = -inf, its
 * weights are 0 and nothing is rescaled; a NaN score makes m NaN, and with it every weight and output
 * of its row (only). */
inline float2 softmax_step(const float m_run, const float tile_max)
{
    const float m_new = max_nan(m_run, tile_max);
    return (float2)(m_new, m_new == -INFINITY ? 1.0f : SOFTMAX_EXP2(m_run - m_new));
}

/* The weight of a score s under the running maximum m. */
inline float softmax_weight(const float s, const float m)
{
    return m == -INFINITY ? 0.0f : SOFTMAX_EXP2(s - m);
}

/* The output's normaliser 1/l; a row that saw no key writes zeros, never NaN. */
inline float softmax_norm(const float l)
{
    return l > 0.0f ? 1.0f / l : 0.0f;
}

/* An attention sink joins a finished row (HAS_SINKS): with the row's maximum m and sum l over its keys
 * (base 2) and the sink's logit s2 (base 2), the maximum and sum over the keys and the sink together.
 * The output is then acc * exp2(m - m') * softmax_norm(l'), the LSE softmax_lse(m', l'). A row that saw
 * no key gets (s2, 1): zeros and the sink as its LSE; a NaN row stays NaN; a sink of -inf is none. */
inline float2 softmax_sink(const float m, const float l, const float s2)
{
    if (s2 == -INFINITY)
        return (float2)(m, l);
    const float m2 = m > s2 ? m : s2; /* (a NaN m: s2, and l * exp2(NaN) keeps the row NaN) */
    return (float2)(m2, (m == -INFINITY ? 0.0f : l * SOFTMAX_EXP2(m - m2)) + SOFTMAX_EXP2(s2 - m2));
}
/* The factor of the accumulated output under softmax_sink's (m', l'). */
inline float softmax_sink_norm(const float m, const float2 ml)
{
    return m == -INFINITY ? 0.0f : SOFTMAX_EXP2(m - ml.x) * softmax_norm(ml.y);
}

/* The row's log-sum-exp in the natural logarithm; -inf for a row that saw no key, NaN for a NaN row
 * (so that flash_combine keeps a NaN row NaN under split-KV). */
inline float softmax_lse(const float m, const float l)
{
    return isnan(l) ? NAN : l > 0.0f ? (m + log2(l)) * LN2_F : -INFINITY; /* a NaN row's LSE stays NaN */
}

/* A maximum the matrix-unit kernels keep unscaled, in base-2 units: with a sink to join, -inf stays -inf
 * (a zero scale would make it NaN, which the sink would spread to the row); without one the product as it
 * is (-inf * 0 = NaN there leaves softmax_lse's -inf for a row that saw no key, its l being 0). */
inline float softmax_max_scaled(const float m, const float scale)
{
#if HAS_SINKS && !SPLIT_KV
    return m == -INFINITY ? -INFINITY : m * scale;
#else
    return m * scale;
#endif
}

/* A finished row with the maximum m and sum l over its keys (base 2), and the sink's logit s2 (base 2;
 * SINK_LOGIT2 reads it) joined where the kernel's row is final: with HAS_SINKS, outside split-KV (there
 * flash_combine joins it once). The factor of its accumulated output, and the (m, l) of its LSE
 * (softmax_lse, computed only where the kernel writes it). Every kernel's epilogue ends a row here. */
typedef struct softmax_end {
    float inv, m, l;
} softmax_end;

#if HAS_SINKS && !SPLIT_KV
#define SINK_LOGIT2(sinks, h) ((sinks)[h] * LOG2E_F)
#else
#define SINK_LOGIT2(sinks, h) (-INFINITY) /* (never read: no sink joins the row here) */
#endif

inline softmax_end softmax_finish(const float m, const float l, const float s2)
{
    softmax_end e;
#if HAS_SINKS && !SPLIT_KV
    const float2 ml = softmax_sink(m, l, s2);
    e.inv = softmax_sink_norm(m, ml);
    e.m = ml.x;
    e.l = ml.y;
#else
    (void)s2;
    e.inv = softmax_norm(l);
    e.m = m;
    e.l = l;
#endif
    return e;
}

/* Under split-KV, where split `split` writes its normalised partial result of a row and its LSE for
 * flash_combine: the row's index `row` among the rows_total rows (lse_row's), in (split, row) order; the
 * result's element d is at OP[partial_row * HEAD_DIM_V + d], its LSE at LP[partial_row]. */
inline long partial_row(const int split, const long rows_total, const long row)
{
    return (long)split * rows_total + row;
}
