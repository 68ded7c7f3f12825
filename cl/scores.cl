/* SPDX-License-Identifier: MIT */
/*
 * scores.cl: what happens to a scaled score between Q*K^T and the softmax, in this order: the softcap,
 * ALiBi, the additive or boolean mask, the key-padding mask: score_row_of and score_mod below, which
 * every kernel composes: flash_fwd, both decode kernels, the naive kernels, and the matrix-unit prefill
 * kernels on their accumulators (SCORE_MODS_ACC). Scores are in units of u: 1 for the natural logarithm
 * (naive), LOG2E_F for the flash kernels' base-2 scores.
 */

/* tanh for the softcap. On the matrix-unit kernels' GPU programs (FAST_EXP2) from the hardware's exp2 and
 * division, 1 - 2 / (1 + 2^(2|x| log2 e)) with x's sign: two special-function operations where OpenCL's
 * tanh is a long sequence (softcap at 0.41x the plain kernel's speed with it: docs/design/wgmma.md). Its
 * error is absolute, about 1e-7 (the relative error of exp2 and the division near 1), which is what a
 * score's error is (it scales each weight by exp of it); NaN stays NaN, +-inf gives +-1. */
#if defined(FAST_EXP2) && FAST_EXP2
inline float softcap_tanh(const float x)
{
    return copysign(1.0f - native_divide(2.0f, native_exp2(2.8853900817779268f * fabs(x)) + 1.0f), x);
}
#else
#define softcap_tanh(x) tanh(x)
#endif

/* Gemma 2's logit capping: s becomes cap*tanh(s/cap); with cap_u = cap*u it is the same in units u. */
inline float softcap_score(const float s, const float cap_u)
{
    return cap_u * softcap_tanh(s / cap_u);
}

/* ALiBi's slope for head h of batch b: per head, or per batch and head. */
inline float alibi_slope(__global const float *slopes, const int per_batch, const int b, const int h,
                         const int heads_q)
{
    return slopes[per_batch ? (long)b * heads_q + h : h];
}

/* ALiBi's bias for a key at distance dist = |pos - key| from the row's aligned position, in units u. */
inline float alibi_bias(const float slope, const float dist, const float u)
{
    return -slope * u * dist;
}

/* The mask's element type (flashcl_mask_dtype): MASK_KIND 0 fp32 and 1 fp16, added to the scores; 2
 * boolean (uint8), a zero removing the pair. */
#ifndef MASK_KIND
#define MASK_KIND 0
#endif
#if MASK_KIND == 1 && FCL_HALF_BITS
#define MASK_T ushort
#define MASK_LOAD(p, i) half_bits_to_float((p)[(i)])
#elif MASK_KIND == 1
#define MASK_T half
#define MASK_LOAD(p, i) vload_half((i), (p))
#elif MASK_KIND == 2
#define MASK_T uchar
#else
#define MASK_T float
#endif

/*
 * The score modifiers as one part every kernel composes: score_row_of gathers what a query row needs once
 * (ALiBi's slope and aligned position, the row's mask, the batch's key padding), and score_mod takes a
 * key's scaled score to its modified one, on a value already in registers, or to -INFINITY where the key
 * is not visible (outside the window, as the caller says; padding; a boolean mask's zero). u is the
 * scores' unit (1: the natural logarithm, LOG2E_F: the flash kernels' base 2), cap_u the softcap in it.
 * What a kernel compiles in is the problem's switches (HAS_SOFTCAP, HAS_ALIBI, HAS_MASK, HAS_KPM); a
 * kernel that takes none of them never builds this code. The order: softcap, ALiBi, the mask, the key
 * padding.
 */
typedef struct score_row {
    float u, cap_u;
#if HAS_ALIBI
    float slope;
    int pos;
#endif
#if HAS_MASK
    __global const MASK_T *mask; /* the row's key 0 */
    int mask_ok;                 /* the row exists: its mask may be read */
#endif
#if HAS_KPM
    __global const uchar *kpm; /* the batch's key 0 */
#endif
} score_row;

