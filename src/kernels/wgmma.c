/* SPDX-License-Identifier: MIT */
/*
 * wgmma.c: the warpgroup kernel's module (cl/flash_wgmma.cl): Hopper's wgmma.mma_async through programs
 * finished for sm_90a (src/program.c), 64 query rows a warpgroup, K/V in one to three stages, with a
 * producer warpgroup issuing the copies where it fits; emulated where the device has no sm_90a programs
 * (forced only, for testing). Design reasons: docs/design/wgmma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* The 128-byte swizzle (SWIZZLE=1): from d=80, in 64-column blocks (d=64: one block, measured no faster
 * swizzled: docs/design/wgmma.md); with fp8 operands always (V's transposed tile: 128-byte rows of keys) */
static int wgmma_swizzle(int32_t d, int fp8)
{
    return fp8 || d >= 80;
}

static uint64_t pad64(uint64_t c)
{
    return (c + 63) / 64 * 64;
}

/* A tile's stored width: swizzled, whole 64-column blocks (d=80 and 96 in two) */
static uint64_t wgmma_width(int32_t c, int32_t d)
{
    return wgmma_swizzle(d, 0) ? pad64((uint64_t)c) : (uint64_t)c;
}

/* fp8's staging tiles (cl/flash_wgmma.cl's VT_BUFS): two with the producer warpgroup, V(t)'s copies landing
 * during V(t-1)'s transpose (+8.9% at d=128 N=16384: docs/design/fp8.md, fp8-2) */
static int fp8_staging_tiles(int producer)
{
    return producer ? 2 : 1;
}

/* cl/flash_wgmma.cl's layout: Q's block (qbufs of them: Q_BUFS), `stages` K and V tiles of 16-bit elements
 * (K's d wide, V's dv, in their stored widths); with fp8 operands (16-bit units of two bytes) Q's and K's rows d/2 units, V's tiles
 * transposed (dv rows of bn/2 units), all in whole 64-unit blocks, and the staging tile V is copied into
 * (bn rows of dv bytes, one or two); emulated also P's tile and the exchange area (8 uints a lane); with the producer
 * warpgroup four 8-byte mbarriers a stage. */
static uint64_t wgmma_bytes_q(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t stages, int emulated, int producer,
                              int fp8, int qbufs)
{
    const uint64_t kv = (uint64_t)stages * (uint64_t)bn;
    uint64_t tiles;
    if (fp8) {
        const uint64_t qw = pad64((uint64_t)d / 2), vtw = pad64((uint64_t)bn / 2);
        tiles = ((uint64_t)bm * qw + kv * qw + (uint64_t)stages * (uint64_t)dv * vtw) * 2 +
                (uint64_t)fp8_staging_tiles(producer) * (uint64_t)bn * (uint64_t)dv;
    } else {
        const uint64_t qw = wgmma_width(d, d), vw = wgmma_width(dv, d);
        tiles = ((uint64_t)qbufs * (uint64_t)bm * qw + kv * (qw + vw)) * 2;
    }
    return tiles + (emulated ? (uint64_t)bm * (uint64_t)bn * 2 + (uint64_t)(bm / 16) * 32 * 8 * 4 : 0) +
           (producer ? 32 * (uint64_t)stages : 0);
}

static uint64_t wgmma_bytes(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t stages, int emulated, int producer,
                            int fp8)
{
    return wgmma_bytes_q(d, dv, bm, bn, stages, emulated, producer, fp8, 1);
}

int fcl_wgmma_producer(const flashcl_config *c)
{
    return c->kernel == FLASHCL_KERNEL_WGMMA && !c->emulated && c->producer > 0;
}

/* Q's tiles (cl/flash_wgmma.cl's Q_BUFS): two with persistent work-groups and the producer, 16-bit operands,
 * where the config's budget holds them (the next block's Q copied while one runs), else one */
