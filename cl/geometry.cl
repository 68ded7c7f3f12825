/* SPDX-License-Identifier: MIT */
/*
 * geometry.cl: where a sequence's rows are and which keys a query row sees, shared by the attention
 * kernels (flash_fwd, flash_mma, naive, standard). The window rule has its one definition here.
 */

/* Sequence b as a kernel sees it: its own query and key counts and, for packed sequences (VARLEN), the
 * rows where it starts in Q/O and in K/V. A KV cache's key count is its filled part (after the append);
 * packed queries over a KV cache (VARLEN and KV_CACHE: chunked prefill) take their keys from the cache.
 * Values from the caller's buffers are clamped to the buffers: wrong cu_seqlens or cache lengths give
 * wrong rows, never an access outside. */
typedef struct seq_view {
    int b, sq, skv, q_start, k_start;
    int kb; /* the K/V batch row: b, or with CACHE_IDX the cache's sequence that serves b */
} seq_view;

/* (cache_idx, leftpad, cache_batch: read only with CACHE_IDX and LEFTPAD, a KV cache's options; a
 * sequence's keys then start at row leftpad[b] of cache sequence cache_idx[b]) */
inline seq_view seq_view_of(const int b, const int seq_q, const int seq_kv, __global const int *cu_q,
                            __global const int *cu_k, const int total_q, const int total_kv,
                            __global const int *cache_lens, __global const int *cache_idx,
                            __global const int *leftpad, const int cache_batch)
{
    seq_view s;
    s.b = s.kb = b;
    s.q_start = s.k_start = 0;
#if VARLEN /* (packed queries; the keys packed too, or a KV cache's: below) */
    s.q_start = clamp(cu_q[b], 0, total_q);
    s.sq = clamp(cu_q[b + 1], s.q_start, total_q) - s.q_start;
#else
    s.sq = seq_q;
#endif
#if KV_CACHE /* (padded or paged batches, filled to cache_lens; with VARLEN the host allows no append) */
#if CACHE_IDX
    s.kb = clamp(cache_idx[b], 0, cache_batch - 1);
#endif
#if LEFTPAD
    s.k_start = clamp(leftpad[b], 0, seq_kv);
#endif
    /* (in 64 bits: a length near INT_MAX plus the appended rows clamps to seq_kv, as the API says, not past
     * INT_MAX to a negative) */
    s.skv = (int)clamp((long)cache_lens[b] + (KV_APPEND ? seq_q : 0), (long)s.k_start, (long)seq_kv) - s.k_start;
#elif VARLEN
    s.k_start = clamp(cu_k[b], 0, total_kv);
    s.skv = clamp(cu_k[b + 1], s.k_start, total_kv) - s.k_start;
#else
    s.skv = seq_kv;
#endif
    (void)cu_k, (void)total_kv, (void)cache_lens, (void)cache_idx, (void)leftpad, (void)cache_batch, (void)cu_q;
    (void)total_q;
    return s;
}

/* Query row i clamped into its sequence of sq queries, for an address that is loaded and not used (rows
 * past the end read the last row; a packed sequence may have no query: row 0 of it). */
inline int q_row_clamp(const int i, const int sq)
{
#if VARLEN
    return max(min(i, sq - 1), 0);
#else
    return min(i, sq - 1);
#endif
}

/* Element offset of query (or output) row i of head h of the sequence. */
inline long q_row_offset(const seq_view s, const int h, const int i, const long sb, const long ss, const long sh)
{
#if VARLEN
    return (long)(s.q_start + i) * ss + (long)h * sh;
#else
    return (long)s.b * sb + (long)i * ss + (long)h * sh;
#endif
}

/* Element offset of the sequence's key (or value) rows of KV head hk, before kv_row's part. */
inline long kv_base(const seq_view s, const int hk, const long sb, const long ss, const long sh)
{
#if VARLEN && !KV_CACHE
    return (long)s.k_start * ss + (long)hk * sh;
#elif PAGE_SIZE
    return (long)hk * sh; /* the page of each row comes from the block table: kv_row */
#else
    return (long)s.kb * sb + (long)s.k_start * ss + (long)hk * sh;
#endif
}

/* Offset of key row j of sequence b from kv_base: j rows of stride rs, or with a paged cache row
 * j % PAGE_SIZE of page block_table[b][j / PAGE_SIZE] (page stride ps, entries clamped to the pool). */
#if PAGE_SIZE
/* The two halves of kv_row for a paged cache, for a copy that loads its pages before it needs them: the
 * page of key row j of sequence b, and row j's offset from kv_base given its page. */
inline int kv_page(const int b, const int j, __global const int *block_table, const int max_pages, const int num_pages)
{
    return clamp(block_table[(long)b * max_pages + j / PAGE_SIZE], 0, num_pages - 1);
}
inline long kv_page_row(const int page, const int j, const long rs, const long ps)
{
    return (long)page * ps + (long)(j % PAGE_SIZE) * rs;
}
#endif

