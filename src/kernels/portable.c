/* SPDX-License-Identifier: MIT */
/*
 * portable.c: the portable kernel's module (cl/flash_fwd.cl): every problem flashcl takes, on any
 * OpenCL 1.2 device; register-blocked tiles sized to the device's local memory and work-group limit.
 * Design reasons and their measurements: docs/design/portable.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* Work-items per work-group never exceed this, whatever the device allows: past 256 the flash kernel
 * gains no reuse (its K/V reuse comes from block_m) and loses occupancy and barrier speed. */
#define FCL_MAX_WG 256
/* Registers a work-item spends on its output block (rows_per_item x head_dim/threads_per_row floats)
 * and on its score block (rows_per_item x block_n/threads_per_row): with the float4 operands of the
 * inner loops this stays within the ~128 registers a GPU thread has at two work-groups of 256 per
 * compute unit (NVIDIA: 64 K registers per SM; AMD: 512 VGPRs per SIMD lane at wave64). */
#define FCL_MAX_ACC 64
#define FCL_MAX_SCORES 32
/* Query rows per work-group: past 128 the K/V reuse gains little and a short sequence wastes rows. */
#define FCL_MAX_ROWS 128

/* The kernel's local memory in floats (cl/flash_fwd.cl's layout): d is Q's and K's head dim, dv V's and
 * O's. */
static uint64_t flash_floats(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t tpr, int32_t dc, int32_t vc)
{
    const uint64_t D = (uint64_t)d, DV = (uint64_t)dv, BM = (uint64_t)bm, BN = (uint64_t)bn, T = (uint64_t)tpr,
                   DC = (uint64_t)dc, VC = (uint64_t)vc;
    return FCL_FWD_FLOATS(D, DV, BM, BN, T, DC, VC); /* (cl/layout.h: the kernel's arrays) */
}

static uint64_t portable_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    if (d < 1 || c->block_m < 1 || c->block_n < 1 || c->threads_per_row < 1 || c->d_chunk < 1 || c->v_chunk < 1)
        return 0;
    return flash_floats(d, dv, c->block_m, c->block_n, c->threads_per_row, c->d_chunk, c->v_chunk) * sizeof(float);
}

static uint32_t next_pow2(uint32_t x)
{
    uint32_t p = 1;
    while (p < x && p < (1u << 30))
        p <<= 1;
    return p;
}

/* The largest multiple of 4 that divides bn and keeps V's chunk (rows of dv) within `floats` (at least 4). */
static int32_t choose_v_chunk(int32_t dv, int32_t bn, uint64_t floats)
{
    int32_t best = 4;
    for (int32_t vc = 4; vc <= bn; vc += 4)
        if (bn % vc == 0 && (uint64_t)vc * (uint64_t)dv <= floats)
            best = vc;
    return best;
}

/* The register block and the search's limits: column groups, rows per work-item, keys per work-item. */
typedef struct shape_limits {
    int32_t tpr, tm, tn_max, cols;
    uint32_t rows_cap, keys_cap;
    int32_t chunks[20], n_chunks;
    size_t max_wg, multiple;
} shape_limits;

static void limits_of(const flashcl_device_profile *pr, const flashcl_problem *p, int reg_shift, size_t max_wg,
                      shape_limits *s)
{
    /* the register block: accumulators and scores per work-item, halved reg_shift times */
    const int32_t max_acc = FCL_MAX_ACC >> reg_shift > 4 ? FCL_MAX_ACC >> reg_shift : 4;
    const int32_t max_scores = FCL_MAX_SCORES >> reg_shift > 2 ? FCL_MAX_SCORES >> reg_shift : 2;
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p); /* Q/K's columns; V/O's (the output block) */
    s->max_wg = max_wg > FCL_MAX_WG ? FCL_MAX_WG : max_wg;
    s->multiple = pr->wg_multiple ? pr->wg_multiple : 1;
    /* Column groups (threads_per_row): each work-item holds head_dim_v/tpr output columns of its rows,
     * and each P value it loads from local memory feeds that many FMAs. Eight groups where the head
     * dim allows at least 4 columns each (one float4), else fewer: a row group then spans 8
     * neighbouring work-items, whose K and V loads fall in distinct banks (docs/design/portable.md).
     * A decode step (at most 16 rows, packed query heads included) has too few rows to fill a
     * work-group with row groups: up to 32 column groups instead, so that a work-group of 128 items
     * loads each K/V tile. */
    const int decode_rows = p->seq_q <= FCL_DECODE_MAX_QUERIES; /* rows of the packed view */
    s->tpr = 1;
    for (int32_t g = decode_rows ? 32 : 8; g >= 2; g /= 2)
        if (dv % g == 0 && dv / g >= 4) {
            s->tpr = g;
            break;
        }
    s->cols = dv / s->tpr;
    /* Rows per work-item: 4 (each K value feeds 4 rows) while the output block stays in registers, and
     * whose score block still takes key tiles of 16 (4 keys per item, more with few column groups) */
    s->tm = 4;
    const int32_t tn_want = s->tpr >= 4 ? 4 : 16 / s->tpr;
    while (s->tm > 1 && (s->tm * s->cols > max_acc || s->tm * tn_want > max_scores))
        s->tm /= 2;
    s->rows_cap = next_pow2((uint32_t)p->seq_q);
    s->keys_cap = next_pow2((uint32_t)p->seq_kv);
    /* Chunks of the head dimension to try, largest first: all of it, then its divisors that are
     * multiples of 4 (float4 loads), at most 64. */
    s->n_chunks = 0;
    s->chunks[s->n_chunks++] = d;
    for (int32_t dc = d / 2 < 64 ? d / 2 : 64; dc >= 4 && s->n_chunks < 20; dc -= 4)
        if (d % dc == 0)
            s->chunks[s->n_chunks++] = dc;
    /* Keys per work-item: 4, or more where 4 would give tiles of fewer than 16 keys (small head
     * dims, few column groups: short tiles pay a barrier for little work), within the score budget. */
    s->tn_max = 4;
    while (s->tn_max > 1 && s->tm * s->tn_max > max_scores)
        s->tn_max /= 2;
    while (s->tn_max * s->tpr < 16 && s->tm * s->tn_max * 2 <= max_scores)
        s->tn_max *= 2;
}