static int wgmma_q_bufs(int32_t d, int32_t dv, const flashcl_config *c)
{
    return c->persistent > 0 && fcl_wgmma_producer(c) && !c->qkv_format &&
                   wgmma_bytes_q(d, dv, c->block_m, c->block_n, fcl_mma_stages(c), 0, 1, 0, 2) <= c->local_mem_budget
               ? 2
               : 1;
}

static uint64_t wgmma_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    if (d < 1 || dv < 1 || c->block_m < 1 || c->block_n < 1 || c->threads_per_row < 1 || c->d_chunk < 1 || c->v_chunk < 1 ||
        c->block_m % 64)
        return 0;
    return wgmma_bytes_q(d, dv, c->block_m, c->block_n, fcl_mma_stages(c), c->emulated, fcl_wgmma_producer(c),
                         c->qkv_format != 0, wgmma_q_bufs(d, dv, c));
}

/* FlashAttention-3's head dims: the wgmma shapes the kernel is written for (cl/flash_wgmma.cl's WG_DIM_OK) */
int fcl_wgmma_dim(int32_t d)
{
    return d == 64 || d == 80 || d == 96 || d == 128 || d == 192 || d == 256;
}

/* fp8 Q, K and V (problem.qkv_format): flash_mma's shapes with head dims 64, 128 or 256 (Q's and V's the
 * same), O in fp16 or bf16, and rows of 16-byte multiples. */
static const char *wgmma_fp8_refusal(const flashcl_problem *p)
{
    const char *no = fcl_mma_shape_refusal(p);
    const int32_t d = p->head_dim;
    if (no)
        return no;
    if (p->dtype == FLASHCL_DTYPE_F32)
        return "fp8 Q, K and V with fp32 O (flash_wgmma writes fp16 or bf16)";
    if (fcl_head_dim_v(p) != d || (d != 64 && d != 128 && d != 256))
        return "fp8 Q, K and V at head dims other than 64, 128 or 256 (Q's and V's the same)";
    if (!fcl_rows_aligned(p))
        return "rows not 16-byte aligned";
    return NULL;
}

/* What flash_mma takes (every score modifier, packed sequences, KV caches, sinks), with head dims (Q's and
 * V's, each) 64, 80, 96, 128, 192 or 256, and 16-byte aligned rows; and fp8 Q, K and V. */
