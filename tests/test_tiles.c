/* SPDX-License-Identifier: MIT */
/*
 * test_tiles.c: the tile chooser on fake device profiles of every vendor (no device needed): each
 * configuration fits the local-memory budget by the kernel's exact formula and the work-group
 * limit, divides the head dim evenly, and uses the device's warp/wavefront width where it can.
 */
#include "fake_devices.h"
#include "testutil.h"

#include <string.h>


/* The policy the tests choose under (path and local-memory cap: not the device's facts); profile_of
 * resets it to auto with no cap. */
static flashcl_policy policy;

static flashcl_status choose(const flashcl_device_profile *prof, const flashcl_problem *p, flashcl_algorithm a,
                             flashcl_config *c)
{
    return flashcl_choose_config_policy(prof, &policy, p, a, c);
}

/* What tiles may use: the device's local memory, never more than 64 KiB, nor more than the cap; on a GPU
 * whose static arrays may take more, up to that but half a compute unit's (two work-groups a unit). */
static uint64_t budget_of(const flashcl_device_profile *prof)
{
    uint64_t b = prof->local_mem_size < 65536 ? prof->local_mem_size : 65536;
    if (!prof->is_cpu && prof->local_mem_static > prof->local_mem_size) {
        const uint64_t half = prof->local_mem_per_cu / 2 - 1024 - 16; /* NVIDIA's reserved 1 KiB a block */
        const uint64_t more = prof->local_mem_static < half ? prof->local_mem_static : half;
        b = more > b ? more : b;
    }
    return policy.local_mem_limit && policy.local_mem_limit < b ? policy.local_mem_limit : b;
}

static flashcl_device_profile profile_of(const fake_device *f)
{
    policy = (flashcl_policy){.path = FLASHCL_PATH_AUTO};
    return fake_profile(f);
}

/* NVIDIA's static local memory: each work-group may take what the probe found, within half an SM's
 * shared memory less the 1 KiB reserved a block and the compiler's bytes (two work-groups an SM); $FLASHCL_LOCAL_MEM_LIMIT (the policy's cap) still caps it; a
 * CPU's reported size is never believed past 64 KiB, whatever its profile says. */
START_TEST(test_static_local_budget)
{
    const struct {
        int fake;
        uint64_t budget;
    } want[] = {{N_FAKES - 4, 115696}, {N_FAKES - 3, 82928}, {N_FAKES - 2, 50160}, {N_FAKES - 1, 49152}, {0, 49152}};
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.heads_q = p.heads_kv = 16;
    p.seq_q = p.seq_kv = 4096;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        flashcl_device_profile prof = profile_of(&fakes[want[i].fake]);
        flashcl_config c;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.local_mem_budget == want[i].budget, "%s: budget %llu, want %llu", fakes[want[i].fake].name,
                      (unsigned long long)c.local_mem_budget, (unsigned long long)want[i].budget);
        ck_assert_uint_le(c.local_mem_bytes, c.local_mem_budget);
        if (c.local_mem_budget > prof.local_mem_size) /* past the reported size: two work-groups a unit */
            ck_assert_uint_ge(prof.local_mem_per_cu / c.local_mem_bytes, 2);
        policy.local_mem_limit = 49152;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_uint_eq(c.local_mem_budget, 49152);
        ck_assert_uint_le(c.local_mem_bytes, 49152);
    }
    /* Hopper's budget lets the portable kernel's fp32 d=128 tile keep Q resident with 128 rows */
    flashcl_device_profile prof = profile_of(&fakes[N_FAKES - 4]);
    flashcl_config c;
    p.dtype = FLASHCL_DTYPE_F32;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    ck_assert_int_eq(c.d_chunk, 128);
    ck_assert_uint_gt(c.local_mem_bytes, 49152);
    /* a GPU that reports more than 64 KiB (no probe: static = reported) is held to 64 KiB */
    prof = profile_of(&fakes[0]);
    prof.vendor = FLASHCL_VENDOR_OTHER;
    prof.local_mem_size = prof.local_mem_static = prof.local_mem_per_cu = 256 * 1024;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_uint_eq(c.local_mem_budget, 65536);
    /* a CPU that claims more in static arrays is held to 64 KiB */
    prof = profile_of(&fakes[8]);
    prof.local_mem_static = 4u << 20;
    prof.local_mem_per_cu = 8u << 20;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_uint_eq(c.local_mem_budget, 65536);
}
END_TEST

/* The register budgets per vendor, from the vendors' compilers (tools/vendor_check.sh): Intel's IGC
 * keeps a block larger than a quarter of the default in memory, so a quarter there (accumulators 16,
 * scores 8 a work-item; the decode kernel's estimate 44), and 16-lane sub-groups on Xe-HPC (128 KiB of
 * local memory) only; NVIDIA and AMD the default (64 and 32), AMD's LDS budget the whole 64 KiB. */
