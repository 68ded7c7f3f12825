/* SPDX-License-Identifier: MIT */
/*
 * test_choice_dpas.c: the chooser's choice of Intel's matrix-engine prefill kernel (src/kernels/dpas.c,
 * cl/flash_dpas.cl) on fake device profiles (no device needed): taken where forced on an Intel GPU whose DPAS
 * probe passed, in its layout (sub-groups of 8 on Xe-HPG, 16 on Xe-HPC) with the tiles IGC keeps in
 * registers, never by auto yet, emulated where forced elsewhere, refused with the reason for what it does
 * not take.
 */
#include "choice.h"

START_TEST(test_dpas_path)
{
    flashcl_config c;
    /* Xe-HPG (64 KiB of SLM: DPAS at SIMD8) and Xe-HPC (128 KiB: SIMD16), the probe passed */
    static const struct {
        uint64_t local;
        int sg;
    } gpus[] = {{64 * 1024, 8}, {128 * 1024, 16}};
    for (int g = 0; g < 2; ++g) {
        flashcl_device_profile prof = profile_of(&fakes[4]);
        ck_assert_int_eq(prof.vendor, FLASHCL_VENDOR_INTEL);
        prof.local_mem_size = prof.local_mem_static = prof.local_mem_per_cu = gpus[g].local;
        prof.has_intel_subgroup_matrix = 1;
        prof.matrix_units = 1;
        const flashcl_problem p = choice_prefill(128);
        /* auto: not yet (the portable kernel) */
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
        /* forced: the hardware's, in its layout, 16-key tiles, 16 sub-groups of 8 rows */
        policy.path = FLASHCL_PATH_DPAS;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.kernel == FLASHCL_KERNEL_DPAS && !c.emulated, "%s (%s)", c.kernel_name, c.path_reason);
        ck_assert_str_eq(c.kernel_name, "flash_dpas");
        ck_assert_int_eq(cfg_mma(&c), 9);
        ck_assert_int_eq(c.sub_group, gpus[g].sg);
        ck_assert_int_eq(c.threads_per_row, gpus[g].sg);
        ck_assert_int_eq(c.rows_per_item, 8);
        ck_assert_int_eq(c.block_n, 16);
        /* SIMD8 at dv=128: two sub-groups a block of 8 rows, each half of O's columns (64 floats a work-item) */
        const int split = gpus[g].sg == 8 ? 2 : 1;
        ck_assert_int_eq(c.block_m, 8 * c.work_group_size / (gpus[g].sg * split));
        ck_assert_ptr_nonnull(strstr(c.reason, split > 1 ? "two a block" : "sub-groups of 16"));
        ck_assert_uint_eq(c.local_mem_bytes, ((uint64_t)c.block_n * (128 + 8) + 128u * (c.block_n + 8)) * 2);
        ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));
        ck_assert_ptr_nonnull(strstr(c.path_reason, "DPAS"));
        /* what it does not take: the portable kernel with the reason */
        flashcl_problem f32 = p;
        f32.dtype = FLASHCL_DTYPE_F32;
        ck_assert_int_eq(choose(&prof, &f32, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
        ck_assert_ptr_nonnull(strstr(c.path_reason, "fp32"));
    }
    /* forced on a CPU: emulated, sub-groups of 16, the exchange areas counted (2 KiB a sub-group) */
    flashcl_device_profile cpu = profile_of(&fakes[7]);
    policy.path = FLASHCL_PATH_DPAS;
    const flashcl_problem p = choice_prefill(64);
    ck_assert_int_eq(choose(&cpu, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 10);
    ck_assert_int_eq(c.sub_group, 16);
    ck_assert_uint_eq(c.local_mem_bytes,
                      ((uint64_t)c.block_n * (64 + 8) + 64u * (c.block_n + 8)) * 2 + (uint64_t)(c.block_m / 8) * 2048);
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
