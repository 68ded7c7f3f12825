/* SPDX-License-Identifier: MIT */
/*
 * test_validate.c: validation mode. A correct run passes with a report of what was checked; a
 * kernel built wrong on purpose (scale doubled through a build option) is caught and returns
 * FLASHCL_VALIDATION_FAILED; large problems are checked on a sample that includes the first and
 * last row of every head; the matrix-unit kernel's rounding of a Q of another type than K's passes, with
 * its tolerance.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    flashcl_context *ctx;
    flashcl_plan *plan;
    cl_mem q, k, v, o, lse;
} fixture;

static void setup_path(fixture *f, const flashcl_problem *p, const char *extra_options, int path)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.path = path;
    s.disk_cache = 0;
    s.validate = 1;
    s.extra_build_options = extra_options;
    s.validate_max_rows = 512;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &f->ctx), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_context_validation(f->ctx), 1);
    flashcl_status st = flashcl_plan_create(f->ctx, p, &f->plan);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(f->ctx));
    size_t sz[5];
    flashcl_plan_buffer_sizes(f->plan, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const flashcl_dtype kvt = p->kv_dtype ? (flashcl_dtype)(p->kv_dtype - 1) : (flashcl_dtype)p->dtype;
    const size_t es = flashcl_dtype_size(p->dtype), kes = flashcl_dtype_size(kvt);
    void *host = malloc(sz[1] > sz[0] ? sz[1] : sz[0]);
    hm_rng rng;
    hm_rng_seed(&rng, 77);
    hm_fill_normal(host, p->dtype, sz[0] / es, &rng, 1.0);
    f->q = tu_buffer(sz[0], host);
    hm_fill_normal(host, kvt, sz[1] / kes, &rng, 1.0);
    f->k = tu_buffer(sz[1], host);
    hm_fill_normal(host, kvt, sz[2] / kes, &rng, 1.0);
    f->v = tu_buffer(sz[2], host);
    f->o = tu_buffer(sz[3], NULL);
    f->lse = sz[4] ? tu_buffer(sz[4], NULL) : NULL;
    free(host);
}

static void setup(fixture *f, const flashcl_problem *p, const char *extra_options)
{
    setup_path(f, p, extra_options, FLASHCL_PATH_AUTO);
}

static void teardown(fixture *f)
{
    cl_mem all[5] = {f->q, f->k, f->v, f->o, f->lse};
    for (int i = 0; i < 5; ++i)
        if (all[i])
            clReleaseMemObject(all[i]);
    flashcl_plan_destroy(&f->plan);
    flashcl_context_destroy(&f->ctx);
}

static flashcl_problem problem(flashcl_dtype t, int causal)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = 1;
    p.seq_q = 60;
    p.seq_kv = 90;
    p.head_dim = 48;
    p.dtype = t;
    p.causal = causal;
    p.return_lse = 1;
    return p;
}

START_TEST(test_pass)
{
    flashcl_problem p = problem((flashcl_dtype)(_i % 3), _i / 3);
    fixture f;
    setup(&f, &p, NULL);
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(f.ctx));
    flashcl_validation r;
    ck_assert_int_eq(flashcl_plan_last_validation(f.plan, &r), FLASHCL_SUCCESS);
    ck_assert(r.ran && r.passed);
    ck_assert_int_eq(r.rows_total, 2 * 4 * 60);
    ck_assert_int_eq(r.rows_checked, r.rows_total); /* under validate_max_rows: every row */
    ck_assert_int_eq(r.failures, 0);
    ck_assert_int_eq(r.nan_count, 0);
    ck_assert(r.max_abs_error >= 0.0 && r.max_abs_error < 1e-2);
    ck_assert(r.atol > 0.0 && r.rtol > 0.0);
    teardown(&f);
}
END_TEST

/* The scale doubled inside the flash kernel: plausible numbers, wrong ones. */
START_TEST(test_catches_wrong_scale)
{
    flashcl_problem p = problem((flashcl_dtype)_i, 0);
    fixture f;
    setup(&f, &p, "-DFLASHCL_DEBUG_SCALE=2.0f");
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL);
    ck_assert_int_eq(st, FLASHCL_VALIDATION_FAILED);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(f.ctx), "validation failed"));
    flashcl_validation r;
    flashcl_plan_last_validation(f.plan, &r);
    ck_assert(r.ran && !r.passed);
    ck_assert_int_gt(r.failures, 0);
    ck_assert(r.max_rel_error > 1e-2);
    ck_assert_int_ge(r.worst_row, 0);
    ck_assert_int_lt(r.worst_row, r.rows_total);
    teardown(&f);
}
END_TEST

