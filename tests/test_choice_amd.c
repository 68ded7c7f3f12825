/* SPDX-License-Identifier: MIT */
/*
 * test_choice_amd.c: the chooser's choice of AMD's matrix-core prefill kernels (src/kernels/amd.c,
 * cl/flash_amd.cl) on fake device profiles (no device needed): flash_mfma taken by auto on an AMD wave64
 * profile whose matrix probe passed, flash_wmma on a wave32 one, their tiles within the budget, the
 * problems they refuse for the portable kernel and the reason, the NVIDIA kernels never taken there, the
 * paths forcing them elsewhere.
 */
#include "choice.h"

#include <stdio.h>

/* The fake AMD CDNA profile as the MFMA probe leaves it (fake_devices.h: 64 KiB of LDS, 256 work-items,
 * wavefronts of 64), or with the probe failed (units 0). */
static flashcl_device_profile cdna(int units)
{
    flashcl_device_profile prof = profile_of(&fakes[1]);
    ck_assert_int_eq(prof.vendor, FLASHCL_VENDOR_AMD);
    ck_assert_uint_eq(prof.wg_multiple, 64);
    snprintf(prof.arch, sizeof prof.arch, "gfx942:sramecc+:xnack-");
    prof.matrix_units = units;
    return prof;
}

