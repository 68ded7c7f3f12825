/* SPDX-License-Identifier: MIT */
/*
 * mma.c: the matrix-unit prefill kernel's module (cl/flash_mma.cl): mma.sync m16n8k16 through inline PTX
 * on NVIDIA GPUs of compute capability 8.0 and up (emulated elsewhere when forced, for testing), four
 * warps of 16 or 32 query rows (FlashAttention-2's partitioning). Design reasons: docs/design/mma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* m16 tiles a warp: 1 or 2 (0 reads as 1). */
static int32_t tiles_per_warp(const flashcl_config *c)
{
    return c->m_tiles == 2 ? 2 : 1;
}

/* The kernel's layout, which its build options pass (cl/flash_mma.cl derives none of it): Q's block in a
 * region of its own with mt = 2 m tiles a warp or a head dim above 128 (Q_LOCAL), and the rows swizzled
 * rather than padded at d=64 with Q's block apart and V's rows as K's (SWIZZLE; docs/design/mma.md). */
static int q_local_of(int32_t d, int32_t mt)
{
    return mt > 1 || d > 128;
}
static int swizzle_of(int32_t d, int32_t dv, int32_t mt)
{
    return d == 64 && q_local_of(d, mt) && dv == d;
}

/* fp32 operands (problem.precision TF32 or TF32X3): rows of 4-byte elements, K's and Q's padded to 16 mod
 * 32 (the 16-byte fragment reads of a quarter warp: rows g and g+1 in the two halves of the banks), V's to
 * 4 mod 16 (the 4-byte B reads of rows 2t and 2t+1: t*8 + g, every bank once); one m16 tile a warp, Q's
 * block in local memory, no swizzle, O stored from the accumulators (cl/flash_mma.cl's MMA_TF32). */
/* TF32X3 above d=64 splits Q's block once into a second block of local memory (cl/flash_mma.cl's Q_SPLIT);
 * at d=64 that would take the 64-key tiles to 114 KiB, one work-group an H200 SM where 94 KiB fit two. */
static int tf32_q_split(int tf32, int32_t d)
{
    return tf32 == 3 && d > 64;
}

static uint64_t mma_tf32_bytes(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t stages, int tf32, int emulated)
{
    const uint64_t lds = (uint64_t)d + (uint64_t)((48 - d % 32) % 32), ldv = (uint64_t)dv + 4;
    const uint64_t kv = (uint64_t)stages * (uint64_t)bn, q_rows = (uint64_t)bm * (tf32_q_split(tf32, d) ? 2 : 1);
    return ((q_rows + kv) * lds + kv * ldv) * 4 + (emulated ? (uint64_t)(bm / 16) * 32 * 8 * 4 : 0);
}

static uint64_t fcl_mma_bytes(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t mt, int32_t stages, int emulated)
{
    /* cl/flash_mma.cl's layout: K (Q's block first) and V tiles of 16-bit elements, `stages` of each, rows
     * of head_dim (K) and dv (V) elements (swizzled) or 8 more, and the emulation's exchange area of 8
     * uints per lane; Q's block in a region of its own where q_local. */
    const int q_local = q_local_of(d, mt);
    const int swizzle = swizzle_of(d, dv, mt);
    const uint64_t lds = swizzle ? (uint64_t)d : (uint64_t)d + 8, ldv = swizzle ? (uint64_t)dv : (uint64_t)dv + 8;
    const uint64_t kv = (uint64_t)stages * (uint64_t)bn;
    const uint64_t k_rows = q_local ? (uint64_t)bm + kv : ((uint64_t)bm > kv ? (uint64_t)bm : kv); /* Q's block too */
    return (k_rows * lds + kv * ldv) * 2 + (emulated ? (uint64_t)(bm / (16 * (mt > 1 ? mt : 1))) * 32 * 8 * 4 : 0);
}

