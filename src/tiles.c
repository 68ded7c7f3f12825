/* SPDX-License-Identifier: MIT */
/*
 * tiles.c: chooses a kernel configuration from (device profile, problem) alone, so that plans, the
 * command-line tool and tests with fake profiles all see the same choice. Each kernel's local memory
 * has an exact formula here, mirrored by the layout comment at the top of its .cl file.
 */
#include "kernels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
/* The largest local memory a work-group gets on the GPUs flashcl targets (AMD LDS and Intel SLM are
 * 64 KiB; NVIDIA gives OpenCL 48 KiB through a kernel argument). CPUs report a cache (PoCL: its L2,
 * 1 MiB or more) where tiles larger than this only add cache misses, so no budget exceeds it. */
#define FCL_LOCAL_MEM_CEILING (64u * 1024u)

uint64_t fcl_local_mem_budget(const flashcl_device_profile *pr, uint64_t cap)
{
    uint64_t budget = pr->local_mem_size < FCL_LOCAL_MEM_CEILING ? pr->local_mem_size : FCL_LOCAL_MEM_CEILING;
    /* A GPU whose static arrays may take more than it reports (NVIDIA: the profile's probe): that much,
     * but no more than half of what a compute unit holds, so that two work-groups share one (occupancy;
     * fcl_groups_per_cu). Hopper: min(232448, 233472 / 2 - 1040) = 115696; A100: 82928; Ampere/Ada: 50160. */
    if (!pr->is_cpu && pr->local_mem_static > pr->local_mem_size) {
        /* (each work-group also takes NVIDIA's 1 KiB reserved a block on sm_80 and up, and the
         * compiler's own bytes) */
        const uint64_t half = pr->local_mem_per_cu / 2 > 2048 ? pr->local_mem_per_cu / 2 - 1024 - 16 : 0;
        const uint64_t more = pr->local_mem_static < half ? pr->local_mem_static : half;
        if (more > budget)
            budget = more;
    }
    /* AMD's wave64 GPUs (CDNA: MI100..MI300) are left at their whole 64 KiB of LDS, one work-group a
     * compute unit for the large tiles, on this arithmetic (not measured on AMD hardware): a CU has four
     * SIMDs, and a work-group of 128-256 work-items is 2-4 wavefronts, so one work-group a CU leaves one
     * wavefront a SIMD, idle at each barrier. Two work-groups need tiles of 32 KiB, which at d=128 fp32
     * leave no room for a resident Q: Q's block is then re-read for every K tile, 128 x 128 x 4 = 64 KiB
     * of L2 traffic beside the tile's 16 KiB of K (5x the bytes a step), and a resident Q measured
     * 1.1-1.3x faster than chunked tiles on the H200 (docs/NOTES.md, tuning). With a resident Q in 32
     * KiB the block shrinks to 32 rows, halving each K/V tile's reuse. Neither is better on paper, so
     * the budget stays the LDS; tools/vendor_check.sh reports the occupancy that results (1-2 waves a
     * SIMD on gfx90a/gfx942). */
    return cap && cap < budget ? cap : budget;
}

uint64_t fcl_local_mem_max(const flashcl_device_profile *pr, uint64_t cap)
{
    /* a GPU: its static arrays' probed size; a CPU: what it reports (local memory there is ordinary memory:
     * the chooser's ceiling is about cache misses, which an override may accept, e.g. to run a GPU's tiles
     * emulated) */
    const uint64_t budget = fcl_local_mem_budget(pr, 0);
    const uint64_t dev = pr->is_cpu ? pr->local_mem_size : pr->local_mem_static;
    const uint64_t most = dev > budget ? dev : budget;
    return cap && cap < most ? cap : most;
}

uint32_t fcl_groups_per_cu(const flashcl_device_profile *pr, uint64_t local_bytes)
{
    const uint64_t cu = pr->local_mem_per_cu ? pr->local_mem_per_cu : pr->local_mem_size;
    if (!local_bytes || pr->is_cpu)
        return 0;
    return (uint32_t)(cu / local_bytes);
}

/* The portable kernel's local memory in floats (cl/flash_fwd.cl's layout): d is Q's and K's head dim,
 * dv V's and O's. */
static uint64_t flash_floats(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t tpr, int32_t dc, int32_t vc)
{
    const uint64_t ldc = (uint64_t)dc + 4, ldp = (uint64_t)bn + 4;
    const int resident = dc == d;
    const uint64_t q_res = resident ? (uint64_t)bm * ldc : 0;
    uint64_t shared = (uint64_t)bn * ldc + (resident ? 0 : (uint64_t)bm * ldc);
    if ((uint64_t)vc * (uint64_t)dv > shared)
        shared = (uint64_t)vc * (uint64_t)dv;
    if ((uint64_t)bm * (uint64_t)tpr > shared)
        shared = (uint64_t)bm * (uint64_t)tpr;
    shared = (shared + 3) / 4 * 4;
    return q_res + shared + (uint64_t)bm * ldp;
}

/* rows_per_item of a matrix-unit config: 2 (one m16 tile a warp; 0 reads as 2) or 4 (two). */
static int32_t mma_tiles_per_warp(const flashcl_config *c)
{
    return c->rows_per_item == 4 ? 2 : 1;
}

/* K/V stages of a matrix-unit config (cl/flash_mma.cl's KV_STAGES): 2 where v_chunk, the keys of V in
 * local memory at once, is twice block_n; else 1. */
static int32_t mma_stages(const flashcl_config *c)
{
    return c->v_chunk == 2 * c->block_n ? 2 : c->mma >= 3 && c->v_chunk == 3 * c->block_n ? 3 : 1;
}

/* cl/flash_mma.cl's layout comment: K (Q's block first) and V tiles of 16-bit elements, `stages` of
 * each, rows of head_dim (K) and dv (V) elements (swizzled: d=64 with Q's block apart and V's rows as
 * K's) or 8 more, and the emulation's exchange area of 8 uints per lane; with mt = 2 m tiles a warp or
 * a head dim above 128, Q's block in a region of its own. */
static uint64_t mma_bytes(int32_t d, int32_t dv, int32_t bm, int32_t bn, int32_t mt, int32_t stages, int emulated)
{
    const int q_local = mt > 1 || d > 128;   /* the kernel's Q_LOCAL */
    const int swizzle = d == 64 && q_local && dv == d; /* SWIZZLE: unpadded rows */
    const uint64_t lds = swizzle ? (uint64_t)d : (uint64_t)d + 8, ldv = swizzle ? (uint64_t)dv : (uint64_t)dv + 8;
    const uint64_t kv = (uint64_t)stages * (uint64_t)bn;
    const uint64_t k_rows = q_local ? (uint64_t)bm + kv : ((uint64_t)bm > kv ? (uint64_t)bm : kv); /* Q's block too */
    return (k_rows * lds + kv * ldv) * 2 + (emulated ? (uint64_t)(bm / (16 * (mt > 1 ? mt : 1))) * 32 * 8 * 4 : 0);
}

/* cl/flash_wgmma.cl's layout comment: Q's block, `stages` K and V tiles of 16-bit elements; emulated also
 * P's tile and the exchange area (8 uints a lane); with the producer warpgroup four 8-byte mbarriers a
 * stage. */
static uint64_t wgmma_bytes(int32_t d, int32_t bm, int32_t bn, int32_t stages, int emulated, int producer)
{
    return ((uint64_t)bm + 2 * (uint64_t)stages * (uint64_t)bn) * (uint64_t)d * 2 +
           (emulated ? (uint64_t)bm * (uint64_t)bn * 2 + (uint64_t)(bm / 16) * 32 * 8 * 4 : 0) +
           (producer ? 32 * (uint64_t)stages : 0);
}

/* cl/flash_decode.cl's layout comment: the teams' merge area, and the local-memory reduction's where
 * the device has no shuffles (shared). */
static uint64_t decode_bytes(int32_t d, int32_t rows, int32_t team, int32_t kt, int32_t wg, int shuffles)
{
    const uint64_t merge = (uint64_t)(wg / team) * (uint64_t)rows * ((uint64_t)d + 2);
    const uint64_t reduce = shuffles ? 0 : (uint64_t)wg * (uint64_t)rows * (uint64_t)kt;
    return (merge > reduce ? merge : reduce) * sizeof(float);
}

/* cl/flash_decode_mma.cl's layout comment: the warps' merge area, and emulated the exchange area. */
static uint64_t decode_mma_bytes(int32_t d, int32_t rows, int32_t warps, int emulated)
{
    return (uint64_t)warps * (uint64_t)rows * ((uint64_t)d + 2) * sizeof(float) +
           (emulated ? (uint64_t)warps * 32 * 8 * sizeof(uint32_t) : 0);
}

