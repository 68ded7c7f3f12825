/* SPDX-License-Identifier: MIT */
/*
 * test_choice_mma.c: the chooser's choice of the matrix-unit prefill kernel (src/kernels/mma.c,
 * cl/flash_mma.cl) on fake device profiles (no device needed): its tiles on each budget, the problems it
 * takes, the ones it refuses for the portable kernel and the reason given, the path forced either way.
 */
#include "choice.h"

/* The matrix-unit path: chosen on a device with matrix units for the problems flash_mma.cl takes, the
 * portable kernel (with the reason) for the rest, forced either way by the profile's path. */
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

    /* Windows, causal, GQA, bf16 and head dims 32..128 in steps of 16 stay on the matrix units. */
    static const int dims_ok[] = {32, 64, 80, 96, 112, 128};
    for (int i = 0; i < 6; ++i) {
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
    no[n].what = "d=72", no[n].reason = "head_dim", no[n++].q.head_dim = 72;
    no[n].what = "splits", no[n].reason = "splits", no[n++].q.kv_splits = 4;
    no[n].what = "fp32 K/V", no[n].reason = "K and V in fp32", no[n++].q.kv_dtype = FLASHCL_KV_DTYPE_F32;
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(choose(&prof, &no[i].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 0 && !strcmp(c.kernel_name, "flash_fwd"), "%s: got %s", no[i].what, c.kernel_name);
        ck_assert_msg(strstr(c.path_reason, "portable: ") && strstr(c.path_reason, no[i].reason), "%s: \"%s\"",
                      no[i].what, c.path_reason);
    }

    /* Q in its own type over fp16 or bf16 K/V (fp32 or the other 16-bit type, rounded to K's as it is
     * loaded) takes the matrix units, with O staged only where it is in the operands' type. */
    {
        static const struct {
            flashcl_dtype q;
            int kv;
        } mixed[] = {{FLASHCL_DTYPE_F32, FLASHCL_KV_DTYPE_F16}, {FLASHCL_DTYPE_F32, FLASHCL_KV_DTYPE_BF16},
                     {FLASHCL_DTYPE_BF16, FLASHCL_KV_DTYPE_F16}, {FLASHCL_DTYPE_F16, FLASHCL_KV_DTYPE_BF16}};
        for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; ++i) {
            flashcl_problem q = p;
            q.dtype = mixed[i].q;
            q.kv_dtype = mixed[i].kv;
            ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(cfg_mma(&c) == 1, "Q %s over kv_dtype %d: got %s (%s)", flashcl_dtype_name(q.dtype),
                          mixed[i].kv, c.kernel_name, c.path_reason);
        }
    }

    /* What engines send takes the matrix units: the score modifiers, packed sequences, a KV cache
     * (contiguous or paged, with the append), sinks. */
    {
        flashcl_problem yes[N_ENGINE_FEATURES];
        engine_features(&p, yes);
        for (int i = 0; i < N_ENGINE_FEATURES; ++i) {
            const flashcl_status st = choose(&prof, &yes[i], FLASHCL_ALGO_FLASH, &c);
            ck_assert_msg(st == FLASHCL_SUCCESS, "feature %d: %s", i, flashcl_status_string(st));
            ck_assert_msg(cfg_mma(&c) == 1, "feature %d: got %s (%s)", i, c.kernel_name, c.path_reason);
        }
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

/* fp32 under a TF32 precision (problem.precision): flash_mma with fp32 operands (config.tf32 3 or 1) on a
 * Hopper that passed the sm_90a probe (flash_wgmma takes no fp32), its local memory by the fp32 layout's
 * formula (rows padded to 16 mod 32 and 4 mod 16), within the budget; fp32 by default, a decode step,
 * a head dim not a multiple of 16 and a device without matrix units stay portable (or decode). */
START_TEST(test_tf32_path)
{
    flashcl_device_profile prof = profile_of(&fakes[11]); /* Hopper: 227 KiB of static local memory */
    prof.nv_cc_major = 9;
    prof.matrix_units = 2;
    flashcl_problem p = choice_prefill(128);
    p.dtype = FLASHCL_DTYPE_F32;
    flashcl_config c;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0); /* fp32: every product in fp32, the portable kernel */
    ck_assert_int_eq(c.tf32, 0);
    for (int prec = FLASHCL_PRECISION_TF32X3; prec <= FLASHCL_PRECISION_TF32; ++prec) {
        static const int dims[] = {64, 80, 96, 128, 256};
        for (int i = 0; i < 5; ++i) {
            flashcl_problem q = choice_prefill(dims[i]);
            q.dtype = FLASHCL_DTYPE_F32;
            q.precision = prec;
            q.causal = i & 1;
            ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(cfg_mma(&c) == 1, "d=%d: %s", dims[i], c.path_reason);
            ck_assert_int_eq(c.tf32, prec == FLASHCL_PRECISION_TF32X3 ? 3 : 1);
            ck_assert_int_eq(c.m_tiles, 1);
            ck_assert_ptr_nonnull(strstr(c.path_reason, "TF32"));
            /* (TF32X3 above d=64: Q's block split once into a second block, Q_SPLIT) */
            const int d = dims[i], lds = d + (48 - d % 32) % 32, ldv = d + 4, kv = c.kv_stages * c.block_n;
            const int q_rows = c.block_m * (prec == FLASHCL_PRECISION_TF32X3 && d > 64 ? 2 : 1);
            ck_assert_uint_eq(c.local_mem_bytes, (uint64_t)((q_rows + kv) * lds + kv * ldv) * 4);
            ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(d, &c));
            ck_assert_uint_le(c.local_mem_bytes, budget_of(&prof));
            if (d == 128 && prec == FLASHCL_PRECISION_TF32) /* four warps, 32-key tiles in two stages: 105 KiB */
                ck_assert(c.block_m == 64 && c.block_n == 32 && c.kv_stages == 2 && c.local_mem_bytes == 107520);
            if (d == 128 && prec == FLASHCL_PRECISION_TF32X3) /* 16-key tiles (registers), Q split: 106.5 KiB */
                ck_assert(c.block_m == 64 && c.block_n == 16 && c.kv_stages == 2 && c.local_mem_bytes == 109056);
        }
    }
    /* what stays off the matrix units under TF32 */
    flashcl_problem q = p;
    q.precision = FLASHCL_PRECISION_TF32X3;
    q.seq_q = 1; /* a decode step: the decode kernels, in fp32 */
    ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    ck_assert_int_eq(c.tf32, 0);
    q = p;
    q.precision = FLASHCL_PRECISION_TF32X3;
    q.head_dim = 72;
    ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "multiple of 16"));
    flashcl_device_profile plain = profile_of(&fakes[11]); /* no matrix units */
    q = p;
    q.precision = FLASHCL_PRECISION_TF32;
    ck_assert_int_eq(choose(&plain, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 0);
    /* forced on a device without matrix units: emulated, the exchange area counted */
    policy.path = FLASHCL_PATH_MMA;
    ck_assert_int_eq(choose(&plain, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 2);
    ck_assert_int_eq(c.tf32, 1);
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));
    /* the wgmma path asked for: flash_wgmma refuses fp32, flash_mma runs with the reason */
    policy.path = FLASHCL_PATH_WGMMA;
    ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(cfg_mma(&c), 1);
    ck_assert_ptr_nonnull(strstr(c.path_reason, "not wgmma"));
    policy.path = FLASHCL_PATH_AUTO;
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("choice-mma");
    TCase *tc = tcase_create("chooser");
    tcase_add_test(tc, test_matrix_unit_path);
    tcase_add_test(tc, test_tf32_path);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