/* The first (keys per work-item, chunk) for rg row groups of t rows that fits the budget; 1 with cfg's
 * tiles set. GPUs: at most 16 float4 copies a work-item for each K chunk and V chunk: a small work-group
 * (a decode step of one row: one warp) with a long key tile otherwise has its copies unrolled into
 * hundreds of registers (tools/vendor_check.sh: d=192 over 128 keys, 64 copies a lane, spilled on gfx90a
 * and gfx1030). */
static int fit_keys(const flashcl_device_profile *pr, const flashcl_problem *p, const shape_limits *s, uint64_t budget,
                    int resident_only, int32_t rg, int32_t t, flashcl_config *cfg)
{
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p), bm = rg * t;
    const size_t wg = (size_t)rg * s->tpr;
    for (int32_t tn = s->tn_max; tn >= 1; tn /= 2) {
        const int32_t bn = tn * s->tpr;
        if (bn % 4 || (tn > 1 && (uint32_t)bn > s->keys_cap && bn > 16))
            continue;
        if (resident_only && bn < 16 && (uint32_t)bn < s->keys_cap)
            continue;
        for (int k = 0; k < (resident_only ? 1 : s->n_chunks); ++k) {
            const int32_t dc = s->chunks[k];
            const uint64_t copy_cap = pr->is_cpu ? UINT64_MAX : 64 * (uint64_t)wg;
            if ((uint64_t)bn * (uint64_t)dc > copy_cap && (dc > 4 || bn > 4))
                continue;
            const uint64_t ldc = (uint64_t)dc + 4;
            const uint64_t qk = (uint64_t)bn * ldc + (dc == d ? 0 : (uint64_t)bm * ldc);
            const uint64_t room = qk > (uint64_t)bm * s->tpr ? qk : (uint64_t)bm * s->tpr;
            const int32_t vc = choose_v_chunk(dv, bn, room < copy_cap ? room : copy_cap);
            if (flash_floats(d, dv, bm, bn, s->tpr, dc, vc) * sizeof(float) <= budget) {
                memset(cfg, 0, sizeof *cfg);
                cfg->block_m = bm;
                cfg->block_n = bn;
                cfg->threads_per_row = s->tpr;
                cfg->rows_per_item = t;
                cfg->d_chunk = dc;
                cfg->v_chunk = vc;
                cfg->work_group_size = rg * s->tpr;
                return 1;
            }
        }
    }
    return 0;
}

/* Row groups: as many as the work-group allows (every K/V tile is reused by block_m rows), but no more
 * rows than the problem has unless a smaller group would leave a warp/wavefront partly empty (a decode
 * step of 1 to 16 rows). Keys per tile: 4 per work-item (a 4x4 score block: half a local load per FMA),
 * fewer where local memory is short. Q and K go through local memory in chunks of the head dimension:
 * all of it (Q loaded once) where it fits, else the largest divisor that fits. Preference (a resident Q
 * measured 1.1 to 1.3x faster than any chunked tile: docs/design/portable.md): first a resident Q with
 * a work-group of at least 128 items (or the device's limit) and tiles of at least 16 keys; then the
 * largest work-group, keys per tile, chunk. Whole warps/wavefronts before partial ones. */