START_TEST(test_vendor_budgets)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 16;
    p.seq_q = p.seq_kv = 4096;
    const fake_device xe_hpc = {.name = "Intel Xe-HPC (128 KiB, 1024, subgroup 32)", .vendor = FLASHCL_VENDOR_INTEL,
                                .local = 128 * 1024, .max_wg = 1024, .multiple = 32};
    const struct {
        const fake_device *f;
        int max_acc, max_scores, sub_group;
    } want[] = {{&fakes[0], 64, 32, 0}, {&fakes[1], 64, 32, 0}, {&fakes[2], 64, 32, 0},
                {&fakes[3], 16, 8, 0},  {&fakes[5], 16, 8, 0},  {&xe_hpc, 16, 8, 16}};
    const int dims[] = {64, 128, 256};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
        for (int d = 0; d < 3; ++d) {
            flashcl_device_profile prof = profile_of(want[i].f);
            p.head_dim = dims[d];
            p.seq_q = 4096;
            flashcl_config c;
            ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_str_eq(c.kernel_name, "flash_fwd");
            const int acc = c.rows_per_item * (dims[d] / c.threads_per_row);
            const int scores = c.rows_per_item * (c.block_n / c.threads_per_row);
            /* (one row a work-item is the floor: d=256 holds 32 columns of it on Intel too) */
            ck_assert_msg((acc <= want[i].max_acc || c.rows_per_item == 1) && scores <= want[i].max_scores,
                          "%s d=%d: %d accumulators over %d rows, %d scores", want[i].f->name, dims[d], acc,
                          c.rows_per_item, scores);
            ck_assert_int_eq(c.sub_group, want[i].sub_group);
            if (want[i].f->vendor == FLASHCL_VENDOR_AMD)
                ck_assert_uint_eq(c.local_mem_budget, 65536);
            /* the decode kernel (forced): its register estimate within the budget */
            policy.path = FLASHCL_PATH_DECODE;
            p.seq_q = 1;
            ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_str_eq(c.kernel_name, "flash_decode");
            const int regs = 8 * (2 * c.block_m + 2 * c.v_chunk) + c.block_m * c.v_chunk;
            ck_assert_msg(regs <= (want[i].max_acc == 16 ? 44 : 176), "%s d=%d decode: %d", want[i].f->name, dims[d],
                          regs);
            policy.path = FLASHCL_PATH_AUTO;
        }
}
END_TEST

START_TEST(test_every_head_dim)
{
    const fake_device *f = &fakes[_i];
    flashcl_device_profile prof = profile_of(f);
    flashcl_problem p;
    flashcl_problem_default(&p);
    const int seqs[] = {1, 16, 113, 4096};
    for (int d = 8; d <= 256; d += 8)
        for (int s = 0; s < 4 * 3; ++s) {
            p.head_dim = d;
            p.seq_q = p.seq_kv = seqs[s / 3];
            p.dtype = (flashcl_dtype)(s % 3);
            flashcl_config c, again;
            flashcl_status st = choose(&prof, &p, FLASHCL_ALGO_FLASH, &c);
            ck_assert_msg(st == FLASHCL_SUCCESS, "%s d=%d: %s", f->name, d, flashcl_status_name(st));
            /* deterministic: the same answer twice */
            ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &again), FLASHCL_SUCCESS);
            ck_assert_mem_eq(&c, &again, sizeof c);
            ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(d, &c));
            ck_assert_msg(c.local_mem_bytes <= budget_of(&prof), "%s d=%d: %llu B > budget %llu", f->name, d,
                          (unsigned long long)c.local_mem_bytes, (unsigned long long)budget_of(&prof));
            if (cfg_decode(&c)) { /* the decode kernel's #error lines and its register blocks */
                ck_assert_msg(seqs[s / 3] <= 16, "%s d=%d: the decode kernel for %d queries", f->name, d, seqs[s / 3]);
                ck_assert_int_ge(c.threads_per_row * 8, d);
                ck_assert_int_le(c.threads_per_row, 32);
                ck_assert_int_eq(c.threads_per_row & (c.threads_per_row - 1), 0);
                ck_assert_int_eq(c.work_group_size % c.threads_per_row, 0);
                ck_assert_int_le(c.work_group_size, (int)f->max_wg);
                ck_assert_int_le(c.block_m, 8);
                ck_assert_int_eq(c.block_n, c.work_group_size / c.threads_per_row * c.v_chunk);
                continue;
            }
            ck_assert_int_eq(c.block_m % c.rows_per_item, 0);
            ck_assert_int_eq(c.work_group_size, c.block_m / c.rows_per_item * c.threads_per_row);
            ck_assert_int_le(c.work_group_size, (int)(f->max_wg < 256 ? f->max_wg : 256));
            /* what the kernel's #error lines demand */
            ck_assert_int_eq(d % c.threads_per_row, 0);
            ck_assert_int_eq(c.block_n % c.threads_per_row, 0);
            ck_assert_int_eq(c.d_chunk % 4, 0);
            ck_assert_int_eq(d % c.d_chunk, 0);
            ck_assert_int_eq(c.v_chunk % 4, 0);
            ck_assert_int_eq(c.block_n % c.v_chunk, 0);
            /* registers per work-item: the output block and the score block */
            ck_assert_int_le(c.rows_per_item * (d / c.threads_per_row), 64);
            ck_assert_int_le(c.rows_per_item * (c.block_n / c.threads_per_row), 32);
            ck_assert_int_le(c.block_m, 128);
            ck_assert_int_le(c.block_n, 64);
            if (seqs[s / 3] >= 113) {
                /* Long problems: whole warps/wavefronts, and at least 16 keys per tile when the
                 * device has the 32 KiB or more that every desktop GPU has. */
                ck_assert_msg(c.work_group_size % (int)f->multiple == 0, "%s d=%d: work-group %d not a multiple of %zu",
                              f->name, d, c.work_group_size, f->multiple);
                if (f->local >= 32 * 1024)
                    ck_assert_int_ge(c.block_n, 16);
            } else if (seqs[s / 3] == 1) {
                /* A single query row gets the smallest tile that still fills a warp. */
                const int warp = (int)f->multiple;
                ck_assert_int_le(c.work_group_size, warp > c.threads_per_row ? warp : c.threads_per_row);
            }
        }
}
END_TEST

