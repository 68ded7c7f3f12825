/* SPDX-License-Identifier: MIT */
/*
 * test_choice_dpas.c: the chooser's choice of Intel's matrix-engine prefill kernel (src/kernels/dpas.c,
 * cl/flash_dpas.cl) on fake device profiles (no device needed): taken by auto and where forced on an Intel
 * GPU whose DPAS probe passed, in its layout (sub-groups of 8 on Xe-HPG, 16 on Xe-HPC) with the tiles IGC
 * keeps in registers (O's columns split, Q in local memory where they would not fit), emulated where
 * forced elsewhere, refused with the reason for what it does not take.
 */
#include "choice.h"

#include <stdio.h>

START_TEST(test_dpas_path)
{
    flashcl_config c;
    /* Xe-HPG (64 KiB of SLM: DPAS at SIMD8) and Xe-HPC (128 KiB: SIMD16), the probe passed; per head dim the
     * sub-groups a block of 8 rows (CSPLIT: at most 64 of O's floats a work-item) and whether Q's A operands
     * are in local memory (more than 192 bytes a work-item in registers) */
    static const struct {
        uint64_t local;
        int sg, d, split, q_local;
    } cases[] = {{64 * 1024, 8, 64, 1, 0},   {64 * 1024, 8, 128, 2, 1},   {64 * 1024, 8, 256, 4, 1},
                 {128 * 1024, 16, 64, 1, 0}, {128 * 1024, 16, 128, 1, 0}, {128 * 1024, 16, 192, 2, 0},
                 {128 * 1024, 16, 256, 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        flashcl_device_profile prof = profile_of(&fakes[4]);
        ck_assert_int_eq(prof.vendor, FLASHCL_VENDOR_INTEL);
        prof.local_mem_size = prof.local_mem_static = prof.local_mem_per_cu = cases[i].local;
        prof.has_intel_subgroup_matrix = 1;
        prof.matrix_units = 1;
        const int d = cases[i].d, sg = cases[i].sg, split = cases[i].split;
        const flashcl_problem p = choice_prefill(d);
        /* auto and forced alike: the hardware's, in its layout, 16-key tiles */
        for (int forced = 0; forced < 2; ++forced) {
            policy.path = forced ? FLASHCL_PATH_DPAS : FLASHCL_PATH_AUTO;
            ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(c.kernel == FLASHCL_KERNEL_DPAS && !c.emulated, "sg %d d=%d: %s (%s)", sg, d, c.kernel_name,
                          c.path_reason);
            ck_assert_str_eq(c.kernel_name, "flash_dpas");
            ck_assert_int_eq(cfg_mma(&c), 9);
            ck_assert_int_eq(c.sub_group, sg);
            ck_assert_int_eq(c.threads_per_row, sg);
            ck_assert_int_eq(c.rows_per_item, 8);
            ck_assert_int_eq(c.block_n, 16);
            ck_assert_int_eq(c.block_m, 8 * c.work_group_size / (sg * split));
            ck_assert_int_le(c.work_group_size, 256);
            char want[64];
            snprintf(want, sizeof want, "%d a block", split);
            ck_assert_msg(split > 1 ? strstr(c.reason, want) != NULL : strstr(c.reason, "a block") == NULL, "%s",
                          c.reason);
            ck_assert_ptr_nonnull(strstr(c.reason, cases[i].q_local ? "Q in local memory" : "Q in registers"));
            /* K's and V's tiles, and Q's block where it is in local memory */
            ck_assert_uint_eq(c.local_mem_bytes,
                              ((uint64_t)c.block_n * (uint64_t)d * 2 + (cases[i].q_local ? (uint64_t)c.block_m * d : 0)) * 2);
            ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(d, &c));
            ck_assert_ptr_nonnull(strstr(c.path_reason, "DPAS"));
        }
        /* what it does not take: the portable kernel with the reason */
        policy.path = FLASHCL_PATH_AUTO;
        flashcl_problem f32 = p;
        f32.dtype = FLASHCL_DTYPE_F32;
        ck_assert_int_eq(choose(&prof, &f32, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
        ck_assert_ptr_nonnull(strstr(c.path_reason, "fp32"));
        /* no DPAS proven (the probe failed): auto keeps the portable kernel */
        prof.matrix_units = 0;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    }
    /* forced on a CPU: emulated, sub-groups of 16, the exchange areas counted (2 KiB a sub-group) */
    flashcl_device_profile cpu = profile_of(&fakes[7]);
    policy.path = FLASHCL_PATH_DPAS;
    const flashcl_problem p = choice_prefill(64);
    ck_assert_int_eq(choose(&cpu, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 10);
    ck_assert_int_eq(c.sub_group, 16);
    ck_assert_uint_eq(c.local_mem_bytes, ((uint64_t)c.block_n * 64 * 2) * 2 + (uint64_t)(c.block_m / 8) * 2048);
    policy.path = FLASHCL_PATH_AUTO;
    flashcl_path parsed = FLASHCL_PATH_AUTO;
    ck_assert_int_eq(flashcl_path_parse("dpas", &parsed), FLASHCL_SUCCESS);
    ck_assert_int_eq(parsed, FLASHCL_PATH_DPAS);
    ck_assert_str_eq(flashcl_kernel_name(FLASHCL_KERNEL_DPAS), "dpas");
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("choice-dpas");
    TCase *tc = tcase_create("chooser");
    tcase_add_test(tc, test_dpas_path);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