static int search_tiles(const flashcl_device_profile *pr, const flashcl_problem *p, const shape_limits *s,
                        uint64_t budget, flashcl_config *cfg)
{
    const size_t good_wg = s->max_wg < 128 ? s->max_wg : 128;
    for (int pass = 0; pass < 3; ++pass) {
        const int resident_only = pass == 0;
        for (int32_t rg = 64; rg >= 1; rg /= 2) {
            const size_t wg = (size_t)rg * s->tpr;
            if (wg > s->max_wg || (pass < 2 && wg % s->multiple) || (resident_only && wg < good_wg))
                continue;
            int32_t t = s->tm;
            while (t > 1 && (uint32_t)(rg * t) > s->rows_cap)
                t /= 2; /* fewer rows per item before fewer items: a short query still fills the group */
            if (rg * t > FCL_MAX_ROWS)
                continue;
            if ((uint32_t)(rg * t) > s->rows_cap && rg > 1 && (size_t)(rg / 2) * s->tpr >= s->multiple)
                continue;
            if (fit_keys(pr, p, s, budget, resident_only, rg, t, cfg))
                return 1;
        }
    }
    return 0;
}

flashcl_status fcl_choose_flash(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget,
                                int reg_shift, size_t max_wg, flashcl_config *cfg)
{
    shape_limits s;
    limits_of(pr, p, reg_shift, max_wg, &s);
    if (!search_tiles(pr, p, &s, budget, cfg))
        return FLASHCL_UNSUPPORTED;
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    cfg->local_mem_bytes = portable_bytes(p->head_dim, fcl_head_dim_v(p), cfg);
    cfg->local_mem_budget = budget;
    cfg->kernel = FLASHCL_KERNEL_PORTABLE;
    fcl_strlcpy(cfg->kernel_name, "flash_fwd", sizeof cfg->kernel_name);
    fcl_strlcpy(cfg->source, "heuristic", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d items per row group hold %dx%d outputs and %dx%d scores each; Q/K %s of %d; limits %llu B, %zu items a group",
             (int)s.tpr, (int)cfg->rows_per_item, (int)s.cols, (int)cfg->rows_per_item,
             (int)(cfg->block_n / s.tpr), cfg->d_chunk == p->head_dim ? "whole (Q loaded once)" : "in column chunks",
             (int)cfg->d_chunk, (unsigned long long)budget, s.max_wg);
    return FLASHCL_SUCCESS;
}

int fcl_portable_fits(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget, size_t max_wg,
                      const flashcl_config *cfg, char *why, size_t why_len)
{
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p), bm = cfg->block_m, bn = cfg->block_n,
                  tpr = cfg->threads_per_row;
    const int32_t tm = cfg->rows_per_item, dc = cfg->d_chunk, vc = cfg->v_chunk;
    const struct {
        const char *name;
        int32_t v, max;
    } range[] = {{"block_m", bm, 1024},      {"block_n", bn, 1024}, {"threads_per_row", tpr, 1024},
                 {"rows_per_item", tm, 64}, {"d_chunk", dc, 1024}, {"v_chunk", vc, 1024}};
    for (size_t i = 0; i < sizeof range / sizeof *range; ++i)
        if (range[i].v < 1 || range[i].v > range[i].max) {
            snprintf(why, why_len, "%s %d: must be 1 to %d", range[i].name, (int)range[i].v, (int)range[i].max);
            return 0;
        }
    if (dv % tpr || bn % tpr || bm % tm) {
        snprintf(why, why_len,
                 "threads_per_row %d must divide %s %d and block_n %d; rows_per_item %d must divide block_m %d", tpr,
                 dv == d ? "head_dim" : "head_dim_v", dv, bn, tm, bm);
        return 0;
    }
    if (dc % 4 || d % dc || vc % 4 || bn % vc) {
        snprintf(why, why_len,
                 "d_chunk %d must be a multiple of 4 dividing head_dim %d; v_chunk %d a multiple of 4 dividing "
                 "block_n %d",
                 dc, d, vc, bn);
        return 0;
    }
    const size_t wg = (size_t)(bm / tm) * (size_t)tpr;
    if (wg > max_wg || wg > pr->max_work_group_size) {
        snprintf(why, why_len, "%d row groups x %d work-items exceed the work-group limit %zu", bm / tm, tpr,
                 max_wg < pr->max_work_group_size ? max_wg : pr->max_work_group_size);
        return 0;
    }
    const uint64_t bytes = portable_bytes(d, dv, cfg);
    if (bytes > budget) {
        snprintf(why, why_len, "%llu B of local memory exceed the budget %llu B", (unsigned long long)bytes,
                 (unsigned long long)budget);
        return 0;
    }
    return 1;
}

