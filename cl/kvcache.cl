/* SPDX-License-Identifier: MIT */
/*
 * kvcache.cl: appends a step's new keys and values to a KV cache before the attention reads it
 * (FlashAttention's flash_attn_with_kvcache with k and v given). K_NEW/V_NEW are (batch, seq_new,
 * heads_kv, HEAD_DIM / HEAD_DIM_V), contiguous, in the problem's dtype: row i of sequence b goes to cache row
 * cache_lens[b] + i, contiguous or through the block table (PAGE_SIZE); rows past the capacity (seq_kv)
 * are dropped. A quantized cache (KV_FORMAT, common.cl) gets the rows quantized on the way in: fp8 per
 * element; int8 per (row, KV head), with the scale max|x| * fp32(1/127) rounded to its storage type first and
 * each element round-to-nearest-even(x / scale) (a zero row: scale 0, elements 0; a row with a
 * NaN or an infinity: its scale, so that it reads back as NaN). One work-item per
 * column of the wider of K's and V's rows, or for int8 per (row, KV head). Specialised by HEAD_DIM, PAGE_SIZE, FLASHCL_DTYPE_*,
 * KV_FORMAT and KV_SCALE_F16.
 */

/* Element offset of cache row j of sequence b, KV head hk, from strides (sb: the page stride when paged). */
inline long cache_offset(const long b, const int j, const int hk, __global const int *bt, const int max_pages,
                         const int num_pages, const long sb, const long ss, const long sh)
{
#if PAGE_SIZE
    const long page = clamp(bt[b * max_pages + j / PAGE_SIZE], 0, num_pages - 1);
    return page * sb + (long)(j % PAGE_SIZE) * ss + hk * sh;
#else
    return b * sb + (long)j * ss + hk * sh;
#endif
}

#if KV_FORMAT == 1
/* One (row, KV head) of d elements: its scale, then its int8 elements. */
inline void append_int8_row(__global uchar *C, __global SCALE_T *S, const long co, const long si,
                            __global const STORE_T *X, const long xo)
{
    float amax = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d)
        amax = max_nan(amax, fabs(LOAD(X, xo + d)));
    STORE_SCALE(S, si, amax * (1.0f / 127.0f)); /* a multiply: rounded exactly on every device */
    const float scale = LOAD_SCALE(S, si); /* as stored: what the readers multiply by */
    for (int d = 0; d < HEAD_DIM; ++d) {
        const float q = scale > 0.0f && isfinite(scale) ? clamp(rint(LOAD(X, xo + d) / scale), -127.0f, 127.0f) : 0.0f;
        C[co + d] = as_uchar((char)(int)q);
    }
}
#endif

__kernel void kv_append(FCL_SIGNATURE(FCL_KV_APPEND_ARGS))
{
    /* The caller's offsets into its buffers, in elements (flashcl_offsets). */
    K += k_off;
    V += v_off;
    K_NEW += k_new_off;
    V_NEW += v_new_off;
    cache_lens += cache_lens_off;
    bt += bt_off;
    K_SCALE += k_scale_off;
    V_SCALE += v_scale_off;
    cache_idx += cache_idx_off;
    /* No early return: Mesa's llvmpipe mis-compiles kernel-argument loads after one (tests/rusticl). */
    const long gid = get_global_id(0);
    const long e = gid < total ? gid : 0;
#if KV_FORMAT == 1
    const int d = 0; /* a work-item per (row, KV head): e counts rows */
    const long r = e;
#else
#define APPEND_WIDTH (HEAD_DIM > HEAD_DIM_V ? HEAD_DIM : HEAD_DIM_V)
    const int d = (int)(e % APPEND_WIDTH);
    const long r = e / APPEND_WIDTH;
#endif
    const int hk = (int)(r % heads_kv);
    const long bi = r / heads_kv;
    const int i = (int)(bi % seq_new);
    const long b = bi / seq_new;
    const long jl = (long)cache_lens[b] + i; /* (in 64 bits: a length near INT_MAX does not wrap into the cache) */
    const int j = (int)jl;
#if CACHE_IDX /* (the cache's sequence that serves batch entry b) */
    const long cb = clamp(cache_idx[b], 0, cache_batch - 1);
#else
    const long cb = b;
#endif
    if (gid < total && jl >= 0 && jl < seq_kv) {
        const long ko = cache_offset(cb, j, hk, bt, max_pages, num_pages, k_sb, k_ss, k_sh) + d;
        const long vo = cache_offset(cb, j, hk, bt, max_pages, num_pages, v_sb, v_ss, v_sh) + d;
#if KV_FORMAT == 1
        const long si = kv_scale_index((int)b, j, hk, heads_kv, seq_kv, bt, max_pages, num_pages);
        append_int8_row(K, K_SCALE, ko, si, K_NEW, r * HEAD_DIM);
        append_int8_row(V, V_SCALE, vo, si, V_NEW, r * HEAD_DIM);
#elif KV_FORMAT == 2 /* (a quantized cache has one head dim: e = r * HEAD_DIM + d) */
        K[ko] = (uchar)float_to_e4m3(LOAD(K_NEW, e));
        V[vo] = (uchar)float_to_e4m3(LOAD(V_NEW, e));
#elif KV_FORMAT == 3
        K[ko] = (uchar)float_to_e5m2(LOAD(K_NEW, e));
        V[vo] = (uchar)float_to_e5m2(LOAD(V_NEW, e));
#else /* (the step's rows in the problem's dtype, the cache's in its own: KV_STORE converts) */
        if (d < HEAD_DIM)
            KV_STORE(K, ko, LOAD(K_NEW, r * HEAD_DIM + d));
        if (d < HEAD_DIM_V)
            KV_STORE(V, vo, LOAD(V_NEW, r * HEAD_DIM_V + d));
#endif
    }
}
