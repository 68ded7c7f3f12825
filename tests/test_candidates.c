/* SPDX-License-Identifier: MIT */
/*
 * test_candidates.c: the plan's ordered candidates (src/candidates.c) on the fake device profiles, no
 * device needed. The first is what the chooser reports; none repeats; each after it is the same kernel
 * smaller (register block, or a ladder of tiles under a work-group bound) or a later kernel in the order
 * of preference; and the walk (fcl_next_candidate) answers what a compiler could report: a fit keeps
 * the candidate, a spill on a GPU takes a smaller register block, a program that did not build takes the
 * next kernel, a kernel that needs more than it may have takes tiles that fit what it reported.
 */
#include "fake_devices.h"
#include "testutil.h"
#include "../src/kernels/module.h"

#include <string.h>

static flashcl_problem problem_of(int d, flashcl_dtype dt, int causal, int decode)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 8;
    p.heads_kv = decode ? 2 : 8;
    p.seq_q = decode ? 1 : 4096;
    p.seq_kv = decode ? 32768 : 4096;
    p.head_dim = d;
    p.dtype = dt;
    p.causal = causal;
    return p;
}

/* The order of preference: wgmma, then mma, mfma, wmma and the decode kernels, then the portable kernel last. */
static int rank(flashcl_kernel k)
{
    return k == FLASHCL_KERNEL_WGMMA ? 0 : k == FLASHCL_KERNEL_PORTABLE ? 2 : 1;
}

static int64_t block_of(const flashcl_config *c, int32_t dv)
{
    const fcl_kernel_module *m = fcl_module_of(fcl_config_kernel(c));
    return m->register_block ? m->register_block(c, dv) : 0;
}

static void candidates_of(const flashcl_device_profile *pr, flashcl_path path, const flashcl_problem *p,
                          fcl_candidates *l)
{
    fcl_choice ch;
    fcl_choice_of(pr, path, 0, NULL, &ch);
    ck_assert_int_eq(fcl_choose_candidates(NULL, pr, &ch, p, FLASHCL_ALGO_FLASH, l), FLASHCL_SUCCESS);
    ck_assert_int_ge(l->n, 1);
}

/* Check records the place of every passing ck_assert (a write to a file without fork), five million of them in
 * the grid below, minutes under AddressSanitizer: its checks abort on a failure only. */
#define REQUIRE(cond, ...)                                                                                       \
    do {                                                                                                         \
        if (!(cond))                                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                                           \
    } while (0)

/* Every profile, level, path and a grid of problems: the first is the chooser's, each later one an
 * alternative the one before it does not make redundant. */