/* The problem's layout: fp32 operands' (TF32) or 16-bit ones'. */
static uint64_t fcl_mma_bytes_of(const flashcl_problem *p, int32_t bm, int32_t bn, int32_t mt, int32_t stages,
                                 int emulated)
{
    return fcl_tf32(p) ? mma_tf32_bytes(p->head_dim, fcl_head_dim_v(p), bm, bn, stages, fcl_tf32(p), emulated)
                       : fcl_mma_bytes(p->head_dim, fcl_head_dim_v(p), bm, bn, mt, stages, emulated);
}

static uint64_t mma_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    if (d < 1 || c->block_m < 1 || c->block_n < 1 || c->threads_per_row < 1 || c->d_chunk < 1 || c->v_chunk < 1)
        return 0;
    if (c->tf32)
        return mma_tf32_bytes(d, dv, c->block_m, c->block_n, fcl_mma_stages(c), c->tf32, c->emulated);
    return fcl_mma_bytes(d, dv, c->block_m, c->block_n, tiles_per_warp(c), fcl_mma_stages(c), c->emulated);
}

/* What every matrix-unit prefill kernel takes, the operands' type aside (flash_wgmma's fp8 too). */
const char *fcl_mma_shape_refusal(const flashcl_problem *p)
{
    const char *no = NULL;
    if (p->head_dim % 16 || p->head_dim > 256)
        no = "head_dim not a multiple of 16 up to 256";
    else if (fcl_head_dim_v(p) % 16 || fcl_head_dim_v(p) > 256)
        no = "head_dim_v not a multiple of 16 up to 256";
    else if (fcl_is_decode(p))
        no = "a decode step (16 queries or fewer: the portable kernel splits the keys and packs GQA heads)";
    else if (p->kv_splits > 1)
        no = "forced key splits";
    return no;
}

static const char *mma_shape_refusal(const flashcl_problem *p)
{
    return p->qkv_format ? "fp8 Q, K and V (problem.qkv_format: flash_wgmma's and the portable kernel's; "
                           "docs/design/fp8.md)"
                         : fcl_mma_shape_refusal(p);
}