START_TEST(test_auto_takes_mfma)
{
    const flashcl_device_profile prof = cdna(1);
    flashcl_config c;
    /* four waves; 64-key tiles where two work-groups a compute unit fit (d <= 96), else 32 */
    static const struct {
        int d, bn;
    } dims[] = {{32, 64}, {64, 64}, {80, 64}, {96, 64}, {128, 32}, {192, 32}, {256, 32}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
        const flashcl_problem p = choice_prefill(dims[i].d);
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.kernel == FLASHCL_KERNEL_MFMA && !c.emulated, "d=%d: %s (%s)", dims[i].d, c.kernel_name,
                      c.path_reason);
        ck_assert_str_eq(c.kernel_name, "flash_mfma");
        ck_assert_int_eq(cfg_mma(&c), 5);
        ck_assert_int_eq(c.block_m, 128);
        ck_assert_int_eq(c.work_group_size, 256);
        ck_assert_msg(c.block_n == dims[i].bn, "d=%d: block_n %d", dims[i].d, c.block_n);
        ck_assert_int_eq(c.kv_splits, 1);
        ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(dims[i].d, &c));
        /* K's tile (d + 4 a row) and V's transposed (d in 32-column blocks, rows of block_n + 4) */
        const uint64_t dvp = (uint64_t)(dims[i].d + 31) / 32 * 32;
        ck_assert_uint_eq(c.local_mem_bytes, ((uint64_t)c.block_n * (dims[i].d + 4) + dvp * (c.block_n + 4)) * 2);
        ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
        ck_assert_ptr_nonnull(strstr(c.path_reason, "MFMA"));
    }
    /* bf16, causal GQA, a window and every feature engines send stay on it */
    flashcl_problem p = choice_prefill(128);
    p.dtype = FLASHCL_DTYPE_BF16;
    p.causal = 1;
    p.heads_kv = 4;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_MFMA);
    flashcl_problem f[N_ENGINE_FEATURES];
    engine_features(&p, f);
    for (int i = 0; i < N_ENGINE_FEATURES; ++i) {
        ck_assert_int_eq(choose(&prof, &f[i], FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.kernel == FLASHCL_KERNEL_MFMA, "feature %d: %s (%s)", i, c.kernel_name, c.path_reason);
    }
    /* a work-group limit of 128: two waves */
    flashcl_device_profile small = prof;
    small.max_work_group_size = 128;
    ck_assert_int_eq(choose(&small, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_MFMA);
    ck_assert_int_eq(c.block_m, 64);
    ck_assert_int_eq(c.work_group_size, 128);
}
END_TEST

/* What flash_mfma refuses goes to the portable kernel with the reason; a decode step never takes an
 * NVIDIA kernel there; a profile whose probe failed (or an AMD wave32 GPU) keeps the portable kernel. */
START_TEST(test_refusals)
{
    const flashcl_device_profile prof = cdna(1);
    flashcl_config c;
    struct {
        const char *what, *reason;
        flashcl_problem q;
    } no[4];
    int n = 0;
    for (int i = 0; i < 4; ++i)
        no[i].q = choice_prefill(128);
    no[n].what = "fp32", no[n].reason = "fp32", no[n++].q.dtype = FLASHCL_DTYPE_F32;
    no[n].what = "d=72", no[n].reason = "head_dim", no[n++].q.head_dim = 72;
    no[n].what = "splits", no[n].reason = "splits", no[n++].q.kv_splits = 4;
    no[n].what = "fp32 K/V", no[n].reason = "K and V in fp32", no[n++].q.kv_dtype = FLASHCL_KV_DTYPE_F32;
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(choose(&prof, &no[i].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.kernel == FLASHCL_KERNEL_PORTABLE, "%s: got %s", no[i].what, c.kernel_name);
        ck_assert_msg(strstr(c.path_reason, "portable: ") && strstr(c.path_reason, no[i].reason), "%s: \"%s\"",
                      no[i].what, c.path_reason);
    }
    /* a decode step: no NVIDIA kernel (flash_decode_mma, shuffles) on AMD's matrix cores */
    flashcl_problem dec = choice_prefill(128);
    dec.seq_q = 1;
    dec.seq_kv = 32768;
    dec.heads_q = 32;
    dec.heads_kv = 8;
    dec.batch = 8;
    ck_assert_int_eq(choose(&prof, &dec, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_msg(c.kernel == FLASHCL_KERNEL_PORTABLE || (c.kernel == FLASHCL_KERNEL_DECODE && !c.shuffles),
                  "decode on AMD: %s", c.kernel_name);
    /* the probe failed: the portable kernel, never flash_mma's PTX */
    const flashcl_device_profile failed = cdna(0);
    const flashcl_problem p = choice_prefill(128);
    ck_assert_int_eq(choose(&failed, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "portable: "));
    /* AMD RDNA (wave32) whose probe found no matrix cores (RDNA2): the portable kernel */
    const flashcl_device_profile rdna = profile_of(&fakes[2]);
    ck_assert_int_eq(choose(&rdna, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    /* an NVIDIA profile with matrix units keeps flash_mma, never flash_mfma */
    flashcl_device_profile nv = profile_of(&fakes[0]);
    nv.nv_cc_major = 8;
    nv.matrix_units = 1;
    ck_assert_int_eq(choose(&nv, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_MMA);
}
END_TEST

/* FLASHCL_PATH_MFMA: forced, emulated where the device has no AMD matrix cores (a CPU), with the reason;
 * "mfma" parses and names the kernel; a path past it is refused. (Overrides of kernel MFMA: test_flash's
 * mfma_tiles list, on a device.) */
START_TEST(test_path_and_override)
{
    flashcl_device_profile cpu = profile_of(&fakes[7]); /* PoCL */
    flashcl_problem p = choice_prefill(64);
    flashcl_config c;
    policy.path = FLASHCL_PATH_MFMA;
    ck_assert_int_eq(choose(&cpu, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 6);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "emulated"));
    /* emulated, the waves' exchange areas count (2 KiB a wave) */
    ck_assert_uint_eq(c.local_mem_bytes, (64u * 68u + 64u * 68u) * 2u + 4u * 2048u);
    p.dtype = FLASHCL_DTYPE_F32;
    ck_assert_int_eq(choose(&cpu, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "fp32"));
    p.dtype = FLASHCL_DTYPE_F16;
    /* on the real thing the path gives what auto gives */
    const flashcl_device_profile prof = cdna(1);
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 5);
    policy.path = FLASHCL_PATH_AUTO;

    flashcl_path parsed = FLASHCL_PATH_AUTO;
    ck_assert_int_eq(flashcl_path_parse("mfma", &parsed), FLASHCL_SUCCESS);
    ck_assert_int_eq(parsed, FLASHCL_PATH_MFMA);
    ck_assert_str_eq(flashcl_path_name(FLASHCL_PATH_MFMA), "mfma");
    ck_assert_str_eq(flashcl_kernel_name(FLASHCL_KERNEL_MFMA), "mfma");
    policy.path = FLASHCL_PATH_DPAS + 1; /* past the last path */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_INVALID_ARGUMENT);
    policy.path = FLASHCL_PATH_AUTO;

}
END_TEST

/* RDNA3/4 (wave32) whose matrix probe passed: flash_wmma, eight waves of 16 rows (128 queries, 256
 * work-items), up to d=192 over V's 128, the same refusals and head dims past its registers; RDNA's
 * profile whose probe failed (RDNA2) keeps the portable kernel. */
START_TEST(test_rdna_takes_wmma)
{
    flashcl_device_profile prof = profile_of(&fakes[2]);
    ck_assert_int_eq(prof.vendor, FLASHCL_VENDOR_AMD);
    ck_assert_uint_eq(prof.wg_multiple, 32);
    snprintf(prof.arch, sizeof prof.arch, "gfx1100");
    prof.matrix_units = 1;
    flashcl_config c;
    static const struct {
        int d, dv, bn;
    } dims[] = {{64, 64, 64}, {128, 128, 32}, {192, 128, 32}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i) {
        flashcl_problem p = choice_prefill(dims[i].d);
        p.head_dim_v = dims[i].dv;
        p.causal = 1;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(c.kernel == FLASHCL_KERNEL_WMMA && !c.emulated, "d=%d: %s (%s)", dims[i].d, c.kernel_name,
                      c.path_reason);
        ck_assert_str_eq(c.kernel_name, "flash_wmma");
        ck_assert_int_eq(cfg_mma(&c), 7);
        ck_assert_int_eq(c.block_m, 128);
        ck_assert_int_eq(c.work_group_size, 256);
        ck_assert_msg(c.block_n == dims[i].bn, "d=%d: block_n %d", dims[i].d, c.block_n);
        /* V^T in whole 16-column blocks, rows padded by 8 elements (16-byte aligned) */
        const uint64_t dvp = (uint64_t)(dims[i].dv + 15) / 16 * 16;
        ck_assert_uint_eq(c.local_mem_bytes, ((uint64_t)c.block_n * (dims[i].d + 8) + dvp * (c.block_n + 8)) * 2);
        ck_assert_ptr_nonnull(strstr(c.path_reason, "WMMA"));
    }
    /* head dims past its registers (d=256; V's above 128): the portable kernel, which says why */
    flashcl_problem wide = choice_prefill(256);
    ck_assert_int_eq(choose(&prof, &wide, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "would spill"));
    flashcl_problem f32 = choice_prefill(128);
    f32.dtype = FLASHCL_DTYPE_F32;
    ck_assert_int_eq(choose(&prof, &f32, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "fp32"));
    /* the CDNA path forced on RDNA: flash_mfma emulated (for testing), never run as the hardware's */
    const flashcl_problem p = choice_prefill(128);
    policy.path = FLASHCL_PATH_MFMA;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 6);
    policy.path = FLASHCL_PATH_AUTO;
    prof.matrix_units = 0;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kernel, FLASHCL_KERNEL_PORTABLE);
    flashcl_path parsed = FLASHCL_PATH_AUTO;
    ck_assert_int_eq(flashcl_path_parse("wmma", &parsed), FLASHCL_SUCCESS);
    ck_assert_int_eq(parsed, FLASHCL_PATH_WMMA);
    ck_assert_str_eq(flashcl_kernel_name(FLASHCL_KERNEL_WMMA), "wmma");
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("choice-amd");
    TCase *tc = tcase_create("chooser");
    tcase_add_test(tc, test_auto_takes_mfma);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_path_and_override);
    tcase_add_test(tc, test_rdna_takes_wmma);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
