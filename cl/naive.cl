/*
 * naive.cl: the textbook attention, one output row per work-item, fp32, two passes over the keys
 * (maximum, then exponentials and the weighted sum of V). No tiles, no online rescaling: simple enough
 * to be obviously right, O(seq) memory. It is the in-library validator (naive_ref_rows, compare_rows)
 * and an algorithm of its own (naive_fwd).
 *
 * Specialised at build time by HEAD_DIM and FLASHCL_DTYPE_*. Rows are numbered flat:
 * row = (batch * heads_q + head) * seq_q + query.
 */
#ifndef HEAD_DIM
#error "naive.cl needs HEAD_DIM"
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
        __global const float *mask, const long m_sb, const long m_ss, const long m_sh,                \
        __global const uchar *kpm, __global const int *cu_q, __global const int *cu_k, const int total_q, \
        const int total_kv, const int batch, __global const int *cache_lens, __global const int *bt,      \
        const int max_pages, const int num_pages
#define ATTN_ARGS                                                                                    \
    seq_q, seq_kv, heads_q, group, scale, win_left, win_right, softcap, q_sb, q_ss, q_sh, k_sb, k_ss, \
        k_sh, v_sb, v_ss, v_sh, alibi, alibi_per_batch, mask, m_sb, m_ss, m_sh, kpm, cu_q, cu_k, total_q,   \
        total_kv, batch, cache_lens, bt, max_pages, num_pages


/* Offset of key/value row j of sequence b (rs: row stride, ps: page or batch stride): contiguous, or
 * through the block table of a paged cache. */
#if PAGE_SIZE
#define KV_ROW(b, j, rs, ps)                                                                             \
    ((long)clamp(bt[(long)(b) * max_pages + (j) / PAGE_SIZE], 0, num_pages - 1) * (ps) + (long)((j) % PAGE_SIZE) * (rs))
#else
#define KV_ROW(b, j, rs, ps) ((long)(j) * (rs))
#endif

/*
 * Where a flat row lives. Padded batches: row = (b * heads_q + h) * seq_q + i. Packed sequences
 * (VARLEN): row = h * total_q + t for token t, which belongs to the sequence b with cu_q[b] <= t <
 * cu_q[b+1]; that is also where its LSE goes. Gives b, h, i, the sequence's lengths, and the element
 * offsets of its query row and of its sequence's first key and value rows (head hk); o_row is the
 * row's offset in O.
 */
typedef struct row_place {
    long b, qb, kb, vb, o_row;
    int h, i, sq, skv;
} row_place;

inline row_place place_row(long flat, const int seq_q, const int seq_kv, const int heads_q, const int group,
                           const long q_sb, const long q_ss, const long q_sh, const long k_sb, const long k_ss,
                           const long k_sh, const long v_sb, const long v_ss, const long v_sh, const long o_sb,
                           const long o_ss, const long o_sh, __global const int *cu_q, __global const int *cu_k,
                           const int total_q, const int total_kv, const int batch)
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
    /* Clamped to the buffers, as in flash_fwd: wrong cu_seqlens never reach outside them. */
    const int q0 = clamp(cu_q[lo], 0, total_q), k0 = clamp(cu_k[lo], 0, total_kv);
    r.b = lo;
    r.i = t - q0;
    r.sq = clamp(cu_q[lo + 1], q0, total_q) - q0;
    r.skv = clamp(cu_k[lo + 1], k0, total_kv) - k0;
    if (r.i < 0 || r.i >= r.sq) /* a token outside every sequence: no keys */
        r.skv = 0;
    const int hk = r.h / group;
    r.qb = (long)t * q_ss + r.h * q_sh;
    r.kb = (long)k0 * k_ss + hk * k_sh;
    r.vb = (long)k0 * v_ss + hk * v_sh;
    r.o_row = (long)t * o_ss + r.h * o_sh;
#else
    r.i = (int)(flat % seq_q);
    const long bh = flat / seq_q;
    r.h = (int)(bh % heads_q);
    r.b = bh / heads_q;
    r.sq = seq_q;
    r.skv = seq_kv;
    const int hk = r.h / group;
    r.qb = r.b * q_sb + (long)r.i * q_ss + r.h * q_sh;
    r.kb = (PAGE_SIZE ? 0 : r.b * k_sb) + hk * k_sh; /* a paged cache adds the page per row */
    r.vb = (PAGE_SIZE ? 0 : r.b * v_sb) + hk * v_sh;
    r.o_row = r.b * o_sb + (long)r.i * o_ss + r.h * o_sh;
#endif
    return r;
}

/* The score of (row i of head h in batch b, key j; pos = i's aligned position): scaled, softcapped,
 * biased, masked (-inf). */
inline float naive_score(__global const STORE_T *Q, __global const STORE_T *K, long qb, long kb, long b, int h,
                         int i, int pos, int j, ATTN_PARAMS)
{
    float dot = 0.0f;
    for (int d = 0; d < HEAD_DIM; ++d)
        dot += LOAD(Q, qb + d) * LOAD(K, kb + KV_ROW(b, j, k_ss, k_sb) + d);
    float s = dot * scale;
    if (softcap > 0.0f)
        s = softcap * tanh(s / softcap);
#if HAS_ALIBI
    s -= alibi[alibi_per_batch ? b * heads_q + h : h] * fabs((float)(pos - j));
#endif
#if HAS_MASK
    s += mask[b * m_sb + (long)i * m_ss + h * m_sh + j];
#endif
#if HAS_KPM
    if (kpm[b * seq_kv + j])
        s = -INFINITY;
#endif
    return s;
}