/* PoCL reports its 1 MiB L2 as local memory: the tiles must look like a GPU's, not 1 MiB ones. */
START_TEST(test_cpu_cache_not_local_memory)
{
    flashcl_device_profile prof = profile_of(&fakes[8]);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.seq_q = p.seq_kv = 4096;
    flashcl_config c;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_uint_le(c.local_mem_bytes, 65536);
    ck_assert_int_le(c.work_group_size, 256);
}
END_TEST

/* Less local memory never gives a larger tile (monotone in the budget). */
START_TEST(test_monotone_in_budget)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 8 * (_i + 1);
    p.seq_q = p.seq_kv = 2048;
    uint64_t prev_area = UINT64_MAX;
    for (uint64_t budget = 65536; budget >= 8192; budget -= 4096) {
        policy.local_mem_limit = budget;
        flashcl_config c;
        if (choose(&prof, &p, FLASHCL_ALGO_FLASH, &c) != FLASHCL_SUCCESS)
            break;
        const uint64_t area = c.local_mem_bytes;
        ck_assert_uint_le(area, budget);
        ck_assert_uint_le(area, prev_area);
        prev_area = area;
    }
}
END_TEST

/* GQA decode steps pack the query heads of a KV head into one work-group; prefill and MHA do not.
 * Split-KV only where the grid leaves compute units idle. */
/* The matrix-unit path: chosen on a device with matrix units for the problems flash_mma.cl takes, the
 * portable kernel (with the reason) for the rest, forced either way by the profile's path. */
/* FLASHCL_PATH_WGMMA: flash_wgmma on a Hopper profile whose sm_90a probe passed (matrix_units 2), with
 * its tiles and local memory (one work-group may take more than the chooser's two-a-compute-unit budget);
 * emulated on a profile without it; auto takes it where the probe passed (flash_mma elsewhere, and for the
 * problems it does not take); forced, problems it does not take fall back with the reason first; the
 * path's name parses. */
