/* SPDX-License-Identifier: MIT */
/*
 * test_mma.c: the matrix-unit kernel on a device that has matrix units (NVIDIA, compute capability
 * 8.0 and up): the context's test compile proves them, the automatic path takes them for fp16/bf16,
 * and validated runs of the real kernel (cp.async on aligned rows, synchronous copies on unaligned
 * ones) pass. Everywhere else this suite exits 77 (skipped): the emulated kernel is tested by
 * test_flash and test_edges on every device. Run on a GPU: FLASHCL_TEST_PLATFORM=NVIDIA build/tests/test_mma
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the device is an NVIDIA GPU of compute capability 8.0 or more (from the profile query). */
static int has_matrix_units(cl_device_id dev)
{
    flashcl_device_profile pr;
    return flashcl_device_profile_query(dev, &pr) == FLASHCL_SUCCESS && pr.vendor == FLASHCL_VENDOR_NVIDIA &&
           pr.nv_cc_major >= 8;
}

/* One validated run of problem p on ctx (validation on) from normal inputs seeded by `seed`: the plan's
 * config in *c and its validation report in *rep, which must have passed. */
static void validated_run(flashcl_context *ctx, const flashcl_problem *p, uint64_t seed, flashcl_config *c,
                          flashcl_validation *rep)
{
    flashcl_plan *plan = NULL;
    ck_assert_msg(flashcl_plan_create(ctx, p, &plan) == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(ctx));
    flashcl_plan_config(plan, c);
    size_t sz[5];
    flashcl_plan_buffer_sizes(plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    void *h[3];
    hm_rng rng;
    hm_rng_seed(&rng, seed);
    for (int i = 0; i < 3; ++i) {
        h[i] = malloc(sz[i]);
        hm_fill_normal(h[i], p->dtype, sz[i] / 2, &rng, 1.0);
    }
    cl_mem q = tu_buffer(sz[0], h[0]), k = tu_buffer(sz[1], h[1]), v = tu_buffer(sz[2], h[2]);
    cl_mem o = tu_buffer(sz[3], NULL), l = tu_buffer(sz[4], NULL);
    const flashcl_status st = flashcl_plan_enqueue(plan, q, k, v, o, l, 0, NULL, NULL);
    flashcl_plan_last_validation(plan, rep);
    ck_assert_msg(st == FLASHCL_SUCCESS && rep->ran && rep->passed, "%s (%s): %s (max rel error %.3g, %lld failures)",
                  c->kernel_name, flashcl_status_string(st), flashcl_context_last_error(ctx), rep->max_rel_error,
                  (long long)rep->failures);
    for (int i = 0; i < 3; ++i)
        free(h[i]);
    cl_mem all[5] = {q, k, v, o, l};
    for (int i = 0; i < 5; ++i)
        clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&plan);
}

/* fp16 d=128 (aligned rows: the cp.async path) and bf16 d=64 causal GQA with padded K/V rows (3
 * spare elements: synchronous copies), each validated against the naive kernel in validation mode. */