/* Row i of head h in batch b (pos: its aligned position; row_ok: i < seq_q, a real row). */
inline score_row score_row_of(const float u, const float cap_u, __global const float *alibi, const int alibi_per_batch,
                              __global const MASK_T *mask, const long m_sb, const long m_ss, const long m_sh,
                              __global const uchar *kpm, const int seq_kv, const int heads_q, const int b,
                              const int i, const int h, const int pos, const bool row_ok)
{
    score_row r;
    r.u = u;
    r.cap_u = cap_u;
#if HAS_ALIBI
    r.slope = alibi_slope(alibi, alibi_per_batch, b, h, heads_q);
    r.pos = pos;
#endif
#if HAS_MASK
    r.mask_ok = row_ok;
    r.mask = mask + (row_ok ? (long)b * m_sb + (long)i * m_ss + (long)h * m_sh : 0);
#endif
#if HAS_KPM
    r.kpm = kpm + (long)b * seq_kv;
#endif
    (void)alibi, (void)alibi_per_batch, (void)mask, (void)m_sb, (void)m_ss, (void)m_sh, (void)kpm, (void)seq_kv;
    (void)heads_q, (void)b, (void)i, (void)h, (void)pos, (void)row_ok;
    return r;
}

/* Whether any modifier is compiled in; and whether one that changes a score's value is (HAS_VALUE_MODS:
 * the softcap, ALiBi, an additive mask): the matrix-unit kernels then scale their scores before the
 * softmax (a softcap is not linear in the scale), instead of in its exponent. A boolean mask and key
 * padding only remove scores (-inf, the same scaled or not): the scale stays in the exponent. */
#define HAS_SCORE_MODS (HAS_SOFTCAP || HAS_ALIBI || HAS_MASK || HAS_KPM)
#define HAS_VALUE_MODS (HAS_SOFTCAP || HAS_ALIBI || (HAS_MASK && MASK_KIND != 2))

/* The value part of score_mod (the softcap, ALiBi, an additive mask), ALiBi's distance |pos - key| given
 * (a float; read only with HAS_ALIBI): the matrix-unit kernels convert a row's distance once a tile
 * (SCORE_MODS_ACC), not once a score. */
inline float score_mod_value(const score_row r, const int key, const float dist, float s, const bool visible)
{
#if HAS_SOFTCAP
    s = softcap_score(s, r.cap_u);
#endif
#if HAS_ALIBI
    s += alibi_bias(r.slope, dist, r.u);
#else
    (void)dist;
#endif
#if HAS_MASK && MASK_KIND != 2
    if (visible && r.mask_ok) {
#if MASK_KIND == 1
        s += MASK_LOAD(r.mask, key) * r.u;
#else
        s += r.mask[key] * r.u;
#endif
    }
#endif
    (void)key, (void)visible;
    return s;
}

/* The keep part: whether a visible key stays (a boolean mask's nonzero, no key padding); read only for
 * a visible key. */
inline bool score_keep(const score_row r, const int key)
{
    bool keep = true;
#if HAS_MASK && MASK_KIND == 2
    if (r.mask_ok && !r.mask[key])
        keep = false;
#endif
#if HAS_KPM
    if (r.kpm[key] != 0)
        keep = false;
#endif
    (void)r, (void)key;
    return keep;
}

inline float score_mod_dist(const score_row r, const int key, const float dist, float s, bool visible)
{
    s = score_mod_value(r, key, dist, s, visible);
    if (visible && !score_keep(r, key))
        visible = false;
    return visible ? s : -INFINITY;
}

/* A boolean mask or key padding (HAS_KEEP_BITS): the matrix-unit kernels read score_keep for a lane's
 * keys of a whole tile into bits (KEEP_BITS: keys k0 + 8j + e of NT8 n8 tiles, bit 2j + e; keys at or past
 * klim, never visible, kept) before the tile's products are waited for, so that the reads' latency hides
 * behind the matrix work instead of following it (SCORE_MODS_ACC_KEEP). */
#define HAS_KEEP_BITS ((HAS_MASK && MASK_KIND == 2) || HAS_KPM)
#define KEEP_BITS(bits, r, k0, NT8, klim)                                                                     \
    do {                                                                                                       \
        (bits) = 0;                                                                                            \
        UNROLL                                                                                                 \
        for (int j_ = 0; j_ < (NT8); ++j_)                                                                     \
            UNROLL                                                                                             \
            for (int e_ = 0; e_ < 2; ++e_) {                                                                   \
                const int key_ = (k0) + 8 * j_ + e_;                                                           \
                if (key_ >= (klim) || score_keep((r), key_))                                                   \
                    (bits) |= 1u << (2 * j_ + e_);                                                             \
            }                                                                                                  \
    } while (0)