static int wgmma_takes(const flashcl_problem *p, char *why, size_t n)
{
    if (p->qkv_format) {
        const char *no8 = wgmma_fp8_refusal(p);
        if (no8)
            snprintf(why, n, "%s", no8);
        return no8 == NULL;
    }
    if (!fcl_mma_takes(p, why, n))
        return 0;
    const char *no = NULL;
    if (!fcl_wgmma_dim(p->head_dim))
        no = "head_dim other than 64, 80, 96, 128, 192 or 256";
    else if (!fcl_wgmma_dim(fcl_head_dim_v(p)))
        no = "head_dim_v other than 64, 80, 96, 128, 192 or 256";
    else if (!fcl_rows_aligned(p))
        no = "rows not 16-byte aligned";
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* block_m / 64 warpgroups, block_n-key tiles in `stages` K/V stages (v_chunk = stages * block_n), with the
 * producer warpgroup or not (the work-group's size), `persistent` work-groups at most (0: a block each); the
 * other fields fixed (four lanes a row pair, two rows a lane: the accumulator layout). */
static void wgmma_config(flashcl_config *cfg, int emulated, int32_t bm, int32_t bn, int32_t stages,
                         const flashcl_problem *p, int producer, int32_t persistent)
{
    const int32_t head_dim = p->head_dim;
    memset(cfg, 0, sizeof *cfg);
    cfg->kernel = FLASHCL_KERNEL_WGMMA;
    cfg->qkv_format = p->qkv_format;
    cfg->emulated = emulated;
    cfg->kv_stages = stages;
    cfg->producer = producer;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 4;
    cfg->rows_per_item = 2;
    cfg->d_chunk = head_dim;
    cfg->v_chunk = stages * bn;
    cfg->work_group_size = 2 * bm + (producer ? 128 : 0);
    cfg->persistent = persistent;
}

/* Whether the producer warpgroup can run a shape: the matrix units' program (the emulation cannot run its
 * spinning waits: PoCL runs a work-group's work-items one after another), two to four stages (its ring), two or
 * three consumer warpgroups (its register splits are for 384 and 512 work-items: three only at d_v = 64,
 * whose consumers fit 160 registers), and the room. Taken wherever it fits with two (docs/design/wgmma.md:
 * faster at every head dim with the swizzled layouts); three where the chooser takes them (wgmma-d64). */
static int producer_fits(int emulated, const flashcl_problem *p, int32_t bm, int32_t bn, int32_t stages,
                         const fcl_choice *ch)
{
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    const int fp8 = p->qkv_format != 0; /* (fp8's register split is written for two consumer warpgroups) */
    return !emulated && stages >= 2 && stages <= 4 && (bm == 128 || (bm == 192 && d == 64 && dv == 64 && !fp8)) &&
           ch->work_group >= (size_t)(2 * bm + 128) && wgmma_bytes(d, dv, bm, bn, stages, 0, 1, fp8) <= ch->local_mem;
}

/* Two warpgroups (128 query rows) where the queries fill them and local memory allows (three, 192 rows, at
 * d = d_v = 64 with the producer), 128-key tiles up to d_v=128 and 64 above (registers: O's 96 or 128
 * accumulators a work-item there beside S's); one work-group may take a compute unit's whole local memory
 * (tiles.c gives this kernel the whole work-group's limit). */
static int wgmma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                        flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = fcl_ptx_units(pr) < 2, fp8 = p->qkv_format != 0;
    const uint64_t limit = ch->local_mem;
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    /* d = d_v = 64: three (a 192-row block) where they fit with the producer and 128-key tiles in two stages,
     * as measured (wgmma.md, wgmma-d64, the H100: +9 to +18%; causal over 1024 rows -1%, the last wave's
     * imbalance: two there); a third fewer copied bytes a product */
    const int rows192 = !fp8 && d == 64 && dv == 64 && p->seq_q > 128 && !(p->causal && p->seq_q < 2048) &&
                        producer_fits(emulated, p, 192, 128, 2, ch);
    int32_t wgs = rows192 ? 3 : p->seq_q > 64 && ch->work_group >= 256 ? 2 : 1, bn = dv > 128 ? 64 : 128;
    while (wgmma_bytes(d, dv, 64 * wgs, bn, 1, emulated, 0, fp8) > limit && (bn > 64 || wgs > 1)) {
        if (bn > 64)
            bn = 64;
        else
            wgs = 1;
    }
    if (wgmma_bytes(d, dv, 64 * wgs, bn, 1, emulated, 0, fp8) > limit || ch->work_group < (size_t)(128 * wgs)) {
        snprintf(why, why_len, "needs %llu B of local memory, 128 work-items",
                 (unsigned long long)wgmma_bytes(d, dv, 64 * wgs, bn, 1, emulated, 0, fp8));
        return 0;
    }
    /* two K/V stages (the pipelined loop: one tile's products beside the next one's softmax) where they fit */
    const int32_t stages = wgmma_bytes(d, dv, 64 * wgs, bn, 2, emulated, 0, fp8) <= limit ? 2 : 1;
    const int producer = producer_fits(emulated, p, 64 * wgs, bn, stages, ch);
    /* persistent work-groups, one a compute unit, for short prefills (wgmma-short, the H100: +3.2% fp16 and
     * +5.9% bf16 at d=128 and +3.5% at d=64, N=1024; +0.5% at 2048, -0.4 to -1.6% from 4096, -12% at d=64
     * N=16384): keys at most 1024; causal, its blocks in the snake order (wgmma-snake: +5.1% at d=128 and +3.2%
     * at d=64, N=1024; +2.2% at d=128 N=4096, -0.8% at 8192, -32% at 16384), keys at most 2048 with 128-row
     * blocks (wgmma-order2: the grid in its grouped order, cl/flash_wgmma.cl's WG_ORDER, +2.1% over it at 4096,
     * -2.8% at 1024; d=64's 192 rows not measured); softcap, ALiBi, sinks and a paged cache at d=128 without causal
     * (wgmma-feat, N=1024: +1.2%, +2.2%, +2.6%, +5.8%); not a window (-2.3% there), nor what is not measured:
     * those features with causal or at d=64, a contiguous cache, masks, packed sequences; more row blocks than
     * compute units; head dims 64 and 128, as measured (at 256 the block loop makes the consumers spill: 564 B
     * in ptxas 13, none without it) */
    const uint64_t blocks = ((uint64_t)p->seq_q + (uint64_t)(64 * wgs) - 1) / (uint64_t)(64 * wgs) *
                            (uint64_t)p->batch * (uint64_t)p->heads_q;
    const int feat = !p->causal && d == 128; /* (where wgmma-feat measured the features) */
    const int taken = !p->window && !p->varlen && !p->attn_mask && !p->key_padding && !p->kv_dtype && !p->kv_format &&
                      (!p->kv_cache || (feat && p->page_size > 0)) &&
                      (feat || (p->softcap <= 0.0f && !p->alibi && !p->sinks));
    const int short_keys = p->causal ? wgs == 2 && p->seq_kv <= 2048 : p->seq_kv <= 1024;
    const int32_t persistent = producer && !fp8 && d == dv && (d == 64 || d == 128) && taken && short_keys &&
                                       blocks > (uint64_t)pr->compute_units
                                   ? (int32_t)pr->compute_units
                                   : 0;
    wgmma_config(cfg, emulated, 64 * wgs, bn, stages, p, producer, persistent);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d warpgroups x 64 query rows%s, Q and %s%d-key K/V tiles in local memory (wgmma descriptors%s)",
             (int)wgs, producer ? " and a producer warpgroup" : "", stages == 2 ? "two stages of " : "", (int)bn,
             fp8 ? "; fp8, V transposed" : "");
    if (persistent) {
        const size_t used = strlen(cfg->reason);
        snprintf(cfg->reason + used, sizeof cfg->reason - used, "%s", ", persistent work-groups");
    }
    snprintf(why, why_len, "%s",
             emulated ? "warpgroup kernel, emulated (FLASHCL_PATH=wgmma on a device without sm_90a programs)"
                      : "warpgroup MMA: wgmma.mma_async through PTX finished for sm_90a, fp32 accumulation");
    return 1;
}