START_TEST(test_wgmma_path)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    prof.nv_cc_major = 9;
    prof.matrix_units = 2;
    prof.local_mem_static = 232448;
    prof.local_mem_per_cu = 233472;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.heads_q = p.heads_kv = 16;
    p.seq_q = p.seq_kv = 4096;
    p.dtype = FLASHCL_DTYPE_F16;
    flashcl_config c;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_wgmma"); /* auto, where the sm_90a probe passed */
    ck_assert_int_eq(cfg_mma(&c), 3);
    {   /* auto and a problem it does not take: flash_mma, with no "not wgmma" (nothing asked for it) */
        flashcl_problem q = p;
        q.head_dim = 96;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_mma");
        ck_assert_ptr_null(strstr(c.path_reason, "wgmma"));
        prof.matrix_units = 1; /* an A100, or a Hopper whose probe failed: flash_mma under auto */
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_mma");
        prof.matrix_units = 2;
    }
    policy.path = FLASHCL_PATH_WGMMA;
    const struct {
        int d, seq_q, bm, bn;
    } want[] = {{64, 4096, 128, 128}, {128, 4096, 128, 128}, {256, 4096, 128, 64}, {128, 50, 64, 128}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        flashcl_problem q = p;
        q.head_dim = want[i].d;
        q.seq_q = want[i].seq_q;
        q.causal = (int)(i & 1);
        q.heads_kv = 4;
        q.dtype = i & 2 ? FLASHCL_DTYPE_BF16 : FLASHCL_DTYPE_F16;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 3 && !strcmp(c.kernel_name, "flash_wgmma"), "d=%d: %s %s", want[i].d, c.kernel_name, c.path_reason);
        ck_assert_int_eq(c.block_m, want[i].bm);
        ck_assert_int_eq(c.block_n, want[i].bn);
        /* 128 work-items a warpgroup of 64 rows; with two of them the producer warpgroup, 128 more */
        const int producer = want[i].bm == 128;
        ck_assert_int_eq(c.work_group_size, 2 * want[i].bm + (producer ? 128 : 0));
        ck_assert_int_eq(!!strstr(c.reason, "producer"), producer);
        ck_assert_int_eq(c.v_chunk, 2 * want[i].bn); /* two K/V stages (the pipelined loop): they fit 227 KiB */
        /* Q's block, two stages of K and V tiles, the producer's four mbarriers a stage */
        ck_assert_uint_eq(c.local_mem_bytes, (uint64_t)(want[i].bm + 4 * want[i].bn) * want[i].d * 2 + (producer ? 64 : 0));
        ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(want[i].d, &c));
        ck_assert_uint_le(c.local_mem_bytes, prof.local_mem_static);
        ck_assert_ptr_nonnull(strstr(c.path_reason, "sm_90a"));
    }
    {   /* a device that allows fewer than 384 work-items a work-group: the consumers alone */
        flashcl_device_profile small = prof;
        small.max_work_group_size = 256;
        ck_assert_int_eq(choose(&small, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_wgmma");
        ck_assert_int_eq(c.work_group_size, 256);
        ck_assert_ptr_null(strstr(c.reason, "producer"));
    }
    /* what it does not take: flash_mma instead, its reason first */
    struct {
        const char *reason;
        flashcl_problem q;
    } no[5];
    for (int i = 0; i < 5; ++i)
        no[i].q = p;
    no[0].reason = "head_dim other than 64", no[0].q.head_dim = 96;
    no[1].reason = "16-byte aligned", no[1].q.k_strides = (flashcl_strides){4096 * 16 * 130, 16 * 130, 130};
    no[2].reason = "head_dim_v", no[2].q.head_dim_v = 64;
    no[3].reason = "sinks", no[3].q.sinks = 1;
    no[4].reason = "fp32", no[4].q.dtype = FLASHCL_DTYPE_F32;
    for (int i = 0; i < 5; ++i) {
        ck_assert_int_eq(choose(&prof, &no[i].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) < 3 && !strncmp(c.path_reason, "not wgmma (", 11) && strstr(c.path_reason, no[i].reason),
                      "%s: %s %s", no[i].reason, c.kernel_name, c.path_reason);
    }
    ck_assert_int_eq(choose(&prof, &no[0].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_mma"); /* d=96 stays on the matrix units */
    /* a decode step: the decode kernels, as under auto */
    flashcl_problem dq = p;
    dq.seq_q = 1;
    ck_assert_int_eq(choose(&prof, &dq, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_lt(cfg_mma(&c), 3);
    /* without the sm_90a probe (an A100, or a Hopper whose probe failed): emulated */
    prof.matrix_units = 1;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 4);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "emulated"));
    policy.path = FLASHCL_PATH_AUTO;
    flashcl_path parsed = FLASHCL_PATH_AUTO;
    ck_assert_int_eq(flashcl_path_parse("wgmma", &parsed), FLASHCL_SUCCESS);
    ck_assert_int_eq(parsed, FLASHCL_PATH_WGMMA);
    ck_assert_str_eq(flashcl_path_name(FLASHCL_PATH_WGMMA), "wgmma");
    ck_assert_int_eq(flashcl_path_parse("wgmma2", &parsed), FLASHCL_INVALID_ARGUMENT);
    /* the config names its kernel (ABI 5): the enum, the emulation flag and the entry point agree */
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_WGMMA);
    ck_assert_int_ne(c.emulated, 0);
    ck_assert_str_eq(c.kernel_name, "flash_wgmma");
    static const char *const names[] = {"portable", "mma", "wgmma", "decode", "decode_mma", "naive", "standard", "?"};
    for (int k = 0; k < 8; ++k)
        ck_assert_str_eq(flashcl_kernel_name((flashcl_kernel)k), names[k]);
}
END_TEST

START_TEST(test_matrix_unit_path)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    prof.nv_cc_major = 9;
    prof.matrix_units = 1;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.heads_q = p.heads_kv = 16;
    p.seq_q = p.seq_kv = 4096;
    p.dtype = FLASHCL_DTYPE_F16;
    flashcl_config c;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_mma");
    ck_assert_int_eq(cfg_mma(&c), 1);
    ck_assert_int_eq(c.work_group_size, 128); /* four warps */
    ck_assert_int_eq(c.kv_splits, 1);
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));
    ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
    ck_assert_ptr_nonnull(strstr(c.path_reason, "matrix units"));
    /* 16 rows a warp (Q in registers, padded rows: cl/flash_mma.cl's layout) where 32 do not fit */
    policy.local_mem_limit = 40 * 1024;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.block_m, 64);
    ck_assert_int_eq(c.rows_per_item, 2);
    ck_assert_int_eq(c.block_n, 64);
    ck_assert_uint_eq(c.local_mem_bytes, (64 + 64) * (128 + 8) * 2);
    policy.local_mem_limit = 0;

    /* Windows, causal, GQA, bf16 and head dims 32..128 in steps of 32 stay on the matrix units. */
    static const int dims_ok[] = {32, 64, 96, 128};
    for (int i = 0; i < 4; ++i) {
        flashcl_problem q = p;
        q.head_dim = dims_ok[i];
        q.dtype = FLASHCL_DTYPE_BF16;
        q.causal = 1;
        q.heads_kv = 4;
        q.window = 1;
        q.window_left = 100;
        q.window_right = 0;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 1, "d=%d: %s", dims_ok[i], c.path_reason);
        ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
    }

    /* What goes to the portable kernel, and the reason it gives. */
    struct {
        const char *what, *reason;
        flashcl_problem q;
    } no[9];
    int n = 0;
    for (int i = 0; i < 9; ++i)
        no[i].q = p;
    no[n].what = "fp32", no[n].reason = "fp32", no[n++].q.dtype = FLASHCL_DTYPE_F32;
    no[n].what = "d=80", no[n].reason = "head_dim", no[n++].q.head_dim = 80;
    no[n].what = "d=72", no[n].reason = "head_dim", no[n++].q.head_dim = 72;
    no[n].what = "alibi", no[n].reason = "biases", no[n++].q.alibi = 1;
    no[n].what = "softcap", no[n].reason = "softcap", no[n++].q.softcap = 30.0f;
    no[n].what = "splits", no[n].reason = "splits", no[n++].q.kv_splits = 4;
    no[n].what = "cache", no[n].reason = "KV cache", no[n++].q.kv_cache = 1;
    no[n].what = "mixed", no[n].reason = "K and V in another dtype than Q", no[n++].q.kv_dtype = FLASHCL_KV_DTYPE_F32;
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(choose(&prof, &no[i].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 0 && !strcmp(c.kernel_name, "flash_fwd"), "%s: got %s", no[i].what, c.kernel_name);
        ck_assert_msg(strstr(c.path_reason, "portable: ") && strstr(c.path_reason, no[i].reason), "%s: \"%s\"",
                      no[i].what, c.path_reason);
    }

    /* On Hopper's static budget, the tiles measured fastest (docs/design/mma.md, "The tiles"): 32 rows a
     * warp (Q's block in local memory) x 64 keys up to d=64, x 64 keys in two K/V stages up to d=128
     * and x 32 keys up to d=192, 16 rows x 64 keys above; 16 rows a warp where the queries fill less
     * than a 128-row block; one stage of 32 keys where two do not fit. */
    {
        flashcl_device_profile hopper = profile_of(&fakes[N_FAKES - 4]);
        hopper.matrix_units = 1;
        flashcl_problem q = p;
        static const struct {
            int d, seq_q, bm, bn, rows, stages;
        } want[] = {{64, 4096, 128, 64, 4, 1}, {128, 4096, 128, 64, 4, 1}, {96, 1024, 128, 64, 4, 2},
                    {128, 2048, 128, 64, 4, 2},
                    {192, 4096, 128, 32, 4, 1}, {256, 4096, 64, 64, 2, 1}, {128, 64, 64, 64, 2, 1},
                    {64, 65, 128, 64, 4, 1},    {256, 100, 64, 64, 2, 1}};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
            q.head_dim = want[i].d;
            q.seq_q = q.seq_kv = want[i].seq_q;
            ck_assert_int_eq(choose(&hopper, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(cfg_mma(&c) == 1 && c.block_m == want[i].bm && c.block_n == want[i].bn &&
                              c.rows_per_item == want[i].rows && c.v_chunk == want[i].stages * want[i].bn,
                          "d=%d seq_q=%d: %s %dx%d/%d v_chunk %d (%s)", want[i].d, want[i].seq_q, c.kernel_name, c.block_m,
                          c.block_n, c.rows_per_item, c.v_chunk, c.path_reason);
            ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(want[i].d, &c));
            ck_assert_uint_le(c.local_mem_bytes, budget_of(&hopper));
        }
        /* d=128, short keys, where two stages of 64 keys (104448 B) do not fit: one (69632 B); where that
         * does not either, one of 32 keys (52224 B) */
        {
            flashcl_device_profile small = hopper;
            q.head_dim = 128;
            q.seq_q = q.seq_kv = 1024;
            small.local_mem_static = 100000;
            ck_assert_int_eq(choose(&small, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(cfg_mma(&c) == 1 && c.block_m == 128 && c.block_n == 64 && c.v_chunk == 64, "%dx%d v_chunk %d (%s)",
                          c.block_m, c.block_n, c.v_chunk, c.reason);
            small.local_mem_static = 60000;
            ck_assert_int_eq(choose(&small, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(cfg_mma(&c) == 1 && c.block_m == 128 && c.block_n == 32 && c.v_chunk == 32, "%dx%d v_chunk %d (%s)",
                          c.block_m, c.block_n, c.v_chunk, c.reason);
        }
        /* the reported 48 KiB alone: d=256 still on the matrix units, with 16-key tiles and 2 warps */
        q.head_dim = 256;
        q.seq_q = 4096;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 1 && c.block_m == 32 && c.block_n == 16 && c.work_group_size == 64, "%dx%d (%s)",
                      c.block_m, c.block_n, c.path_reason);
        ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
    }
    policy.path = FLASHCL_PATH_AUTO;

    /* A decode step takes the matrix-unit decode kernel; a long fp32 one the CUDA-core decode kernel
     * (the shuffles where the matrix-unit compile proved PTX). */
    {
        flashcl_problem q = p;
        q.seq_q = 1;
        q.seq_kv = 1 << 19;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
        ck_assert_int_eq(cfg_decode(&c), 3);
        q.dtype = FLASHCL_DTYPE_F32;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_decode");
        ck_assert_int_eq(cfg_decode(&c), 2);
        ck_assert_int_eq(cfg_mma(&c), 0);
    }

    /* Forced portable; a device without matrix units (auto: portable; forced: emulated). */
    policy.path = FLASHCL_PATH_PORTABLE;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "forced"));
    policy.path = FLASHCL_PATH_AUTO;
    prof.matrix_units = 0;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "did not compile")); /* cc 9.0 yet no proof */
    prof.nv_cc_major = 7;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "no matrix units"));
    policy.path = FLASHCL_PATH_MMA;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_mma");
    ck_assert_int_eq(cfg_mma(&c), 2); /* emulated: the exchange area counts in local memory */
    ck_assert_uint_eq(c.local_mem_bytes, (64 + 64) * (128 + 8) * 2 + 4 * 32 * 8 * 4);
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));

    /* Short of local memory: shorter key tiles; far too short: the portable kernel. */
    prof = profile_of(&fakes[10]); /* 16 KiB, 128 items */
    policy.path = FLASHCL_PATH_MMA;
    p.head_dim = 64;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 2);
    ck_assert_int_lt(c.block_n, 64);
    ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
    policy.local_mem_limit = 4096;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "local memory"));
}
END_TEST

