/* SPDX-License-Identifier: MIT */
/*
 * naive.cl: the textbook attention, one output row per work-item, fp32, two passes over the keys
 * (maximum, then exponentials and the weighted sum of V). No tiles, no online rescaling: simple enough
 * to be obviously right, O(seq) memory. It is the in-library validator (naive_ref_rows, compare_rows)
 * and an algorithm of its own (naive_fwd). The sequences, the visible keys (geometry.cl) and the score
 * modifiers (scores.cl) are the flash kernels' own parts; the softcap and the window stay runtime
 * values here (speed is not this kernel's job, and fewer programs build faster).
 *
 * Specialised at build time by HEAD_DIM (HEAD_DIM_V: V's and the output's columns) and FLASHCL_DTYPE_*.
 * Rows are numbered flat:
 * row = (batch * heads_q + head) * seq_q + query.
 */
#ifndef HEAD_DIM
#error "naive.cl needs HEAD_DIM"
#endif
/* Output columns a work-item holds at once: all of them, or (where the host asks: Intel GPUs, whose
 * compiler keeps a long array in memory) chunks, each its own pass over the keys; the last chunk may be
 * partial. */
#ifndef NAIVE_CHUNK
#define NAIVE_CHUNK HEAD_DIM_V
#endif
/* (loops over a chunk run NAIVE_CHUNK times, columns past HEAD_DIM_V skipped: a constant trip count, and
 * unrolled when chunked, so that the compiler can keep out[] in registers; a whole row's array is left
 * to the compiler, whose unrolling of it put it in scratch on AMD's) */
#if NAIVE_CHUNK < HEAD_DIM_V
#define CHUNK_UNROLL _Pragma("unroll")
#else
#define CHUNK_UNROLL
#endif

/* win_left/win_right: the keys row i sees, as offsets from i + seq_kv - seq_q (-1: unbounded; the
 * causal mask is win_right = 0). softcap: > 0 caps each scaled score s to softcap*tanh(s/softcap). */
/* alibi/mask/kpm: ALiBi slopes, the fp32 additive mask (strides m_sb, m_ss, m_sh; keys contiguous) and
 * the uint8 key-padding mask, read only when compiled in (HAS_ALIBI, HAS_MASK, HAS_KPM). */
#define ATTN_PARAMS                                                                                  \
    const int seq_q, const int seq_kv, const int heads_q, const int group, const float scale,        \
        const int win_left, const int win_right, const float softcap, const long q_sb, const long q_ss, \
        const long q_sh, const long k_sb, const long k_ss, const long k_sh, const long v_sb,          \
        const long v_ss, const long v_sh, __global const float *alibi, const int alibi_per_batch,     \
        __global const MASK_T *mask, const long m_sb, const long m_ss, const long m_sh,               \
        __global const uchar *kpm, __global const int *cu_q, __global const int *cu_k, const int total_q, \
        const int total_kv, const int batch, __global const int *cache_lens, __global const int *bt,      \
        const int max_pages, const int num_pages, __global const SCALE_T *k_scale, __global const SCALE_T *v_scale, \
        __global const float *sinks, __global const int *cache_idx, __global const int *leftpad, const int cache_batch, \
        __global const float *descale
/* The caller's offsets into the inputs, in elements (cl/args.h's fcl_kernel_offsets, unpacked). */
#define APPLY_INPUT_OFFSETS()                                                                        \
    do {                                                                                             \
        Q += q_off;                                                                                  \
        K += k_off;                                                                                  \
        V += v_off;                                                                                  \
        alibi += alibi_off;                                                                          \
        mask += mask_off;                                                                            \
        kpm += kpm_off;                                                                              \
        cu_q += cu_q_off;                                                                            \
        cu_k += cu_k_off;                                                                            \
        cache_lens += cache_lens_off;                                                                \
        bt += bt_off;                                                                                \
        k_scale += k_scale_off;                                                                      \
        v_scale += v_scale_off;                                                                      \
        sinks += sinks_off;                                                                          \
        cache_idx += cache_idx_off;                                                                  \
        leftpad += leftpad_off;                                                                      \
        descale += descale_off;                                                                      \
    } while (0)
