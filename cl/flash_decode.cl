/* SPDX-License-Identifier: MIT */
/*
 * flash_decode.cl: attention for decode steps (a few queries against a long KV cache), streaming K and V
 * from global memory straight into registers: no local-memory tiles and no barrier per key tile.
 *
 * A work-group owns (batch, KV head, key split) and up to ROWS query rows of that KV head: the GQA
 * group's query heads times the step's queries, packed as in flash_fwd (row pr is query pr / group of
 * head hk*group + pr % group), so K and V are read once for all of them. Its WG work-items form teams
 * of TEAM lanes; lane t of a team holds elements 8t .. 8t+7 of the head dimension (TEAM is D/8 rounded
 * up to a power of two; lanes past the head dimension hold zeros). A team takes KT keys at a time:
 * each lane loads its 8 elements of the KT K rows and KT V rows (16-byte loads for 16-bit storage, all
 * issued before any is used, so that several tiles' bytes are in flight), computes its part of the
 * ROWS x KT dot products, and the team sums them (a butterfly of shuffles on NVIDIA, FCL_PTX; elsewhere
 * through local memory). Every lane then has the scores of its team's keys and runs the online softmax
 * (softmax.cl) on them, keeping the running maximum, sum and its 8 output elements of each row in
 * registers. The teams' key ranges interleave (team k takes keys n0 + k*KT .. of each step of
 * TEAMS*KT keys); at the end the teams' states are merged once through local memory and the work-group
 * writes O and LSE, or under split-KV its normalised partial result and LSE for flash_combine.
 *
 * The loop over steps has the same trip count in every team (keys past the range are masked), so the
 * local-memory reduction's barriers are reached by the whole work-group. Semantics as flash_fwd's
 * decode path (its parts: geometry.cl, scores.cl, softmax.cl): the cache's filled length, paged caches,
 * the window and causal mask, softcap, ALiBi, key padding, GQA, LSE; a row with no visible key writes
 * zeros and LSE -inf; a NaN score poisons its row. Specialised by HEAD_DIM, ROWS, TEAM, KT, WG,
 * FLASHCL_DTYPE_* and the feature switches. Its design, and the measurements behind its choices:
 * docs/design/decode.md.
 *
 * Local memory, in floats (the chooser's formula in src/tiles.c must match): TEAMS*ROWS*(HEAD_DIM+2)
 * for the merge, and for the local-memory reduction (FCL_PTX 0) WG*ROWS*KT, sharing the same space.
 */
#if !defined(HEAD_DIM) || !defined(ROWS) || !defined(TEAM) || !defined(KT) || !defined(WG)
#error "flash_decode.cl needs HEAD_DIM, ROWS, TEAM, KT and WG"
#endif
#if (HEAD_DIM % 8) != 0 || TEAM * 8 < HEAD_DIM || (TEAM & (TEAM - 1)) != 0 || (WG % TEAM) != 0 || TEAM > 32
#error "TEAM must be a power of two of at most 32 with TEAM*8 >= HEAD_DIM, and divide WG"
#endif
#ifndef FCL_PTX
#define FCL_PTX 0
#endif
#if VARLEN || HAS_MASK || (PAGE_SIZE && (PAGE_SIZE % KT) != 0) || (FCL_PTX && WG < 32)
#error "flash_decode.cl takes no packed sequences or additive mask, pages of a multiple of KT keys, and 32+ items with shuffles"
#endif

#define TEAMS (WG / TEAM)
#define STEP (TEAMS * KT) /* keys a work-group takes per step */
#define LOCAL_FLOATS FCL_DECODE_FLOATS(HEAD_DIM, ROWS, TEAM, KT, WG, FCL_PTX) /* (cl/layout.h: the host's formula too) */

/* Eight consecutive elements of a row as floats. */
#if KV_FORMAT == 1 /* K and V rows of a quantized cache (common.cl) */
#define KV_LOAD8(p, i) convert_float8(as_char8(vload8(0, (p) + (i))))
#elif KV_FORMAT
inline float8 kv_load8(__global const uchar *p)
{
    const uchar8 b = vload8(0, p);
    return (float8)(kv_byte(b.s0), kv_byte(b.s1), kv_byte(b.s2), kv_byte(b.s3), kv_byte(b.s4), kv_byte(b.s5),
                    kv_byte(b.s6), kv_byte(b.s7));
}
#define KV_LOAD8(p, i) kv_load8((p) + (i))
#elif KV_DTYPE
#define KV_LOAD8(p, i) KV_LOAD8_F(p, i)
#else
#define KV_LOAD8(p, i) LOAD8(p, i)
#endif
#if defined(FLASHCL_DTYPE_F16)
#define LOAD8(p, i) LOAD8_F(p, i)
#elif defined(FLASHCL_DTYPE_BF16)
#define LOAD8(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#else
#define LOAD8(p, i) vload8(0, (p) + (i))
#endif

