/* SPDX-License-Identifier: MIT */
/*
 * vendor_programs.c: writes the OpenCL programs flashcl would build for AMD and Intel GPUs, so that
 * their offline compilers can judge them without the hardware (tools/vendor_check.sh), and, asked by
 * name, for a Hopper GPU (class nvidia-hopper: tools/nv_check.sh reads their GPU branches). For each target
 * class (a fake device profile: what the driver would report) and each representative problem, it asks
 * the library's own chooser for the configuration, and writes exactly the program a plan would build:
 * the kernel's parts from the embedded sources, in the table's order, and its build options.
 *
 * Usage: vendor_programs OUT_DIR [CLASS ...] (no class: every class but nvidia-hopper). Writes OUT_DIR/NAME.cl
 * (the source), and one line per program to stdout: class, name, entry point, flashcl's local-memory bytes,
 * build options, the work-group size its plan launches (0 for the split merge and the append, whose own
 * sizes are not the configuration's) (tab-separated).
 * Built from the library's sources (it reads the kernel table, as tests/test_kernels.c does).
 */
#include "flashcl.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the drivers report for these GPUs (local memory, work-group limit, wave or sub-group width). */
typedef struct target_class {
    const char *name;
    flashcl_vendor vendor;
    uint64_t local;
    size_t max_wg, multiple;
    uint32_t compute_units;
    int by_name; /* written only where named */
} target_class;

static const target_class classes[] = {
    {"amd-cdna", FLASHCL_VENDOR_AMD, 64 * 1024, 1024, 64, 104, 0},  /* MI200 (gfx90a), MI300 (gfx942) */
    {"amd-rdna2", FLASHCL_VENDOR_AMD, 64 * 1024, 1024, 32, 40, 0},  /* RX 6000 (gfx1030): no matrix cores */
    {"amd-rdna", FLASHCL_VENDOR_AMD, 64 * 1024, 1024, 32, 60, 0},   /* RX 7000/9000 (gfx1100, gfx1200): WMMA */
    {"intel-xe", FLASHCL_VENDOR_INTEL, 64 * 1024, 512, 32, 96, 0},  /* Gen12 (tgllp): no DPAS */
    {"intel-hpg", FLASHCL_VENDOR_INTEL, 64 * 1024, 1024, 32, 512, 0}, /* DG2 (acm-g10, dg2): DPAS at SIMD8 */
    {"intel-pvc", FLASHCL_VENDOR_INTEL, 128 * 1024, 1024, 32, 448, 0}, /* Data Center GPU Max (pvc) */
    {"nvidia-hopper", FLASHCL_VENDOR_NVIDIA, 48 * 1024, 1024, 32, 132, 1}, /* H200: sm_90a probe passed */
};

typedef struct problem_case {
    const char *name;
    flashcl_algorithm algo;
    flashcl_path path;
    flashcl_problem p;
    const char *only; /* the one class it is written for, or NULL: every class */
    int32_t block_n;  /* a key tile the override gives where the chooser does not (0: the chooser's) */
} problem_case;

static flashcl_problem base(int d, flashcl_dtype t, int seq_q, int seq_kv, int hq, int hkv)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 1;
    p.head_dim = d;
    p.dtype = t;
    p.seq_q = seq_q;
    p.seq_kv = seq_kv;
    p.heads_q = hq;
    p.heads_kv = hkv;
    return p;
}

static int n_cases;
static problem_case cases[64];

static problem_case *add(const char *name, flashcl_algorithm algo, flashcl_path path, flashcl_problem p)
{
    problem_case *c = &cases[n_cases++];
    c->name = name;
    c->algo = algo;
    c->path = path;
    c->p = p;
    return c;
}

/* The representative problems: prefill d=64/128/256 in each dtype, causal, the inference options, decode
 * with GQA on the portable path and the decode kernel (plain and quantized caches), naive. */