#define ATTN_ARGS                                                                                    \
    seq_q, seq_kv, heads_q, group, scale, win_left, win_right, softcap, q_sb, q_ss, q_sh, k_sb, k_ss, \
        k_sh, v_sb, v_ss, v_sh, alibi, alibi_per_batch, mask, m_sb, m_ss, m_sh, kpm, cu_q, cu_k, total_q,   \
        total_kv, batch, cache_lens, bt, max_pages, num_pages, k_scale, v_scale, sinks, cache_idx, leftpad, cache_batch, \
        descale


/*
 * Where a flat row lives. Padded batches: row = (b * heads_q + h) * seq_q + i. Packed sequences
 * (VARLEN): row = h * total_q + t for token t, which belongs to the sequence b with cu_q[b] <= t <
 * cu_q[b+1]; that is also where its LSE goes. Gives the sequence (geometry.cl), h, i, and the element
 * offsets of its query row, of its sequence's first key and value rows (KV head h / group) and of its
 * output row.
 */
typedef struct row_place {
    seq_view s;
    long qb, kb, vb, o_row;
    int h, i;
} row_place;

inline row_place place_row(long flat, const int seq_q, const int seq_kv, const int heads_q, const int group,
                           const long q_sb, const long q_ss, const long q_sh, const long k_sb, const long k_ss,
                           const long k_sh, const long v_sb, const long v_ss, const long v_sh, const long o_sb,
                           const long o_ss, const long o_sh, __global const int *cu_q, __global const int *cu_k,
                           const int total_q, const int total_kv, const int batch, __global const int *cache_lens,
                           __global const int *cache_idx, __global const int *leftpad, const int cache_batch)
{
    row_place r;
#if VARLEN
    r.h = (int)(flat / total_q);
    const int t = (int)(flat % total_q);
    int lo = 0, hi = batch - 1; /* the last sequence that starts at or before t */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (cu_q[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    r.s = seq_view_of(lo, seq_q, seq_kv, cu_q, cu_k, total_q, total_kv, cache_lens, cache_idx, leftpad, cache_batch);
    r.i = t - r.s.q_start;
    if (r.i < 0 || r.i >= r.s.sq) /* a token outside every sequence: no keys */
        r.s.skv = 0;
#else
    r.i = (int)(flat % seq_q);
    const long bh = flat / seq_q;
    r.h = (int)(bh % heads_q);
    r.s = seq_view_of((int)(bh / heads_q), seq_q, seq_kv, cu_q, cu_k, total_q, total_kv, cache_lens, cache_idx, leftpad,
                      cache_batch);
#endif
    const int hk = r.h / group;
    r.qb = q_row_offset(r.s, r.h, r.i, q_sb, q_ss, q_sh);
    r.kb = kv_base(r.s, hk, k_sb, k_ss, k_sh);
    r.vb = kv_base(r.s, hk, v_sb, v_ss, v_sh);
    r.o_row = q_row_offset(r.s, r.h, r.i, o_sb, o_ss, o_sh);
    return r;
}

/* The score of (row i of head h in batch b, key j; pos = i's aligned position): scaled, softcapped,
 * biased, masked (-inf), in the natural logarithm (scores.cl with u = 1). */
inline float naive_score(__global const Q_T *Q, __global const KV_T *K, long qb, long kb, int b, int h,
                         int i, int pos, int j, ATTN_PARAMS)
{
    float dot = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d)
        dot += LOAD_Q(Q, qb + d) * KV_LOAD(K, kb + kv_row(b, j, k_ss, k_sb, bt, max_pages, num_pages) + d);
#if KV_FORMAT == 1
    dot *= LOAD_SCALE(k_scale, kv_scale_index(b, j, h / group, heads_q / group, seq_kv, bt, max_pages, num_pages));
#endif
#if FP8_DESCALE /* (fp8 attention: Q's and K's factors, common.cl) */
    dot *= fp8_descale(descale, 0, b, h / group, batch, heads_q / group) *
           fp8_descale(descale, 1, b, h / group, batch, heads_q / group);
#endif
    float s = dot * scale;
    if (softcap > 0.0f) /* (the validator's softcap is a runtime argument: score_mod applies none here) */
        s = softcap_score(s, softcap);
    const score_row mods = score_row_of(1.0f, softcap, alibi, alibi_per_batch, mask, m_sb, m_ss, m_sh, kpm, seq_kv,
                                        heads_q, b, i, h, pos, true);
    return score_mod(mods, j, s, true);
}

/* out[d] = (softmax(scale * q.K^T) V)[c0 + d] for one row, d < NAIVE_CHUNK; returns the natural
 * log-sum-exp (-inf: no key). With sinks (HAS_SINKS) the head's sink joins the denominator: a row with
 * no key is zeros with the sink as its log-sum-exp. */
inline float naive_row(long flat, __global const Q_T *Q, __global const KV_T *K,
                       __global const KV_T *V, ATTN_PARAMS, const int c0, float *out)
{
    const row_place r = place_row(flat, seq_q, seq_kv, heads_q, group, q_sb, q_ss, q_sh, k_sb, k_ss, k_sh, v_sb,
                                  v_ss, v_sh, 0, 0, 0, cu_q, cu_k, total_q, total_kv, batch, cache_lens, cache_idx,
                                  leftpad, cache_batch);
    const int b = r.s.b, h = r.h, i = r.i, skv = r.s.skv;
    const int pos = (int)ALIGNED_POS(i, r.s.sq, skv);
    const key_range keys = visible_keys(i, r.s.sq, skv, win_left, win_right);

    float m = -INFINITY;
    for (int j = keys.lo; j < keys.hi; ++j)
        m = max_nan(m, naive_score(Q, K, r.qb, r.kb, b, h, i, pos, j, ATTN_ARGS)); /* a NaN row stays NaN */
CHUNK_UNROLL
    for (int d = 0; d < NAIVE_CHUNK; ++d)
        out[d] = 0.0f;
#if HAS_SINKS
    const float sink = sinks[h];
#else
    const float sink = -INFINITY;
#endif
    if (keys.hi <= keys.lo || m == -INFINITY) /* no visible key (the window, or masks on every key) */
        return sink;
    /* the sink in the denominator: the maximum over the keys and the sink (a NaN row stays NaN) */
    if (sink > m)
        m = sink;
    float l = 0.0f;
    for (int j = keys.lo; j < keys.hi; ++j) {
        const float s = naive_score(Q, K, r.qb, r.kb, b, h, i, pos, j, ATTN_ARGS);
        const float p = exp(s - m);
        l += p;
#if KV_FORMAT == 1
        const float pv = p * LOAD_SCALE(v_scale, kv_scale_index(b, j, h / group, heads_q / group, seq_kv, bt, max_pages,
                                                                num_pages));
#else
        const float pv = p;
#endif
        const long vrow = r.vb + kv_row(b, j, v_ss, v_sb, bt, max_pages, num_pages) + c0;
CHUNK_UNROLL
        for (int d = 0; d < NAIVE_CHUNK; ++d)
            if (c0 + d < HEAD_DIM_V)
                out[d] += pv * KV_LOAD(V, vrow + d);
    }
    if (sink != -INFINITY)
        l += exp(sink - m);
    const float v_descale = fp8_descale(descale, 2, b, h / group, batch, heads_q / group); /* (1 but in fp8) */
CHUNK_UNROLL
    for (int d = 0; d < NAIVE_CHUNK; ++d)
        out[d] = out[d] / l * v_descale;
    return m + log(l);
}

/* The naive algorithm: every row, written to O in the storage dtype. */
__kernel void naive_fwd(FCL_SIGNATURE(FCL_NAIVE_FWD_ARGS))
{
    FCL_UNPACK();
    APPLY_INPUT_OFFSETS();
    O += o_off;
    LSE += lse_off;
    /* No early return: Mesa's llvmpipe mis-compiles kernel-argument loads after one (see
     * tests/rusticl/README.md); work-items past the end compute row 0 again and store nothing. */
    const long gid = get_global_id(0);
    const bool valid = gid < rows_total;
    const long flat = valid ? gid : 0;
    const long ob = place_row(flat, seq_q, seq_kv, heads_q, group, q_sb, q_ss, q_sh, k_sb, k_ss, k_sh, v_sb, v_ss,
                              v_sh, o_sb, o_ss, o_sh, cu_q, cu_k, total_q, total_kv, batch, cache_lens, cache_idx,
                              leftpad, cache_batch)
                        .o_row;
    for (int c0 = 0; c0 < HEAD_DIM_V; c0 += NAIVE_CHUNK) {
        float out[NAIVE_CHUNK];
        const float lse = naive_row(flat, Q, K, V, ATTN_ARGS, c0, out);
        if (valid) {
CHUNK_UNROLL
            for (int d = 0; d < NAIVE_CHUNK; ++d)
                if (c0 + d < HEAD_DIM_V)
                    STORE(O, ob + c0 + d, out[d]);
            if (write_lse && c0 == 0)
                LSE[flat] = lse;
        }
    }
}

/* The validator's reference: the listed rows, in fp32, packed (n_rows, HEAD_DIM_V). */
__kernel void naive_ref_rows(FCL_SIGNATURE(FCL_NAIVE_REF_ROWS_ARGS))
{
    FCL_UNPACK();
    APPLY_INPUT_OFFSETS();
    const long r = get_global_id(0);
    if (r >= n_rows)
        return;
    for (int c0 = 0; c0 < HEAD_DIM_V; c0 += NAIVE_CHUNK) {
        float out[NAIVE_CHUNK];
        const float lse = naive_row(rows[r], Q, K, V, ATTN_ARGS, c0, out);
        if (c0 == 0)
            ref_lse[r] = lse;
CHUNK_UNROLL
        for (int d = 0; d < NAIVE_CHUNK; ++d)
            if (c0 + d < HEAD_DIM_V)
                ref[r * HEAD_DIM_V + c0 + d] = out[d];
    }
}

/*
 * Compares the listed rows of O (and LSE) with the reference. Per row it writes
 * stats[4r..4r+3] = max |out - ref|, out and ref at that element, the row scale max |ref|;
 * info[4r..4r+3] = worst column (-1: the LSE), elements outside the tolerance, non-finite outputs
 * where the reference is finite, and 0.
 * Tolerance: |out - ref| <= rtol*|ref| + atol*row_scale (the LSE: atol*(1 + |ref|)); NaN never passes.
 */
__kernel void compare_rows(FCL_SIGNATURE(FCL_COMPARE_ROWS_ARGS))
{
    O += o_off; /* the caller's offsets, in elements */
    LSE += lse_off;
    const long r = get_global_id(0);
    if (r >= n_rows)
        return;
    const long flat = rows[r];
    const int i = (int)(flat % seq_q);
    const long bh = flat / seq_q;
    const long ob = (bh / heads_q) * o_sb + (long)i * o_ss + (bh % heads_q) * o_sh;

    float scale = 1e-30f;
    for (int d = 0; d < HEAD_DIM_V; ++d)
        scale = fmax(scale, fabs(ref[r * HEAD_DIM_V + d]));
    float worst = -1.0f, worst_out = 0.0f, worst_ref = 0.0f;
    int worst_col = 0, failures = 0, nonfinite = 0;
    for (int d = 0; d < HEAD_DIM_V; ++d) {
        const float x = LOAD(O, ob + d);
        const float y = ref[r * HEAD_DIM_V + d];
        const float err = fabs(x - y);
        const bool ok = err <= rtol * fabs(y) + atol * scale;
        failures += ok ? 0 : 1;
        nonfinite += (!isfinite(x) && isfinite(y)) ? 1 : 0;
        const float e = isnan(err) ? INFINITY : err;
        if (e > worst) {
            worst = e;
            worst_out = x;
            worst_ref = y;
            worst_col = d;
        }
    }
    if (has_lse) {
        const float x = LSE[flat];
        const float y = ref_lse[r];
        const bool same_inf = isinf(x) && isinf(y) && (x < 0) == (y < 0);
        const float err = same_inf ? 0.0f : fabs(x - y);
        const bool ok = same_inf || err <= atol * (1.0f + fabs(y));
        failures += ok ? 0 : 1;
        nonfinite += (!same_inf && !isfinite(x) && isfinite(y)) ? 1 : 0;
        if (!ok && !(worst_col >= 0 && worst > err)) {
            worst = isnan(err) ? INFINITY : err;
            worst_out = x;
            worst_ref = y;
            worst_col = -1;
        }
    }
    stats[4 * r + 0] = worst;
    stats[4 * r + 1] = worst_out;
    stats[4 * r + 2] = worst_ref;
    stats[4 * r + 3] = scale;
    info[4 * r + 0] = worst_col;
    info[4 * r + 1] = failures;
    info[4 * r + 2] = nonfinite;
    info[4 * r + 3] = 0;
}
