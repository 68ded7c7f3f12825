/* SPDX-License-Identifier: MIT */
/*
 * test_tiles.c: the tile chooser on fake device profiles of every vendor (no device needed): each
 * configuration fits the local-memory budget by the kernel's exact formula and the work-group
 * limit, divides the head dim evenly, and uses the device's warp/wavefront width where it can; the
 * budgets (src/tiles.c), the portable kernel's tiles, and the policy (path names, errors,
 * $FLASHCL_LOCAL_MEM_LIMIT). Each other kernel's choice and refusals: test_choice_mma.c,
 * test_choice_wgmma.c, test_choice_decode.c.
 */
#include "choice.h"

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
    bad.path = FLASHCL_PATH_DPAS + 1; /* (past the last path: 8) */
    ck_assert_int_eq(flashcl_choose_config_policy(&prof, &bad, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "policy.path = 8"));
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
    tcase_add_test(tc, test_path_names);
    tcase_add_loop_test(tc, test_monotone_in_budget, 0, 32);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
