/* SPDX-License-Identifier: MIT */
/*
 * tiles.c: chooses a kernel configuration from (device profile, policy, problem) alone, so that plans,
 * the command-line tool and tests with fake profiles all see the same choice. The kernels' own shapes,
 * local memory and override checks are their modules' (src/kernels/); here are the local-memory budget,
 * the order of preference among the kernels, the tuning database's place in it, split-KV and GQA packing,
 * and the finisher every flash configuration goes through. Design reasons: docs/design/tiles.md.
 */
#include "kernels/module.h"

#include <stdio.h>
#include <string.h>

/* The largest local memory a work-group gets on the GPUs flashcl targets (AMD LDS and Intel SLM are
 * 64 KiB; NVIDIA gives OpenCL 48 KiB through a kernel argument). CPUs report a cache (PoCL: its L2,
 * 1 MiB or more) where tiles larger than this only add cache misses, so no budget exceeds it. */
#define FCL_LOCAL_MEM_CEILING (64u * 1024u)

uint64_t fcl_local_mem_budget(const flashcl_device_profile *pr, uint64_t cap)
{
    uint64_t budget = pr->local_mem_size < FCL_LOCAL_MEM_CEILING ? pr->local_mem_size : FCL_LOCAL_MEM_CEILING;
    /* A GPU whose static arrays may take more than it reports (NVIDIA: the profile's probe): that much,
     * but no more than half of what a compute unit holds, so that two work-groups share one (occupancy),
     * less NVIDIA's 1 KiB reserved a block and the compiler's own bytes. Hopper: min(232448, 233472 / 2 -
     * 1040) = 115696; A100: 82928; Ampere/Ada: 50160. AMD's wave64 GPUs keep their whole 64 KiB of LDS
     * (one work-group a compute unit for the large tiles: docs/design/tiles.md weighs it). */
    if (!pr->is_cpu && pr->local_mem_static > pr->local_mem_size) {
        const uint64_t half = pr->local_mem_per_cu / 2 > 2048 ? pr->local_mem_per_cu / 2 - 1024 - 16 : 0;
        const uint64_t more = pr->local_mem_static < half ? pr->local_mem_static : half;
        if (more > budget)
            budget = more;
    }
    return cap && cap < budget ? cap : budget;
}

