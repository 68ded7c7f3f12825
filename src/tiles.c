/*
 * tiles.c: chooses a kernel configuration from (device profile, problem) alone, so that plans, the
 * command-line tool and tests with fake profiles all see the same choice. Each kernel's local memory
 * has an exact formula here, mirrored by the layout comment at the top of its .cl file.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Work-items per work-group never exceed this, whatever the device allows: past 256 the flash kernel
 * gains no reuse (its K/V reuse comes from BLOCK_M) and loses occupancy and barrier speed. */
#define FCL_MAX_WG 256
/* Output columns a work-item keeps in registers: 32 floats of accumulator plus BLOCK_N/TPR scores
 * stay within the 64 to 128 registers a GPU thread can have at good occupancy. */
#define FCL_MAX_COLS_PER_ITEM 32

uint64_t flashcl_flash_local_mem_bytes(int32_t head_dim, int32_t block_m, int32_t block_n, int32_t tpr,
                                       int32_t kv_shared)
{
    const uint64_t d = (uint64_t)head_dim, bm = (uint64_t)block_m, bn = (uint64_t)block_n;
    const uint64_t floats = bm * (d + 1) + bn * (d + 1) + (kv_shared ? 0 : bn * d) + bm * (bn + 1) +
                            bm * (uint64_t)tpr;
    return floats * sizeof(float);
}

static uint32_t next_pow2(uint32_t x)
{
    uint32_t p = 1;
    while (p < x && p < (1u << 30))
        p <<= 1;
    return p;
}

/* The chooser proper, with explicit limits so that plans can shrink after the compiler reports more
 * local memory or a smaller work-group than the formula and the device promised. */
flashcl_status fcl_choose_flash(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget,
                                size_t max_wg, flashcl_config *cfg)
{
    const int32_t d = p->head_dim;
    if (max_wg > FCL_MAX_WG)
        max_wg = FCL_MAX_WG;
    const size_t multiple = pr->wg_multiple ? pr->wg_multiple : 1;

    /* Threads per query row: the fewest that keep each work-item's accumulator within its register
     * share (d / tpr <= 32), so d=64 gets 2, d=128 gets 4, d=256 gets 8. */
    int32_t tpr = 1;
    while (d / tpr > FCL_MAX_COLS_PER_ITEM)
        tpr *= 2;

    /* Query rows: as many as the work-group and local memory allow (each K/V tile loaded is reused
     * by block_m rows), but no more than the problem has (a decode step of 1 to 16 rows would
     * otherwise compute empty rows). Keys per tile: as many as fit next to them, at least 16 when
     * possible (fewer makes the three barriers per tile dominate), never more than 64 (the scores a
     * work-item holds, block_n / tpr, are registers too). */
    const uint32_t rows_cap = next_pow2((uint32_t)p->seq_q);
    const uint32_t keys_cap = next_pow2((uint32_t)p->seq_kv);
    /* Passes from the preferred to the last resort: whole warps/wavefronts before partial ones;
     * within those, separate K and V tiles with at least 16 keys, then V sharing K's memory with at
     * least 16 keys, then the same with as few keys as tpr. */
    int32_t best_m = 0, best_n = 0, shared = 0;
    for (int pass = 0; pass < 8 && !best_m; ++pass) {
        const int whole_warps = pass < 4;
        const int32_t min_n = (pass % 4) < 2 ? 16 : tpr;
        shared = pass % 2;
        for (int32_t bm = 64; bm >= 1 && !best_m; bm /= 2) {
            const size_t wg = (size_t)bm * tpr;
            if (wg > max_wg || (whole_warps && wg % multiple))
                continue;
            if ((uint32_t)bm > rows_cap && bm > 1 && (uint32_t)(bm / 2) * tpr >= multiple)
                continue; /* a smaller tile still fills a warp/wavefront and wastes fewer rows */
            for (int32_t bn = 64; bn >= min_n; bn /= 2) {
                if (bn % tpr || ((uint32_t)bn > keys_cap && bn > 16))
                    continue;
                if (flashcl_flash_local_mem_bytes(d, bm, bn, tpr, shared) <= budget) {
                    best_m = bm;
                    best_n = bn;
                    break;
                }
            }
        }
    }
    if (!best_m)
        return FLASHCL_UNSUPPORTED;

    memset(cfg, 0, sizeof *cfg);
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    cfg->block_m = best_m;
    cfg->block_n = best_n;
    cfg->threads_per_row = tpr;
    cfg->work_group_size = best_m * tpr;
    cfg->kv_shared = shared;
    cfg->local_mem_bytes = flashcl_flash_local_mem_bytes(d, best_m, best_n, tpr, shared);
    cfg->local_mem_budget = budget;
    fcl_strlcpy(cfg->kernel, "flash_fwd", sizeof cfg->kernel);
    fcl_strlcpy(cfg->source, "heuristic", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason,
             "%d threads per row hold %d outputs each; %dx%d%s is the largest tile in %llu B, %zu items",
             (int)tpr, (int)(d / tpr), (int)best_m, (int)best_n, shared ? " (V shares K's tile)" : "",
             (unsigned long long)budget, max_wg);
    return FLASHCL_SUCCESS;
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
    cfg->work_group_size = (int32_t)wg;
    cfg->local_mem_budget = pr->local_mem_budget;
    fcl_strlcpy(cfg->kernel, "naive_fwd", sizeof cfg->kernel);
    fcl_strlcpy(cfg->source, "fixed", sizeof cfg->source);
    snprintf(cfg->reason, sizeof cfg->reason, "naive: one row per work-item, work-groups of %zu", wg);
}

