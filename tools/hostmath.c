/*
 * hostmath.c: host-side conversions, random numbers and the float64 reference (see hostmath.h).
 */
#include "hostmath.h"

#include <math.h>
#include <string.h>

uint16_t hm_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (absx >= 0x477ff000u)               /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal, round to nearest even */
        float a;
        memcpy(&a, &absx, 4);
        const float scaled = a * 16777216.0f; /* a / 2^-24 */
        uint32_t m = (uint32_t)scaled;
        const float rem = scaled - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u)))
            ++m;
        return (uint16_t)(sign | m);
    }
    uint32_t mant = absx & 0x7fffffu;
    uint32_t exp = (absx >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return (uint16_t)(sign | h);
}

float hm_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-8f; /* 2^-24 */
        memcpy(&x, &f, 4);
        x |= sign;
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t hm_float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float hm_bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void hm_store(void *buf, flashcl_dtype t, size_t i, float x)
{
    if (t == FLASHCL_DTYPE_F32)
        ((float *)buf)[i] = x;
    else if (t == FLASHCL_DTYPE_F16)
        ((uint16_t *)buf)[i] = hm_float_to_half(x);
    else
        ((uint16_t *)buf)[i] = hm_float_to_bf16(x);
}

float hm_load(const void *buf, flashcl_dtype t, size_t i)
{
    if (t == FLASHCL_DTYPE_F32)
        return ((const float *)buf)[i];
    if (t == FLASHCL_DTYPE_F16)
        return hm_half_to_float(((const uint16_t *)buf)[i]);
    return hm_bf16_to_float(((const uint16_t *)buf)[i]);
}

void hm_rng_seed(hm_rng *r, uint64_t seed)
{
    r->s = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    if (!r->s)
        r->s = 1;
}

static uint64_t next_u64(hm_rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

double hm_rng_uniform(hm_rng *r)
{
    return ((double)(next_u64(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double hm_rng_normal(hm_rng *r)
{
    const double u1 = hm_rng_uniform(r), u2 = hm_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void hm_fill_normal(void *buf, flashcl_dtype t, size_t count, hm_rng *r, double sigma)
{
    for (size_t i = 0; i < count; ++i)
        hm_store(buf, t, i, (float)(sigma * hm_rng_normal(r)));
}

void hm_fill_unit_uniform(void *buf, flashcl_dtype t, size_t count, hm_rng *r)
{
    const double half_width = 1.7320508075688772; /* sqrt(3): variance 1 */
    for (size_t i = 0; i < count; ++i)
        hm_store(buf, t, i, (float)((2.0 * hm_rng_uniform(r) - 1.0) * half_width));
}

void hm_decode(const void *buf, flashcl_dtype t, size_t count, float *out)
{
    for (size_t i = 0; i < count; ++i)
        out[i] = hm_load(buf, t, i);
}

double hm_reference_row(const flashcl_problem *p, const float *q, const float *k, const float *v, int64_t row,
                        double *out, double *scores)
{
    return hm_reference_row_ex(p, q, k, v, NULL, row, out, scores);
}

double hm_reference_row_ex(const flashcl_problem *p, const float *q, const float *k, const float *v,
                           const hm_extras *x, int64_t row, double *out, double *scores)
{
    int64_t i, h, b, sq = p->seq_q, skv = p->seq_kv;
    int64_t qrow, krow0, bo; /* Q's row, K/V's first row, and the batch index for the strides */
    if (p->varlen) { /* row = h * total_q + token; the token's sequence from cu_seqlens_q */
        h = row / p->total_q;
        const int64_t t = row % p->total_q;
        b = 0;
        while (b + 1 < p->batch && x->cu_seqlens_q[b + 1] <= t)
            ++b;
        i = t - x->cu_seqlens_q[b];
        sq = x->cu_seqlens_q[b + 1] - x->cu_seqlens_q[b];
        skv = x->cu_seqlens_k[b + 1] - x->cu_seqlens_k[b];
        qrow = t;
        krow0 = x->cu_seqlens_k[b];
        bo = 0;
    } else {
        i = row % p->seq_q;
        const int64_t bh = row / p->seq_q;
        h = bh % p->heads_q;
        b = bh / p->heads_q;
        qrow = i;
        krow0 = 0;
        bo = b;
        if (p->kv_cache) { /* the filled part of the cache, after the append */
            skv = x->cache_seqlens[b] + (p->kv_append ? p->seq_q : 0);
            if (skv > p->seq_kv)
                skv = p->seq_kv;
            if (skv < 0)
                skv = 0;
        }
    }
    const int64_t max_pages = p->page_size ? (p->seq_kv + p->page_size - 1) / p->page_size : 0;
#define KV_AT(strides, j)                                                                                \
    (p->kv_cache && p->page_size                                                                         \
         ? hm_offset(&(strides), x->block_table[b * max_pages + (j) / p->page_size], (j) % p->page_size, hk) \
         : hm_offset(&(strides), bo, krow0 + (j), hk))
    const int64_t hk = h / (p->heads_q / p->heads_kv);
    const int d = p->head_dim;
    /* Visible keys: the causal mask and the sliding window, from the aligned position. */
    const int64_t pos = i + skv - sq;
    int64_t first = 0, last = skv - 1;
    if (p->window && p->window_left >= 0 && pos - p->window_left > first)
        first = pos - p->window_left;
    if (p->window && p->window_right >= 0 && pos + p->window_right < last)
        last = pos + p->window_right;
    if (p->causal && pos < last)
        last = pos;
    const float *qr = q + hm_offset(&p->q_strides, bo, qrow, h);
    for (int c = 0; c < d; ++c)
        out[c] = 0.0;
    if (last < first)
        return -INFINITY;
    double m = -INFINITY;
    for (int64_t j = first; j <= last; ++j) {
        const float *kr = k + KV_AT(p->k_strides, j);
        double s = 0.0;
        for (int c = 0; c < d; ++c)
            s += (double)qr[c] * kr[c];
        s *= p->scale;
        if (p->softcap > 0.0f)
            s = p->softcap * tanh(s / p->softcap);
        if (x && p->alibi && x->alibi_slopes)
            s -= (double)x->alibi_slopes[p->alibi == 2 ? b * p->heads_q + h : h] * fabs((double)(pos - j));
        if (x && p->attn_mask && x->mask)
            s += x->mask[b * p->mask_strides.batch + i * p->mask_strides.seq + h * p->mask_strides.head + j];
        if (x && p->key_padding && x->key_padding && x->key_padding[b * p->seq_kv + j])
            s = -INFINITY;
        scores[j] = s;
        if (s > m || isnan(s))
            m = isnan(m) ? m : s; /* a NaN score makes the row NaN, as in the kernels */
    }
    if (m == -INFINITY) /* every visible key masked */
        return -INFINITY;
    double l = 0.0;
    for (int64_t j = first; j <= last; ++j) {
        const float *vr = v + KV_AT(p->v_strides, j);
        const double w = exp(scores[j] - m);
        l += w;
        for (int c = 0; c < d; ++c)
            out[c] += w * vr[c];
    }
    for (int c = 0; c < d; ++c)
        out[c] /= l;
    return m + log(l);
#undef KV_AT
}