#if FCL_PTX
inline float team_shfl_xor(float v, int m)
{
    float r;
    __asm__ volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(m));
    return r;
}
#endif

/* (cl/args.h's FCL_FLASH_DECODE_ARGS: Q in the storage type, K and V in their own) */
#define DECODE_Q_T STORE_T
#define DECODE_KV_T KV_T
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) SUB_GROUP_ATTR void
flash_decode(FCL_SIGNATURE(FCL_FLASH_DECODE_ARGS))
{
    FCL_UNPACK();
    DECODE_APPLY_OFFSETS(); /* the caller's offsets into its buffers, in elements */
    __local float shared[LOCAL_FLOATS];
#ifdef FLASHCL_DEBUG_SCALE
    const float scale2 = scale_log2 * FLASHCL_DEBUG_SCALE; /* fault injection for the validation tests */
#else
    const float scale2 = scale_log2;
#endif
    const int lid = get_local_id(0);
    const int team = lid / TEAM, tl = lid - team * TEAM;
    const int d0 = tl * 8; /* this lane's 8 elements of the head dimension */
    const bool lane_active = d0 < HEAD_DIM;
    const decode_group wg = decode_group_of(ROWS, heads_q, group, n_splits, seq_q, seq_kv, CACHE_LENS, BATCH_IDX, LEFT_PAD,
                                            cache_batch, k_sb, k_ss, k_sh,
                                            v_sb, v_ss, v_sh);
    const int split = wg.split, b = wg.b, hk = wg.hk, heads_kv = wg.heads_kv, pr0 = wg.pr0;
    const seq_view sv = wg.sv;
    const int sq = sv.sq, skv = sv.skv;
    const long k_base = wg.k_base, v_base = wg.v_base;

    /* The rows' queries, scaled into base 2 (a row past the step's queries is zeros and never stored). */
    float8 qv[ROWS];
    for (int r = 0; r < ROWS; ++r) {
        const int pr = pr0 + r, qi = pr / group, h = hk * group + pr % group;
        qv[r] = qi < sq && lane_active ? LOAD8(Q, q_row_offset(sv, h, qi, q_sb, q_ss, q_sh) + d0) * scale2
                                       : (float8)(0.0f);
    }

    /* The keys this work-group reads (decode.cl). */
    const decode_keys keys = decode_key_range(pr0, ROWS, group, sq, skv, split, n_splits, STEP, win_left, win_right);
    const int n_begin = keys.begin, n_end = keys.end, inner_lo = keys.inner_lo, inner_hi = keys.inner_hi;

    float m_run[ROWS], l_run[ROWS];
    float8 acc[ROWS];
    for (int r = 0; r < ROWS; ++r) {
        m_run[r] = -INFINITY;
        l_run[r] = 0.0f;
        acc[r] = (float8)(0.0f);
    }

    for (int n0 = n_begin; n0 < n_end; n0 += STEP) {
        const int k0 = n0 + team * KT; /* this team's first key of the step */
        float8 kv[KT], vv[KT];
#if PAGE_SIZE
        /* The step's KT keys are consecutive and start at a multiple of KT, so they lie in one page: one
         * block-table lookup a step, not one a key (each a dependent load before the row's). */
        const int kc = min(k0, max(skv - 1, 0));
        const long k_row = k_base + kv_row(b, kc, k_ss, k_sb, BT, max_pages, num_pages) + d0;
        const long v_row = v_base + kv_row(b, kc, v_ss, v_sb, BT, max_pages, num_pages) + d0;
        for (int k = 0; k < KT; ++k) { /* every load of the step before any use */
            const bool ok = k0 + k < n_end && lane_active;
            kv[k] = ok ? KV_LOAD8(K, k_row + k * k_ss) : (float8)(0.0f);
            vv[k] = ok ? KV_LOAD8(V, v_row + k * v_ss) : (float8)(0.0f);
        }
#else
        /* Each key's row on its own: hoisting one base for the step measured 25% slower on the H200
         * (docs/design/decode.md). */
        for (int k = 0; k < KT; ++k) { /* every load of the step before any use */
            const bool ok = k0 + k < n_end && lane_active;
            const int jj = ok ? k0 + k : 0;
            kv[k] = ok ? KV_LOAD8(K, k_base + (long)jj * k_ss + d0) : (float8)(0.0f);
            vv[k] = ok ? KV_LOAD8(V, v_base + (long)jj * v_ss + d0) : (float8)(0.0f);
        }
#endif
#if KV_FORMAT == 1 /* the keys' int8 scales: K's applied to the scores, V's to the weights */
        float ks[KT], vs[KT];
        for (int k = 0; k < KT; ++k) {
            const bool ok = k0 + k < n_end;
            const long si = ok ? kv_scale_index(b, k0 + k, hk, heads_kv, seq_kv, BT, max_pages, num_pages) : 0;
            ks[k] = ok ? LOAD_SCALE(K_SCALE, si) : 0.0f;
            vs[k] = ok ? LOAD_SCALE(V_SCALE, si) : 0.0f;
        }
#endif
        /* This lane's part of each dot product, then the team's sum. */
        float s[ROWS][KT];
        for (int r = 0; r < ROWS; ++r)
            for (int k = 0; k < KT; ++k) {
                const float8 x = qv[r] * kv[k];
                s[r][k] = ((x.s0 + x.s1) + (x.s2 + x.s3)) + ((x.s4 + x.s5) + (x.s6 + x.s7));
            }
#if FCL_PTX
        for (int m = TEAM / 2; m >= 1; m /= 2)
            for (int r = 0; r < ROWS; ++r)
                for (int k = 0; k < KT; ++k)
                    s[r][k] += team_shfl_xor(s[r][k], m);
#else
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous step's sums are read */
        for (int r = 0; r < ROWS; ++r)
            for (int k = 0; k < KT; ++k)
                shared[(r * KT + k) * WG + lid] = s[r][k];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int r = 0; r < ROWS; ++r)
            for (int k = 0; k < KT; ++k) {
                float sum = 0.0f;
                /* the same order in every lane: the team agrees. Unrolled by 4, not fully: LLVM 19's AMDGPU
                 * scheduler hoists every local load of a fully unrolled reduction (ROWS x KT x TEAM of them)
                 * and spilled 114-449 VGPRs on gfx1030/gfx1100/gfx1200; by 4 it holds 187-208 (clang 15:
                 * the same either way). */
                _Pragma("unroll 4") for (int t = 0; t < TEAM; ++t)
                    sum += shared[(r * KT + k) * WG + team * TEAM + t];
                s[r][k] = sum;
            }
#endif
        /* Softcap, biases and masks; only keys in a window's edge or past the range are masked. */
        const bool edge = k0 < inner_lo || k0 + KT > min(inner_hi, n_end);
        for (int r = 0; r < ROWS; ++r) {
            const int pr = pr0 + r, qi = pr / group;
            key_range vis = {n_begin, n_end};
#if HAS_WINDOW
            if (edge) {
                vis = visible_keys(qi, sq, skv, win_left, win_right);
                vis.hi = min(vis.hi, n_end);
            }
#endif
            const score_row mods =
                score_row_of(LOG2E_F, softcap_log2, ALIBI, alibi_per_batch, (__global const MASK_T *)KPM, 0, 0, 0, KPM,
                             seq_kv, heads_q, b, qi, hk * group + pr % group, (int)ALIGNED_POS(qi, sq, skv), true);
            float tile_max = -INFINITY;
            for (int k = 0; k < KT; ++k) {
                const int key = k0 + k;
                float t = s[r][k];
#if KV_FORMAT == 1
                t *= ks[k];
#endif
                s[r][k] = score_mod(mods, key, t, !edge || (key >= vis.lo && key < vis.hi));
                tile_max = max_nan(tile_max, s[r][k]);
            }
            const float2 step = softmax_step(m_run[r], tile_max);
            m_run[r] = step.x;
            float8 a = acc[r] * step.y;
            float psum = 0.0f;
            for (int k = 0; k < KT; ++k) {
                const float p = softmax_weight(s[r][k], step.x);
                psum += p;
#if KV_FORMAT == 1
                a = fma((float8)(p * vs[k]), vv[k], a);
#else
                a = fma((float8)(p), vv[k], a);
#endif
            }
            acc[r] = a;
            l_run[r] = l_run[r] * step.y + psum;
        }
    }

    /* Merge the teams once: each writes its rows' maxima, sums and output elements (decode.cl). */
    __local float *const m_t = shared;                    /* [TEAMS][ROWS] */
    __local float *const l_t = shared + TEAMS * ROWS;     /* [TEAMS][ROWS] */
    __local float *const a_t = shared + 2 * TEAMS * ROWS; /* [TEAMS][ROWS][HEAD_DIM] */
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = 0; r < ROWS; ++r) {
        if (tl == 0) {
            m_t[team * ROWS + r] = m_run[r];
            l_t[team * ROWS + r] = l_run[r];
        }
        if (lane_active)
            vstore8(acc[r], 0, a_t + (team * ROWS + r) * HEAD_DIM + d0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    decode_merge_store(m_t, l_t, a_t, TEAMS, ROWS, lid, WG, sv, pr0, group, hk, heads_q, seq_q, split,
                       rows_total, OP, LP, O, LSE, write_lse, o_sb, o_ss, o_sh, SINKS);
}