/* Whether 192-key tiles take a shape (cl/flash_wgmma.cl; wgmma-192, an override's until measured): S's 96
 * accumulators a work-item beside O's up to d_v = 128, two warpgroups at most, 16-bit operands, and no boolean
 * mask or key padding (a lane's keep bits of a tile are one 32-bit word). */
static int wgmma_wide_tiles_take(const flashcl_problem *p, int32_t bm)
{
    return bm <= 128 && fcl_head_dim_v(p) <= 128 && !p->qkv_format && !p->key_padding &&
           !(p->attn_mask && p->mask_dtype == FLASHCL_MASK_BOOL);
}

/* Whether 80-key tiles take a shape (cl/flash_wgmma.cl; wgmma-80, an override's until measured: FlashAttention-3's
 * at d=256): the 128-byte swizzled layouts (from d=80, whose copies take 16 rows a pass) and 16-bit operands. */
static int wgmma_80_tiles_take(const flashcl_problem *p)
{
    return !p->qkv_format && wgmma_swizzle(p->head_dim, 0);
}

/* 64, 128 or 192 rows (192: three warpgroups, d = d_v = 64), 64-, 80- (wgmma_80_tiles_take), 128- or 192-key tiles
 * (192: wgmma_wide_tiles_take), one to three K/V stages (kv_stages; 0 reads as 1; four with the producer, its ring
 * of stages); the producer warpgroup asked for by producer 1, refused by 0, where it fits by -1 (the chooser's
 * rule); `persistent` work-groups as given. */
