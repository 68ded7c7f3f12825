/* SPDX-License-Identifier: MIT */
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

/* An 8-bit float with `mant` mantissa bits and exponent bias `bias`: normals 2^(e-bias) (1 + m/2^mant),
 * subnormals 2^(1-bias) m/2^mant. */
static double fp8_value(unsigned e, unsigned m, int mant, int bias)
{
    return e ? ldexp(1.0 + ldexp((double)m, -mant), (int)e - bias) : ldexp((double)m, 1 - bias - mant);
}

double hm_kv_byte(uint8_t b, flashcl_kv_format f)
{
    const double sign = (b & 0x80) ? -1.0 : 1.0;
    switch (f) {
    case FLASHCL_KV_INT8:
        return (double)(int8_t)b;
    case FLASHCL_KV_FP8_E4M3:
        return (b & 0x7f) == 0x7f ? NAN : sign * fp8_value((b >> 3) & 15u, b & 7u, 3, 7);
    case FLASHCL_KV_FP8_E5M2:
        if (((b >> 2) & 31u) == 31u)
            return (b & 3u) ? NAN : sign * INFINITY;
        return sign * fp8_value((b >> 2) & 31u, b & 3u, 2, 15);
    default:
        return NAN;
    }
}

uint8_t hm_kv_from_float(double x, flashcl_kv_format f)
{
    if (f == FLASHCL_KV_INT8) {
        const double q = nearbyint(x);
        return (uint8_t)(int8_t)(q > 127.0 ? 127.0 : q < -127.0 ? -127.0 : q);
    }
    /* fp8: the magnitude rounded to `mant` mantissa bits at its exponent (at least the smallest normal's:
     * subnormals), to nearest even; past the largest finite code, that code */
    if (isnan(x))
        return 0x7f;
    const int mant = f == FLASHCL_KV_FP8_E4M3 ? 3 : 2, bias = f == FLASHCL_KV_FP8_E4M3 ? 7 : 15;
    const unsigned max_code = f == FLASHCL_KV_FP8_E4M3 ? 0x7e : 0x7b;
    const uint8_t sign = signbit(x) ? 0x80 : 0;
    const double a = fabs(x);
    if (a == 0.0)
        return sign;
    if (isinf(a))
        return sign | (uint8_t)max_code;
    int e;
    frexp(a, &e);
    int E = e - 1 < 1 - bias ? 1 - bias : e - 1; /* a = 1.m * 2^E, or a subnormal */
    double q = nearbyint(ldexp(a, mant - E));    /* a in units of 2^(E - mant) */
    if (q >= ldexp(1.0, mant + 1)) {             /* rounded up into the next binade */
        ++E;
        q = ldexp(1.0, mant);
    }
    unsigned code = q < ldexp(1.0, mant) ? (unsigned)q /* subnormal: exponent field 0 */
                                         : ((unsigned)(E + bias) << mant) | ((unsigned)q - (1u << mant));
    if (E + bias > 40 || code > max_code)
        code = max_code;
    return sign | (uint8_t)code;
}

void hm_fill_kv(uint8_t *buf, flashcl_kv_format f, size_t n, hm_rng *r, double sigma)
{
    for (size_t i = 0; i < n; ++i)
        buf[i] = hm_kv_from_float(f == FLASHCL_KV_INT8 ? 32.0 * hm_rng_normal(r) : sigma * hm_rng_normal(r), f);
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
    int64_t qrow, krow0, bo, kbo; /* Q's row, K/V's first row, the batch index of Q's strides and of K/V's */
    if (p->varlen) { /* row = h * total_q + token; the token's sequence from cu_seqlens_q */
        h = row / p->total_q;
        const int64_t t = row % p->total_q;
        b = 0;
        while (b + 1 < p->batch && x->cu_seqlens_q[b + 1] <= t)
            ++b;
        i = t - x->cu_seqlens_q[b];
        sq = x->cu_seqlens_q[b + 1] - x->cu_seqlens_q[b];
        qrow = t;
        bo = 0;
        if (p->kv_cache) { /* packed queries over a cache: its batch b (below) */
            kbo = b;
            krow0 = 0;
        } else {
            skv = x->cu_seqlens_k[b + 1] - x->cu_seqlens_k[b];
            krow0 = x->cu_seqlens_k[b];
            kbo = 0;
        }
    } else {
        i = row % p->seq_q;
        const int64_t bh = row / p->seq_q;
        h = bh % p->heads_q;
        b = bh / p->heads_q;
        qrow = i;
        krow0 = 0;
        bo = kbo = b;
    }
    if (p->kv_cache) { /* the filled part of the cache, after the append, from the left padding */
        if (p->cache_batch_idx && x->cache_batch_idx) { /* (clamped to the cache, as the kernels do) */
            const int64_t nc = p->cache_batch ? p->cache_batch : p->batch;
            kbo = x->cache_batch_idx[b] < 0 ? 0 : x->cache_batch_idx[b] >= nc ? nc - 1 : x->cache_batch_idx[b];
        }
        if (p->cache_leftpad && x->cache_leftpad)
            krow0 = x->cache_leftpad[b] < 0 ? 0 : x->cache_leftpad[b] > p->seq_kv ? p->seq_kv : x->cache_leftpad[b];
        skv = x->cache_seqlens[b] + (p->kv_append ? p->seq_q : 0);
        if (skv > p->seq_kv)
            skv = p->seq_kv;
        skv = skv < krow0 ? 0 : skv - krow0;
    }
    const int64_t max_pages = p->page_size ? (p->seq_kv + p->page_size - 1) / p->page_size : 0;
#define KV_AT(strides, j)                                                                                \
    (p->kv_cache && p->page_size                                                                         \
         ? hm_offset(&(strides), x->block_table[b * max_pages + (j) / p->page_size], (j) % p->page_size, hk) \
         : hm_offset(&(strides), kbo, krow0 + (j), hk))
    const int64_t hk = h / (p->heads_q / p->heads_kv);
    const int d = p->head_dim, dv = p->head_dim_v ? p->head_dim_v : p->head_dim; /* Q/K's columns, V/O's */
    /* Visible keys: the causal mask and the sliding window, from the aligned position. */
    const int64_t pos = p->alignment == FLASHCL_ALIGN_TOP_LEFT ? i : i + skv - sq; /* the aligned position */
    int64_t first = 0, last = skv - 1;
    if (p->window && p->window_left >= 0 && pos - p->window_left > first)
        first = pos - p->window_left;
    if (p->window && p->window_right >= 0 && pos + p->window_right < last)
        last = pos + p->window_right;
    if (p->causal && pos < last)
        last = pos;
    const float *qr = q + hm_offset(&p->q_strides, bo, qrow, h);
    for (int c = 0; c < dv; ++c)
        out[c] = 0.0;
    /* an attention sink joins the denominator: a row with no key is zeros with the sink as its LSE */
    const double sink = x && p->sinks && x->sinks ? (double)x->sinks[h] : -INFINITY;
    if (last < first)
        return sink;
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
        return sink;
    if (sink > m)
        m = sink;
    double l = sink == -INFINITY ? 0.0 : exp(sink - m);
    for (int64_t j = first; j <= last; ++j) {
        const float *vr = v + KV_AT(p->v_strides, j);
        const double w = exp(scores[j] - m);
        l += w;
        for (int c = 0; c < dv; ++c)
            out[c] += w * vr[c];
    }
    for (int c = 0; c < dv; ++c)
        out[c] /= l;
    return m + log(l);
#undef KV_AT
}