START_TEST(test_list_shape)
{
    static const int dims[] = {64, 256}; /* (the two ends: 80 and 128 add time, not kinds of list) */
    static const flashcl_dtype dts[] = {FLASHCL_DTYPE_F32, FLASHCL_DTYPE_F16};
    static fcl_candidates l;
    int lists = 0, longer = 0;
    for (int f = 0; f < N_FAKES; f++)
        for (int mu = 0; mu <= fake_matrix_level(&fakes[f]); mu++)
            for (int path = FLASHCL_PATH_AUTO; path <= FLASHCL_PATH_DPAS; path++)
                for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
                    for (size_t ti = 0; ti < 2; ti++)
                        for (int kind = 0; kind < 3; kind++) {
                            flashcl_device_profile pr = fake_profile(&fakes[f]);
                            pr.matrix_units = mu;
                            const flashcl_problem p = problem_of(dims[di], dts[ti], kind == 1, kind == 2);
                            flashcl_policy pol = {.path = (flashcl_path)path};
                            flashcl_config want;
                            if (flashcl_choose_config_policy(&pr, &pol, &p, FLASHCL_ALGO_FLASH, &want) !=
                                FLASHCL_SUCCESS)
                                continue;
                            candidates_of(&pr, (flashcl_path)path, &p, &l);
                            lists++;
                            longer += l.n > 1;
                            const flashcl_config *c0 = &l.config[0];
                            REQUIRE(c0->kernel == want.kernel && c0->block_m == want.block_m &&
                                              c0->block_n == want.block_n &&
                                              c0->work_group_size == want.work_group_size &&
                                              c0->local_mem_bytes == want.local_mem_bytes &&
                                              !strcmp(c0->source, want.source),
                                          "%s d=%d: the first candidate is not the chooser's", pr.name, dims[di]);
                            REQUIRE(l.step[0] == FCL_STEP_FIRST, "%s: the first step", pr.name);
                            for (int i = 1; i < l.n; i++) {
                                const flashcl_config *a = &l.config[i - 1], *b = &l.config[i];
                                REQUIRE(rank(b->kernel) >= rank(a->kernel),
                                              "%s d=%d: candidate %d (%s) before a kernel preferred to it",
                                              pr.name, dims[di], i, b->kernel_name);
                                REQUIRE(b->algorithm == FLASHCL_ALGO_FLASH, "candidate %d: algorithm", i);
                                if (l.step[i] == FCL_STEP_NEXT_KERNEL)
                                    REQUIRE(b->kernel != a->kernel, "candidate %d: the next kernel is the same", i);
                                else
                                    REQUIRE(b->kernel == l.config[0].kernel || l.step[i] != FCL_STEP_FIRST,
                                                  "candidate %d", i);
                                for (int k = 0; k < i; k++)
                                    REQUIRE(!fcl_config_same_shape(&l.config[k], b) ||
                                                      (l.step[i] == FCL_STEP_SHRINK && l.wg_bound[k] != l.wg_bound[i]),
                                                  "%s: candidates %d and %d are the same", pr.name, k, i);
                                if (l.step[i] == FCL_STEP_SHRINK)
                                    REQUIRE(b->kernel == a->kernel, "%s: a shrink changed kernel", pr.name);
                            }
                            /* every list reaches the portable kernel (which builds everywhere) */
                            int portable = 0;
                            for (int i = 0; i < l.n; i++)
                                portable |= l.config[i].kernel == FLASHCL_KERNEL_PORTABLE;
                            REQUIRE(portable, "%s d=%d: no portable candidate after %s", pr.name, dims[di],
                                          c0->kernel_name);
                        }
    ck_assert_int_gt(lists, 500);
    ck_assert_int_gt(longer, lists / 4); /* (the lists are not all one candidate) */
}
END_TEST

static const fake_device *fake_named(const char *start)
{
    for (int f = 0; f < N_FAKES; f++)
        if (!strncmp(fakes[f].name, start, strlen(start)))
            return &fakes[f];
    ck_abort_msg("no fake device %s", start);
    return NULL;
}

/* Hopper fp16 d=128: flash_wgmma first, then flash_mma, then the portable kernel; a wgmma program that
 * does not build takes flash_mma, and says so. */
START_TEST(test_hopper_order)
{
    static fcl_candidates l;
    flashcl_device_profile pr = fake_profile(fake_named("NVIDIA Hopper"));
    pr.matrix_units = 2;
    const flashcl_problem p = problem_of(128, FLASHCL_DTYPE_F16, 0, 0);
    candidates_of(&pr, FLASHCL_PATH_AUTO, &p, &l);
    ck_assert_int_eq(l.config[0].kernel, FLASHCL_KERNEL_WGMMA);
    int mma = -1, portable = -1;
    for (int i = 0; i < l.n; i++) {
        if (mma < 0 && l.config[i].kernel == FLASHCL_KERNEL_MMA)
            mma = i;
        if (portable < 0 && l.config[i].kernel == FLASHCL_KERNEL_PORTABLE)
            portable = i;
    }
    ck_assert_int_gt(mma, 0);
    ck_assert_int_gt(portable, mma);

    fcl_compiled got = {.built = 0};
    flashcl_config next = l.config[0]; /* (the plan's config on entry) */
    ck_assert_int_eq(fcl_next_candidate(&pr, &l, 0, &got, pr.local_mem_static, 128, &next), mma);
    ck_assert_int_eq(next.kernel, FLASHCL_KERNEL_MMA);
    ck_assert_msg(strstr(next.path_reason, "not wgmma (its program did not build)"), "%s", next.path_reason);

    got = (fcl_compiled){.built = 0};
    ck_assert_int_eq(fcl_next_candidate(&pr, &l, mma, &got, pr.local_mem_static, 128, &next), portable);
    ck_assert_msg(strstr(next.path_reason, "portable: the matrix-unit kernel did not build"), "%s", next.path_reason);

    /* the portable kernel that does not build: nothing after it */
    ck_assert_int_eq(fcl_next_candidate(&pr, &l, l.n - 1, &got, pr.local_mem_static, 128, &next), -1);
}
END_TEST