START_TEST(test_path_names)
{
    for (int i = FLASHCL_PATH_AUTO; i <= FLASHCL_PATH_MMA; ++i) {
        flashcl_path back;
        ck_assert_int_eq(flashcl_path_parse(flashcl_path_name((flashcl_path)i), &back), FLASHCL_SUCCESS);
        ck_assert_int_eq(back, i);
    }
    flashcl_path back = FLASHCL_PATH_MMA;
    ck_assert_int_eq(flashcl_path_parse("tensor", &back), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(back, FLASHCL_PATH_MMA); /* untouched */
    ck_assert_int_eq(flashcl_path_parse(NULL, &back), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_path_parse("auto", NULL), FLASHCL_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_decode_packing_and_splits)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    prof.compute_units = 132;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.heads_q = 32;
    p.heads_kv = 8;
    p.seq_q = 1;
    p.seq_kv = 65536;
    flashcl_config c;
    /* The decode kernel (forced; auto takes it where measured faster, below): the 4 query heads of a
     * KV head in one work-group's rows, teams of 16 lanes (d=128), 128 work-items, splits for 32
     * work-groups per compute unit. */
    policy.path = FLASHCL_PATH_DECODE;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode");
    ck_assert_int_eq(c.gqa_pack, 4);
    ck_assert_int_eq(c.block_m, 4);
    ck_assert_int_eq(c.threads_per_row, 16);
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_int_eq(c.kv_splits, (int)(65536 / (2 * c.block_n) < 528 ? 65536 / (2 * c.block_n) : 528));
    ck_assert_ptr_nonnull(strstr(c.path_reason, "decode kernel"));
    /* Auto: the decode kernel where the device has shuffles and the step reads 2^19 key rows or more
     * (8 x 65536 here), else the portable kernel's decode path (what masks and packed sequences take). */
    policy.path = FLASHCL_PATH_AUTO;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd"); /* no shuffles: not measured faster */
    prof.matrix_units = 1;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode");
    ck_assert_int_eq(cfg_decode(&c), 2);
    p.seq_kv = 32768; /* 8 x 32768 = 2^18 key rows */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    ck_assert_ptr_nonnull(strstr(c.path_reason, "2^19"));
    /* fp16/bf16 with a head dim a multiple of 64: the matrix-unit decode kernel at any length, up to 8
     * packed rows, four warps of two 16-key tiles (one above d=128), as many splits as fill one wave of
     * two work-groups per compute unit (never past it), each of at least 4 steps. */
    p.dtype = FLASHCL_DTYPE_F16;
    p.seq_kv = 131072;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
    ck_assert_int_eq(cfg_decode(&c), 3);
    ck_assert_int_eq(c.gqa_pack, 4);
    ck_assert_int_eq(c.block_m, 4);
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_int_eq(c.v_chunk, 32);
    ck_assert_int_eq(c.block_n, 128);
    ck_assert_int_eq(c.kv_splits, 33); /* 8 work-groups a split: 264 = 2 x 132 */
    ck_assert_uint_eq(c.local_mem_bytes, 4 * 4 * (128 + 2) * 4); /* cl/flash_decode_mma.cl's merge area */
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));
    p.batch = 8;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 4); /* 64 work-groups a split: 256 <= 264 */
    p.batch = 64;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 1);
    p.batch = 1;
    p.seq_kv = 8192;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 16); /* 4 steps of 128 keys a split */
    /* Quantized caches: more 16-key tiles a warp (as many bytes in flight as registers allow); E4M3 takes
     * 4 only where sm_89's pair conversion is (FCL_SM), 3 on the permute path. */
    p.kv_cache = 1;
    p.seq_kv = 131072;
    const struct {
        flashcl_kv_format format;
        int cc, v_chunk;
    } quant[] = {{FLASHCL_KV_INT8, 90, 48},        {FLASHCL_KV_FP8_E5M2, 90, 64}, {FLASHCL_KV_FP8_E4M3, 90, 64},
                 {FLASHCL_KV_FP8_E4M3, 89, 64},    {FLASHCL_KV_FP8_E4M3, 86, 48}, {FLASHCL_KV_FP8_E4M3, 80, 48},
                 {FLASHCL_KV_PLAIN, 90, 32}};
    for (size_t i = 0; i < sizeof quant / sizeof quant[0]; ++i) {
        p.kv_format = quant[i].format;
        prof.nv_cc_major = quant[i].cc / 10;
        prof.nv_cc_minor = quant[i].cc % 10;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
        ck_assert_msg(c.v_chunk == quant[i].v_chunk, "%s sm_%d: %d keys a warp, want %d",
                      flashcl_kv_format_name(p.kv_format), quant[i].cc, (int)c.v_chunk, quant[i].v_chunk);
    }
    p.kv_cache = 0;
    p.kv_format = FLASHCL_KV_PLAIN;
    p.seq_kv = 8192;
    p.head_dim = 256;
    p.dtype = FLASHCL_DTYPE_BF16;
    p.heads_kv = 2; /* 16 query heads a KV head: two work-groups of 8 rows */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
    ck_assert_int_eq(c.block_m, 8);
    ck_assert_int_eq(c.v_chunk, 16);
    ck_assert_int_eq(c.block_n, 64);
    p.head_dim = 96; /* not a multiple of 64: the portable kernel below 2^19 key rows */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    p.head_dim = 128;
    p.heads_kv = 8;
    prof.matrix_units = 0; /* auto: none without matrix units; forced: emulated */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    policy.path = FLASHCL_PATH_MMA;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
    ck_assert_int_eq(cfg_decode(&c), 4);
    ck_assert_uint_eq(c.local_mem_bytes, 4 * 4 * (128 + 2) * 4 + 4 * 32 * 8 * 4);
    p.dtype = FLASHCL_DTYPE_F32; /* forced, but no fp32 on the matrix units: portable, with the reason */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    ck_assert_ptr_nonnull(strstr(c.path_reason, "matrix-unit decode kernel needs fp16/bf16"));
    policy.path = FLASHCL_PATH_AUTO;
    p.seq_kv = 65536;
    prof.matrix_units = 0;
    policy.path = FLASHCL_PATH_PORTABLE;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_fwd");
    ck_assert_int_eq(c.gqa_pack, 4);
    ck_assert_int_ge(c.block_m, 4); /* the 4 packed heads' rows fit one block */
    ck_assert_int_gt(c.kv_splits, 1); /* 8 work-groups for 132 compute units: split */
    /* A decode step streams K/V: work-groups of 128 items (32 column groups x 4 packed rows), and
     * enough splits for 32 work-groups per compute unit (capped at two 64-key tiles per split). */
    ck_assert_int_eq(c.threads_per_row, 32);
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_int_eq(c.kv_splits, (int)(65536 / (2 * c.block_n) < 528 ? 65536 / (2 * c.block_n) : 528));
    p.kv_splits = 1;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 1); /* forced */
    p.kv_splits = 0;
    p.seq_q = p.seq_kv = 4096; /* prefill: neither */
    p.batch = 4;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.gqa_pack, 1);
    ck_assert_int_eq(c.kv_splits, 1);
    p.seq_q = 1;
    p.heads_kv = 32; /* MHA decode: no packing */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.gqa_pack, 1);
    /* Regression (fuzz_problem): 8 queries x 1.56e9 query heads on one KV head overflowed the packed
     * row count; such a group is not packed. */
    p.batch = 1;
    p.seq_q = 8;
    p.heads_q = 1560281089;
    p.heads_kv = 1;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.gqa_pack, 1);
}
END_TEST