/* out[d] = softmax(scale * q.K^T) V for one row; returns the natural log-sum-exp (-inf: no key). */
inline float naive_row(long flat, __global const STORE_T *Q, __global const STORE_T *K,
                       __global const STORE_T *V, ATTN_PARAMS, float *out)
{
    const row_place r = place_row(flat, seq_q, seq_kv, heads_q, group, q_sb, q_ss, q_sh, k_sb, k_ss, k_sh, v_sb,
                                  v_ss, v_sh, 0, 0, 0, cu_q, cu_k, total_q, total_kv, batch);
    const long b = r.b, qb = r.qb, kb = r.kb, vb = r.vb;
    const int h = r.h, i = r.i;
#if KV_CACHE /* the filled part of the sequence's cache (after the append) */
    const int skv = clamp(cache_lens[b] + (KV_APPEND ? seq_q : 0), 0, seq_kv);
#else
    const int skv = r.skv;
#endif
    const int pos = i + skv - r.sq;
    const int first = win_left >= 0 ? max(0, pos - win_left) : 0;
    const int last = win_right >= 0 ? min(skv - 1, pos + win_right) : skv - 1;

    float m = -INFINITY;
    for (int j = first; j <= last; ++j)
        m = max_nan(m, naive_score(Q, K, qb, kb, b, h, i, pos, j, ATTN_ARGS)); /* a NaN row stays NaN */
    for (int d = 0; d < HEAD_DIM; ++d)
        out[d] = 0.0f;
    if (last < first || m == -INFINITY) /* no visible key (the window, or masks on every key) */
        return -INFINITY;
    float l = 0.0f;
    for (int j = first; j <= last; ++j) {
        const float s = naive_score(Q, K, qb, kb, b, h, i, pos, j, ATTN_ARGS);
        const float p = exp(s - m);
        l += p;
        for (int d = 0; d < HEAD_DIM; ++d)
            out[d] += p * LOAD(V, vb + KV_ROW(b, j, v_ss, v_sb) + d);
    }
    for (int d = 0; d < HEAD_DIM; ++d)
        out[d] /= l;
    return m + log(l);
}

/* The naive algorithm: every row, written to O in the storage dtype. */
__kernel void naive_fwd(__global const STORE_T *Q, __global const STORE_T *K, __global const STORE_T *V,
                        ATTN_PARAMS, __global STORE_T *O, __global float *LSE, const int write_lse,
                        const long total_rows, const long o_sb, const long o_ss, const long o_sh)
{
    /* No early return: Mesa's llvmpipe mis-compiles kernel-argument loads after one (see
     * tests/rusticl/README.md); work-items past the end compute row 0 again and store nothing. */
    const long gid = get_global_id(0);
    const bool valid = gid < total_rows;
    const long flat = valid ? gid : 0;
    float out[HEAD_DIM];
    const float lse = naive_row(flat, Q, K, V, ATTN_ARGS, out);
    const long ob = place_row(flat, seq_q, seq_kv, heads_q, group, q_sb, q_ss, q_sh, k_sb, k_ss, k_sh, v_sb, v_ss,
                              v_sh, o_sb, o_ss, o_sh, cu_q, cu_k, total_q, total_kv, batch)
                        .o_row;
    if (valid) {
        for (int d = 0; d < HEAD_DIM; ++d)
            STORE(O, ob + d, out[d]);
        if (write_lse)
            LSE[flat] = lse;
    }
}

/* The validator's reference: the listed rows, in fp32, packed (n_rows, HEAD_DIM). */
__kernel void naive_ref_rows(__global const STORE_T *Q, __global const STORE_T *K,
                             __global const STORE_T *V, ATTN_PARAMS, __global const long *rows,
                             const long n_rows, __global float *ref, __global float *ref_lse)
{
    const long r = get_global_id(0);
    if (r >= n_rows)
        return;
    float out[HEAD_DIM];
    ref_lse[r] = naive_row(rows[r], Q, K, V, ATTN_ARGS, out);
    for (int d = 0; d < HEAD_DIM; ++d)
        ref[r * HEAD_DIM + d] = out[d];
}

/*
 * Compares the listed rows of O (and LSE) with the reference. Per row it writes
 * stats[4r..4r+3] = max |out - ref|, out and ref at that element, the row scale max |ref|;
 * info[4r..4r+3] = worst column (-1: the LSE), elements outside the tolerance, non-finite outputs
 * where the reference is finite, and 0.
 * Tolerance: |out - ref| <= rtol*|ref| + atol*row_scale (the LSE: atol*(1 + |ref|)); NaN never passes.
 */
__kernel void compare_rows(__global const STORE_T *O, __global const float *LSE, const int has_lse,
                           const int seq_q, const int heads_q, const long o_sb, const long o_ss,
                           const long o_sh, __global const long *rows, const long n_rows,
                           __global const float *ref, __global const float *ref_lse, const float atol,
                           const float rtol, __global float *stats, __global int *info)
{
    const long r = get_global_id(0);
    if (r >= n_rows)
        return;
    const long flat = rows[r];
    const int i = (int)(flat % seq_q);
    const long bh = flat / seq_q;
    const long ob = (bh / heads_q) * o_sb + (long)i * o_ss + (bh % heads_q) * o_sh;

    float scale = 1e-30f;
    for (int d = 0; d < HEAD_DIM; ++d)
        scale = fmax(scale, fabs(ref[r * HEAD_DIM + d]));
    float worst = -1.0f, worst_out = 0.0f, worst_ref = 0.0f;
    int worst_col = 0, failures = 0, nonfinite = 0;
    for (int d = 0; d < HEAD_DIM; ++d) {
        const float x = LOAD(O, ob + d);
        const float y = ref[r * HEAD_DIM + d];
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