START_TEST(test_real_kernel)
{
    ck_assert(has_matrix_units(tu_device)); /* main() narrowed the filter to such a device */
    flashcl_settings st; /* flash_mma asked for (auto takes flash_wgmma where sm_90a programs are proven) */
    flashcl_settings_default(&st);
    st.path = FLASHCL_PATH_MMA;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &st, &ctx), FLASHCL_SUCCESS);
    /* the test compile passed (and on compute capability 9.x, the finished sm_90a probe too) */
    ck_assert_int_eq(flashcl_context_profile(ctx)->matrix_units, flashcl_context_profile(ctx)->nv_cc_major == 9 ? 2 : 1);
    flashcl_context_set_validation(ctx, 1);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = _i ? 2 : 4;
    p.seq_q = 300;
    p.seq_kv = 517;
    p.head_dim = _i ? 64 : 128;
    p.dtype = _i ? FLASHCL_DTYPE_BF16 : FLASHCL_DTYPE_F16;
    p.causal = _i;
    p.return_lse = 1;
    if (_i) { /* K and V rows padded by 3 elements: not 16-byte aligned */
        const int64_t row = (int64_t)p.heads_kv * p.head_dim + 3;
        p.k_strides = (flashcl_strides){(int64_t)p.seq_kv * row, row, p.head_dim};
        p.v_strides = p.k_strides;
    }
    flashcl_config c;
    flashcl_validation rep;
    validated_run(ctx, &p, 11 + (uint64_t)_i, &c, &rep);
    ck_assert_msg(cfg_mma(&c) == 1, "the mma path took %s: %s", c.kernel_name, c.path_reason);
    printf("  %s d=%d %s: flash_mma validated on %lld rows, max rel error %.2e\n", flashcl_dtype_name(p.dtype),
           p.head_dim, p.causal ? "causal" : "full", (long long)rep.rows_checked, rep.max_rel_error);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* The public chooser on a profile from flashcl_device_profile_query (no context: its own test
 * compile) picks a matrix-unit kernel for fp16 (flash_wgmma where sm_90a programs are proven) and gives
 * exactly the configuration a plan runs. */
START_TEST(test_public_chooser_matches_plan)
{
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    ck_assert_int_eq(pr.matrix_units, pr.nv_cc_major == 9 ? 2 : 1);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 8;
    p.seq_q = p.seq_kv = 1024;
    p.head_dim = 128;
    p.dtype = FLASHCL_DTYPE_F16;
    p.causal = _i;
    flashcl_config chosen, planned;
    ck_assert_int_eq(flashcl_choose_config(&pr, &p, FLASHCL_ALGO_FLASH, &chosen), FLASHCL_SUCCESS);
    /* auto: the warpgroup kernel where the sm_90a probe passed, flash_mma elsewhere */
    ck_assert_str_eq(chosen.kernel_name, pr.matrix_units == 2 ? "flash_wgmma" : "flash_mma");
    ck_assert_int_eq(cfg_mma(&chosen), pr.matrix_units == 2 ? 3 : 1);
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.tuning_db = 0;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_plan_config(plan, &planned), FLASHCL_SUCCESS);
    ck_assert_mem_eq(&chosen, &planned, sizeof chosen);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* The warpgroup kernel on a device that proved sm_90a programs (FLASHCL_PATH_WGMMA: flash_wgmma for
 * real, its programs finished for sm_90a): fp16 d=128 and bf16 d=64 causal GQA, lengths off the tiles,
 * d=256, one warpgroup (64 queries), a negative scale, rows with no key, a sliding window, top-left
 * alignment; each validated against the naive kernel. */