/* A compiled kernel that fits is kept; one that needs twice its formula's bytes (as rusticl reports)
 * takes the same kernel's tiles of at most half, marked as shrunk; one allowed fewer work-items takes
 * a work-group within them. */
START_TEST(test_walk_limits)
{
    static fcl_candidates l;
    int checked = 0;
    for (int f = 0; f < N_FAKES; f++) {
        const flashcl_device_profile pr = fake_profile(&fakes[f]);
        const flashcl_problem p = problem_of(128, FLASHCL_DTYPE_F32, 0, 0);
        candidates_of(&pr, FLASHCL_PATH_PORTABLE, &p, &l);
        const flashcl_config *c0 = &l.config[0];
        const uint64_t limit = c0->local_mem_bytes; /* what this device may take, as if just enough */
        flashcl_config next = l.config[0]; /* (the plan's config on entry) */
        fcl_compiled got = {.built = 1, .work_group = (size_t)c0->work_group_size, .local_mem = c0->local_mem_bytes};
        ck_assert_int_eq(fcl_next_candidate(&pr, &l, 0, &got, limit, 128, &next), 0);

        got.local_mem = 2 * c0->local_mem_bytes;
        fcl_strlcpy(next.path_reason, "why the plan holds this kernel", sizeof next.path_reason);
        const int j = fcl_next_candidate(&pr, &l, 0, &got, limit, 128, &next);
        if (j > 0) {
            ck_assert_int_eq(next.kernel, FLASHCL_KERNEL_PORTABLE);
            ck_assert_uint_le(2 * next.local_mem_bytes, limit);
            ck_assert_str_eq(next.source, "heuristic (shrunk)");
            ck_assert_msg(strstr(next.reason, "needed"), "%s", next.reason);
            ck_assert_str_eq(next.path_reason, "why the plan holds this kernel"); /* (the same kernel) */
            checked++;
        }

        got.local_mem = c0->local_mem_bytes;
        got.work_group = (size_t)c0->work_group_size / 2;
        const int w = fcl_next_candidate(&pr, &l, 0, &got, limit, 128, &next);
        if (w > 0)
            ck_assert_int_le(next.work_group_size, c0->work_group_size / 2);
        else
            ck_assert_int_eq(w, -1);
    }
    ck_assert_int_gt(checked, N_FAKES / 2);
}
END_TEST

/* The walk after a kernel that needs more local memory than it may have takes what the chooser gives
 * under that limit: the ladder holds every distinct choice at descending budgets. */