int fcl_mma_takes(const flashcl_problem *p, char *why, size_t n)
{
    /* K's and V's type is the operands' (Q in another is rounded to it as it is loaded: Q_CONVERT) */
    const char *no = NULL;
    if (p->qkv_format)
        no = mma_shape_refusal(p);
    else if (fcl_kv_dtype(p) == FLASHCL_DTYPE_F32)
        no = fcl_kv_mixed(p) ? "K and V in fp32 (the matrix units take fp16 and bf16 operands)"
                             : "fp32 storage (the matrix units take fp16 and bf16, and fp32 as TF32 where "
                               "problem.precision allows it)";
    else
        no = mma_shape_refusal(p);
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* flash_mma's own: fp32 Q, K and V too where problem.precision allows TF32 products (mma.sync m16n8k8). */
static int mma_takes(const flashcl_problem *p, char *why, size_t n)
{
    if (!fcl_tf32(p))
        return fcl_mma_takes(p, why, n);
    const char *no = mma_shape_refusal(p);
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* The config of mt m16 tiles a warp, bm rows, bn-key tiles in `stages` K/V stages. */
static void mma_config(flashcl_config *cfg, int emulated, int32_t bm, int32_t bn, int32_t mt, int32_t stages,
                       const flashcl_problem *p)
{
    const int32_t head_dim = p->head_dim;
    memset(cfg, 0, sizeof *cfg);
    cfg->tf32 = fcl_tf32(p);
    cfg->kernel = FLASHCL_KERNEL_MMA;
    cfg->emulated = emulated;
    cfg->kv_stages = stages;
    cfg->m_tiles = mt;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 4;    /* the lanes sharing a row of the m16n8 fragments */
    cfg->rows_per_item = 2 * mt; /* rows g and g + 8 of each m16 tile */
    cfg->d_chunk = head_dim;
    cfg->v_chunk = stages * bn;
}

/* Four warps, fewer where the (compiled) kernel allows fewer work-items. The tiles, in the order measured
 * fastest on the H200 (docs/design/mma.md: fp16 N=4096), the first whose local memory fits: up to d=64,
 * 32 rows a warp x 64 keys; up to d=128, 32 rows x 64 keys (two K/V stages for key ranges up to 2048);
 * up to d=192, 32 rows x 32 keys; above, 16 rows x 64 keys (32 rows a warp spill). Queries that fill less
 * than one 32-rows-a-warp block take 16 rows a warp. Then fewer keys, and then fewer warps, where local
 * memory is short. */
/* fp32 operands (TF32 products): four warps of 16 rows; 64-key tiles in two stages up to d=64; above, 32-key
 * tiles (TF32; 105 KiB at d=128, within Hopper's 113 KiB budget) or 16-key ones (TF32X3, whose staged sums
 * hold P's split fragments of the whole tile: 172 registers at d=128 where 32 keys took 255 and spilled,
 * ptxas 13.0), in two stages up to d=128, one above; then fewer keys, and fewer warps, where local memory
 * is short (docs/design/mma.md, tf32-1 and tf32-2). */
static int mma_tf32_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                           flashcl_config *cfg, char *why, size_t why_len, int32_t warps)
{
    const int emulated = !fcl_ptx_units(pr);
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    int32_t bn = d <= 64 ? 64 : fcl_tf32(p) == 3 ? 16 : 32, stages = d <= 128 ? 2 : 1;
    while (mma_tf32_bytes(d, dv, 16 * warps, bn, stages, fcl_tf32(p), emulated) > ch->local_mem &&
           (stages > 1 || bn > 16 || warps > 1)) {
        if (stages > 1)
            stages = 1;
        else if (bn > 16)
            bn /= 2;
        else
            warps /= 2;
    }
    const uint64_t bytes = mma_tf32_bytes(d, dv, 16 * warps, bn, stages, fcl_tf32(p), emulated);
    if (bytes > ch->local_mem || ch->work_group < 32) {
        snprintf(why, why_len, "portable: the matrix-unit tiles need %llu B of local memory and 32 work-items",
                 (unsigned long long)bytes);
        return 0;
    }
    mma_config(cfg, emulated, 16 * warps, bn, 1, stages, p);
    snprintf(cfg->reason, sizeof cfg->reason, "%d warps x 16 query rows, fp32 Q and %d-key K/V tiles in local memory%s",
             (int)warps, (int)bn, stages == 2 ? ", two stages" : "");
    snprintf(why, why_len, "%s%s",
             emulated ? "matrix-unit kernel, emulated (forced on a device without matrix units: for testing): "
                      : "matrix units: ",
             cfg->tf32 == 3 ? "fp32 as three TF32 products (mma.sync m16n8k8), fp32 accumulation"
                            : "TF32 products (mma.sync m16n8k8), fp32 accumulation");
    return 1;
}

static int mma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                      flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !fcl_ptx_units(pr);
    int32_t warps = 4;
    while (warps > 1 && (size_t)(32 * warps) > ch->work_group)
        warps /= 2;
    if (fcl_tf32(p))
        return mma_tf32_choose(pr, ch, p, cfg, why, why_len, warps);
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    int32_t mt = d <= 192 && p->seq_q > 16 * warps ? 2 : 1;
    int32_t bn = mt == 2 ? (d <= 64 ? 64 : 32) : d <= 128 || d > 192 ? 64 : 32;
    int32_t stages = 1;
    if (mt == 2 && d > 64 && d <= 128) {
        bn = 64;
        stages = p->seq_kv <= 2048 ? 2 : 1;
    }
    while (stages == 2 && fcl_mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem)
        stages = 1;
    if (mt == 2 && d > 64 && d <= 128 && fcl_mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem)
        bn = 32; /* (one stage of 32 keys) */
    if (mt == 2 && fcl_mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem) {
        mt = 1; /* (a device whose budget is the reported 48 KiB: the 16-rows-a-warp tiles) */
        bn = d <= 128 ? 64 : 32;
    }
    while (fcl_mma_bytes(d, dv, 16 * warps * mt, bn, mt, stages, emulated) > ch->local_mem && (bn > 16 || warps > 1)) {
        if (bn > 16)
            bn /= 2;
        else
            warps /= 2; /* (d=256 in 48 KiB: 2 warps x 16 keys) */
    }
    const int32_t bm = 16 * warps * mt;
    if (fcl_mma_bytes(d, dv, bm, bn, mt, stages, emulated) > ch->local_mem || ch->work_group < 32) {
        snprintf(why, why_len, "portable: the matrix-unit tiles need %llu B of local memory and 32 work-items",
                 (unsigned long long)fcl_mma_bytes(d, dv, bm, bn, mt, stages, emulated));
        return 0;
    }
    mma_config(cfg, emulated, bm, bn, mt, stages, p);
    snprintf(cfg->reason, sizeof cfg->reason, "%d warps x %d query rows, Q %s, %d-key K/V tiles in local memory (ldmatrix)%s",
             (int)warps, (int)(16 * mt), mt > 1 || d > 128 ? "in local memory" : "in registers", (int)bn,
             stages == 2 ? ", two stages" : "");
    snprintf(why, why_len, "%s",
             emulated ? "matrix-unit kernel, emulated (forced on a device without matrix units: for testing)"
                      : "matrix units: mma.sync m16n8k16 through inline PTX, fp32 accumulation");
    return 1;
}