/* A config's local memory, Q's and K's head dim `head_dim`, V's and O's `dv` (the decode kernels take only
 * one); 0 for a config that cannot run. */
static uint64_t config_local_bytes(int32_t head_dim, int32_t dv, const flashcl_config *c)
{
    if (c && c->decode >= 3)
        return c->block_m < 1 || c->work_group_size < 32 ? 0
                                                          : decode_mma_bytes(head_dim, c->block_m, c->work_group_size / 32,
                                                                             c->decode == 4);
    if (c && c->decode)
        return c->block_m < 1 || c->threads_per_row < 1 || c->v_chunk < 1 || c->work_group_size < c->threads_per_row
                   ? 0
                   : decode_bytes(head_dim, c->block_m, c->threads_per_row, c->v_chunk, c->work_group_size, c->decode == 2);
    if (!c || head_dim < 1 || c->block_m < 1 || c->block_n < 1 || c->threads_per_row < 1 || c->d_chunk < 1 ||
        c->v_chunk < 1)
        return 0;
    if (c->mma >= 3)
        return c->block_m % 64 ? 0
                               : wgmma_bytes(head_dim, c->block_m, c->block_n, mma_stages(c), c->mma == 4,
                                             fcl_wgmma_producer(c));
    if (c->mma)
        return mma_bytes(head_dim, dv, c->block_m, c->block_n, mma_tiles_per_warp(c), mma_stages(c), c->mma == 2);
    return flash_floats(head_dim, dv, c->block_m, c->block_n, c->threads_per_row, c->d_chunk, c->v_chunk) *
           sizeof(float);
}

uint64_t flashcl_flash_local_mem_bytes_abi(const flashcl_abi *abi, int32_t head_dim, const flashcl_config *c)
{
    if (fcl_abi_guard(abi, "flashcl_flash_local_mem_bytes") != FLASHCL_SUCCESS)
        return 0;
    return config_local_bytes(head_dim, head_dim, c);
}

/* A config's local memory for a problem, with V's own head dim. */
static uint64_t problem_local_bytes(const flashcl_problem *p, const flashcl_config *c)
{
    return config_local_bytes(p->head_dim, fcl_head_dim_v(p), c);
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

/* The chooser proper, with explicit limits so that plans can shrink after the compiler reports more
 * local memory or a smaller work-group than the formula and the device promised. */
flashcl_status fcl_choose_flash(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget,
                                int reg_shift, size_t max_wg, flashcl_config *cfg)
{
    /* the register block: accumulators and scores per work-item, halved reg_shift times */
    const int32_t max_acc = FCL_MAX_ACC >> reg_shift > 4 ? FCL_MAX_ACC >> reg_shift : 4;
    const int32_t max_scores = FCL_MAX_SCORES >> reg_shift > 2 ? FCL_MAX_SCORES >> reg_shift : 2;
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p); /* Q/K's columns; V/O's (the output block) */
    if (max_wg > FCL_MAX_WG)
        max_wg = FCL_MAX_WG;
    const size_t multiple = pr->wg_multiple ? pr->wg_multiple : 1;

    /* Column groups (threads_per_row): each work-item holds head_dim_v/tpr output columns of its rows,
     * and each P value it loads from local memory feeds that many FMAs. Eight groups where the head
     * dim allows at least 4 columns each (one float4), else fewer: a row group then spans 8
     * neighbouring work-items, whose K and V loads fall in distinct banks. Eight beat sixteen on the
     * H200 at d=64 and d=128 (docs/NOTES.md): with sixteen, the key tile that fits beside a resident
     * Q gives each work-item a single key, and the Q*K^T loop does one FMA per local load. */
    /* A decode step (at most 16 rows, packed query heads included) has too few rows to fill a
     * work-group with row groups: up to 32 column groups instead, so that a work-group of 128 items
     * loads each K/V tile (on the H200, 4 packed rows: 999 GB/s with 32 groups and 64-key tiles
     * against 537 GB/s with 8 groups and 32-key tiles at 256 splits; docs/NOTES.md). */
    const int decode_rows = p->seq_q <= FCL_DECODE_MAX_QUERIES; /* rows of the packed view */
    int32_t tpr = 1;
    for (int32_t g = decode_rows ? 32 : 8; g >= 2; g /= 2)
        if (dv % g == 0 && dv / g >= 4) {
            tpr = g;
            break;
        }
    const int32_t cols = dv / tpr;
    /* Rows per work-item: 4 (each K value feeds 4 rows) while the output block stays in registers. */
    int32_t tm = 4;
    /* ... and whose score block still takes key tiles of 16 (4 keys per item, more with few column groups) */
    const int32_t tn_want = tpr >= 4 ? 4 : 16 / tpr;
    while (tm > 1 && (tm * cols > max_acc || tm * tn_want > max_scores))
        tm /= 2;

    /* Row groups: as many as the work-group allows (every K/V tile is reused by block_m rows), but no
     * more rows than the problem has unless a smaller group would leave a warp/wavefront partly
     * empty (a decode step of 1 to 16 rows). Keys per tile: 4 per work-item (a 4x4 score block: half
     * a local load per FMA), fewer where local memory is short. Q and K go through local memory in
     * chunks of the head dimension: all of it (Q loaded once) where it fits, else the largest divisor
     * that fits. Preference, from the H200's tuning runs (a resident Q was 1.1 to 1.3x faster than
     * any chunked tile): first a resident Q with a work-group of at least 128 items (or the device's
     * limit) and tiles of at least 16 keys; then the largest work-group, keys per tile, chunk. Whole
     * warps/wavefronts before partial ones. */
    const uint32_t rows_cap = next_pow2((uint32_t)p->seq_q);
    const uint32_t keys_cap = next_pow2((uint32_t)p->seq_kv);
    /* Chunks of the head dimension to try, largest first: all of it, then its divisors that are
     * multiples of 4 (float4 loads), at most 64. */
    int32_t chunks[20], n_chunks = 0;
    chunks[n_chunks++] = d;
    for (int32_t dc = d / 2 < 64 ? d / 2 : 64; dc >= 4 && n_chunks < 20; dc -= 4)
        if (d % dc == 0)
            chunks[n_chunks++] = dc;
    /* Keys per work-item: 4, or more where 4 would give tiles of fewer than 16 keys (small head
     * dims, few column groups: short tiles pay a barrier for little work), within the score budget. */
    int32_t tn_max = 4;
    while (tn_max > 1 && tm * tn_max > max_scores)
        tn_max /= 2;
    while (tn_max * tpr < 16 && tm * tn_max * 2 <= max_scores)
        tn_max *= 2;
    int32_t best_rg = 0, best_tn = 0, best_dc = 0, best_vc = 0, tmu = tm;
    const size_t good_wg = max_wg < 128 ? max_wg : 128;
    for (int pass = 0; pass < 3 && !best_rg; ++pass) {
        const int resident_only = pass == 0;
        for (int32_t rg = 64; rg >= 1 && !best_rg; rg /= 2) {
            const size_t wg = (size_t)rg * tpr;
            if (wg > max_wg || (pass < 2 && wg % multiple) || (resident_only && wg < good_wg))
                continue;
            int32_t t = tm;
            while (t > 1 && (uint32_t)(rg * t) > rows_cap)
                t /= 2; /* fewer rows per item before fewer items: a short query still fills the group */
            if (rg * t > FCL_MAX_ROWS)
                continue;
            if ((uint32_t)(rg * t) > rows_cap && rg > 1 && (size_t)(rg / 2) * tpr >= multiple)
                continue;
            for (int32_t tn = tn_max; tn >= 1 && !best_rg; tn /= 2) {
                const int32_t bn = tn * tpr;
                if (bn % 4 || (tn > 1 && (uint32_t)bn > keys_cap && bn > 16))
                    continue;
                if (resident_only && bn < 16 && (uint32_t)bn < keys_cap)
                    continue;
                for (int k = 0; k < (resident_only ? 1 : n_chunks); ++k) {
                    const int32_t dc = chunks[k];
                    const int32_t bm = rg * t;
                    /* GPUs: at most 16 float4 copies a work-item for each K chunk and V chunk: a small
                     * work-group (a decode step of one row: one warp) with a long key tile otherwise has
                     * its copies unrolled into hundreds of registers (tools/vendor_check.sh: d=192 over
                     * 128 keys, 64 copies a lane, spilled on gfx90a and gfx1030) */
                    const uint64_t copy_cap = pr->is_cpu ? UINT64_MAX : 64 * (uint64_t)wg;
                    if ((uint64_t)bn * (uint64_t)dc > copy_cap && (dc > 4 || bn > 4))
                        continue;
                    const uint64_t ldc = (uint64_t)dc + 4;
                    const uint64_t qk = (uint64_t)bn * ldc + (dc == d ? 0 : (uint64_t)bm * ldc);
                    const uint64_t room = qk > (uint64_t)bm * tpr ? qk : (uint64_t)bm * tpr;
                    const int32_t vc = choose_v_chunk(dv, bn, room < copy_cap ? room : copy_cap);
                    if (flash_floats(d, dv, bm, bn, tpr, dc, vc) * sizeof(float) <= budget) {
                        best_rg = rg;
                        best_tn = tn;
                        best_dc = dc;
                        best_vc = vc;
                        tmu = t;
                        break;
                    }
                }
            }
        }
    }
    if (!best_rg)
        return FLASHCL_UNSUPPORTED;

    memset(cfg, 0, sizeof *cfg);
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    cfg->block_m = best_rg * tmu;
    cfg->block_n = best_tn * tpr;
    cfg->threads_per_row = tpr;
    cfg->rows_per_item = tmu;
    cfg->d_chunk = best_dc;
    cfg->v_chunk = best_vc;
    cfg->work_group_size = best_rg * tpr;
    cfg->local_mem_bytes = problem_local_bytes(p, cfg);
    cfg->local_mem_budget = budget;
    fcl_strlcpy(cfg->kernel, "flash_fwd", sizeof cfg->kernel);
    fcl_strlcpy(cfg->source, "heuristic", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d items per row group hold %dx%d outputs and %dx%d scores each; Q/K %s of %d; limits %llu B, %zu items a group",
             (int)tpr, (int)tmu, (int)cols, (int)tmu, (int)best_tn,
             best_dc == d ? "whole (Q loaded once)" : "in column chunks", (int)best_dc,
             (unsigned long long)budget, max_wg);
    return FLASHCL_SUCCESS;
}