/* An override of the portable kernel's tiles: as they are, where they fit. */
static int portable_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                             flashcl_config *c, char *why, size_t n)
{
    char no[160];
    if (!fcl_portable_fits(pr, p, ch->local_mem, ch->work_group, c, no, sizeof no)) {
        snprintf(why, n, " does not fit this problem: %s", no);
        return 0;
    }
    fcl_strlcpy(c->reason, "set by flashcl_context_override_config", sizeof c->reason);
    c->emulated = c->kv_stages = c->m_tiles = c->producer = c->team = c->keys_per_step = c->shuffles = 0;
    return 1;
}

static int64_t portable_register_block(const flashcl_config *c, int32_t head_dim_v)
{
    const int64_t tpr = c->threads_per_row > 0 ? c->threads_per_row : 1;
    return (int64_t)c->rows_per_item * (head_dim_v / tpr + c->block_n / tpr);
}

static void portable_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256], gqa[32] = "", sg[32], dv[32];
    fcl_feature_defines(p, 1, features, sizeof features);
    if (c->gqa_pack > 1)
        snprintf(gqa, sizeof gqa, " -DGQA_PACK=%d", c->gqa_pack);
    fcl_sub_group_define(c, sg, sizeof sg);
    fcl_dim_v_define(p, dv, sizeof dv);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_M=%d -DBLOCK_N=%d -DTM=%d -DCG=%d -DD_CHUNK=%d -DV_CHUNK=%d%s%s%s%s",
             fcl_dtype_define(p->dtype), p->head_dim, dv, c->block_m, c->block_n, c->rows_per_item, c->threads_per_row,
             c->d_chunk, c->v_chunk, features, c->kv_splits > 1 ? " -DSPLIT_KV=1" : "", gqa, sg);
}

static void portable_constants(fcl_args *a, const flashcl_plan *pl)
{
    fcl_params prm;
    fcl_params_of(pl, &prm);
    fcl_arg_params(a, FA_prm, &prm);
}

static void portable_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    fcl_kernel_offsets offs;
    fcl_kernel_offsets_of(&pl->off, s->op_off, s->lp_off, &offs);
    fcl_arg_mem(a, FA_Q, t->q);
    fcl_arg_mem(a, FA_K, t->k);
    fcl_arg_mem(a, FA_V, t->v);
    fcl_arg_mem(a, FA_O, t->o);
    fcl_arg_mem(a, FA_LSE, t->lse);
    fcl_arg_mem(a, FA_ALIBI, FCL_OPT(t, alibi_slopes));
    fcl_arg_mem(a, FA_MASK, FCL_OPT(t, mask));
    fcl_arg_mem(a, FA_KPM, FCL_OPT(t, key_padding));
    fcl_arg_mem(a, FA_CU_Q, FCL_OPT(t, cu_seqlens_q));
    fcl_arg_mem(a, FA_CU_K, FCL_OPT(t, cu_seqlens_k));
    fcl_arg_mem(a, FA_OP, s->mem);
    fcl_arg_mem(a, FA_LP, s->mem);
    fcl_arg_mem(a, FA_CACHE_LENS, FCL_OPT(t, cache_seqlens));
    fcl_arg_mem(a, FA_BT, FCL_OPT(t, block_table));
    fcl_arg_mem(a, FA_SINKS, FCL_OPT(t, sinks));
    fcl_arg_mem(a, FA_BATCH_IDX, FCL_OPT(t, cache_batch_idx));
    fcl_arg_mem(a, FA_LEFT_PAD, FCL_OPT(t, cache_leftpad));
    fcl_arg_mem(a, FA_DESCALE, FCL_OPT(t, descale));
    fcl_arg_offsets(a, FA_offs, &offs);
}

int32_t fcl_gqa_pack(const flashcl_problem *p)
{
    /* A decode step has too few query rows to fill a work-group; the query heads that read the same KV
     * head fill it instead, and K/V come from memory once for all of them; at most 4096 packed rows (past
     * that the heads fill a device anyway, and seq_q * group stays an int). */
    const int32_t group = p->heads_q / p->heads_kv;
    return group > 1 && fcl_is_decode(p) && (int64_t)p->seq_q * group <= 4096 ? group : 1;
}

void fcl_packed_view(const flashcl_problem *p, int32_t pack, flashcl_problem *view)
{
    *view = *p;
    if (pack > 1) {
        view->seq_q = p->seq_q * pack;
        view->heads_q = p->heads_q / pack;
        view->heads_kv = view->heads_q;
    }
}

const fcl_kernel_module fcl_portable_module = {
    .id = FCL_K_FLASH_FWD,
    .name = "portable",
    .local_bytes = portable_bytes,
    .override = portable_override,
    .register_block = portable_register_block,
    .options = portable_options,
    .bind_constants = portable_constants,
    .bind_buffers = portable_buffers,
    .grid = fcl_flash_grid,
};