START_TEST(test_ladder_is_the_chooser)
{
    static fcl_candidates l;
    static const int dims[] = {64, 128, 256};
    int compared = 0;
    for (int f = 0; f < N_FAKES; f++)
        for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
            const flashcl_device_profile pr = fake_profile(&fakes[f]);
            const flashcl_problem p = problem_of(dims[di], FLASHCL_DTYPE_F32, 0, 0);
            candidates_of(&pr, FLASHCL_PATH_PORTABLE, &p, &l);
            const flashcl_config *c0 = &l.config[0];
            const fcl_compiled got = {.built = 1, .work_group = (size_t)c0->work_group_size,
                                      .local_mem = c0->local_mem_bytes};
            for (uint64_t limit = c0->local_mem_bytes - 1; limit >= 4096; limit -= 1024) {
                /* (the heuristic's: a shrink passes the tuning database over, as it always has) */
                fcl_choice under;
                fcl_choice_of(&pr, FLASHCL_PATH_PORTABLE, 0, NULL, &under);
                under.local_mem = limit;
                under.shrunk = "shrunk";
                flashcl_config want, next = l.config[0];
                if (fcl_choose_checked(NULL, &pr, &under, &p, FLASHCL_ALGO_FLASH, &want) != FLASHCL_SUCCESS)
                    break;
                const int j = fcl_next_candidate(&pr, &l, 0, &got, limit, dims[di], &next);
                ck_assert_msg(j > 0, "%s d=%d: nothing within %llu B", pr.name, dims[di], (unsigned long long)limit);
                ck_assert_msg(next.local_mem_bytes == want.local_mem_bytes && next.block_m == want.block_m &&
                                  next.block_n == want.block_n && next.work_group_size == want.work_group_size,
                              "%s d=%d within %llu B: the walk took %dx%d (%llu B, %d items), the chooser %dx%d "
                              "(%llu B, %d items)",
                              pr.name, dims[di], (unsigned long long)limit, next.block_m, next.block_n,
                              (unsigned long long)next.local_mem_bytes, next.work_group_size, want.block_m,
                              want.block_n, (unsigned long long)want.local_mem_bytes, want.work_group_size);
                compared++;
            }
        }
    ck_assert_int_gt(compared, 100);
}
END_TEST

/* rusticl on llvmpipe: every compiled kernel allows 32 work-items and reports twice the formula's local
 * memory. The walk takes the chooser's tiles within 32 work-items and half the limit, for the portable
 * and the (emulated) matrix-unit kernel. */
START_TEST(test_walk_rusticl)
{
    static fcl_candidates l;
    static const int dims[] = {64, 96, 128};
    const flashcl_device_profile pr = fake_profile(fake_named("rusticl"));
    for (int path = FLASHCL_PATH_PORTABLE; path <= FLASHCL_PATH_MMA; path++)
        for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
            const flashcl_problem p = problem_of(dims[di], FLASHCL_DTYPE_F16, 0, 0);
            candidates_of(&pr, (flashcl_path)path, &p, &l);
            const flashcl_config *c0 = &l.config[0];
            const fcl_compiled got = {.built = 1, .work_group = 32, .local_mem = 2 * c0->local_mem_bytes};
            flashcl_config next = l.config[0]; /* (the plan's config on entry) */
            const int j = fcl_next_candidate(&pr, &l, 0, &got, pr.local_mem_size, dims[di], &next);
            if (c0->work_group_size <= 32 && 2 * c0->local_mem_bytes <= pr.local_mem_size) {
                ck_assert_int_eq(j, 0);
                continue;
            }
            ck_assert_msg(j > 0, "%s d=%d: nothing within 32 work-items", flashcl_path_name((flashcl_path)path),
                          dims[di]);
            ck_assert_int_eq(next.kernel, c0->kernel);
            fcl_choice under;
            fcl_choice_of(&pr, (flashcl_path)path, 0, NULL, &under);
            under.local_mem = pr.local_mem_size / 2;
            under.work_group = 32;
            under.shrunk = "shrunk";
            flashcl_config want;
            ck_assert_int_eq(fcl_choose_checked(NULL, &pr, &under, &p, FLASHCL_ALGO_FLASH, &want), FLASHCL_SUCCESS);
            ck_assert_int_le(next.work_group_size, 32);
            ck_assert_uint_le(2 * next.local_mem_bytes, pr.local_mem_size);
            ck_assert_msg(next.block_m == want.block_m && next.block_n == want.block_n &&
                              next.local_mem_bytes == want.local_mem_bytes,
                          "d=%d: the walk took %dx%d (%llu B), the chooser %dx%d (%llu B)", dims[di], next.block_m,
                          next.block_n, (unsigned long long)next.local_mem_bytes, want.block_m, want.block_n,
                          (unsigned long long)want.local_mem_bytes);
        }
}
END_TEST

/* A GPU's compile that kept the register block in private memory takes a smaller block of the same
 * kernel; on a CPU (stack frames reported there) the candidate stays. */
