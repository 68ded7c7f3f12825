/* SPDX-License-Identifier: MIT */
/*
 * decode_mma.c: the matrix-unit decode kernel's module (cl/flash_decode_mma.cl): a decode step's packed
 * query rows against K/V streamed straight to mma.sync fragments, fp16/bf16 storage (and the quantized
 * caches), a head dim a multiple of 64; emulated where forced without matrix units. Design reasons:
 * docs/design/decode_mma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* cl/flash_decode_mma.cl's layout: the warps' merge area, and emulated the exchange area. */
static uint64_t decode_mma_bytes(int32_t d, int32_t rows, int32_t warps, int emulated)
{
    const uint64_t D = (uint64_t)d, R = (uint64_t)rows, W = (uint64_t)warps;
    return FCL_DECODE_MMA_MERGE_FLOATS(D, R, W) * sizeof(float) +
           (emulated ? FCL_DECODE_MMA_XCHG_UINTS(W) * sizeof(uint32_t) : 0); /* (cl/layout.h) */
}

static uint64_t decode_mma_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    (void)dv;
    if (c->block_m < 1 || c->work_group_size < 32)
        return 0;
    return decode_mma_bytes(d, c->block_m, c->work_group_size / 32, c->emulated);
}

/* What the decode kernel takes, with fp16 or bf16 storage (K/V as Q) and a head dim a multiple of 64. */
static int decode_mma_takes(const flashcl_problem *p, char *why, size_t n)
{
    if (!fcl_decode_takes(p, why, n))
        return 0;
    if ((p->dtype == FLASHCL_DTYPE_F16 || p->dtype == FLASHCL_DTYPE_BF16) && !fcl_kv_mixed(p) &&
        p->head_dim % 64 == 0 && p->head_dim <= 256)
        return 1;
    snprintf(why, n, "the matrix-unit decode kernel needs fp16/bf16 and a head dim a multiple of 64");
    return 0;
}

/* Up to 8 of the KV head's packed rows a work-group, eight warps for 16-bit caches and int8 with fp32 scales
 * up to d=128 and four otherwise (fewer where the work-group limit says so), two 16-key tiles a warp and step
 * up to head dim 128 and one above (registers). Byte caches: int8 and E4M3 through sm_89's pair conversion
 * take two as well (their former three and four ran 3-10% slower on the H100, decode-mma-19), but int8 with
 * fp32 scales takes three where flash_combine merges the splits and each split holds 1024 keys or more
 * (measured at four warps: 4-14% faster at batch 1 from 49152 keys; 4-5% slower below 1024 keys a split and
 * up to 10% wherever the kernel merges, at eight warps as at four: decode-mma-24 and -31, fp16 Q at d=128
 * only; at eight warps it applies only to forced splits or fewer KV heads than 8, not measured there, nor
 * bf16 or d=64); E5M2 keeps four and E4M3's permute path three, chosen when they kept about fp16's bytes in
 * flight a lane and not measured against two since (docs/design/decode_mma.md). */
static int32_t decode_mma_int8_tiles(const flashcl_device_profile *pr, const flashcl_problem *p, int32_t rows,
                                     int32_t warps)
{
    flashcl_config two = {.kernel = FLASHCL_KERNEL_DECODE_MMA, .block_m = rows, .block_n = warps * 32,
                          .work_group_size = 32 * warps, .gqa_pack = p->heads_q / p->heads_kv};
    two.kv_splits = fcl_choose_splits(pr, p, &two); /* (the finisher's count at two tiles) */
    return !fcl_decode_mma_fuses(&two) && two.kv_splits > 1 && p->seq_kv / two.kv_splits >= 1024 ? 3 : 2;
}

/* Whether E4M3 through sm_89's pair conversion takes eight warps of three tiles (decode-mma-33, -36, -37, the
 * H100): where their splits fill a wave of eight-warp work-groups with 8 to 16 splits (as measured: merged in the
 * kernel), each of 4 steps or more, and the splits are the chooser's (batch 1 x 16384-131072 and batch 2 x 32768:
 * 3-8% faster); not where the keys cut the splits short (batch 1 x 8192: 6.5% slower), nor at batch 4 and 8
 * (fewer splits: 0-4% slower), nor with forced splits (33 at batch 1: 10-13% slower). */
static int decode_mma_e4m3_eight(const flashcl_device_profile *pr, const flashcl_problem *p, int32_t rows)
{
    if (p->kv_splits > 0)
        return 0;
    const flashcl_config eight = {.kernel = FLASHCL_KERNEL_DECODE_MMA, .block_m = rows, .block_n = 8 * 48,
                                  .work_group_size = 256, .gqa_pack = p->heads_q / p->heads_kv};
    flashcl_problem unbounded = *p; /* (the wave's count: the finisher's splits where the keys cut none) */
    unbounded.seq_kv = INT32_MAX;
    const int32_t wave = fcl_choose_splits(pr, &unbounded, &eight);
    return wave >= 8 && wave <= 16 && fcl_choose_splits(pr, p, &eight) == wave;
}

