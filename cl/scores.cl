/* SPDX-License-Identifier: MIT */
/*
 * scores.cl: what happens to a scaled score between Q*K^T and the softmax, in this order: the softcap,
 * ALiBi, the additive mask, the key-padding mask (shared by flash_fwd and naive). Scores are in units
 * of u: 1 for the natural logarithm (naive), LOG2E_F for the flash kernels' base-2 scores.
 */

/* Gemma 2's logit capping: s becomes cap*tanh(s/cap); with cap_u = cap*u it is the same in units u. */
inline float softcap_score(const float s, const float cap_u)
{
    return cap_u * tanh(s / cap_u);
}

/* ALiBi's slope for head h of batch b: per head, or per batch and head. */
inline float alibi_slope(__global const float *slopes, const int per_batch, const int b, const int h,
                         const int heads_q)
{
    return slopes[per_batch ? (long)b * heads_q + h : h];
}

/* ALiBi's bias for the key at distance |pos - key| from the row's aligned position, in units u. */
inline float alibi_bias(const float slope, const int pos, const int key, const float u)
{
    return -slope * u * fabs((float)(pos - key));
}

/* The mask's element type (flashcl_mask_dtype): MASK_KIND 0 fp32 and 1 fp16, added to the scores; 2
 * boolean (uint8), a zero removing the pair. */
#ifndef MASK_KIND
#define MASK_KIND 0
#endif
#if MASK_KIND == 1
#define MASK_T half
#elif MASK_KIND == 2
#define MASK_T uchar
#else
#define MASK_T float
#endif

/* The mask's value to add for (batch b, query row i, head h, key j); keys are contiguous. */
inline float mask_value(__global const MASK_T *mask, const long m_sb, const long m_ss, const long m_sh, const int b,
                        const int i, const int h, const int j)
{
    const long e = (long)b * m_sb + (long)i * m_ss + (long)h * m_sh + j;
#if MASK_KIND == 1
    return vload_half(e, mask);
#elif MASK_KIND == 2
    return mask[e] ? 0.0f : -INFINITY;
#else
    return mask[e];
#endif
}

/* Nonzero when key j of batch b is padding, which no query sees. */
inline bool key_padded(__global const uchar *kpm, const int seq_kv, const int b, const int j)
{
    return kpm[(long)b * seq_kv + j] != 0;
}