uint64_t fcl_local_mem_max(const flashcl_device_profile *pr, uint64_t cap)
{
    /* a GPU: its static arrays' probed size; a CPU: what it reports (local memory there is ordinary
     * memory: the ceiling is about cache misses, which an override may accept) */
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

/*
 * Every flash configuration goes through here, wherever its tiles came from (a module's chooser, the
 * tuning database, an override, a shrink after compiling): the portable kernel's tiles are checked
 * against the problem and the limits, the derived fields set (work-group size, local memory, the kernel),
 * the GQA packing and the key splits chosen, and the source, reason (NULL: the chooser's own) and path
 * reason written. Returns 0 with `why` when the tiles do not fit.
 */
static int finish_flash(const flashcl_device_profile *pr, const flashcl_problem *p, const fcl_choice *ch,
                        flashcl_config *cfg, const char *source, const char *reason, const char *path_reason,
                        char *why, size_t why_len)
{
    const flashcl_kernel k = cfg->kernel;
    const int matrix_prefill = k == FLASHCL_KERNEL_MMA || k == FLASHCL_KERNEL_WGMMA || k == FLASHCL_KERNEL_MFMA ||
                               k == FLASHCL_KERNEL_WMMA || k == FLASHCL_KERNEL_DPAS;
    const int decode = k == FLASHCL_KERNEL_DECODE || k == FLASHCL_KERNEL_DECODE_MMA;
    if (k == FLASHCL_KERNEL_PORTABLE && !fcl_portable_fits(pr, p, ch->local_mem, ch->work_group, cfg, why, why_len))
        return 0;
    cfg->algorithm = FLASHCL_ALGO_FLASH;
    /* (the decode kernels' and flash_wgmma's work-groups are their own choice; flash_mma: a warp of 32
     * lanes per 16 rows a tile) */
    if (k == FLASHCL_KERNEL_MMA)
        cfg->work_group_size = cfg->block_m * 2 / (cfg->m_tiles == 2 ? 2 : 1);
    else if (k == FLASHCL_KERNEL_PORTABLE)
        cfg->work_group_size = cfg->block_m / cfg->rows_per_item * cfg->threads_per_row;
    cfg->local_mem_budget = ch->local_mem; /* (before the bytes: flash_wgmma's second Q tile is where it fits) */
    cfg->local_mem_bytes = fcl_config_local_bytes(p->head_dim, fcl_head_dim_v(p), cfg);
    /* Intel's Xe-HPC GPUs: 16 lanes a sub-group for the register-blocked kernels, where IGC would compile
     * them at 32 with the block in scratch (docs/design/tiles.md, tools/vendor_check.sh) */
    if (k != FLASHCL_KERNEL_DPAS) /* (flash_dpas's is its layout: its module's) */
        cfg->sub_group = fcl_intel_xe_hpc(pr) && (k == FLASHCL_KERNEL_PORTABLE || k == FLASHCL_KERNEL_DECODE) ? 16 : 0;
    fcl_strlcpy(cfg->kernel_name, fcl_kernel_def_of(fcl_config_kernel(cfg))->entry, sizeof cfg->kernel_name);
    /* the decode kernels pack every query head of a KV head into their rows */
    cfg->gqa_pack = decode ? p->heads_q / p->heads_kv : matrix_prefill ? 1 : fcl_gqa_pack(p);
    cfg->kv_splits = matrix_prefill ? 1 : fcl_choose_splits(pr, p, cfg);
    fcl_strlcpy(cfg->source, source, sizeof cfg->source);
    if (reason)
        fcl_strlcpy(cfg->reason, reason, sizeof cfg->reason);
    fcl_strlcpy(cfg->path_reason, path_reason, sizeof cfg->path_reason);
    return 1;
}

/* A tuning-database entry's tiles (the portable kernel's) where they fit the problem and the limits
 * (fcl_tuning_lookup's test of each entry in turn) */
struct db_fit {
    const flashcl_device_profile *pr;
    const flashcl_problem *p;
    const fcl_choice *ch;
    const char *path_reason;
    char *why;
    size_t why_len;
};

static int entry_fits(flashcl_config *cfg, const char *source, const char *detail, void *arg)
{
    const struct db_fit *f = arg;
    cfg->kernel = FLASHCL_KERNEL_PORTABLE;
    return finish_flash(f->pr, f->p, f->ch, cfg, source, detail, f->path_reason, f->why, f->why_len);
}

void fcl_choice_of(const flashcl_device_profile *pr, flashcl_path path, uint64_t local_mem_limit,
                   const flashcl_tuning_db *db, fcl_choice *ch)
{
    *ch = (fcl_choice){.path = path, .db = db, .local_mem = fcl_local_mem_budget(pr, local_mem_limit),
                       .local_mem_max = fcl_local_mem_max(pr, local_mem_limit), .work_group = pr->max_work_group_size};
    /* Intel GPUs: a quarter of the register block, where IGC's unrolled compile would spill and keep the
     * arrays in memory (docs/design/tiles.md, tools/vendor_check.sh). */
    if (fcl_intel_gpu(pr))
        ch->reg_shift = 2;
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

/* Whether the path and the device let a matrix-unit kernel run (emulated where forced); if not, why. */
static int mma_allowed(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p, char *why,
                       size_t why_len)
{
    char no[112];
    if (ch->portable_why || ch->path == FLASHCL_PATH_PORTABLE) {
        snprintf(why, why_len, "%s", ch->portable_why ? ch->portable_why : "portable: the path is forced to portable");
        return 0;
    }
    if (ch->path != FLASHCL_PATH_MMA && !fcl_ptx_units(pr)) { /* auto (an unknown value counts as auto) */
        snprintf(why, why_len, "portable: %s",
                 pr->vendor == FLASHCL_VENDOR_NVIDIA && pr->nv_cc_major >= 8
                     ? "the matrix-unit kernel did not compile here (test compile at context creation)"
                     : "no matrix units reachable (inline PTX mma: NVIDIA, compute capability 8.0+)");
        return 0;
    }
    if (!fcl_mma_module.takes(p, no, sizeof no)) { /* (fp32 too under a TF32 precision) */
        snprintf(why, why_len, "portable: %s", no);
        return 0;
    }
    return 1;
}

/* A decode step's kernel, where the path and the problem allow one: on matrix units (or forced by the mma
 * path) the matrix-unit decode kernel where it takes the step; else the decode kernel, which auto takes
 * only where it measured faster than the portable kernel's decode path: on the H200 (shuffles) from 2^19
 * key rows (batch x KV heads x keys) on (docs/design/decode.md), and wherever the cache is quantized
 * (no other kernel reads it). Returns 1 with cfg's shape set, or 0 with `why`. */
static int choose_decode_step(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                              flashcl_config *cfg, char *why, size_t why_len)
{
    char no[112];
    if (ch->portable_why || ch->path == FLASHCL_PATH_PORTABLE) {
        snprintf(why, why_len, "%s", ch->portable_why ? ch->portable_why : "portable: the path is forced");
        return 0;
    }
    if (!fcl_decode_takes(p, no, sizeof no)) {
        snprintf(why, why_len, "portable: %s", no);
        return 0;
    }
    if (ch->path == FLASHCL_PATH_MMA || (ch->path == FLASHCL_PATH_AUTO && fcl_ptx_units(pr))) {
        if (fcl_decode_mma_module.takes(p, no, sizeof no))
            return fcl_decode_mma_module.choose(pr, ch, p, cfg, why, why_len);
        if (ch->path == FLASHCL_PATH_MMA && !p->kv_format) {
            snprintf(why, why_len, "portable: %s", no);
            return 0;
        }
    }
    const int shuffles = fcl_ptx_units(pr);
    const uint64_t key_rows = (uint64_t)p->batch * (uint64_t)p->heads_kv * (uint64_t)p->seq_kv;
    if (ch->path != FLASHCL_PATH_DECODE && !p->kv_format && (!shuffles || key_rows < (1u << 19))) {
        snprintf(why, why_len, "portable: %s",
                 shuffles ? "a decode step of fewer than 2^19 key rows (the decode kernel measured slower there)"
                          : "the decode kernel is not measured faster on this device (FLASHCL_PATH=decode forces it)");
        return 0;
    }
    return fcl_decode_module.choose(pr, ch, p, cfg, why, why_len);
}

/* Whether auto takes the warpgroup kernel: on a device with sm_90a programs (matrix_units 2), for the head
 * dims where it measured faster than flash_mma on the H200 (docs/design/wgmma.md). */
static int wgmma_auto(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p)
{
    return ch->path == FLASHCL_PATH_AUTO && fcl_ptx_units(pr) >= 2 && fcl_wgmma_dim(p->head_dim);
}

/* The context's override config: its kernel's module checks it (the portable kernel's tiles, flash_mma's or
 * flash_wgmma's), with all the local memory one work-group can have. */
static flashcl_status choose_override(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch0,
                                      const flashcl_problem *p, flashcl_config *config)
{
    const fcl_choice whole = whole_work_group(ch0), *ch = &whole;
    flashcl_config c = *ch->override;
    char why[400], path_reason[sizeof c.path_reason] = "portable: tiles set by flashcl_context_override_config";
    validate_or_return(ctx, c.kernel == FLASHCL_KERNEL_PORTABLE || c.kernel == FLASHCL_KERNEL_MMA ||
                                c.kernel == FLASHCL_KERNEL_WGMMA || c.kernel == FLASHCL_KERNEL_MFMA ||
                                c.kernel == FLASHCL_KERNEL_WMMA || c.kernel == FLASHCL_KERNEL_DPAS,
                       FLASHCL_INVALID_ARGUMENT,
                       "the context's override config: kernel = %d; an override sets the tiles of the portable "
                       "kernel (FLASHCL_KERNEL_PORTABLE), flash_mma (MMA), flash_wgmma (WGMMA), flash_mfma (MFMA), "
                       "flash_wmma (WMMA) or flash_dpas (DPAS)", (int)c.kernel);
    const fcl_kernel_module *m = c.kernel == FLASHCL_KERNEL_WGMMA ? &fcl_wgmma_module
                                 : c.kernel == FLASHCL_KERNEL_MMA ? &fcl_mma_module
                                 : c.kernel == FLASHCL_KERNEL_MFMA ? &fcl_mfma_module
                                 : c.kernel == FLASHCL_KERNEL_WMMA ? &fcl_wmma_module
                                 : c.kernel == FLASHCL_KERNEL_DPAS ? &fcl_dpas_module
                                                                  : &fcl_portable_module;
    validate_or_return(ctx, m != &fcl_mma_module || mma_allowed(pr, ch, p, why, sizeof why), FLASHCL_INVALID_ARGUMENT,
                       "the context's override config asks for the matrix-unit kernel, which does not take this "
                       "problem: %s", why);
    const int vendor = m == &fcl_mfma_module || m == &fcl_wmma_module || m == &fcl_dpas_module;
    validate_or_return(ctx, !vendor || (!ch->portable_why && ch->path != FLASHCL_PATH_PORTABLE && m->takes(p, why, sizeof why)),
                       FLASHCL_INVALID_ARGUMENT, "the context's override config asks for %s, which does not take this "
                       "problem: %s", m == &fcl_mfma_module ? "flash_mfma" : m == &fcl_wmma_module ? "flash_wmma" : "flash_dpas",
                       ch->portable_why ? ch->portable_why : ch->path == FLASHCL_PATH_PORTABLE ? "the path is portable" : why);
    validate_or_return(ctx, m->override(pr, ch, p, &c, why, sizeof why), FLASHCL_INVALID_ARGUMENT,
                       "the context's override config%s", why);
    if (c.kernel != FLASHCL_KERNEL_PORTABLE)
        fcl_strlcpy(path_reason, c.path_reason, sizeof path_reason);
    validate_or_return(ctx, finish_flash(pr, p, ch, &c, "override", NULL, path_reason, why, sizeof why),
                       FLASHCL_INVALID_ARGUMENT, "the context's override config does not fit this problem: %s", why);
    *config = c;
    return FLASHCL_SUCCESS;
}

/* Where FLASHCL_PATH_WGMMA was asked for and another kernel runs: why not, before that kernel's reason. */
void fcl_note_not_wgmma(flashcl_config *c, const char *why_not)
{
    if (why_not[0]) {
        char both[sizeof c->path_reason]; /* (pieces copied with truncation: the field is short) */
        const char *parts[4] = {"not wgmma (", why_not, "); ", c->path_reason};
        size_t n = 0;
        both[0] = '\0';
        for (int i = 0; i < 4 && n + 1 < sizeof both; ++i) {
            fcl_strlcpy(both + n, parts[i], sizeof both - n);
            n += strlen(both + n);
        }
        fcl_strlcpy(c->path_reason, both, sizeof c->path_reason);
    }
}

/* A prefill problem's matrix-unit kernel, in the order of preference: flash_wgmma where asked for or auto
 * takes it, then flash_mma where the path and the device allow it. Returns 1 with cfg finished, or 0 with
 * `path_reason` (why the portable kernel) and `wgmma_why` (why not the wgmma that was asked for). */
static int choose_matrix_units(const flashcl_device_profile *pr, const fcl_choice *ch, const flashcl_problem *p,
                               flashcl_config *c, char *path_reason, size_t n, char *wgmma_why, size_t wn)
{
    const char *source = ch->shrunk ? "heuristic (shrunk)" : "heuristic";
    char why[160];
    /* AMD's matrix cores, flash_mfma (CDNA) or flash_wmma (RDNA3/4), and Intel's matrix engines, flash_dpas,
     * where asked for or where auto has them; where the kernel does not take the problem or does not fit,
     * the portable kernel with the reason (no NVIDIA kernel runs there). */
    const int autos = ch->path == FLASHCL_PATH_AUTO;
    const fcl_kernel_module *amd = ch->path == FLASHCL_PATH_MFMA || (autos && fcl_mfma_units(pr))   ? &fcl_mfma_module
                                   : ch->path == FLASHCL_PATH_WMMA || (autos && fcl_wmma_units(pr)) ? &fcl_wmma_module
                                   : ch->path == FLASHCL_PATH_DPAS || (autos && fcl_dpas_units(pr)) ? &fcl_dpas_module
                                                                                                    : NULL;
    if (amd) {
        if (ch->portable_why)
            snprintf(path_reason, n, "%s", ch->portable_why);
        else if (!amd->takes(p, why, sizeof why))
            snprintf(path_reason, n, "portable: %.100s", why);
        else if (amd->choose(pr, ch, p, c, path_reason, n) &&
                 finish_flash(pr, p, ch, c, source, ch->shrunk, path_reason, why, sizeof why))
            return 1;
        return 0;
    }
    if (ch->path == FLASHCL_PATH_WGMMA || wgmma_auto(pr, ch, p)) {
        const fcl_choice whole = whole_work_group(ch);
        if (ch->portable_why)
            snprintf(path_reason, n, "%s", ch->portable_why);
        else if (fcl_wgmma_module.takes(p, path_reason, n) &&
                 fcl_wgmma_module.choose(pr, &whole, p, c, path_reason, n) &&
                 finish_flash(pr, p, &whole, c, source, ch->shrunk, path_reason, why, sizeof why))
            return 1;
        if (ch->path == FLASHCL_PATH_WGMMA) /* (asked for: why not, before the kernel taken instead) */
            snprintf(wgmma_why, wn, "%.80s", path_reason);
    }
    if (ch->path != FLASHCL_PATH_DECODE && mma_allowed(pr, ch, p, path_reason, n) &&
        fcl_mma_module.choose(pr, ch, p, c, path_reason, n) &&
        finish_flash(pr, p, ch, c, source, ch->shrunk, path_reason, why, sizeof why)) {
        fcl_note_not_wgmma(c, wgmma_why);
        return 1;
    }
    return 0;
}

/* The order of preference for flash: the override; a decode step's kernels; the matrix-unit kernels; the
 * tuning database's portable tiles; the portable kernel's heuristic. */
static flashcl_status choose_flash_kernel(flashcl_context *ctx, const flashcl_device_profile *pr,
                                          const fcl_choice *ch, const flashcl_problem *p, flashcl_config *config)
{
    char why[160], path_reason[sizeof config->path_reason], wgmma_why[112] = "";
    const char *source = ch->shrunk ? "heuristic (shrunk)" : "heuristic";
    flashcl_config c;
    if (p->kv_format && (ch->override || ch->path == FLASHCL_PATH_PORTABLE || ch->portable_why))
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED, "problem.kv_format = %s: only the decode kernels read a quantized cache, and %s",
                        flashcl_kv_format_name((flashcl_kv_format)p->kv_format),
                        ch->override       ? "the context has an override config (the portable kernel's tiles)"
                        : ch->portable_why ? ch->portable_why
                                           : "the path is portable");
    if (ch->override)
        return choose_override(ctx, pr, ch, p, config);
    if (choose_decode_step(pr, ch, p, &c, path_reason, sizeof path_reason) &&
        finish_flash(pr, p, ch, &c, source, ch->shrunk, path_reason, why, sizeof why)) {
        *config = c;
        return FLASHCL_SUCCESS;
    }
    if (p->kv_format)
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "problem.kv_format = %s: only the decode kernels read a quantized cache, and none fits (%s)",
                        flashcl_kv_format_name((flashcl_kv_format)p->kv_format), path_reason);
    /* (decode steps never suit the matrix-unit prefill kernels: the decode chooser's reason stands) */
    if (!fcl_is_decode(p) &&
        choose_matrix_units(pr, ch, p, &c, path_reason, sizeof path_reason, wgmma_why, sizeof wgmma_why)) {
        *config = c;
        return FLASHCL_SUCCESS;
    }
    char db_source[48], detail[160];
    /* A database entry is used only where it fits this problem and these limits (a user may cap local
     * memory below what the entry was tuned with): the first that does, in the lookup's order (a more specific
     * entry that does not fit passes to the next one); otherwise the heuristic. */
    struct db_fit fit = {pr, p, ch, path_reason, why, sizeof why};
    if (!ch->shrunk &&
        fcl_tuning_lookup(ch->db, pr, p, &c, db_source, sizeof db_source, detail, sizeof detail, entry_fits, &fit)) {
        fcl_note_not_wgmma(&c, wgmma_why);
        *config = c;
        return FLASHCL_SUCCESS;
    }
    flashcl_problem view; /* the rows the tiles see: packed query heads for a GQA decode step */
    fcl_packed_view(p, fcl_gqa_pack(p), &view);
    if (fcl_choose_flash(pr, &view, ch->local_mem, ch->reg_shift, ch->work_group, &c) != FLASHCL_SUCCESS ||
        !finish_flash(pr, p, ch, &c, source, ch->shrunk, path_reason, why, sizeof why))
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "no tile configuration of flash_fwd for head_dim %d fits %llu B of local memory and %zu "
                        "work-items (%s)",
                        (int)p->head_dim, (unsigned long long)ch->local_mem, ch->work_group, pr->name);
    fcl_note_not_wgmma(&c, wgmma_why);
    *config = c;
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_choose_checked(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                                  const flashcl_problem *p, flashcl_algorithm algorithm, flashcl_config *config)
{
    char unused[8];
    if (algorithm == FLASHCL_ALGO_NAIVE || algorithm == FLASHCL_ALGO_STANDARD) {
        const fcl_kernel_module *m = algorithm == FLASHCL_ALGO_NAIVE ? &fcl_naive_module : &fcl_standard_module;
        m->choose(pr, ch, p, config, unused, sizeof unused);
        if (algorithm == FLASHCL_ALGO_NAIVE)
            config->local_mem_budget = fcl_local_mem_budget(pr, 0);
        return FLASHCL_SUCCESS;
    }
    validate_or_return(ctx, algorithm == FLASHCL_ALGO_FLASH, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_choose_config: algorithm = %d is not a flashcl_algorithm", (int)algorithm);
    return choose_flash_kernel(ctx, pr, ch, p, config);
}

flashcl_status fcl_choose(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                          const flashcl_problem *p, flashcl_algorithm algorithm, flashcl_config *config)
{
    resolved_layout layout;
    const flashcl_status st = fcl_check_problem(ctx, p, &layout);
    return st != FLASHCL_SUCCESS ? st : fcl_choose_checked(ctx, pr, ch, p, algorithm, config);
}

flashcl_status flashcl_choose_config_policy_abi(const flashcl_abi *abi, const flashcl_device_profile *profile,
                                                const flashcl_policy *policy, const flashcl_problem *problem,
                                                flashcl_algorithm algorithm, flashcl_config *config)
{
    flashcl_status st = fcl_abi_guard(abi, "flashcl_choose_config_policy");
    if (st != FLASHCL_SUCCESS)
        return st;
    if (!profile || !problem || !config)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_choose_config: %s is NULL",
                        !profile ? "profile" : !problem ? "problem" : "config");
    flashcl_policy defaults;
    flashcl_policy_default(&defaults);
    if (!policy)
        policy = &defaults;
    flashcl_path path;
    uint64_t limit;
    st = fcl_resolve_policy("flashcl_choose_config: policy", policy->path, policy->local_mem_limit, &path, &limit);
    if (st != FLASHCL_SUCCESS)
        return st;
    fcl_choice ch;
    fcl_choice_of(profile, path, limit, policy->tuning_db, &ch);
    flashcl_problem sides;
    return fcl_choose(NULL, profile, &ch, fcl_problem_sides(problem, &sides), algorithm, config);
}

flashcl_status flashcl_choose_config_abi(const flashcl_abi *abi, const flashcl_device_profile *profile,
                                         const flashcl_problem *problem, flashcl_algorithm algorithm,
                                         flashcl_config *config)
{
    const flashcl_status st = fcl_abi_guard(abi, "flashcl_choose_config");
    return st != FLASHCL_SUCCESS ? st : flashcl_choose_config_policy(profile, NULL, problem, algorithm, config);
}