static int decode_mma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                             flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !fcl_ptx_units(pr);
    const int64_t packed = (int64_t)p->seq_q * (p->heads_q / p->heads_kv);
    const int32_t rows = packed < 8 ? (int32_t)packed : 8;
    const int big = p->head_dim > 128;
    const int fp8_cvt = pr->vendor == FLASHCL_VENDOR_NVIDIA && pr->matrix_units && p->dtype == FLASHCL_DTYPE_F16 &&
                        pr->nv_cc_major * 10 + pr->nv_cc_minor >= 89; /* the kernel's FP8_CVT */
    const int32_t tiles0 = p->kv_format == FLASHCL_KV_INT8       ? (big ? 1 : 2)
                          : p->kv_format == FLASHCL_KV_FP8_E5M2 ? (big ? 2 : 4)
                          : p->kv_format == FLASHCL_KV_FP8_E4M3 ? (fp8_cvt ? 2 : (big ? 1 : 3))
                                                                : (big ? 1 : 2);
    /* Eight warps for 16-bit caches up to d=128 (decode-mma-27): one work-group an SM of them holds what two
     * of four did, in half the splits, so that a batch-1 step merges in the kernel (16 splits or fewer):
     * 4.5-5 us off batch 1 x 32768 and 131072 on the H100, batch 8 unchanged. int8 with fp32 scales too
     * (decode-mma-31: 1-13% faster at batch 1 and 8 x 8192-131072, two tiles where the kernel merges); E4M3
     * through the pair conversion where decode_mma_e4m3_eight says, with three tiles (two lost 2.4% at batch 1 x
     * 131072); E5M2, E4M3's permute path and int8 with fp16 scales keep four (not measured at eight). */
    const int int8_f32 = p->kv_format == FLASHCL_KV_INT8 && p->kv_scale_dtype != FLASHCL_DTYPE_F16;
    const int e4m3_eight = p->kv_format == FLASHCL_KV_FP8_E4M3 && fp8_cvt && !big && decode_mma_e4m3_eight(pr, p, rows);
    const int eight = (!p->kv_format || int8_f32 || e4m3_eight) && !big && ch->work_group >= 256;
    const int32_t most = eight ? 8 : 4;
    for (int32_t warps = most; warps >= 1; warps /= 2) {
        if ((size_t)(32 * warps) > ch->work_group || decode_mma_bytes(p->head_dim, rows, warps, emulated) > ch->local_mem)
            continue;
        const int32_t tiles = int8_f32 && !big ? decode_mma_int8_tiles(pr, p, rows, warps)
                              : e4m3_eight && warps == 8 ? 3
                                                         : tiles0;
        memset(cfg, 0, sizeof *cfg);
        cfg->kernel = FLASHCL_KERNEL_DECODE_MMA;
        cfg->emulated = emulated;
        cfg->team = 32;
        cfg->keys_per_step = 16 * tiles;
        cfg->block_m = rows;
        cfg->rows_per_item = 1;
        cfg->threads_per_row = 32;
        cfg->v_chunk = 16 * tiles;
        cfg->block_n = warps * 16 * tiles;
        cfg->d_chunk = p->head_dim;
        cfg->work_group_size = 32 * warps;
        snprintf(cfg->reason, sizeof cfg->reason,
                 "%d rows per work-group, %d warps of %d keys a step each, K/V straight to mma fragments", (int)rows,
                 (int)warps, (int)(16 * tiles));
        snprintf(why, why_len, "%s", emulated ? "matrix-unit decode kernel, emulated (FLASHCL_PATH=mma)"
                                               : "matrix-unit decode kernel: K/V streamed to mma.sync fragments");
        return 1;
    }
    snprintf(why, why_len, "portable: the matrix-unit decode kernel needs 32 work-items and %llu B of local memory",
             (unsigned long long)decode_mma_bytes(p->head_dim, rows, 1, emulated));
    return 0;
}

/* Whether the kernel merges its splits itself, the last of a row block's work-groups (FUSED_MERGE: no
 * flash_combine): up to 16 splits, where it measured faster than the merge kernel (decode-mma-7). Past
 * them the last work-group's merge costs more than the launch it saves: 33 splits lost 6 us in
 * decode-mma-7 and, with the partials' loads batched (decode-mma-17), 4.6-9.2 us of a batch-1 step again in
 * decode-mma-20 (docs/design/decode_mma.md). The merge in decode.cl itself takes any count. */
int fcl_decode_mma_fuses(const flashcl_config *c)
{
    return c->kv_splits > 1 && c->kv_splits <= 16;
}

/* block_m its rows, work_group_size / 32 its warps, keys_per_step its keys a warp and step (16 a tile). */
static void decode_mma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char features[256];
    fcl_feature_defines(p, 1, features, sizeof features);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d -DROWS=%d -DWARPS=%d -DTILES=%d -DFCL_PTX=%d -DFAST_EXP2=%d -DROWS_ALIGNED=%d%s%s",
             fcl_dtype_define(p->dtype), p->head_dim, c->block_m, c->work_group_size / 32, c->keys_per_step / 16,
             !c->emulated, !c->emulated, fcl_rows_aligned(p), features,
             c->kv_splits <= 1 ? "" : fcl_decode_mma_fuses(c) ? " -DSPLIT_KV=1 -DFUSED_MERGE=1" : " -DSPLIT_KV=1");
}

const fcl_kernel_module fcl_decode_mma_module = {
    .id = FCL_K_FLASH_DECODE_MMA,
    .name = "decode_mma",
    .takes = decode_mma_takes,
    .choose = decode_mma_choose,
    .local_bytes = decode_mma_local_bytes,
    .options = decode_mma_options,
    .bind_constants = fcl_decode_constants, /* flash_decode's arguments */
    .bind_buffers = fcl_decode_buffers,
    .grid = fcl_flash_grid,
};