/* Q in fp32 (or fp16) over fp16 (bf16) K/V on the matrix-unit kernel (forced; emulated without matrix
 * units): Q rounded to K's type passes validation against the naive kernel's unrounded Q, with the
 * tolerance that says so (four unit roundoffs of K's type for P, four for Q), and a doubled scale is
 * still caught. */
START_TEST(test_rounded_q)
{
    flashcl_problem p = problem(_i & 1 ? FLASHCL_DTYPE_F16 : FLASHCL_DTYPE_F32, 1);
    p.kv_dtype = _i & 1 ? FLASHCL_KV_DTYPE_BF16 : FLASHCL_KV_DTYPE_F16;
    p.head_dim = 64;
    fixture f;
    setup_path(&f, &p, _i & 2 ? "-DFLASHCL_DEBUG_SCALE=2.0f" : NULL, FLASHCL_PATH_MMA);
    flashcl_config c;
    flashcl_plan_config(f.plan, &c);
    ck_assert_msg(c.kernel == FLASHCL_KERNEL_MMA, "%s: %s", c.kernel_name, c.path_reason);
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL);
    flashcl_validation r;
    ck_assert_int_eq(flashcl_plan_last_validation(f.plan, &r), FLASHCL_SUCCESS);
    if (_i & 2) {
        ck_assert_int_eq(st, FLASHCL_VALIDATION_FAILED);
        ck_assert(r.ran && !r.passed && r.max_rel_error > 1e-2);
    } else {
        ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(f.ctx));
        ck_assert(r.ran && r.passed);
        ck_assert_double_eq(r.atol, 8.0 * (_i & 1 ? ldexp(1.0, -8) : ldexp(1.0, -11)));
        ck_assert(r.max_abs_error > 0.0); /* (Q's rounding shows) */
    }
    teardown(&f);
}
END_TEST

/* Large problems: a sample of rows, as documented. */
START_TEST(test_sampled_rows)
{
    flashcl_problem p = problem(FLASHCL_DTYPE_F32, 1);
    p.seq_q = p.seq_kv = 400; /* 2 x 4 x 400 = 3200 rows > validate_max_rows = 512 */
    fixture f;
    setup(&f, &p, NULL);
    flashcl_status st = flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL);
    ck_assert_msg(st == FLASHCL_SUCCESS, "%s", flashcl_context_last_error(f.ctx));
    flashcl_validation r;
    flashcl_plan_last_validation(f.plan, &r);
    flashcl_config c;
    flashcl_plan_config(f.plan, &c);
    const int64_t heads = 2 * 4, tiles = (400 + c.block_m - 1) / c.block_m;
    ck_assert(r.passed);
    ck_assert_int_lt(r.rows_checked, r.rows_total);
    /* first and last row of every head, and one row per tile (which may coincide with them) */
    ck_assert_int_ge(r.rows_checked, heads * tiles);
    ck_assert_int_le(r.rows_checked, heads * (tiles + 2));
    teardown(&f);
}
END_TEST

/* Validation can be switched off per context: no report, no blocking. */
START_TEST(test_switch_off)
{
    flashcl_problem p = problem(FLASHCL_DTYPE_F32, 0);
    fixture f;
    setup(&f, &p, "-DFLASHCL_DEBUG_SCALE=2.0f");
    flashcl_context_set_validation(f.ctx, 0);
    ck_assert_int_eq(flashcl_plan_enqueue(f.plan, f.q, f.k, f.v, f.o, f.lse, 0, NULL, NULL), FLASHCL_SUCCESS);
    clFinish(tu_queue);
    flashcl_validation r;
    flashcl_plan_last_validation(f.plan, &r);
    ck_assert(!r.ran);
    teardown(&f);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("validate");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_pass, 0, 6);
    tcase_add_loop_test(tc, test_catches_wrong_scale, 0, 3);
    tcase_add_loop_test(tc, test_rounded_q, 0, 4);
    tcase_add_test(tc, test_sampled_rows);
    tcase_add_test(tc, test_switch_off);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