/* m_tiles 1 (each lane rows g and g+8 of one m16 tile a warp; 0 reads as 1) or 2; kv_stages 1 or 2 (K and
 * V tiles loaded a tile ahead; 0 reads as 1). */
static int mma_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                        flashcl_config *c, char *why, size_t n)
{
    const int emulated = !fcl_ptx_units(pr);
    const int32_t mt = tiles_per_warp(c);
    if (c->m_tiles < 0 || c->m_tiles > 2 || c->kv_stages < 0 || c->kv_stages > 2) {
        snprintf(why, n, ": the matrix-unit kernel takes m_tiles 1 or 2 (m16 tiles a warp) and kv_stages 1 or 2, got %d "
                 "and %d", (int)c->m_tiles, (int)c->kv_stages);
        return 0;
    }
    if (!(c->block_m >= 16 * mt && c->block_m <= 128 && c->block_m % (16 * mt) == 0 && c->block_n >= 16 &&
          c->block_n <= 256 && c->block_n % 16 == 0 && (size_t)(2 * c->block_m / mt) <= ch->work_group)) {
        snprintf(why, n,
                 ": the matrix-unit kernel takes block_m 16 to 128 (a multiple of %d) and block_n 16 to 256, "
                 "multiples of 16 (got %d, %d), and %d x block_m work-items (at most %zu)",
                 (int)(16 * mt), (int)c->block_m, (int)c->block_n, (int)(2 / mt), ch->work_group);
        return 0;
    }
    if (fcl_tf32(p) && mt != 1) {
        snprintf(why, n, ": the matrix-unit kernel takes m_tiles 1 with fp32 operands (problem.precision %s), got %d",
                 flashcl_precision_name((flashcl_precision)p->precision), (int)c->m_tiles);
        return 0;
    }
    const int32_t stages = fcl_mma_stages(c);
    const uint64_t bytes = fcl_mma_bytes_of(p, c->block_m, c->block_n, mt, stages, emulated);
    if (bytes > ch->local_mem) {
        snprintf(why, n, ": the matrix-unit tiles %dx%d need %llu B of local memory, the budget is %llu B",
                 (int)c->block_m, (int)c->block_n, (unsigned long long)bytes, (unsigned long long)ch->local_mem);
        return 0;
    }
    const int32_t bm = c->block_m, bn = c->block_n;
    mma_config(c, emulated, bm, bn, mt, stages, p);
    snprintf(c->reason, sizeof c->reason, "%d warps of %d rows, %d-key tiles%s: set by flashcl_context_override_config",
             (int)(bm / (16 * mt)), (int)(16 * mt), (int)bn, stages == 2 ? " in two stages" : "");
    fcl_strlcpy(c->path_reason, "matrix units: tiles set by flashcl_context_override_config", sizeof c->path_reason);
    return 1;
}