/* Whether a problem suits cl/flash_mma.cl; if not, why. */
static int mma_suits(const flashcl_problem *p, char *why, size_t n)
{
    const char *no = NULL;
    if (p->dtype == FLASHCL_DTYPE_F32)
        no = "fp32 storage (the matrix units take fp16 and bf16)";
    else if (fcl_kv_mixed(p))
        no = "K and V in another dtype than Q (problem.kv_dtype: the matrix units' operands share one)";
    else if (p->head_dim % 32 || p->head_dim > 256)
        no = "head_dim not a multiple of 32 up to 256";
    else if (fcl_head_dim_v(p) % 32 || fcl_head_dim_v(p) > 256)
        no = "head_dim_v not a multiple of 32 up to 256";
    else if (fcl_is_decode(p))
        no = "a decode step (16 queries or fewer: the portable kernel splits the keys and packs GQA heads)";
    else if (p->alibi || p->attn_mask || p->key_padding || p->softcap > 0.0f)
        no = "biases, masks or softcap";
    else if (p->varlen || p->kv_cache)
        no = "packed sequences or a KV cache";
    else if (p->kv_splits > 1)
        no = "forced key splits";
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* Whether a problem suits cl/flash_wgmma.cl (first version): what flash_mma takes, with head dims 64, 128
 * or 256, V's as Q's, 16-byte aligned rows and no attention sinks; if not, why. */
static int wgmma_suits(const flashcl_problem *p, char *why, size_t n)
{
    if (!mma_suits(p, why, n))
        return 0;
    const char *no = NULL;
    if (p->head_dim != 64 && p->head_dim != 128 && p->head_dim != 256)
        no = "head_dim other than 64, 128 or 256";
    else if (fcl_head_dim_v(p) != p->head_dim)
        no = "head_dim_v other than head_dim";
    else if (!fcl_rows_aligned(p))
        no = "rows not 16-byte aligned";
    else if (p->sinks)
        no = "attention sinks";
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* Whether a problem suits cl/flash_decode.cl; if not, why. */
static int decode_suits(const flashcl_problem *p, char *why, size_t n)
{
    const char *no = NULL;
    if (!fcl_is_decode(p))
        no = "not a decode step (more than 16 queries)";
    else if (p->attn_mask || p->varlen)
        no = "an additive mask or packed sequences (the decode kernel has neither)";
    else if (fcl_head_dim_v(p) != p->head_dim)
        no = "head_dim_v other than head_dim (the decode kernels' lanes span one head dim)";
    else if ((int64_t)p->seq_q * (p->heads_q / p->heads_kv) > 4096)
        no = "more than 4096 query rows per KV head";
    if (no)
        snprintf(why, n, "%s", no);
    return no == NULL;
}

/* Registers a work-item of cl/flash_decode.cl keeps: 8 elements of each row's query and output and of
 * each key's K and V, and a score per row and key. */
static int64_t decode_regs(int64_t rows, int64_t kt)
{
    return 8 * (2 * rows + 2 * kt) + rows * kt;
}

int64_t fcl_register_block(const flashcl_config *c, int32_t head_dim_v)
{
    if (c->decode == 1 || c->decode == 2)
        return decode_regs(c->block_m, c->v_chunk);
    const int64_t tpr = c->threads_per_row > 0 ? c->threads_per_row : 1;
    return (int64_t)c->rows_per_item * (head_dim_v / tpr + c->block_n / tpr);
}

/* Intel GPUs, and among them Xe-HPC (128 KiB of local memory: pvc): what IGC's register budget asks of
 * the chooser (tools/vendor_check.sh). */
static int intel_gpu(const flashcl_device_profile *pr)
{
    return pr->vendor == FLASHCL_VENDOR_INTEL && !pr->is_cpu;
}

static int intel_xe_hpc(const flashcl_device_profile *pr)
{
    return intel_gpu(pr) && pr->local_mem_size >= 128 * 1024;
}

/* Whether a decode step suits cl/flash_decode_mma.cl: fp16 or bf16, a head dim a multiple of 64. */
static int decode_mma_suits(const flashcl_problem *p)
{
    return (p->dtype == FLASHCL_DTYPE_F16 || p->dtype == FLASHCL_DTYPE_BF16) && !fcl_kv_mixed(p) &&
           p->head_dim % 64 == 0 && p->head_dim <= 256;
}

/* The matrix-unit decode kernel's shape: up to 8 of the KV head's packed rows a work-group, four warps
 * (fewer where the work-group limit says so), two 16-key tiles a warp and step up to head dim 128 and
 * one above (registers; on the H200 one tile measured 3-23% slower at d=128, four 4-33% slower:
 * docs/NOTES.md, decode-mma-1), more for quantized caches. Returns 1 with cfg set. */
static int choose_decode_mma(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                             flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !pr->matrix_units;
    const int64_t packed = (int64_t)p->seq_q * (p->heads_q / p->heads_kv);
    const int32_t rows = packed < 8 ? (int32_t)packed : 8;
    /* A quantized cache's lanes load 8 bytes where fp16's load 16: more tiles keep as many bytes in flight,
     * as registers allow (ptxas on the H200, docs/NOTES.md, decode-mma-5: int8 with 4 tiles spills and
     * measured 7% slower than 3; E4M3 with 4 tiles holds 252 registers and measured 10% faster than 3 where
     * sm_89's pair conversion takes the 16-bit halves, FP8_CVT in cl/flash_decode_mma.cl). */
    const int big = p->head_dim > 128;
    const int fp8_cvt = pr->vendor == FLASHCL_VENDOR_NVIDIA && pr->matrix_units && p->dtype == FLASHCL_DTYPE_F16 &&
                        pr->nv_cc_major * 10 + pr->nv_cc_minor >= 89; /* the kernel's FP8_CVT */
    const int32_t tiles = p->kv_format == FLASHCL_KV_INT8       ? (big ? 1 : 3)
                          : p->kv_format == FLASHCL_KV_FP8_E5M2 ? (big ? 2 : 4)
                          : p->kv_format == FLASHCL_KV_FP8_E4M3 ? (fp8_cvt ? (big ? 2 : 4) : (big ? 1 : 3))
                                                                : (big ? 1 : 2);
    for (int32_t warps = 4; warps >= 1; warps /= 2) {
        if ((size_t)(32 * warps) > ch->work_group || decode_mma_bytes(p->head_dim, rows, warps, emulated) > ch->local_mem)
            continue;
        memset(cfg, 0, sizeof *cfg);
        cfg->decode = emulated ? 4 : 3;
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

/* The decode kernels, where the path and the problem allow them: on matrix units (or forced by the mma
 * path) cl/flash_decode_mma.cl for fp16/bf16 steps with a head dim a multiple of 64; else
 * cl/flash_decode.cl: teams of head_dim/8 lanes (a power of two) per key, 128 work-items, up to 8 of the
 * KV head's packed query rows per work-group, 4 keys per team and step (2 with 8 rows: registers),
 * within the choice's limits. Returns 1 with cfg's shape set, or 0 with `why`. */
static int choose_decode(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                         flashcl_config *cfg, char *why, size_t why_len)
{
    char no[112];
    if (ch->portable_why || ch->path == FLASHCL_PATH_PORTABLE) {
        snprintf(why, why_len, "%s", ch->portable_why ? ch->portable_why : "portable: the path is forced");
        return 0;
    }
    if (!decode_suits(p, no, sizeof no)) {
        snprintf(why, why_len, "portable: %s", no);
        return 0;
    }
    if (ch->path == FLASHCL_PATH_MMA || (ch->path == FLASHCL_PATH_AUTO && pr->matrix_units)) {
        if (decode_mma_suits(p))
            return choose_decode_mma(pr, ch, p, cfg, why, why_len);
        if (ch->path == FLASHCL_PATH_MMA && !p->kv_format) {
            snprintf(why, why_len, "portable: the matrix-unit decode kernel needs fp16/bf16 and a head dim a multiple of 64");
            return 0;
        }
    }
    const int shuffles = pr->matrix_units; /* inline PTX shfl, proven by the matrix-unit test compile */
    /* Auto takes it only where it was measured faster than the portable kernel's decode path: on the
     * H200 (shuffles), from 2^19 key rows (batch x KV heads x keys) on: +8% to +41% there, 17-22% behind
     * below (batch 1 x 8 KV heads x 8192 or 32768 keys; docs/NOTES.md, decode-5). Elsewhere it is
     * not measured yet: forced by FLASHCL_PATH=decode. */
    const uint64_t key_rows = (uint64_t)p->batch * (uint64_t)p->heads_kv * (uint64_t)p->seq_kv;
    /* (a quantized cache has no other reader: the decode kernel wherever it runs) */
    if (ch->path != FLASHCL_PATH_DECODE && !p->kv_format && (!shuffles || key_rows < (1u << 19))) {
        snprintf(why, why_len, "portable: %s",
                 shuffles ? "a decode step of fewer than 2^19 key rows (the decode kernel measured slower there)"
                          : "the decode kernel is not measured faster on this device (FLASHCL_PATH=decode forces it)");
        return 0;
    }
    int32_t team = 1;
    while (team * 8 < p->head_dim)
        team *= 2;
    const int64_t packed = (int64_t)p->seq_q * (p->heads_q / p->heads_kv);
    int32_t rows = packed < 8 ? (int32_t)packed : 8;
    int32_t wg = 128;
    /* the shuffles name a whole warp's lanes: never fewer than 32 work-items with them */
    const int32_t wg_min = shuffles && team < 32 ? 32 : team;
    while ((size_t)wg > ch->work_group && wg > wg_min)
        wg /= 2;
    /* decode_regs at most 176, halved after a build that kept them in memory */
    const int32_t max_regs = 176 >> ch->reg_shift;
    while (rows > 1 && decode_regs(rows, 2) > max_regs)
        rows /= 2;
    for (;;) {
        int32_t kt = rows <= 4 ? 4 : 2;
        while (kt > 1 && decode_regs(rows, kt) > max_regs)
            kt /= 2;
        if ((size_t)wg <= ch->work_group && decode_bytes(p->head_dim, rows, team, kt, wg, shuffles) <= ch->local_mem) {
            memset(cfg, 0, sizeof *cfg);
            cfg->decode = shuffles ? 2 : 1;
            cfg->block_m = rows;
            cfg->threads_per_row = team;
            cfg->rows_per_item = rows;
            cfg->v_chunk = kt;
            cfg->block_n = wg / team * kt;
            cfg->d_chunk = p->head_dim;
            cfg->work_group_size = wg;
            snprintf(cfg->reason, sizeof cfg->reason,
                     "%d rows per work-group, teams of %d lanes (8 elements each), %d keys per team and step, "
                     "K/V straight to registers",
                     (int)rows, (int)team, (int)kt);
            snprintf(why, why_len, "decode kernel: K/V streamed to registers, %s",
                     shuffles ? "team sums by shuffles" : "team sums through local memory");
            return 1;
        }
        if (rows > 1)
            rows /= 2;
        else if (wg > wg_min)
            wg /= 2;
        else
            break;
    }
    snprintf(why, why_len, "portable: the decode kernel's smallest shape needs %llu B of local memory",
             (unsigned long long)decode_bytes(p->head_dim, 1, team, 4, team, shuffles));
    return 0;
}

/* The matrix-unit kernel, where the path, the device and the problem allow it: four warps of 16 query
 * rows (FlashAttention-2's partitioning), 64-key tiles, within the choice's local memory and
 * work-group limits. Returns 1 with cfg's tiles set, or 0 with `why` saying why the portable kernel
 * runs. */
/* Whether the path, the device and the problem let the matrix-unit kernel take it (its shape aside);
 * if not, why. */
static int mma_allowed(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p, char *why,
                       size_t why_len)
{
    char no[112];
    if (ch->portable_why) {
        snprintf(why, why_len, "%s", ch->portable_why);
        return 0;
    }
    if (ch->path == FLASHCL_PATH_PORTABLE) {
        snprintf(why, why_len, "portable: the path is forced to portable");
        return 0;
    }
    if (ch->path != FLASHCL_PATH_MMA && !pr->matrix_units) { /* auto (an unknown value counts as auto) */
        snprintf(why, why_len, "portable: %s",
                 pr->vendor == FLASHCL_VENDOR_NVIDIA && pr->nv_cc_major >= 8
                     ? "the matrix-unit kernel did not compile here (test compile at context creation)"
                     : "no matrix units reachable (inline PTX mma: NVIDIA, compute capability 8.0+)");
        return 0;
    }
    if (!mma_suits(p, no, sizeof no)) {
        snprintf(why, why_len, "portable: %s", no);
        return 0;
    }
    return 1;
}

static int choose_mma(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                      flashcl_config *cfg, char *why, size_t why_len)
{
    const int emulated = !pr->matrix_units;
    if (!mma_allowed(pr, ch, p, why, why_len))
        return 0;
    /* Four warps, fewer where the (compiled) kernel allows fewer work-items. The tiles, in the order
     * measured fastest on the H200 (docs/NOTES.md, prefill-3: fp16 N=4096, TFLOP/s), the first whose
     * local memory fits: up to d=64, 32 rows a warp x 64 keys (277 against 246 for 16 rows x 64);
     * up to d=128, 32 rows x 64 keys (two K/V stages for short key ranges, below); up to d=192, 32 rows
     * x 32 keys (d=128: 292
     * against 260; d=192: 235 against 216); above,
     * 16 rows x 64 keys (d=256: 241; 32 rows a warp spill: 119). Queries that fill less than one
     * 32-rows-a-warp block take 16 rows a warp. Then fewer keys, and then fewer warps, where local
     * memory is short. */
    int32_t warps = 4;
    while (warps > 1 && (size_t)(32 * warps) > ch->work_group)
        warps /= 2;
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p);
    int32_t mt = d <= 192 && p->seq_q > 16 * warps ? 2 : 1;
    int32_t bn = mt == 2 ? (d <= 64 ? 64 : 32) : d <= 128 || d > 192 ? 64 : 32;
    /* d 65-128: 64-key tiles (prefill-10/11: +3-7% over 32 keys), in two K/V stages for key ranges up to
     * 2048 (N=1024: 291.9 against 285.8 in one stage; N=4096 within 0.3%; N=16384 one stage 328.4
     * against 321.3); at d=64 a second stage cost 5-8% (prefill-7) */
    int32_t stages = 1;
    if (mt == 2 && d > 64 && d <= 128) {
        bn = 64;
        stages = p->seq_kv <= 2048 ? 2 : 1;
    }
    while (stages == 2 && mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem)
        stages = 1;
    if (mt == 2 && d > 64 && d <= 128 && mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem)
        bn = 32; /* (one stage of 32 keys) */
    if (mt == 2 && mma_bytes(d, dv, 32 * warps, bn, 2, stages, emulated) > ch->local_mem) {
        mt = 1; /* (a device whose budget is the reported 48 KiB: the 16-rows-a-warp tiles) */
        bn = d <= 128 ? 64 : 32;
    }
    while (mma_bytes(d, dv, 16 * warps * mt, bn, mt, stages, emulated) > ch->local_mem && (bn > 16 || warps > 1)) {
        if (bn > 16)
            bn /= 2;
        else
            warps /= 2; /* (d=256 in 48 KiB: 2 warps x 16 keys) */
    }
    const int32_t bm = 16 * warps * mt;
    if (mma_bytes(d, dv, bm, bn, mt, stages, emulated) > ch->local_mem || ch->work_group < 32) {
        snprintf(why, why_len, "portable: the matrix-unit tiles need %llu B of local memory and 32 work-items",
                 (unsigned long long)mma_bytes(d, dv, bm, bn, mt, stages, emulated));
        return 0;
    }
    memset(cfg, 0, sizeof *cfg);
    cfg->mma = emulated ? 2 : 1;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 4;     /* the lanes sharing a row of the m16n8 fragments */
    cfg->rows_per_item = 2 * mt; /* rows g and g + 8 of each m16 tile */
    cfg->d_chunk = p->head_dim;
    cfg->v_chunk = stages * bn;
    snprintf(cfg->reason, sizeof cfg->reason, "%d warps x %d query rows, Q %s, %d-key K/V tiles in local memory (ldmatrix)%s",
             (int)warps, (int)(16 * mt), mt > 1 || d > 128 ? "in local memory" : "in registers", (int)bn,
             stages == 2 ? ", two stages" : "");
    snprintf(why, why_len, "%s",
             emulated ? "matrix-unit kernel, emulated (forced on a device without matrix units: for testing)"
                      : "matrix units: mma.sync m16n8k16 through inline PTX, fp32 accumulation");
    return 1;
}

/* Whether auto takes the warpgroup kernel: on a device with sm_90a programs (matrix_units 2), for the head
 * dims where it measured faster than flash_mma on the H200 (docs/NOTES.md, wgmma-9). */
static int wgmma_auto(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p)
{
    return ch->path == FLASHCL_PATH_AUTO && pr->matrix_units >= 2 &&
           (p->head_dim == 64 || p->head_dim == 128 || p->head_dim == 256);
}

/* flash_wgmma's config (the chooser's and an override's): block_m / 64 warpgroups, BLOCK_N-key tiles in
 * `stages` K/V stages (v_chunk = stages * block_n: src/kernels.c's KV_STAGES), with the producer
 * warpgroup or not (the work-group's size); the other fields fixed (four lanes a row pair, two rows a
 * lane: the accumulator layout). */
static void wgmma_config(flashcl_config *cfg, int emulated, int32_t bm, int32_t bn, int32_t stages, int32_t head_dim,
                         int producer)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mma = emulated ? 4 : 3;
    cfg->block_m = bm;
    cfg->block_n = bn;
    cfg->threads_per_row = 4;
    cfg->rows_per_item = 2;
    cfg->d_chunk = head_dim;
    cfg->v_chunk = stages * bn;
    cfg->work_group_size = 2 * bm + (producer ? 128 : 0);
}

/* Whether the producer warpgroup can run a shape: the matrix units' program (the emulation cannot run its
 * spinning waits: PoCL runs a work-group's work-items one after another), two or three stages, two
 * consumer warpgroups (its register split, 40 and 232, is for 384 work-items), and the room. The chooser
 * takes it wherever it fits (docs/NOTES.md, wgmma-13 and -16: d=64 +19%, d=128 +5% and with the swizzled
 * layouts +38%, d=256 with the swizzled layouts +29%; at d=256 without them it lost 4%). */
static int wgmma_producer_fits(int emulated, int32_t d, int32_t bm, int32_t bn, int32_t stages, const fcl_choice *ch)
{
    return !emulated && stages >= 2 && bm == 128 && ch->work_group >= 384 &&
           wgmma_bytes(d, bm, bn, stages, 0, 1) <= ch->local_mem;
}

/* The warpgroup kernel (cl/flash_wgmma.cl) where the path asks for it (FLASHCL_PATH_WGMMA) or auto takes it
 * (wgmma_auto): on a device with sm_90a programs (matrix_units 2), emulated elsewhere (forced only). Two warpgroups (128
 * query rows) where the queries fill them and local memory allows, 128-key tiles up to d=128 and 64 at
 * d=256 (registers: O's 128 accumulators a work-item there); one work-group may take a compute unit's
 * whole local memory (the chooser's budget is for two). Returns 1 with cfg set, or 0 with the reason. */
static int choose_wgmma(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                        flashcl_config *cfg, char *why, size_t why_len)
{
    char no[112];
    if ((ch->path != FLASHCL_PATH_WGMMA && !wgmma_auto(pr, ch, p)) || ch->portable_why) {
        snprintf(why, why_len, "%s", ch->portable_why ? ch->portable_why : "the path is not wgmma");
        return 0;
    }
    if (!wgmma_suits(p, no, sizeof no)) {
        snprintf(why, why_len, "%s", no);
        return 0;
    }
    const int emulated = pr->matrix_units < 2;
    const uint64_t limit = ch->local_mem;
    int32_t wgs = p->seq_q > 64 && ch->work_group >= 256 ? 2 : 1, bn = p->head_dim > 128 ? 64 : 128;
    while (wgmma_bytes(p->head_dim, 64 * wgs, bn, 1, emulated, 0) > limit && (bn > 64 || wgs > 1)) {
        if (bn > 64)
            bn = 64;
        else
            wgs = 1;
    }
    if (wgmma_bytes(p->head_dim, 64 * wgs, bn, 1, emulated, 0) > limit || ch->work_group < (size_t)(128 * wgs)) {
        snprintf(why, why_len, "needs %llu B of local memory, 128 work-items",
                 (unsigned long long)wgmma_bytes(p->head_dim, 64 * wgs, bn, 1, emulated, 0));
        return 0;
    }
    /* two K/V stages (the pipelined loop: one tile's products beside the next one's softmax) where they fit */
    const int32_t stages = wgmma_bytes(p->head_dim, 64 * wgs, bn, 2, emulated, 0) <= limit ? 2 : 1;
    /* a producer warpgroup issuing the copies (per-stage mbarriers) where it can run */
    const int producer = wgmma_producer_fits(emulated, p->head_dim, 64 * wgs, bn, stages, ch);
    wgmma_config(cfg, emulated, 64 * wgs, bn, stages, p->head_dim, producer);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d warpgroups x 64 query rows%s, Q and %s%d-key K/V tiles in local memory (wgmma descriptors)", (int)wgs,
             producer ? " and a producer warpgroup" : "", stages == 2 ? "two stages of " : "", (int)bn);
    snprintf(why, why_len, "%s",
             emulated ? "warpgroup kernel, emulated (FLASHCL_PATH=wgmma on a device without sm_90a programs)"
                      : "warpgroup MMA: wgmma.mma_async through PTX finished for sm_90a, fp32 accumulation");
    return 1;
}

/* Where FLASHCL_PATH_WGMMA was asked for and another kernel runs: why not, before that kernel's reason. */
static flashcl_status note_not_wgmma(flashcl_config *c, const char *why_not)
{
    if (why_not[0]) { /* (pieces copied with truncation: the reason field is short) */
        char both[sizeof c->path_reason];
        const char *parts[4] = {"not wgmma (", why_not, "); ", c->path_reason};
        size_t n = 0;
        both[0] = '\0';
        for (int i = 0; i < 4 && n + 1 < sizeof both; ++i) {
            fcl_strlcpy(both + n, parts[i], sizeof both - n);
            n += strlen(both + n);
        }
        fcl_strlcpy(c->path_reason, both, sizeof c->path_reason);
    }
    return FLASHCL_SUCCESS;
}

int32_t fcl_gqa_pack(const flashcl_problem *p)
{
    /* A decode step has too few query rows to fill a work-group; the query heads that read the same
     * KV head fill it instead, and K/V come from memory once for all of them (FlashAttention packs
     * the same way for seqlen_q == 1). */
    const int32_t group = p->heads_q / p->heads_kv;
    /* At most 4096 packed rows: past that the heads fill a device anyway (and seq_q * group stays an
     * int; fuzz_problem found 8 x 1.5e9 heads). */
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

int32_t fcl_choose_splits(const flashcl_device_profile *pr, const flashcl_problem *p, const flashcl_config *cfg)
{
    if (p->kv_splits > 0)
        return p->kv_splits;
    /* Split the keys only where the direct grid leaves compute units idle. Prefill: at least two
     * work-groups per compute unit keep each busy while another waits at a barrier, and each split
     * keeps at least four key tiles, so that its merge costs less than the keys it takes over. A
     * decode step only streams K/V, and the memory system needs many loads in flight: 32 work-groups
     * per compute unit, splits of at least two tiles (on the H200, batch 1, 131072 keys: 8 groups x 33
     * splits 150 GB/s, x 512 splits 633 GB/s; docs/NOTES.md). At most 1024. */
    const uint64_t pack = cfg->gqa_pack > 1 ? (uint64_t)cfg->gqa_pack : 1;
    const uint64_t blocks = ((uint64_t)p->seq_q * pack + (uint64_t)cfg->block_m - 1) / (uint64_t)cfg->block_m;
    const uint64_t groups = blocks * (uint64_t)p->batch * (uint64_t)p->heads_q / pack;
    const int decode = fcl_is_decode(p);
    /* The matrix-unit decode kernel keeps a warp's 32 keys of K and V in flight without a barrier, so one
     * wave of two work-groups per compute unit is enough, and a partial second wave costs: on the H200
     * (d=128: 236 registers, two work-groups per SM) batch 8 x 8 KV heads ran 4499 GB/s with 4 splits
     * (256 work-groups), 4489 with 8 (two waves), 3389 with 5 (320: 1.2 waves); batch 1 ran fastest
     * with 32-33 splits (docs/NOTES.md, decode-mma-1 and -2). So as many splits as fill that wave,
     * never past it, each of at least 4 steps. */
    const int mma_decode = cfg->decode >= 3;
    const uint64_t cus = pr->compute_units ? pr->compute_units : 1;
    if (mma_decode) {
        uint64_t splits = 2u * cus / groups;
        const uint64_t by_keys = (uint64_t)p->seq_kv / (4u * (uint64_t)cfg->block_n);
        if (splits > by_keys)
            splits = by_keys;
        return splits < 1 ? 1 : splits > 1024 ? 1024 : (int32_t)splits;
    }
    const uint64_t want = (decode ? 32u : 2u) * cus;
    if (groups >= want)
        return 1;
    uint64_t splits = (want + groups - 1) / groups;
    const uint64_t per_split = decode ? 2u : 4u;
    const uint64_t by_keys = (uint64_t)p->seq_kv / (per_split * (uint64_t)cfg->block_n);
    if (splits > by_keys)
        splits = by_keys;
    if (splits > 1024)
        splits = 1024;
    return splits < 1 ? 1 : (int32_t)splits;
}

/* Output columns the naive kernels hold at once: on Intel GPUs 32, 16 on Xe-HPC (128 KiB of local memory:
 * pvc, compiled at 32 lanes), where IGC kept a head_dim-long array in scratch or private memory
 * (tools/vendor_check.sh: tgllp, acm-g10, pvc at d=128); elsewhere all of them (0). */
int32_t fcl_naive_chunk(const flashcl_device_profile *pr)
{
    return !intel_gpu(pr) ? 0 : intel_xe_hpc(pr) ? 16 : 32;
}

/* The naive kernel uses no local memory; one row per work-item, work-groups of one warp/wavefront
 * width (at least 32, at most what the device allows). */
static void choose_naive(const flashcl_device_profile *pr, flashcl_config *cfg)
{
    size_t wg = pr->wg_multiple > 32 ? pr->wg_multiple : 32;
    while (wg > pr->max_work_group_size && wg > 1)
        wg /= 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->algorithm = FLASHCL_ALGO_NAIVE;
    cfg->block_m = 1;
    cfg->block_n = 1;
    cfg->threads_per_row = 1;
    cfg->rows_per_item = 1;
    cfg->kv_splits = 1;
    cfg->gqa_pack = 1;
    cfg->work_group_size = (int32_t)wg;
    cfg->local_mem_budget = fcl_local_mem_budget(pr, 0);
    cfg->d_chunk = fcl_naive_chunk(pr);
    fcl_strlcpy(cfg->kernel, "naive_fwd", sizeof cfg->kernel);
    fcl_strlcpy(cfg->source, "fixed", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason, "one row per work-item, work-groups of %zu", wg);
}

/* Whether the portable kernel's tiles in cfg (block_m, block_n, threads_per_row, rows_per_item,
 * d_chunk, v_chunk: from a database entry, an override or the heuristic) suit the problem and fit the
 * limits; if not, why. */
static int portable_tiles_fit(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget,
                              size_t max_wg, const flashcl_config *cfg, char *why, size_t why_len)
{
    const int32_t d = p->head_dim, dv = fcl_head_dim_v(p), bm = cfg->block_m, bn = cfg->block_n,
                  tpr = cfg->threads_per_row;
    const int32_t tm = cfg->rows_per_item, dc = cfg->d_chunk, vc = cfg->v_chunk;
    if (bm < 1 || bn < 1 || tpr < 1 || tm < 1 || dc < 1 || vc < 1 || bm > 1024 || bn > 1024 || tpr > 1024 ||
        tm > 64) {
        snprintf(why, why_len,
                 "block_m %d, block_n %d, threads_per_row %d must be 1 to 1024, rows_per_item %d 1 to 64, "
                 "d_chunk %d and v_chunk %d positive",
                 bm, bn, tpr, tm, dc, vc);
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
    const uint64_t bytes = problem_local_bytes(p, cfg);
    if (bytes > budget) {
        snprintf(why, why_len, "%llu B of local memory exceed the budget %llu B", (unsigned long long)bytes,
                 (unsigned long long)budget);
        return 0;
    }
    return 1;
}

/*
 * Every flash configuration goes through here, wherever its tiles came from (the heuristic, the
 * matrix-unit chooser, the tuning database, an override, a shrink after compiling): the tiles are
 * checked against the problem and the limits, the derived fields set (work-group size, local memory,
 * the kernel, from the one table src/kernels.c), the GQA packing and the key splits chosen, and the
 * source, reason (NULL: the chooser's own) and path reason written. Returns 0 with `why` when the
 * tiles do not fit.
 */
static int finish_flash(const flashcl_device_profile *pr, const flashcl_problem *p, const fcl_choice *ch,
                        flashcl_config *cfg, const char *source, const char *reason, const char *path_reason,
                        char *why, size_t why_len)
{
    if (!cfg->mma && !cfg->decode && !portable_tiles_fit(pr, p, ch->local_mem, ch->work_group, cfg, why, why_len))
        return 0;
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    if (!cfg->decode) /* the decode kernel's work-group is its own choice */
        cfg->work_group_size = cfg->mma >= 3 ? cfg->work_group_size /* (flash_wgmma's: its wgmma_config) */
                               : cfg->mma    ? cfg->block_m * 4 / cfg->rows_per_item /* 32 lanes per 16 or 32 rows */
                                             : cfg->block_m / cfg->rows_per_item * cfg->threads_per_row;
    cfg->local_mem_bytes = problem_local_bytes(p, cfg);
    /* Intel's Xe-HPC GPUs (128 KiB of local memory: pvc): 16 lanes a sub-group for the register-blocked
     * kernels; IGC compiles them at 32 lanes otherwise, with half the registers a lane, and keeps the
     * block in scratch (tools/vendor_check.sh: every pvc flash program from 8-16 KiB of scratch per thread
     * to none). Not on tgllp/acm-g10 (64 KiB), which IGC compiles at 16 lanes anyway and where the request
     * measured worse there (4-8 KiB of scratch where none without it). */
    cfg->sub_group = intel_xe_hpc(pr) && !cfg->mma && cfg->decode < 3 ? 16 : 0;
    cfg->local_mem_budget = ch->local_mem;
    fcl_strlcpy(cfg->kernel, fcl_kernel_def_of(fcl_config_kernel(cfg))->entry, sizeof cfg->kernel);
    /* the decode kernel packs every query head of a KV head into its rows (its grid: row chunks x
     * (batch, KV head, split)) */
    cfg->gqa_pack = cfg->decode ? p->heads_q / p->heads_kv : cfg->mma ? 1 : fcl_gqa_pack(p);
    cfg->kv_splits = cfg->mma ? 1 : fcl_choose_splits(pr, p, cfg);
    fcl_strlcpy(cfg->source, source, sizeof cfg->source);
    if (reason)
        fcl_strlcpy(cfg->reason, reason, sizeof cfg->reason);
    fcl_strlcpy(cfg->path_reason, path_reason, sizeof cfg->path_reason);
    return 1;
}

void fcl_choice_of(const flashcl_device_profile *pr, flashcl_path path, uint64_t local_mem_limit,
                   const flashcl_tuning_db *db, fcl_choice *ch)
{
    *ch = (fcl_choice){.path = path, .db = db, .local_mem = fcl_local_mem_budget(pr, local_mem_limit),
                       .local_mem_max = fcl_local_mem_max(pr, local_mem_limit), .work_group = pr->max_work_group_size};
    /* Intel GPUs: IGC compiles these kernels at SIMD16 or SIMD32, where a work-item has 64 to 128 registers
     * (128 GRFs of 32 bytes over 16 or 32 lanes); when its unrolled compile spills it retries without
     * unrolling and keeps the register arrays in memory (tools/vendor_check.sh, docs/vendor-checks/: IGC
     * 1.0.12504, tgllp and acm-g10: every flash program with scratch or private memory at the default
     * register block, none with a quarter of it; pvc (SIMD32) still spills in prefill). So a quarter. */
    if (intel_gpu(pr))
        ch->reg_shift = 2;
}

flashcl_status fcl_env_bytes(flashcl_context *ctx, const char *who, const char *name, uint64_t *out)
{
    static const struct {
        const char *suffix;
        int shift;
    } units[] = {{"", 0},     {"K", 10},  {"k", 10},    {"KB", 10}, {"KiB", 10}, {"M", 20},
                 {"MB", 20},  {"MiB", 20}, {"G", 30},   {"GB", 30}, {"GiB", 30}};
    const char *s = getenv(name);
    *out = 0;
    if (!s || !*s)
        return FLASHCL_SUCCESS;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    int shift = -1;
    for (size_t u = 0; u < sizeof units / sizeof *units && shift < 0; ++u)
        if (!strcmp(end, units[u].suffix))
            shift = units[u].shift;
    if (end == s || *s < '0' || *s > '9' || errno || shift < 0 || v > (UINT64_MAX >> shift))
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                        "%s: %s=\"%.40s\": a byte count, optionally with K, M or G (binary: 48K, 48KiB, 2M)", who,
                        name, s);
    *out = (uint64_t)v << shift;
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_resolve_policy(const char *who, int path, uint64_t local_mem_limit, flashcl_path *path_out,
                                  uint64_t *limit_out)
{
    *path_out = FLASHCL_PATH_AUTO;
    *limit_out = 0;
    if (path >= 0) {
        if (path > FLASHCL_PATH_WGMMA)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s.path = %d is not a flashcl_path", who, path);
        *path_out = (flashcl_path)path;
    } else {
        const char *env = getenv("FLASHCL_PATH");
        if (env && *env && flashcl_path_parse(env, path_out) != FLASHCL_SUCCESS)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "%s: FLASHCL_PATH=\"%.40s\": use auto, portable, mma, decode or wgmma",
                            who, env);
    }
    if (local_mem_limit) {
        *limit_out = local_mem_limit;
        return FLASHCL_SUCCESS;
    }
    return fcl_env_bytes(NULL, who, "FLASHCL_LOCAL_MEM_LIMIT", limit_out);
}

flashcl_status flashcl_policy_default_abi(const flashcl_abi *abi, flashcl_policy *policy)
{
    flashcl_status st = fcl_abi_guard(abi, "flashcl_policy_default");
    if (st != FLASHCL_SUCCESS)
        return st;
    if (!policy)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_policy_default: policy is NULL");
    *policy = (flashcl_policy){.path = -1};
    return FLASHCL_SUCCESS;
}

static void choose_standard(const flashcl_problem *p, flashcl_config *config)
{
    memset(config, 0, sizeof *config);
    config->algorithm = FLASHCL_ALGO_STANDARD;
    config->block_m = 64; /* the tile validation samples rows from */
    config->block_n = p->seq_kv;
    config->threads_per_row = 1;
    config->rows_per_item = 1;
    config->kv_splits = 1;
    config->gqa_pack = 1;
    config->work_group_size = 256;
    fcl_strlcpy(config->kernel, "standard", sizeof config->kernel);
    fcl_strlcpy(config->source, "fixed", sizeof config->source);
    snprintf(config->reason, sizeof config->reason,
             "two batched CLBlast SGEMMs around a row softmax, the score matrix in device memory");
}

/* The choice with all the local memory one work-group may take (local_mem_max), for overrides and
 * flash_wgmma: the chooser's own budget (two work-groups a compute unit) is its preference, not a limit. */
static fcl_choice whole_work_group(const fcl_choice *ch)
{
    fcl_choice whole = *ch;
    if (whole.local_mem_max > whole.local_mem)
        whole.local_mem = whole.local_mem_max;
    return whole;
}

flashcl_status fcl_choose(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                          const flashcl_problem *p, flashcl_algorithm algorithm, flashcl_config *config)
{
    resolved_layout layout;
    flashcl_status st = fcl_check_problem(ctx, p, &layout);
    if (st != FLASHCL_SUCCESS)
        return st;
    if (algorithm == FLASHCL_ALGO_NAIVE) {
        choose_naive(pr, config);
        return FLASHCL_SUCCESS;
    }
    if (algorithm == FLASHCL_ALGO_STANDARD) {
        choose_standard(p, config);
        return FLASHCL_SUCCESS;
    }
    validate_or_return(ctx, algorithm == FLASHCL_ALGO_FLASH, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_choose_config: algorithm = %d is not a flashcl_algorithm", (int)algorithm);
    char why[160], path_reason[sizeof config->path_reason];
    flashcl_config c;
    if (p->kv_format && (ch->override || ch->path == FLASHCL_PATH_PORTABLE || ch->portable_why))
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "problem.kv_format = %s: only the decode kernels read a quantized cache, and %s",
                        flashcl_kv_format_name((flashcl_kv_format)p->kv_format),
                        ch->override ? "the context has an override config (the portable kernel's tiles)"
                        : ch->portable_why ? ch->portable_why
                                           : "the path is portable");
    if (ch->override) { /* the portable kernel's tiles, or with mma set the matrix-unit kernel's */
        /* An override may take all the local memory one work-group can have: the budget's two
         * work-groups a compute unit are the chooser's preference, not the device's limit. */
        const fcl_choice whole = whole_work_group(ch);
        ch = &whole;
        c = *ch->override;
        c.decode = 0; /* never the decode kernels */
        validate_or_return(ctx, c.mma >= 0 && c.mma <= 4, FLASHCL_INVALID_ARGUMENT,
                           "the context's override config: mma = %d; 0 (the portable kernel's tiles), 1 or 2 "
                           "(flash_mma's), 3 or 4 (flash_wgmma's)", (int)c.mma);
        if (c.mma >= 3) { /* flash_wgmma: 64 or 128 rows, 64- or 128-key tiles, one to three K/V stages */
            char no[112];
            validate_or_return(ctx, wgmma_suits(p, no, sizeof no), FLASHCL_INVALID_ARGUMENT,
                               "the context's override config asks for flash_wgmma, which does not take this "
                               "problem: %s", no);
            const int emulated = pr->matrix_units < 2;
            const int32_t stages = mma_stages(&c);
            validate_or_return(ctx,
                               (c.block_m == 64 || c.block_m == 128) && (c.block_n == 64 || c.block_n == 128) &&
                                   (size_t)(2 * c.block_m) <= ch->work_group,
                               FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: flash_wgmma takes block_m 64 or 128 and block_n 64 or "
                               "128 (got %d, %d), and 2 x block_m work-items (at most %zu)",
                               (int)c.block_m, (int)c.block_n, ch->work_group);
            /* the producer warpgroup: asked for by a work-group of 2 x block_m + 128, refused by 2 x block_m,
             * as the chooser would take it by 0 */
            const int32_t bm = c.block_m, bn = c.block_n, wg = c.work_group_size;
            const int producer_fits = wgmma_producer_fits(emulated, p->head_dim, bm, bn, stages, ch);
            validate_or_return(ctx, wg == 0 || wg == 2 * bm || (wg == 2 * bm + 128 && producer_fits),
                               FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: flash_wgmma's work_group_size is 0 (the chooser's "
                               "choice), 2 x block_m (%d) or, with the producer warpgroup, 2 x block_m + 128 (%d), "
                               "which needs sm_90a programs, block_m 128, two or three K/V stages, 384 work-items "
                               "and room for four mbarriers a stage (got %d)",
                               (int)(2 * bm), (int)(2 * bm + 128), (int)wg);
            const int producer = wg == 0 ? producer_fits : wg == 2 * bm + 128;
            const uint64_t bytes = wgmma_bytes(p->head_dim, bm, bn, stages, emulated, producer);
            validate_or_return(ctx, bytes <= ch->local_mem, FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: flash_wgmma's tiles %dx%d need %llu B of local memory, "
                               "the limit is %llu B", (int)c.block_m, (int)c.block_n, (unsigned long long)bytes,
                               (unsigned long long)ch->local_mem);
            wgmma_config(&c, emulated, bm, bn, stages, p->head_dim, producer);
            snprintf(c.reason, sizeof c.reason, "%d warpgroups x 64 rows%s, %d-key tiles%s: set by flashcl_context_override_config",
                     (int)(bm / 64), producer ? " and a producer" : "", (int)bn,
                     stages == 3 ? " in three stages" : stages == 2 ? " in two stages" : "");
            validate_or_return(ctx,
                               finish_flash(pr, p, ch, &c, "override", NULL,
                                            emulated ? "warpgroup kernel, emulated: tiles set by flashcl_context_override_config"
                                                     : "warpgroup MMA (sm_90a): tiles set by flashcl_context_override_config",
                                            why, sizeof why),
                               FLASHCL_INVALID_ARGUMENT, "the context's override config does not fit this problem: %s",
                               why);
            *config = c;
            return FLASHCL_SUCCESS;
        }
        if (c.mma) {
            validate_or_return(ctx, mma_allowed(pr, ch, p, path_reason, sizeof path_reason), FLASHCL_INVALID_ARGUMENT,
                               "the context's override config asks for the matrix-unit kernel, which does not take "
                               "this problem: %s", path_reason);
            const int emulated = !pr->matrix_units;
            /* rows_per_item 2 (each lane rows g and g+8 of one m16 tile a warp; 0 reads as 2) or 4 (two m16
             * tiles a warp) */
            const int32_t mt = mma_tiles_per_warp(&c);
            validate_or_return(ctx, c.rows_per_item == 0 || c.rows_per_item == 2 || c.rows_per_item == 4,
                               FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: the matrix-unit kernel takes rows_per_item 2 (one "
                               "m16 tile a warp) or 4 (two), got %d", (int)c.rows_per_item);
            validate_or_return(ctx,
                               c.block_m >= 16 * mt && c.block_m <= 128 && c.block_m % (16 * mt) == 0 &&
                                   c.block_n >= 16 && c.block_n <= 256 && c.block_n % 16 == 0 &&
                                   (size_t)(2 * c.block_m / mt) <= ch->work_group,
                               FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: the matrix-unit kernel takes block_m 16 to 128 (a "
                               "multiple of %d) and block_n 16 to 256, multiples of 16 (got %d, %d), and %d x block_m "
                               "work-items (at most %zu)",
                               (int)(16 * mt), (int)c.block_m, (int)c.block_n, (int)(2 / mt), ch->work_group);
            /* v_chunk 2 * block_n: K and V in two stages (cl/flash_mma.cl's KV_STAGES); anything else one */
            const int32_t stages = mma_stages(&c);
            const uint64_t bytes = mma_bytes(p->head_dim, fcl_head_dim_v(p), c.block_m, c.block_n, mt, stages, emulated);
            validate_or_return(ctx, bytes <= ch->local_mem, FLASHCL_INVALID_ARGUMENT,
                               "the context's override config: the matrix-unit tiles %dx%d need %llu B of local "
                               "memory, the budget is %llu B", (int)c.block_m, (int)c.block_n,
                               (unsigned long long)bytes, (unsigned long long)ch->local_mem);
            const int32_t bm = c.block_m, bn = c.block_n;
            memset(&c, 0, sizeof c);
            c.mma = emulated ? 2 : 1;
            c.block_m = bm;
            c.block_n = bn;
            c.threads_per_row = 4;
            c.d_chunk = p->head_dim;
            c.v_chunk = stages * bn;
            c.rows_per_item = 2 * mt;
            snprintf(c.reason, sizeof c.reason, "%d warps of %d rows, %d-key tiles%s: set by flashcl_context_override_config",
                     (int)(bm / (16 * mt)), (int)(16 * mt), (int)bn, stages == 2 ? " in two stages" : "");
            validate_or_return(ctx,
                               finish_flash(pr, p, ch, &c, "override", NULL,
                                            "matrix units: tiles set by flashcl_context_override_config", why,
                                            sizeof why),
                               FLASHCL_INVALID_ARGUMENT, "the context's override config does not fit this problem: %s",
                               why);
            *config = c;
            return FLASHCL_SUCCESS;
        }
        validate_or_return(ctx,
                           finish_flash(pr, p, ch, &c, "override", "set by flashcl_context_override_config",
                                        "portable: tiles set by flashcl_context_override_config", why, sizeof why),
                           FLASHCL_INVALID_ARGUMENT, "the context's override config does not fit this problem: %s", why);
        *config = c;
        return FLASHCL_SUCCESS;
    }
    const char *source = ch->shrunk ? "heuristic (shrunk)" : "heuristic";
    if (choose_decode(pr, ch, p, &c, path_reason, sizeof path_reason) &&
        finish_flash(pr, p, ch, &c, source, ch->shrunk, path_reason, why, sizeof why)) {
        *config = c;
        return FLASHCL_SUCCESS;
    }
    if (p->kv_format)
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "problem.kv_format = %s: only the decode kernels read a quantized cache, and none fits (%s)",
                        flashcl_kv_format_name((flashcl_kv_format)p->kv_format), path_reason);
    /* (decode steps never suit the matrix-unit kernels: the decode chooser's reason stands for them) */
    char wgmma_why[112] = "";
    if (!fcl_is_decode(p) && (ch->path == FLASHCL_PATH_WGMMA || wgmma_auto(pr, ch, p))) {
        const fcl_choice whole = whole_work_group(ch);
        if (choose_wgmma(pr, &whole, p, &c, path_reason, sizeof path_reason) &&
            finish_flash(pr, p, &whole, &c, source, ch->shrunk, path_reason, why, sizeof why)) {
            *config = c;
            return FLASHCL_SUCCESS;
        }
        if (ch->path == FLASHCL_PATH_WGMMA) /* (asked for: why not, before the kernel taken instead) */
            snprintf(wgmma_why, sizeof wgmma_why, "%.80s", path_reason);
    }
    if (!fcl_is_decode(p) && ch->path != FLASHCL_PATH_DECODE &&
        choose_mma(pr, ch, p, &c, path_reason, sizeof path_reason) &&
        finish_flash(pr, p, ch, &c, source, ch->shrunk, path_reason, why, sizeof why)) {
        *config = c;
        return note_not_wgmma(config, wgmma_why);
    }
    char db_source[48], detail[160];
    if (!ch->shrunk && fcl_tuning_lookup(ch->db, pr, p, &c, db_source, sizeof db_source, detail, sizeof detail)) {
        /* A database entry is used only where it fits this problem and these limits (a user may cap
         * local memory below what the entry was tuned with); otherwise the heuristic. */
        c.mma = 0;
        if (finish_flash(pr, p, ch, &c, db_source, detail, path_reason, why, sizeof why)) {
            *config = c;
            return note_not_wgmma(config, wgmma_why);
        }
    }
    flashcl_problem view; /* the rows the tiles see: packed query heads for a GQA decode step */
    fcl_packed_view(p, fcl_gqa_pack(p), &view);
    if (fcl_choose_flash(pr, &view, ch->local_mem, ch->reg_shift, ch->work_group, &c) != FLASHCL_SUCCESS ||
        !finish_flash(pr, p, ch, &c, source, ch->shrunk, path_reason, why, sizeof why))
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "no tile configuration of flash_fwd for head_dim %d fits %llu B of local memory and %zu "
                        "work-items (%s)",
                        (int)p->head_dim, (unsigned long long)ch->local_mem, ch->work_group, pr->name);
    *config = c;
    return note_not_wgmma(config, wgmma_why);
}

flashcl_status flashcl_choose_config_policy_abi(const flashcl_abi *abi, const flashcl_device_profile *profile, const flashcl_policy *policy,
                                            const flashcl_problem *problem, flashcl_algorithm algorithm,
                                            flashcl_config *config)
{
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_choose_config_policy");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    if (!profile || !problem || !config)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_choose_config: %s is NULL",
                        !profile ? "profile" : !problem ? "problem" : "config");
    flashcl_policy defaults;
    flashcl_policy_default(&defaults);
    if (!policy)
        policy = &defaults;
    flashcl_path path;
    uint64_t limit;
    flashcl_status st = fcl_resolve_policy("flashcl_choose_config: policy", policy->path, policy->local_mem_limit,
                                           &path, &limit);
    if (st != FLASHCL_SUCCESS)
        return st;
    fcl_choice ch;
    fcl_choice_of(profile, path, limit, policy->tuning_db, &ch);
    flashcl_problem sides;
    return fcl_choose(NULL, profile, &ch, fcl_problem_sides(problem, &sides), algorithm, config);
}

const char *flashcl_algorithm_name(flashcl_algorithm algorithm)
{
    switch (algorithm) {
    case FLASHCL_ALGO_FLASH:
        return "flash";
    case FLASHCL_ALGO_NAIVE:
        return "naive";
    case FLASHCL_ALGO_STANDARD:
        return "standard";
    }
    return "?";
}

const char *flashcl_path_name(flashcl_path path)
{
    return path == FLASHCL_PATH_AUTO       ? "auto"
           : path == FLASHCL_PATH_PORTABLE ? "portable"
           : path == FLASHCL_PATH_MMA      ? "mma"
           : path == FLASHCL_PATH_DECODE   ? "decode"
           : path == FLASHCL_PATH_WGMMA    ? "wgmma"
                                           : "?";
}

flashcl_status flashcl_path_parse(const char *name, flashcl_path *path)
{
    if (!name || !path)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_path_parse: %s is NULL", !name ? "name" : "path");
    for (int i = FLASHCL_PATH_AUTO; i <= FLASHCL_PATH_WGMMA; ++i)
        if (!strcmp(name, flashcl_path_name((flashcl_path)i))) {
            *path = (flashcl_path)i;
            return FLASHCL_SUCCESS;
        }
    return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_path_parse: \"%.40s\" is not auto, portable, mma, decode or wgmma", name);
}

flashcl_status flashcl_choose_config_abi(const flashcl_abi *abi, const flashcl_device_profile *profile, const flashcl_problem *problem,
                                     flashcl_algorithm algorithm, flashcl_config *config)
{
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_choose_config");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    return flashcl_choose_config_policy(profile, NULL, problem, algorithm, config);
}