int fcl_complete_flash_config(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget,
                              size_t max_wg, flashcl_config *cfg, char *why, size_t why_len)
{
    const int32_t d = p->head_dim, bm = cfg->block_m, bn = cfg->block_n, tpr = cfg->threads_per_row;
    if (bm < 1 || bn < 1 || tpr < 1 || bm > 1024 || bn > 1024) {
        snprintf(why, why_len, "block_m %d, block_n %d, threads_per_row %d must be 1 to 1024", bm, bn, tpr);
        return 0;
    }
    if (d % tpr || bn % tpr) {
        snprintf(why, why_len, "threads_per_row %d must divide head_dim %d and block_n %d", tpr, d, bn);
        return 0;
    }
    const uint64_t bytes = flashcl_flash_local_mem_bytes(d, bm, bn, tpr, cfg->kv_shared != 0);
    if ((size_t)bm * tpr > max_wg || (size_t)bm * tpr > pr->max_work_group_size) {
        snprintf(why, why_len, "%d x %d work-items exceed the work-group limit %zu", bm, tpr,
                 max_wg < pr->max_work_group_size ? max_wg : pr->max_work_group_size);
        return 0;
    }
    if (bytes > budget) {
        snprintf(why, why_len, "%llu B of local memory exceed the budget %llu B", (unsigned long long)bytes,
                 (unsigned long long)budget);
        return 0;
    }
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    cfg->kv_shared = cfg->kv_shared != 0;
    cfg->work_group_size = bm * tpr;
    cfg->local_mem_bytes = bytes;
    cfg->local_mem_budget = budget;
    fcl_strlcpy(cfg->kernel, "flash_fwd", sizeof cfg->kernel);
    return 1;
}

flashcl_status flashcl_choose_config_db(const flashcl_device_profile *profile, const flashcl_problem *problem,
                                        flashcl_algorithm algorithm, const flashcl_tuning_db *db,
                                        flashcl_config *config)
{
    if (!profile || !problem || !config)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_choose_config: %s is NULL",
                        !profile ? "profile" : !problem ? "problem" : "config");
    resolved_layout layout;
    flashcl_status st = fcl_check_problem(NULL, problem, &layout);
    if (st != FLASHCL_SUCCESS)
        return st;
    if (algorithm == FLASHCL_ALGO_NAIVE) {
        choose_naive(profile, config);
        return FLASHCL_SUCCESS;
    }
    if (algorithm == FLASHCL_ALGO_STANDARD) {
        memset(config, 0, sizeof *config);
        config->algorithm = FLASHCL_ALGO_STANDARD;
        config->block_m = 64; /* the tile validation samples rows from */
        config->block_n = problem->seq_kv;
        config->threads_per_row = 1;
        config->work_group_size = 256;
        fcl_strlcpy(config->kernel, "standard", sizeof config->kernel);
        fcl_strlcpy(config->source, "fixed", sizeof config->source);
        snprintf(config->reason, sizeof config->reason,
                 "two batched CLBlast SGEMMs around a row softmax, the score matrix in device memory");
        return FLASHCL_SUCCESS;
    }
    if (algorithm != FLASHCL_ALGO_FLASH)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_choose_config: algorithm = %d is not a flashcl_algorithm",
                        (int)algorithm);
    flashcl_config tuned;
    char source[48], detail[160], why[160];
    if (fcl_tuning_lookup(db, profile, problem, &tuned, source, sizeof source, detail, sizeof detail)) {
        /* A database entry is used only where it fits this problem and this device's limits (a user
         * may cap local memory below what the entry was tuned with); otherwise the heuristic. */
        if (fcl_complete_flash_config(profile, problem, profile->local_mem_budget, profile->max_work_group_size,
                                      &tuned, why, sizeof why)) {
            fcl_strlcpy(tuned.source, source, sizeof tuned.source);
            fcl_strlcpy(tuned.reason, detail, sizeof tuned.reason);
            *config = tuned;
            return FLASHCL_SUCCESS;
        }
    }
    st = fcl_choose_flash(profile, problem, profile->local_mem_budget, profile->max_work_group_size, config);
    if (st != FLASHCL_SUCCESS)
        return fcl_fail(NULL, st, "no tile configuration for head_dim %d fits %llu B of local memory",
                        (int)problem->head_dim, (unsigned long long)profile->local_mem_budget);
    return FLASHCL_SUCCESS;
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

flashcl_status flashcl_choose_config(const flashcl_device_profile *profile, const flashcl_problem *problem,
                                     flashcl_algorithm algorithm, flashcl_config *config)
{
    return flashcl_choose_config_db(profile, problem, algorithm, NULL, config);
}
