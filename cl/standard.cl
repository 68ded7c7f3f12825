/* SPDX-License-Identifier: MIT */
/*
 * standard.cl: the pieces of standard attention around its two GEMMs (CLBlast): the row softmax of
 * the n x n score matrix, and conversions of fp16/bf16 tensors to and from fp32 for the GEMMs.
 * Specialised by FLASHCL_DTYPE_* and WG (the softmax work-group size, a power of two).
 */
#ifndef WG
#define WG 256
#endif

/* One work-group per row of a chunk of S holding rows [row0, row0 + rows) of heads head0... (heads
 * numbered batch * heads_q + head): P = softmax(S) in place over the keys the row sees (the causal
 * mask and sliding window: geometry.cl's visible_keys), after the softcap, and the natural
 * log-sum-exp. A row that sees no key becomes zeros with LSE -inf. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
softmax_rows(FCL_SIGNATURE(FCL_SOFTMAX_ROWS_ARGS))
{
    LSE += lse_off; /* the caller's offset, in elements */
    __local float red[WG];
    const long local_row = get_group_id(0);
    const int i = row0 + (int)(local_row % rows);
    const long head = head0 + local_row / rows;
    const int tid = get_local_id(0);
    __global float *s = S + local_row * (long)seq_kv;
    const key_range keys = visible_keys(i, seq_q, seq_kv, win_left, win_right); /* geometry.cl */
    const int lo = keys.lo, n = keys.hi;

    if (softcap > 0.0f)
        for (int j = lo + tid; j < n; j += WG)
            s[j] = softcap * tanh(s[j] / softcap);
    float m = -INFINITY;
    for (int j = lo + tid; j < n; j += WG)
        m = fmax(m, s[j]);
    red[tid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = WG / 2; w > 0; w /= 2) {
        if (tid < w)
            red[tid] = fmax(red[tid], red[tid + w]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    float l = 0.0f;
    for (int j = lo + tid; j < n; j += WG)
        l += exp(s[j] - m);
    red[tid] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = WG / 2; w > 0; w /= 2) {
        if (tid < w)
            red[tid] += red[tid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    l = red[0];
    const bool any = n > lo;
    const float inv = any ? 1.0f / l : 0.0f;
    for (int j = tid; j < seq_kv; j += WG)
        s[j] = j >= lo && j < n ? exp(s[j] - m) * inv : 0.0f;
    if (write_lse && tid == 0)
        LSE[head * seq_q + i] = any ? m + log(l) : -INFINITY;
}

/* Where element e of a contiguous (batch, seq, heads, head_dim) tensor sits in a strided one. */
inline long strided_offset(const long e, const int seq, const int heads, const int head_dim, const long sb,
                           const long ss, const long sh)
{
    const int d = (int)(e % head_dim);
    const long r = e / head_dim;
    const int h = (int)(r % heads);
    const long bs = r / heads;
    return (bs / seq) * sb + (long)(bs % seq) * ss + (long)h * sh + d;
}

/* dst (contiguous (batch, seq, heads, dim) fp32) = src (any strides, storage dtype). */
__kernel void to_f32(FCL_SIGNATURE(FCL_TO_F32_ARGS))
{
    src += off; /* the caller's offset, in elements */
    const long e = get_global_id(0);
    if (e < total)
        dst[e] = LOAD(src, strided_offset(e, seq, heads, head_dim, sb, ss, sh));
}

/* dst (any strides, storage dtype) = src (contiguous (batch, seq, heads, dim) fp32). */
__kernel void from_f32(FCL_SIGNATURE(FCL_FROM_F32_ARGS))
{
    dst += off; /* the caller's offset, in elements */
    const long e = get_global_id(0);
    if (e < total)
        STORE(dst, strided_offset(e, seq, heads, head_dim, sb, ss, sh), src[e]);
}