/* A policy's path must be a flashcl_path; the arguments must not be NULL. */
START_TEST(test_policy_errors)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    flashcl_problem p;
    flashcl_problem_default(&p);
    flashcl_config c;
    flashcl_policy bad;
    flashcl_policy_default(&bad);
    ck_assert_int_eq(bad.path, -1);
    ck_assert_ptr_null(bad.tuning_db);
    bad.path = 7;
    ck_assert_int_eq(flashcl_choose_config_policy(&prof, &bad, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "policy.path = 7"));
    ck_assert_int_eq(flashcl_choose_config_policy(NULL, &bad, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "profile is NULL"));
    /* NULL policy: the default one */
    ck_assert_int_eq(flashcl_choose_config_policy(&prof, NULL, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
}
END_TEST

/* $FLASHCL_LOCAL_MEM_LIMIT: a byte count with K, M or G (binary), read as such, and anything else refused
 * by name (it was read as the digits before the first other character: "48M" as 48 bytes, "abc" as none). */
START_TEST(test_local_mem_limit_env)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 2;
    p.seq_q = 256;
    flashcl_config c;
    static const struct {
        const char *value;
        uint64_t bytes; /* 0: refused */
    } cases[] = {{"32768", 32768}, {"32K", 32768}, {"32KiB", 32768}, {"32k", 32768}, {"1M", 1 << 20},
                 {"48M", 48u << 20}, {"1G", 1u << 30}, {"abc", 0}, {"48X", 0}, {"-5", 0}, {"12 K", 0},
                 {"99999999999999999999", 0}, {"17179869184G", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        setenv("FLASHCL_LOCAL_MEM_LIMIT", cases[i].value, 1);
        const flashcl_status st = flashcl_choose_config_policy(&prof, NULL, &p, FLASHCL_ALGO_FLASH, &c);
        if (!cases[i].bytes) {
            ck_assert_msg(st == FLASHCL_INVALID_ARGUMENT, "%s: %s", cases[i].value, flashcl_status_name(st));
            ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "FLASHCL_LOCAL_MEM_LIMIT"));
            continue;
        }
        ck_assert_msg(st == FLASHCL_SUCCESS, "%s: %s", cases[i].value, flashcl_context_last_error(NULL));
        flashcl_policy policy;
        flashcl_policy_default(&policy);
        policy.local_mem_limit = cases[i].bytes; /* the same cap given directly: the same choice */
        unsetenv("FLASHCL_LOCAL_MEM_LIMIT");
        flashcl_config direct;
        ck_assert_int_eq(flashcl_choose_config_policy(&prof, &policy, &p, FLASHCL_ALGO_FLASH, &direct), FLASHCL_SUCCESS);
        ck_assert_msg(c.local_mem_budget == direct.local_mem_budget, "%s: budget %llu, direct %llu", cases[i].value,
                      (unsigned long long)c.local_mem_budget, (unsigned long long)direct.local_mem_budget);
    }
    setenv("FLASHCL_LOCAL_MEM_LIMIT", "16K", 1); /* a cap below the device's: it binds */
    ck_assert_int_eq(flashcl_choose_config_policy(&prof, NULL, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_uint_le(c.local_mem_budget, 16384);
    unsetenv("FLASHCL_LOCAL_MEM_LIMIT");
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("tiles");
    TCase *tc = tcase_create("chooser");
    tcase_add_loop_test(tc, test_every_head_dim, 0, N_FAKES);
    tcase_add_test(tc, test_static_local_budget);
    tcase_add_test(tc, test_vendor_budgets);
    tcase_add_test(tc, test_cpu_cache_not_local_memory);
    tcase_add_test(tc, test_policy_errors);
    tcase_add_test(tc, test_local_mem_limit_env);
    tcase_add_test(tc, test_decode_packing_and_splits);
    tcase_add_test(tc, test_matrix_unit_path);
    tcase_add_test(tc, test_wgmma_path);
    tcase_add_test(tc, test_path_names);
    tcase_add_loop_test(tc, test_monotone_in_budget, 0, 32);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