START_TEST(test_wgmma_kernel)
{
    static const struct {
        flashcl_dtype dtype;
        int d, hq, hkv, sq, skv, causal;
        float scale;
        int win_left, win_right, top_left; /* win_left >= 0: a sliding window */
    } cases[] = {{FLASHCL_DTYPE_F16, 128, 4, 4, 1000, 1000, 0, 0.0f, -1, 0, 0},
                 {FLASHCL_DTYPE_BF16, 64, 4, 2, 777, 777, 1, 0.0f, -1, 0, 0},
                 {FLASHCL_DTYPE_F16, 128, 2, 2, 300, 517, 1, 0.0f, -1, 0, 0},
                 {FLASHCL_DTYPE_F16, 256, 2, 1, 600, 600, 0, 0.0f, -1, 0, 0},
                 {FLASHCL_DTYPE_BF16, 128, 8, 8, 64, 4096, 0, 0.0f, -1, 0, 0},
                 {FLASHCL_DTYPE_F16, 64, 2, 2, 200, 333, 1, -0.2f, -1, 0, 0},
                 /* causal with more queries than keys: the first 130 rows see no key (zeros, LSE -inf) */
                 {FLASHCL_DTYPE_F16, 128, 2, 2, 400, 270, 1, 0.0f, -1, 0, 0},
                 /* a sliding window, and top-left alignment */
                 {FLASHCL_DTYPE_BF16, 128, 4, 1, 600, 700, 0, 0.0f, 100, 20, 0},
                 {FLASHCL_DTYPE_F16, 64, 2, 2, 300, 450, 1, 0.0f, -1, 0, 1}};
    const int n = (int)(sizeof cases / sizeof cases[0]);
    ck_assert_int_lt(_i, n);
    flashcl_settings st;
    flashcl_settings_default(&st);
    st.path = FLASHCL_PATH_WGMMA;
    st.disk_cache = 0;
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &st, &ctx), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_context_profile(ctx)->matrix_units, 2);
    flashcl_context_set_validation(ctx, 1);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = cases[_i].hq;
    p.heads_kv = cases[_i].hkv;
    p.seq_q = cases[_i].sq;
    p.seq_kv = cases[_i].skv;
    p.head_dim = cases[_i].d;
    p.dtype = cases[_i].dtype;
    p.causal = cases[_i].causal;
    p.scale = cases[_i].scale;
    p.return_lse = 1;
    if (cases[_i].win_left >= 0) {
        p.window = 1;
        p.window_left = cases[_i].win_left;
        p.window_right = cases[_i].win_right;
    }
    if (cases[_i].top_left)
        p.alignment = FLASHCL_ALIGN_TOP_LEFT;
    flashcl_config c;
    flashcl_validation rep;
    validated_run(ctx, &p, 31 + (uint64_t)_i, &c, &rep);
    ck_assert_msg(cfg_mma(&c) == 3, "the wgmma path took %s: %s", c.kernel_name, c.path_reason);
    printf("  %s d=%d %s %dx%d: flash_wgmma (%dx%d) validated on %lld rows, max rel error %.2e\n",
           flashcl_dtype_name(p.dtype), p.head_dim, p.causal ? "causal" : "full", p.seq_q, p.seq_kv, c.block_m,
           c.block_n, (long long)rep.rows_checked, rep.max_rel_error);
    flashcl_context_destroy(&ctx);
}
END_TEST

static int sm90a_device; /* main: the selected device proved sm_90a programs */

static Suite *make_suite(void)
{
    Suite *s = suite_create("mma");
    TCase *tc = tcase_create("mma");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_public_chooser_matches_plan, 0, 2);
    tcase_add_loop_test(tc, test_real_kernel, 0, 2);
    if (sm90a_device) /* (a device of compute capability 8.x has no wgmma: nothing of it to run there) */
        tcase_add_loop_test(tc, test_wgmma_kernel, 0, 9);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* Skipped (77) unless a device that FLASHCL_TEST_PLATFORM selects has matrix units. */
    const char *filter = getenv("FLASHCL_TEST_PLATFORM");
    cl_platform_id plats[16];
    cl_uint np = 0;
    int found = 0;
    static char label[600];
    if (clGetPlatformIDs(16, plats, &np) == CL_SUCCESS)
        for (cl_uint i = 0; i < np && i < 16 && !found; ++i) {
            cl_device_id devs[16];
            cl_uint nd = 0;
            char pname[256] = "";
            clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
            if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
                continue;
            for (cl_uint d = 0; d < nd && d < 16 && !found; ++d) {
                char dname[256] = "";
                clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
                snprintf(label, sizeof label, "%s / %s", pname, dname);
                found = tu_matches(label, filter) && has_matrix_units(devs[d]);
                flashcl_device_profile pr;
                sm90a_device = found && flashcl_device_profile_query(devs[d], &pr) == FLASHCL_SUCCESS && pr.matrix_units == 2;
            }
        }
    if (!found) {
        printf("SKIP: no device with matrix units (NVIDIA, compute capability 8.0+)%s%s\n",
               filter && *filter ? " matching " : "", filter && *filter ? filter : "");
        return 77;
    }
    /* Only that device: the suite's checks assume matrix units. */
    setenv("FLASHCL_TEST_PLATFORM", label, 1);
    return tu_run(make_suite, 1);
}