static int wgmma_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                          flashcl_config *c, char *why, size_t n)
{
    char no[112];
    if (!wgmma_takes(p, no, sizeof no)) {
        snprintf(why, n, " asks for flash_wgmma, which does not take this problem: %s", no);
        return 0;
    }
    const int emulated = fcl_ptx_units(pr) < 2, fp8 = p->qkv_format != 0;
    const int32_t stages = fcl_mma_stages(c), bm = c->block_m, bn = c->block_n, want = c->producer;
    const int rows_ok = bm == 64 || bm == 128 || (bm == 192 && p->head_dim == 64 && fcl_head_dim_v(p) == 64 && !fp8);
    const int cols_ok = bn == 64 || bn == 128 || (bn == 80 && wgmma_80_tiles_take(p)) ||
                        (bn == 192 && wgmma_wide_tiles_take(p, bm));
    if (!(rows_ok && cols_ok && (size_t)(2 * bm) <= ch->work_group)) {
        snprintf(why, n,
                 ": flash_wgmma takes block_m 64 or 128 (192 at head dims 64 without fp8) and block_n 64 or 128 (80 "
                 "from head dim 80 with 16-bit operands; 192 with block_m up to 128, head_dim_v up to 128, 16-bit "
                 "operands, no boolean mask or key padding) (got %d, %d), and 2 x block_m work-items (at most %zu)",
                 (int)bm, (int)bn, ch->work_group);
        return 0;
    }
    const int fits = producer_fits(emulated, p, bm, bn, stages, ch);
    if (c->persistent < 0 || (c->persistent > 0 && fp8)) {
        snprintf(why, n,
                 ": flash_wgmma takes persistent 0 (a work-group a row block) or n > 0 work-groups running the blocks "
                 "in turn, with 16-bit operands (got %d%s)",
                 (int)c->persistent, fp8 ? ", fp8 Q, K and V" : "");
        return 0;
    }
    if (c->kv_stages < 0 || c->kv_stages > 4 || want < -1 || want > 1 || (want == 1 && !fits) ||
        (c->kv_stages == 4 && !(fits && want != 0))) {
        snprintf(why, n,
                 ": flash_wgmma takes kv_stages 1 to 3 (4 with the producer) and producer -1 (where it fits), 0 or 1, "
                 "the producer warpgroup needing sm_90a programs, block_m 128 (or 192), two to four K/V stages, 2 x "
                 "block_m + 128 work-items and room for four mbarriers a stage (got kv_stages %d, producer %d)",
                 (int)c->kv_stages, (int)want);
        return 0;
    }
    const int producer = want < 0 ? fits : want;
    const uint64_t bytes = wgmma_bytes(p->head_dim, fcl_head_dim_v(p), bm, bn, stages, emulated, producer, fp8);
    if (bytes > ch->local_mem) {
        snprintf(why, n, ": flash_wgmma's tiles %dx%d need %llu B of local memory, the limit is %llu B", (int)bm,
                 (int)bn, (unsigned long long)bytes, (unsigned long long)ch->local_mem);
        return 0;
    }
    wgmma_config(c, emulated, bm, bn, stages, p, producer, c->persistent);
    snprintf(c->reason, sizeof c->reason, "%d warpgroups x 64 rows%s, %d-key tiles%s%s: set by flashcl_context_override_config",
             (int)(bm / 64), producer ? " and a producer" : "", (int)bn,
             stages == 4   ? " in four stages"
             : stages == 3 ? " in three stages"
             : stages == 2 ? " in two stages"
                           : "",
             c->persistent > 0 ? ", persistent work-groups" : "");
    fcl_strlcpy(c->path_reason,
                emulated ? "warpgroup kernel, emulated: tiles set by flashcl_context_override_config"
                         : "warpgroup MMA (sm_90a): tiles set by flashcl_context_override_config",
                sizeof c->path_reason);
    return 1;
}