static void mma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    const int mt = tiles_per_warp(c), tf32 = fcl_tf32(p);
    const int32_t d = p->head_dim, hv = fcl_head_dim_v(p);
    /* (O staged in the operands' type: not where O has Q's own, nor fp32's) */
    const int o_aligned = fcl_out_aligned(p),
              o_staged = o_aligned && d > 64 && d <= 192 && hv <= d && !fcl_kv_mixed(p) && !tf32;
    char dv[32], features[512];
    fcl_dim_v_define(p, dv, sizeof dv);
    fcl_feature_defines(p, 1, features, sizeof features);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DWARPS=%d -DFCL_PTX=%d -DFAST_EXP2=%d -DROWS_ALIGNED=%d%s "
             "-DMT=%d -DQ_LOCAL=%d -DKV_STAGES=%d -DO_ALIGNED=%d -DO_STAGED=%d -DSWIZZLE=%d -DMMA_TF32=%d -DQ_SPLIT=%d",
             fcl_dtype_define(p->dtype), d, dv, c->block_n, c->block_m / (16 * mt), !c->emulated, !c->emulated,
             fcl_rows_aligned(p), features, mt, tf32 || q_local_of(d, mt), fcl_mma_stages(c), o_aligned, o_staged,
             !tf32 && swizzle_of(d, hv, mt), tf32, tf32_q_split(tf32, d));
}

void fcl_mma_constants(fcl_args *a, const flashcl_plan *pl)
{
    fcl_params prm;
    fcl_params_of(pl, &prm);
    fcl_arg_params(a, MA_prm, &prm);
}

void fcl_mma_buffers(fcl_args *a, const flashcl_plan *pl, const flashcl_tensors *t, const fcl_scratch *s)
{
    fcl_kernel_offsets offs;
    fcl_kernel_offsets_of(&pl->off, s->op_off, s->lp_off, &offs);
    fcl_arg_mem(a, MA_Q, t->q);
    fcl_arg_mem(a, MA_K, t->k);
    fcl_arg_mem(a, MA_V, t->v);
    fcl_arg_mem(a, MA_O, t->o);
    fcl_arg_mem(a, MA_LSE, t->lse);
    fcl_arg_mem(a, MA_ALIBI, FCL_OPT(t, alibi_slopes));
    fcl_arg_mem(a, MA_MASK, FCL_OPT(t, mask));
    fcl_arg_mem(a, MA_KPM, FCL_OPT(t, key_padding));
    fcl_arg_mem(a, MA_CU_Q, FCL_OPT(t, cu_seqlens_q));
    fcl_arg_mem(a, MA_CU_K, FCL_OPT(t, cu_seqlens_k));
    fcl_arg_mem(a, MA_CACHE_LENS, FCL_OPT(t, cache_seqlens));
    fcl_arg_mem(a, MA_BT, FCL_OPT(t, block_table));
    fcl_arg_mem(a, MA_SINKS, FCL_OPT(t, sinks));
    fcl_arg_mem(a, MA_BATCH_IDX, FCL_OPT(t, cache_batch_idx));
    fcl_arg_mem(a, MA_LEFT_PAD, FCL_OPT(t, cache_leftpad));
    fcl_arg_mem(a, MA_DESCALE, FCL_OPT(t, descale));
    fcl_arg_offsets(a, MA_offs, &offs);
}

const fcl_kernel_module fcl_mma_module = {
    .id = FCL_K_FLASH_MMA,
    .name = "mma",
    .takes = mma_takes,
    .choose = mma_choose,
    .local_bytes = mma_local_bytes,
    .override = mma_override,
    .options = mma_options,
    .bind_constants = fcl_mma_constants,
    .bind_buffers = fcl_mma_buffers,
    .grid = fcl_flash_grid,
};