START_TEST(test_walk_spill)
{
    static fcl_candidates l;
    const flashcl_problem p = problem_of(256, FLASHCL_DTYPE_F32, 0, 0);
    flashcl_device_profile pr = fake_profile(fake_named("AMD CDNA"));
    candidates_of(&pr, FLASHCL_PATH_PORTABLE, &p, &l);
    const flashcl_config *c0 = &l.config[0];
    fcl_compiled got = {.built = 1, .work_group = (size_t)c0->work_group_size, .local_mem = c0->local_mem_bytes,
                        .private_mem = 4096};
    flashcl_config next = l.config[0]; /* (the plan's config on entry) */
    const int j = fcl_next_candidate(&pr, &l, 0, &got, pr.local_mem_size, 256, &next);
    ck_assert_int_gt(j, 0);
    ck_assert_int_eq(next.kernel, c0->kernel);
    ck_assert_int_lt(block_of(&next, 256), block_of(c0, 256));
    ck_assert_msg(strstr(next.reason, "private memory"), "%s", next.reason);
    /* every compile spilling: each step a smaller block, until the smallest stays (nothing smaller) */
    for (int k = j, steps = 0;; ++steps) {
        got.work_group = (size_t)l.config[k].work_group_size;
        got.local_mem = l.config[k].local_mem_bytes;
        const int n = fcl_next_candidate(&pr, &l, k, &got, pr.local_mem_size, 256, &next);
        if (n == k)
            break;
        ck_assert_int_gt(n, k);
        ck_assert_int_lt(block_of(&next, 256), block_of(&l.config[k], 256));
        ck_assert_int_lt(steps, l.n);
        k = n;
    }

    const flashcl_device_profile cpu = fake_profile(fake_named("PoCL CPU (512"));
    candidates_of(&cpu, FLASHCL_PATH_PORTABLE, &p, &l);
    got.work_group = (size_t)l.config[0].work_group_size;
    got.local_mem = l.config[0].local_mem_bytes;
    ck_assert_int_eq(fcl_next_candidate(&cpu, &l, 0, &got, cpu.local_mem_size, 256, &next), 0);
}
END_TEST

/* An override is first; the heuristic's candidates follow it. */
START_TEST(test_override_first)
{
    static fcl_candidates l;
    const flashcl_device_profile pr = fake_profile(fake_named("AMD CDNA"));
    const flashcl_problem p = problem_of(64, FLASHCL_DTYPE_F32, 0, 0);
    flashcl_policy pol = {.path = FLASHCL_PATH_PORTABLE};
    flashcl_config heuristic;
    ck_assert_int_eq(flashcl_choose_config_policy(&pr, &pol, &p, FLASHCL_ALGO_FLASH, &heuristic), FLASHCL_SUCCESS);
    flashcl_config over = {0};
    over.block_m = 16;
    over.block_n = 16;
    over.threads_per_row = 1;
    over.rows_per_item = 1;
    over.d_chunk = 64;
    over.v_chunk = 16;
    over.work_group_size = 16;
    fcl_choice ch;
    fcl_choice_of(&pr, FLASHCL_PATH_PORTABLE, 0, NULL, &ch);
    ch.override = &over;
    const flashcl_status st = fcl_choose_candidates(NULL, &pr, &ch, &p, FLASHCL_ALGO_FLASH, &l);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(NULL));
    ck_assert_int_ge(l.n, 2);
    ck_assert_int_eq(l.config[0].block_m, 16);
    ck_assert_int_eq(l.config[0].work_group_size, 16);
    ck_assert_int_eq(l.config[1].block_m, heuristic.block_m);
    ck_assert_int_eq(l.config[1].work_group_size, heuristic.work_group_size);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("candidates");
    TCase *tc = tcase_create("candidates");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_list_shape);
    tcase_add_test(tc, test_hopper_order);
    tcase_add_test(tc, test_walk_limits);
    tcase_add_test(tc, test_ladder_is_the_chooser);
    tcase_add_test(tc, test_walk_rusticl);
    tcase_add_test(tc, test_walk_spill);
    tcase_add_test(tc, test_override_first);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