static void make_cases(void)
{
    static const int dims[] = {64, 128, 256};
    static const char *names[3][3] = {{"prefill-d64-f32", "prefill-d64-f16", "prefill-d64-bf16"},
                                      {"prefill-d128-f32", "prefill-d128-f16", "prefill-d128-bf16"},
                                      {"prefill-d256-f32", "prefill-d256-f16", "prefill-d256-bf16"}};
    for (int i = 0; i < 3; ++i)
        for (int t = 0; t < 3; ++t)
            add(names[i][t], FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, base(dims[i], (flashcl_dtype)t, 4096, 4096, 16, 16));
    flashcl_problem p = base(128, FLASHCL_DTYPE_F16, 4096, 4096, 16, 16);
    p.causal = 1;
    add("prefill-d128-f16-causal", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(128, FLASHCL_DTYPE_BF16, 2048, 2048, 16, 4);
    p.window = 1;
    p.window_left = 512;
    p.window_right = 0;
    p.softcap = 30.0f;
    p.alibi = 1;
    p.key_padding = 1;
    add("prefill-d128-bf16-window-softcap-alibi-kpm", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(128, FLASHCL_DTYPE_F16, 2048, 2048, 16, 4);
    p.varlen = 1;
    p.total_q = p.total_kv = 8192;
    p.causal = 1;
    add("prefill-d128-f16-varlen-causal", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(128, FLASHCL_DTYPE_F16, 1, 32768, 32, 8);
    p.kv_cache = 1;
    p.kv_append = 1;
    p.page_size = 256;
    p.num_pages = 129;
    add("decode-d128-f16-gqa4-paged", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    add("decode-kernel-d128-f16-gqa4-paged", FLASHCL_ALGO_FLASH, FLASHCL_PATH_DECODE, p);
    p.kv_format = FLASHCL_KV_INT8;
    add("decode-kernel-d128-f16-gqa4-paged-int8", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p.kv_format = FLASHCL_KV_FP8_E4M3;
    add("decode-kernel-d128-f16-gqa4-paged-fp8e4m3", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(64, FLASHCL_DTYPE_BF16, 1, 8192, 32, 32);
    add("decode-kernel-d64-bf16-mha", FLASHCL_ALGO_FLASH, FLASHCL_PATH_DECODE, p);
    p = base(256, FLASHCL_DTYPE_F32, 4, 8192, 16, 2);
    p.causal = 1;
    add("decode-kernel-d256-f32-gqa8-causal", FLASHCL_ALGO_FLASH, FLASHCL_PATH_DECODE, p);
    /* the engine options: fp32 queries over fp16 K/V with sinks (prefill), a bf16 cache under fp32 queries
     * served by batch index from left padding, split (decode) */
    p = base(128, FLASHCL_DTYPE_F32, 4096, 4096, 16, 16);
    p.kv_dtype = FLASHCL_KV_DTYPE_F16;
    p.sinks = 1;
    add("prefill-d128-f32-kvf16-sinks", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(128, FLASHCL_DTYPE_F32, 1, 32768, 32, 8);
    p.kv_cache = 1;
    p.kv_append = 1;
    p.kv_dtype = FLASHCL_KV_DTYPE_BF16;
    p.cache_batch_idx = 1;
    p.cache_leftpad = 1;
    p.sinks = 1;
    add("decode-kernel-d128-f32-kvbf16-cacheidx-leftpad-sinks", FLASHCL_ALGO_FLASH, FLASHCL_PATH_DECODE, p);
    /* V's own head dim (MLA's 192 over 128): the portable kernel in prefill and as a decode step */
    p = base(192, FLASHCL_DTYPE_F16, 4096, 4096, 16, 16);
    p.head_dim_v = 128;
    p.causal = 1;
    add("prefill-d192-dv128-f16-causal", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    p = base(192, FLASHCL_DTYPE_F16, 1, 32768, 16, 16);
    p.head_dim_v = 128;
    add("decode-d192-dv128-f16", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p);
    add("naive-d128-f32", FLASHCL_ALGO_NAIVE, FLASHCL_PATH_AUTO, base(128, FLASHCL_DTYPE_F32, 1024, 1024, 8, 8));
    /* Hopper's own: flash_wgmma without the producer (64 query rows: one warpgroup), fp8 attention, and an
     * fp16 decode step over a quantized cache (flash_decode_mma's FP8_CVT) */
    add("prefill-d128-f16-short", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, base(128, FLASHCL_DTYPE_F16, 64, 4096, 8, 8))
        ->only = "nvidia-hopper";
    add("prefill-d64-bf16-short-causal", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, base(64, FLASHCL_DTYPE_BF16, 37, 200, 4, 2))
        ->only = "nvidia-hopper";
    p = base(128, FLASHCL_DTYPE_F16, 4096, 4096, 16, 16);
    p.qkv_format = FLASHCL_KV_FP8_E4M3;
    p.fp8_descale = FLASHCL_DESCALE_HEAD;
    add("prefill-d128-fp8e4m3", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p)->only = "nvidia-hopper";
    p = base(128, FLASHCL_DTYPE_F16, 1, 131072, 32, 8);
    p.kv_cache = 1;
    p.kv_format = FLASHCL_KV_FP8_E4M3;
    add("decode-d128-f16-fp8e4m3", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p)->only = "nvidia-hopper";
    /* short steps whose kernel merges its own splits (FUSED_MERGE: batch 1's 16 at 8192 keys, batch 8's 4
     * over an int8 cache) */
    p = base(128, FLASHCL_DTYPE_F16, 1, 8192, 32, 8);
    p.kv_cache = 1;
    add("decode-d128-f16-b1-fused", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p)->only = "nvidia-hopper";
    p.batch = 8;
    p.kv_format = FLASHCL_KV_INT8;
    add("decode-d128-f16-b8-int8-fused", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO, p)->only = "nvidia-hopper";
    /* flash_wgmma's 192-key tiles, an override's (docs/design/wgmma.md, wgmma-192): the producer's register
     * split at 24 / 240 */
    problem_case *wide = add("prefill-d128-f16-keys192", FLASHCL_ALGO_FLASH, FLASHCL_PATH_AUTO,
                             base(128, FLASHCL_DTYPE_F16, 4096, 4096, 16, 16));
    wide->only = "nvidia-hopper";
    wide->block_n = 192;
}

static int write_program(const char *dir, const char *file, fcl_kernel_id id)
{
    const fcl_kernel_def *def = fcl_kernel_def_of(id);
    char path[1024], parts[256];
    snprintf(path, sizeof path, "%s/%s.cl", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "vendor_programs: cannot write %s\n", path);
        return 0;
    }
    snprintf(parts, sizeof parts, "%s", def->sources);
    for (char *tok = strtok(parts, " "); tok; tok = strtok(NULL, " ")) {
        const char *text = flashcl_source_text(tok);
        if (!text) {
            fprintf(stderr, "vendor_programs: no embedded source %s\n", tok);
            fclose(f);
            return 0;
        }
        fputs(text, f);
        fputc('\n', f);
    }
    return fclose(f) == 0;
}

/* One program: its source file and its line on stdout. */
static int emit(const char *dir, const target_class *tc, const char *name, fcl_kernel_id id,
                const flashcl_problem *p, const flashcl_config *c, uint64_t local, int32_t work_group)
{
    char file[256], options[1024];
    snprintf(file, sizeof file, "%s__%s__%s", tc->name, name, fcl_kernel_def_of(id)->entry);
    fcl_kernel_options(id, p, c, options, sizeof options);
    if (!write_program(dir, file, id))
        return 0;
    printf("%s\t%s\t%s\t%llu\t%s\t%d\n", tc->name, file, fcl_kernel_def_of(id)->entry, (unsigned long long)local,
           options, (int)work_group);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: vendor_programs OUT_DIR [CLASS ...] (classes: amd-cdna amd-rdna2 amd-rdna intel-xe intel-hpg intel-pvc, "
                        "nvidia-hopper)\n");
        return 2;
    }
    make_cases();
    int ok = 1;
    for (size_t k = 0; k < sizeof classes / sizeof *classes; ++k) {
        const target_class *tc = &classes[k];
        int wanted = argc == 2 && !tc->by_name;
        for (int a = 2; a < argc; ++a)
            wanted |= !strcmp(argv[a], tc->name);
        if (!wanted)
            continue;
        flashcl_device_profile prof;
        memset(&prof, 0, sizeof prof);
        snprintf(prof.name, sizeof prof.name, "%s", tc->name);
        prof.vendor = tc->vendor;
        prof.local_mem_size = tc->local;
        prof.max_work_group_size = tc->max_wg;
        prof.wg_multiple = tc->multiple;
        prof.compute_units = tc->compute_units;
        prof.compiler_available = 1;
        prof.opencl_major = 3;
        if (tc->vendor == FLASHCL_VENDOR_NVIDIA) { /* (an H200 as its profile query leaves it) */
            snprintf(prof.arch, sizeof prof.arch, "sm_90");
            prof.nv_cc_major = 9;
            prof.has_fp16 = prof.has_fp64 = 1;
            prof.matrix_units = 2;
            prof.local_mem_static = 232448;
            prof.local_mem_per_cu = 233472;
        }
        /* AMD CDNA and RDNA3/4 as their profile query leaves them: the matrix probe passed (flash_mfma,
         * flash_wmma for 16-bit prefill) */
        if (!strcmp(tc->name, "amd-cdna") || !strcmp(tc->name, "amd-rdna")) {
            snprintf(prof.arch, sizeof prof.arch, "%s", tc->multiple == 64 ? "gfx90a" : "gfx1100");
            prof.matrix_units = 1;
        }
        /* Intel's Xe-HPG and Xe-HPC as theirs leave them: the DPAS probe passed (flash_dpas for 16-bit
         * prefill) */
        if (!strcmp(tc->name, "intel-hpg") || !strcmp(tc->name, "intel-pvc")) {
            prof.has_intel_subgroup_matrix = 1;
            prof.matrix_units = 1;
        }
        for (int i = 0; i < n_cases; ++i) {
            const problem_case *pc = &cases[i];
            if (pc->only && strcmp(pc->only, tc->name))
                continue;
            flashcl_policy pol;
            flashcl_policy_default(&pol);
            pol.path = pc->path;
            flashcl_config c;
            if (flashcl_choose_config_policy(&prof, &pol, &pc->p, pc->algo, &c) != FLASHCL_SUCCESS) {
                fprintf(stderr, "vendor_programs: %s %s: %s\n", tc->name, pc->name, flashcl_context_last_error(NULL));
                ok = 0;
                continue;
            }
            if (pc->block_n && c.kernel != FLASHCL_KERNEL_WGMMA) {
                fprintf(stderr, "vendor_programs: %s %s: a key tile for flash_wgmma, but the chooser took %s\n",
                        tc->name, pc->name, c.kernel_name);
                ok = 0;
                continue;
            }
            if (pc->block_n) { /* (the override's tiles: flash_wgmma's keys, its stages as chosen) */
                c.block_n = pc->block_n;
                c.v_chunk = c.kv_stages * pc->block_n;
                c.local_mem_bytes = flashcl_flash_local_mem_bytes(pc->p.head_dim, &c);
            }
            /* the plan's problem: the chooser resolved nothing in it that the options read */
            ok &= emit(argv[1], tc, pc->name, fcl_config_kernel(&c), &pc->p, &c, c.local_mem_bytes,
                       c.algorithm == FLASHCL_ALGO_FLASH ? c.work_group_size : 0);
            if (c.kv_splits > 1) /* split-KV's merge */
                ok &= emit(argv[1], tc, pc->name, FCL_K_FLASH_COMBINE, &pc->p, &c, 0, 0);
            if (pc->p.kv_cache && pc->p.kv_append) /* the appending kernel */
                ok &= emit(argv[1], tc, pc->name, FCL_K_KV_APPEND, &pc->p, &c, 0, 0);
        }
    }
    return ok ? 0 : 1;
}