/* The same bits read by a row's quad (the four lanes t = lane % 4 of a row in the m16n8 layout), for a
 * tile whose every key is below klim and whose rows are 16-byte aligned (keep_tile_aligned): lane t
 * reads the quarter of the row's tile that starts at key tile0 + (BLOCK_N/4) t in 16-byte (or, for a
 * 32-key tile, 8-byte) loads, turns it into a bit a key (keep_quarter), and the quad exchanges the
 * quarters (SHFL_IDX; uniform: the emulated shuffle is a barrier). One load a row a lane for 64 keys
 * where KEEP_BITS has 32: each of a warp's byte loads touches 8 rows' lines for 4 useful bytes apiece,
 * and a tile of them took as long as the tile's products (docs/design/wgmma.md, 2026-12-04). */
#if HAS_KEEP_BITS
/* The nonzero bytes of w as four bits, bit i byte i (the lowest address first): a byte's top bit after
 * adding 0x7f to its low seven is set iff those are nonzero (no carry leaves a byte), or'ed with its own
 * top bit; the multiply moves the four top bits (7, 15, 23, 31) to bits 28..31, where no other of its
 * sixteen terms lands. */
inline uint nonzero_bytes4(const uint w)
{
    return ((((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u) * 0x00204081u >> 28;
}

/* The nonzero bytes of the n (8, 16 or 32) at p (aligned to min(n, 16)) as n bits. */
inline uint nonzero_bytes(__global const uchar *p, const int n)
{
    uint bits = 0;
    if (n == 8) {
        const uint2 v = *(__global const uint2 *)p;
        bits = nonzero_bytes4(v.x) | nonzero_bytes4(v.y) << 4;
    } else {
        for (int c = 0; c < n / 16; ++c) { /* (n a constant where it is inlined: unrolled) */
            const uint4 v = ((__global const uint4 *)p)[c];
            bits |= (nonzero_bytes4(v.x) | nonzero_bytes4(v.y) << 4 | nonzero_bytes4(v.z) << 8 |
                     nonzero_bytes4(v.w) << 12)
                    << (16 * c);
        }
    }
    return bits;
}

/* Whether row r keeps keys key0 .. key0 + n - 1 (all below seq_kv), a bit each (bit i: key0 + i). */
inline uint keep_quarter(const score_row r, const int key0, const int n)
{
    uint keep = n == 32 ? 0xffffffffu : (1u << n) - 1u;
#if HAS_MASK && MASK_KIND == 2
    if (r.mask_ok)
        keep &= nonzero_bytes(r.mask + key0, n);
#endif
#if HAS_KPM
    keep &= ~nonzero_bytes(r.kpm + key0, n);
#endif
    (void)r, (void)key0;
    return keep;
}

/* Whether the quad reads may be used for the tile at key tile0 (keys below klim) of batch b: uniform
 * across the work-group. The mask's rows and the batch's padding row start 16-byte aligned at it. */
#define keep_tile_aligned(tile0, tile_keys, klim, b)                                                           \
    ((tile_keys) % 32 == 0 && ((tile0)&15) == 0 && (tile0) + (tile_keys) <= (klim) && KEEP_MASK_ALIGNED &&     \
     KEEP_KPM_ALIGNED(b))
#if HAS_MASK && MASK_KIND == 2
#define KEEP_MASK_ALIGNED ((((long)mask_off | m_sb | m_ss | m_sh) & 15) == 0)
#else
#define KEEP_MASK_ALIGNED 1
#endif
#if HAS_KPM
#define KEEP_KPM_ALIGNED(b) ((((long)kpm_off + (long)(b) * seq_kv) & 15) == 0)
#else
#define KEEP_KPM_ALIGNED(b) 1
#endif

/* Lane t's keys of a quarter (n bits, n8 tiles i < n/8): bits 8i + 2t and 8i + 2t + 1 as bits 2i, 2i + 1 */
inline uint quarter_pairs(const uint quarter, const int t, const int n)
{
    uint x = quarter >> (2 * t);
    if (n == 32) {
        x &= 0x03030303u;
        x |= x >> 6; /* (the pairs of bytes 1 and 3 beside those of 0 and 2) */
        return (x & 0xfu) | ((x >> 12) & 0xf0u);
    }
    if (n == 16) {
        x &= 0x0303u;
        return (x | x >> 6) & 0xfu;
    }
    return x & 3u;
}

/* Whether an interior tile's modifiers may be left out for a row: key padding the only modifier (the
 * scale in the exponent) and every key of the row's bits kept (KEEP_ALL of an NT8 n8-tile row), as on
 * all but the tile it starts in. Not with a boolean mask: its removals fall anywhere, and the branch, taken
 * by some of a warp's lanes and not others, cost it 4% (docs/design/wgmma.md, 2026-12-04). */
#define KEEP_ALL(NT8) ((NT8) >= 16 ? 0xffffffffu : (1u << (2 * (NT8))) - 1u)
#define KEEP_NOTHING_TO_DO(bits, NT8) (!HAS_VALUE_MODS && !HAS_MASK && (bits) == KEEP_ALL(NT8))

/* KEEP_BITS' bits (keys tile0 + 2t + 8j + e, bit 2j + e) from the quad's quarters of an NT8 n8-tile row */
#define KEEP_BITS_QUAD(bits, r, tile0, NT8, t, lane)                                                           \
    do {                                                                                                       \
        const uint mine_ = keep_quarter((r), (tile0) + 2 * (NT8) * (t), 2 * (NT8));                            \
        (bits) = 0;                                                                                            \
        UNROLL                                                                                                 \
        for (int q_ = 0; q_ < 4; ++q_) /* quarter q_: n8 tiles (NT8/4) q_ .. */                                \
            (bits) |= quarter_pairs(as_uint(SHFL_IDX(as_float(mine_), ((lane) & ~3) | q_)), (t), 2 * (NT8))   \
                      << (q_ * (NT8) / 2);                                                                     \
    } while (0)
#endif

#if HAS_ALIBI
#define ALIBI_DIST(r, key) fabs((float)((r).pos - (key)))
/* (the signed distance key0 - pos, converted once; a key key0 + i is then at |that + i|) */
#define ALIBI_D0(r, key0) ((float)((key0) - (r).pos))
#else
#define ALIBI_DIST(r, key) 0.0f
#define ALIBI_D0(r, key0) 0.0f
#endif

inline float score_mod(const score_row r, const int key, const float s, const bool visible)
{
    return score_mod_dist(r, key, ALIBI_DIST(r, key), s, visible);
}

/* score_mod on the scores a lane of a matrix-unit kernel holds of one query row in the m16n8 accumulator
 * layout (mma.cl): keys k0 + 8j + e of n8 tiles j < NT8, e 0 and 1 (k0 = the tile's first key + 2 * (lane
 * % 4)), ACC(j, e) the element. Raw scores times `scale`, then modified; a key outside vis (the row's
 * visible keys) is -inf unless `edge` is 0 (a tile every row of the block sees whole). */
#define SCORE_MODS_ACC(ACC, NT8, mods, k0, scale, edge, vis)                                                 \
    do {                                                                                                       \
        const float d0_ = ALIBI_D0(mods, k0);                                                                  \
        UNROLL                                                                                                 \
        for (int j_ = 0; j_ < (NT8); ++j_)                                                                     \
            UNROLL                                                                                             \
            for (int e_ = 0; e_ < 2; ++e_) {                                                                   \
                const int key_ = (k0) + 8 * j_ + e_;                                                           \
                ACC(j_, e_) = score_mod_dist((mods), key_, fabs(d0_ + (float)(8 * j_ + e_)), ACC(j_, e_) * (scale), \
                                             !(edge) || (key_ >= (vis).lo && key_ < (vis).hi));                \
            }                                                                                                  \
    } while (0)
/* The same with the keep part read ahead (KEEP_BITS' bits for these keys): no read of it here. */
#define SCORE_MODS_ACC_KEEP(ACC, NT8, mods, k0, scale, edge, vis, bits)                                      \
    do {                                                                                                       \
        const float d0_ = ALIBI_D0(mods, k0);                                                                  \
        UNROLL                                                                                                 \
        for (int j_ = 0; j_ < (NT8); ++j_)                                                                     \
            UNROLL                                                                                             \
            for (int e_ = 0; e_ < 2; ++e_) {                                                                   \
                const int key_ = (k0) + 8 * j_ + e_;                                                           \
                const bool vis_ = (!(edge) || (key_ >= (vis).lo && key_ < (vis).hi)) && (((bits) >> (2 * j_ + e_)) & 1u); \
                const float v_ = score_mod_value((mods), key_, fabs(d0_ + (float)(8 * j_ + e_)), ACC(j_, e_) * (scale), vis_); \
                ACC(j_, e_) = vis_ ? v_ : -INFINITY;                                                           \
            }                                                                                                  \
    } while (0)