inline long kv_row(const int b, const int j, const long rs, const long ps, __global const int *block_table,
                   const int max_pages, const int num_pages)
{
#if PAGE_SIZE
    return kv_page_row(kv_page(b, j, block_table, max_pages, num_pages), j, rs, ps);
#else
    return (long)j * rs;
#endif
}

/* Where the int8 scale of row j of sequence b, KV head hk, is (flashcl.h's flashcl_kv_format): one per
 * (row, KV head), (batch, seq_kv, heads_kv), or for a paged cache (num_pages, PAGE_SIZE, heads_kv). */
inline long kv_scale_index(const int b, const int j, const int hk, const int heads_kv, const int seq_kv,
                           __global const int *block_table, const int max_pages, const int num_pages)
{
#if PAGE_SIZE
    const int page = clamp(block_table[(long)b * max_pages + j / PAGE_SIZE], 0, num_pages - 1);
    return ((long)page * PAGE_SIZE + j % PAGE_SIZE) * heads_kv + hk;
#else
    return ((long)b * seq_kv + j) * heads_kv + hk;
#endif
}

/* Where row i of head h writes its log-sum-exp (and, under split-KV, its partial results):
 * (batch, heads_q, seq_q), or (heads_q, total_q) for packed sequences. */
inline long lse_row(const seq_view s, const int h, const int i, const int heads_q, const int seq_q, const int total_q)
{
#if VARLEN
    return (long)h * total_q + s.q_start + i;
#else
    return ((long)s.b * heads_q + h) * seq_q + i;
#endif
}

/* The keys [lo, hi) that query row i of a sequence of sq queries and skv keys sees: win_left keys
 * before and win_right after its aligned position i + skv - sq (the causal mask's bottom-right
 * alignment; -1 leaves that side unbounded; the host folds causal into win_right = 0). lo >= hi: no
 * key. Both bounds grow with i, so the rows i0 <= i <= i1 together see [range(i0).lo, range(i1).hi)
 * and each of them sees [range(i1).lo, range(i0).hi). The host clamps the window to the sequences'
 * lengths (which changes no range), so positions fit 32 bits unless WIDE_POSITIONS says otherwise
 * (sequences past 2^30 keys); 64-bit arithmetic here cost the causal fp32 kernel 1-2% on the H200. */
#ifndef WIDE_POSITIONS
#define WIDE_POSITIONS 0
#endif
#if WIDE_POSITIONS
typedef long position;
#else
typedef int position;
#endif

typedef struct key_range {
    int lo, hi;
} key_range;

/* Query i's aligned position among the keys: i + skv - sq (bottom-right, the default) or i (TOP_LEFT,
 * flashcl_problem.alignment). The causal mask, windows and ALiBi's distances are relative to it. */
#ifndef TOP_LEFT
#define TOP_LEFT 0
#endif
#define ALIGNED_POS(i, sq, skv) (TOP_LEFT ? (position)(i) : (position)(i) + (skv) - (sq))

inline key_range visible_keys(const int i, const int sq, const int skv, const int win_left, const int win_right)
{
    const position pos = ALIGNED_POS(i, sq, skv);
    key_range r;
    r.lo = win_left >= 0 ? (int)clamp(pos - win_left, (position)0, (position)skv) : 0;
    r.hi = win_right >= 0 ? (int)clamp(pos + win_right + 1, (position)0, (position)skv) : skv;
    return r;
}

/* The keys a block of query rows q_lo .. q_hi (q_lo < sq, or the block reads none) reads: whole tiles of
 * block_n keys from `begin` up to `end`, those outside every row's window never loaded; and the keys all its
 * rows see, inner_lo .. inner_hi (a tile inside needs no mask). (flash_wgmma.cl's, flash_amd.cl's and
 * flash_dpas.cl's; flash_fwd, flash_mma and flash_decode still write it out: docs/design/portable.md, open
 * questions.) */
typedef struct block_keys {
    int begin, end, inner_lo, inner_hi;
} block_keys;

inline block_keys block_keys_of(const int q_lo, const int q_hi, const int sq, const int skv, const int win_left,
                                const int win_right, const int block_n)
{
    block_keys k;
    k.begin = 0;
    k.end = q_lo < sq ? skv : 0;
    k.inner_lo = 0;
    k.inner_hi = skv;
#if HAS_WINDOW
    const key_range first_row = visible_keys(q_lo, sq, skv, win_left, win_right);
    const key_range last_row = visible_keys(q_hi, sq, skv, win_left, win_right);
    k.begin = first_row.lo / block_n * block_n;
    k.end = min(k.end, last_row.hi);
    k.inner_lo = last_row.lo;
    k.inner_hi = first_row.hi;
#endif
    return k;
}