int fcl_wgmma_o_staged(const flashcl_problem *p)
{
    /* (+20.6% at d=128 N=1024, +9.6% at d=64; -1.4% at d=64 N=16384: docs/design/wgmma.md, wgmma-ostage) */
    return fcl_out_aligned(p) && fcl_head_dim_v(p) <= p->head_dim && !fcl_kv_mixed(p) && !p->qkv_format;
}

/* The consumer warpgroups' products in turns (cl/flash_wgmma.cl's WG_PINGPONG: with the producer, on sm_90a)
 * for 16-bit operands up to d_v = 128: +6% at d=128 N=1024, +11% at d=64 N=16384, +8-11% causal at N=1024,
 * within 1% at d=256 and with fp8, where it stays off (docs/design/wgmma.md, wgmma-pingpong's result). */
static int wgmma_pingpong(const flashcl_problem *p, const flashcl_config *c)
{
    return !c->emulated && fcl_wgmma_producer(c) && !p->qkv_format && fcl_head_dim_v(p) <= 128;
}

/* block_m / 64 warpgroups, and the producer warpgroup where the work-group has its 128 work-items; on the
 * matrix units its program is finished for sm_90a (-DFCL_SM90A=1: src/program.c), emulated (mma 4) not. */
static void wgmma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    /* (128-byte swizzled tiles from d=80: docs/design/wgmma.md) */
    char features[512], dim_v[32];
    fcl_feature_defines(p, 1, features, sizeof features);
    fcl_dim_v_define(p, dim_v, sizeof dim_v);
    snprintf(buf, n,
             "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DWARPGROUPS=%d -DFCL_PTX=%d -DFAST_EXP2=%d%s -DWG_PRODUCER=%d "
             "-DSWIZZLE=%d -DKV_STAGES=%d -DWG_O_STAGED=%d -DVT_BUFS=%d%s%s%s",
             fcl_dtype_define(p->dtype), p->head_dim, dim_v, c->block_n, c->block_m / 64, !c->emulated, !c->emulated,
             !c->emulated ? " -DFCL_SM90A=1" : "", fcl_wgmma_producer(c), wgmma_swizzle(p->head_dim, p->qkv_format != 0),
             fcl_mma_stages(c), fcl_wgmma_o_staged(p), fp8_staging_tiles(fcl_wgmma_producer(c)),
             c->persistent > 0 ? (wgmma_q_bufs(p->head_dim, fcl_head_dim_v(p), c) == 2 ? " -DWG_PERSIST=1 -DQ_BUFS=2"
                                                                                     : " -DWG_PERSIST=1")
                               : "",
             wgmma_pingpong(p, c) ? " -DWG_PINGPONG=1" : "", features);
}

/* fcl_flash_grid's, or with persistent work-groups at most that many in one row (the kernel walks the
 * blocks: cl/flash_wgmma.cl's WG_PERSIST) */
static void wgmma_grid(const flashcl_plan *pl, size_t global[2], size_t local[2])
{
    fcl_flash_grid(pl, global, local);
    if (pl->config.persistent > 0) {
        const size_t blocks = global[0] / local[0] * global[1];
        global[0] = (blocks < (size_t)pl->config.persistent ? blocks : (size_t)pl->config.persistent) * local[0];
        global[1] = 1;
    }
}

const fcl_kernel_module fcl_wgmma_module = {
    .id = FCL_K_FLASH_WGMMA,
    .name = "wgmma",
    .takes = wgmma_takes,
    .choose = wgmma_choose,
    .local_bytes = wgmma_local_bytes,
    .override = wgmma_override,
    .options = wgmma_options,
    .bind_constants = fcl_mma_constants, /* flash_mma's arguments */
    .bind_buffers = fcl_mma_buffers,
    .grid = wgmma_grid,
};
