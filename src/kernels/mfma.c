/* SPDX-License-Identifier: MIT */
/*
 * mfma.c: AMD CDNA's prefill kernel's module (cl/flash_mfma.cl): the 32x32x8 MFMA through clang's amdgcn
 * built-in on gfx90a, gfx942 and gfx950 (wave64), 32 query rows a wave in the transposed products (S^T =
 * K Q^T, O^T += V^T P^T: P stays in registers); emulated elsewhere when forced, for testing. Its
 * arguments are flash_mma's. Design reasons: docs/design/mfma.md.
 */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* cl/flash_mfma.cl's MFMA_XW: the emulation's exchange area, bytes a wave */
#define MFMA_XW_BYTES (512u * 4u)

/* cl/flash_mfma.cl's layout: K's tile (bn rows of d + 4 elements), V's transposed (dv in whole 32-column
 * blocks, rows of bn + 4), 16-bit elements; emulated, the waves' exchange areas. */
static uint64_t mfma_bytes(int32_t d, int32_t dv, int32_t bm, int32_t bn, int emulated)
{
    const uint64_t dvp = (uint64_t)(dv + 31) / 32 * 32;
    return ((uint64_t)bn * (uint64_t)(d + 4) + dvp * (uint64_t)(bn + 4)) * 2 +
           (emulated ? (uint64_t)(bm / 32) * MFMA_XW_BYTES : 0);
}

static uint64_t mfma_local_bytes(int32_t d, int32_t dv, const flashcl_config *c)
{
    if (d < 1 || dv < 1 || c->block_m < 32 || c->block_m % 32 || c->block_n < 32 || c->block_n % 32)
        return 0;
    return mfma_bytes(d, dv, c->block_m, c->block_n, c->emulated);
}

/* flash_mma's problems (fp16/bf16 K and V, head dims multiples of 16 up to 256, Q's and V's each; no
 * decode step, no forced splits): every feature through the shared parts. */
static int mfma_takes(const flashcl_problem *p, char *why, size_t n)
{
    return fcl_mma_takes(p, why, n);
}

static void mfma_config(flashcl_config *cfg, int emulated, int32_t bm, int32_t bn, int32_t head_dim)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kernel = FLASHCL_KERNEL_MFMA;
    cfg->emulated = emulated;
    cfg->kv_stages = 1;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 2; /* a query's two lanes (l and l ^ 32), each half of a tile's keys */
    cfg->rows_per_item = 1;
    cfg->d_chunk = head_dim;
    cfg->v_chunk = bn;
    cfg->work_group_size = 2 * bm;
}

/* Four waves (128 queries), fewer where the work-group limit is lower; 64-key tiles where two
 * work-groups a compute unit still fit the budget (up to d=96 in 64 KiB), else 32-key tiles; then fewer
 * waves where local memory is short (the emulation's exchange areas). The order is a prediction until an
 * AMD GPU measures it (docs/design/mfma.md). */
static int mfma_choose(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                       flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !fcl_mfma_units(pr);
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    int32_t waves = 4;
    while (waves > 1 && (size_t)(64 * waves) > ch->work_group)
        waves /= 2;
    int32_t bn = 2 * mfma_bytes(d, dv, 32 * waves, 64, emulated) <= ch->local_mem ? 64 : 32;
    while (mfma_bytes(d, dv, 32 * waves, bn, emulated) > ch->local_mem && waves > 1)
        waves /= 2;
    if (mfma_bytes(d, dv, 32 * waves, bn, emulated) > ch->local_mem || ch->work_group < 64) {
        snprintf(why, why_len, "portable: the MFMA kernel's tiles need %llu B of local memory and 64 work-items",
                 (unsigned long long)mfma_bytes(d, dv, 32 * waves, bn, emulated));
        return 0;
    }
    mfma_config(cfg, emulated, 32 * waves, bn, d);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d waves x 32 query rows (a query a lane pair), Q^T in registers, %d-key K and V^T tiles in local memory",
             (int)waves, (int)bn);
    snprintf(why, why_len, "%s",
             emulated ? "MFMA kernel, emulated (forced on a device without AMD's matrix cores: for testing)"
                      : "AMD matrix cores: MFMA 32x32x8 through clang's built-in, fp32 accumulation");
    return 1;
}

/* block_m 32 to 256, a multiple of 32 (a wave each, within the work-group limit); block_n 32 to 128, a
 * multiple of 32. */
static int mfma_override(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *c, char *why, size_t n)
{
    const int emulated = !fcl_mfma_units(pr);
    if (!(c->block_m >= 32 && c->block_m <= 256 && c->block_m % 32 == 0 && c->block_n >= 32 && c->block_n <= 128 &&
          c->block_n % 32 == 0 && (size_t)(2 * c->block_m) <= ch->work_group)) {
        snprintf(why, n,
                 ": the MFMA kernel takes block_m 32 to 256 and block_n 32 to 128, multiples of 32 (got %d, %d), "
                 "and 2 x block_m work-items (at most %zu)",
                 (int)c->block_m, (int)c->block_n, ch->work_group);
        return 0;
    }
    const uint64_t bytes = mfma_bytes(p->head_dim, fcl_head_dim_v(p), c->block_m, c->block_n, emulated);
    if (bytes > ch->local_mem) {
        snprintf(why, n, ": the MFMA tiles %dx%d need %llu B of local memory, the limit is %llu B", (int)c->block_m,
                 (int)c->block_n, (unsigned long long)bytes, (unsigned long long)ch->local_mem);
        return 0;
    }
    const int32_t bm = c->block_m, bn = c->block_n;
    mfma_config(c, emulated, bm, bn, p->head_dim);
    snprintf(c->reason, sizeof c->reason, "%d waves, %d-key tiles: set by flashcl_context_override_config",
             (int)(bm / 32), (int)bn);
    fcl_strlcpy(c->path_reason, "AMD matrix cores: tiles set by flashcl_context_override_config", sizeof c->path_reason);
    return 1;
}

static void mfma_options(const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n)
{
    char dv[32], features[512];
    fcl_dim_v_define(p, dv, sizeof dv);
    fcl_feature_defines(p, 1, features, sizeof features);
    snprintf(buf, n, "-cl-std=CL1.2 %s -DHEAD_DIM=%d%s -DBLOCK_N=%d -DWAVES=%d -DFCL_AMD_MMA=%d -DFAST_EXP2=%d "
             "-DROWS_ALIGNED=%d%s",
             fcl_dtype_define(p->dtype), (int)p->head_dim, dv, (int)c->block_n, (int)(c->block_m / 32), !c->emulated,
             !c->emulated, fcl_rows_aligned(p), features);
}

const fcl_kernel_module fcl_mfma_module = {
    .id = FCL_K_FLASH_MFMA,
    .name = "mfma",
    .takes = mfma_takes,
    .choose = mfma_choose,
    .local_bytes = mfma_local_bytes,
    .override = mfma_override,
    .options = mfma_options,
    .bind_constants = fcl_mma_constants,
    .bind_buffers = fcl_mma_buffers,
    .grid = fcl_flash_grid,
};
