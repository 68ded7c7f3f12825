/* SPDX-License-Identifier: MIT */
/*
 * test_choice_wgmma.c: the chooser's choice of the warpgroup kernel (src/kernels/wgmma.c,
 * cl/flash_wgmma.cl) on fake Hopper profiles (no device needed): where auto takes it, its tiles, work-group
 * and local memory when forced, what it refuses and the reason given, its emulation, the path's and the kernels' names.
 */
#include "choice.h"

/* A Hopper (H200) profile whose sm_90a probe passed (matrix_units 2), with its local memory */
static flashcl_device_profile hopper_profile(void)
{
    flashcl_device_profile prof = profile_of(&fakes[0]);
    prof.nv_cc_major = 9;
    prof.matrix_units = 2;
    prof.local_mem_static = 232448;
    prof.local_mem_per_cu = 233472;
    return prof;
}

/* FLASHCL_PATH_WGMMA: flash_wgmma on a Hopper profile whose sm_90a probe passed (matrix_units 2), with
 * its tiles and local memory (one work-group may take more than the chooser's two-a-compute-unit budget);
 * emulated on a profile without it; auto takes it where the probe passed (flash_mma elsewhere, and for the
 * problems it does not take); forced, problems it does not take fall back with the reason first; the
 * path's name parses. */
START_TEST(test_wgmma_path)
{
    flashcl_device_profile prof = hopper_profile();
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
        q.head_dim = 112;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_mma");
        ck_assert_ptr_null(strstr(c.path_reason, "wgmma"));
        prof.matrix_units = 1; /* an A100, or a Hopper whose probe failed: flash_mma under auto */
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_mma");
        prof.matrix_units = 2;
    }
    policy.path = FLASHCL_PATH_WGMMA;
    /* every head dim FlashAttention-3 serves, V's of its own among them (192/128, 128/64) */
    const struct {
        int d, dv, seq_q, bm, bn;
    } want[] = {{64, 64, 4096, 192, 128},   {128, 128, 4096, 128, 128}, {256, 256, 4096, 128, 64},
                {128, 128, 50, 64, 128},    {80, 80, 4096, 128, 128},   {96, 96, 4096, 128, 128},
                {192, 128, 4096, 128, 128}, {128, 64, 4096, 128, 128},  {192, 192, 4096, 128, 64},
                {64, 64, 1024, 128, 128},   {64, 64, 1024, 192, 128},   {64, 64, 4096, 192, 128}};
    /* (odd entries causal; d=64: three warpgroups, 192 rows, with the producer (wgmma-d64), two for causal
     * under 2048 queries) */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        flashcl_problem q = p;
        q.head_dim = want[i].d;
        q.head_dim_v = want[i].dv;
        q.seq_q = want[i].seq_q;
        q.causal = (int)(i & 1);
        q.heads_kv = 4;
        q.dtype = i & 2 ? FLASHCL_DTYPE_BF16 : FLASHCL_DTYPE_F16;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) == 3 && !strcmp(c.kernel_name, "flash_wgmma"), "d=%d: %s %s", want[i].d, c.kernel_name, c.path_reason);
        ck_assert_int_eq(c.block_m, want[i].bm);
        ck_assert_int_eq(c.block_n, want[i].bn);
        ck_assert_int_eq(c.persistent, 0); /* (no compute units in this profile: a block each; test_wgmma_short) */
        /* 128 work-items a warpgroup of 64 rows; with two or three of them the producer warpgroup, 128 more */
        const int producer = want[i].bm >= 128;
        ck_assert_int_eq(c.work_group_size, 2 * want[i].bm + (producer ? 128 : 0));
        ck_assert_int_eq(!!strstr(c.reason, "producer"), producer);
        ck_assert_int_eq(c.v_chunk, 2 * want[i].bn); /* two K/V stages (the pipelined loop): they fit 227 KiB */
        /* Q's block, two stages of K and V tiles, the producer's four mbarriers a stage */
        /* (swizzled from d=80: rows of whole 64-column blocks, 80 and 96 stored 128 wide) */
        const uint64_t qw = want[i].d >= 80 ? (want[i].d + 63) / 64 * 64 : want[i].d,
                       vw = want[i].d >= 80 ? (want[i].dv + 63) / 64 * 64 : want[i].dv;
        ck_assert_uint_eq(c.local_mem_bytes, (want[i].bm * qw + 2 * (uint64_t)want[i].bn * (qw + vw)) * 2 +
                                                 (producer ? 64 : 0));
        if (want[i].dv == want[i].d)
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
    {   /* d=64 where the 192-row block does not fit as measured (512 work-items, or its 90,176 B with the
         * producer and two stages): 128 rows, the producer beside them where it fits */
        flashcl_problem q = p;
        q.head_dim = 64;
        flashcl_device_profile small = prof;
        small.max_work_group_size = 384;
        ck_assert_int_eq(choose(&small, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.block_m, 128);
        ck_assert_int_eq(c.work_group_size, 384);
        policy.local_mem_limit = 90000;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.block_m, 128);
        ck_assert_int_eq(c.kv_stages, 2);
        ck_assert_uint_le(c.local_mem_bytes, 90000);
        policy.local_mem_limit = 90176;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_int_eq(c.block_m, 192);
        ck_assert_uint_eq(c.local_mem_bytes, 90176);
        policy.local_mem_limit = 0;
    }
    /* what it does not take: flash_mma instead, its reason first */
    struct {
        const char *reason;
        flashcl_problem q;
    } no[4];
    for (int i = 0; i < 4; ++i)
        no[i].q = p;
    no[0].reason = "head_dim other than 64, 80", no[0].q.head_dim = 112;
    no[1].reason = "16-byte aligned", no[1].q.k_strides = (flashcl_strides){4096 * 16 * 130, 16 * 130, 130};
    no[2].reason = "head_dim_v other than", no[2].q.head_dim_v = 48;
    no[3].reason = "fp32", no[3].q.dtype = FLASHCL_DTYPE_F32;
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(choose(&prof, &no[i].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(cfg_mma(&c) < 3 && !strncmp(c.path_reason, "not wgmma (", 11) && strstr(c.path_reason, no[i].reason),
                      "%s: %s %s", no[i].reason, c.kernel_name, c.path_reason);
    }
    ck_assert_int_eq(choose(&prof, &no[0].q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_mma"); /* d=112 stays on the matrix units */
    /* what engines send stays on the warpgroup kernel (choice.h's engine_features) */
    {
        flashcl_problem yes[N_ENGINE_FEATURES];
        engine_features(&p, yes);
        for (int i = 0; i < N_ENGINE_FEATURES; ++i) {
            const flashcl_status st = choose(&prof, &yes[i], FLASHCL_ALGO_FLASH, &c);
            ck_assert_msg(st == FLASHCL_SUCCESS, "feature %d: %s", i, flashcl_status_string(st));
            ck_assert_msg(cfg_mma(&c) >= 3, "feature %d: got %s (%s)", i, c.kernel_name, c.path_reason);
        }
    }
    /* fp32 Q over fp16 K/V and bf16 Q over fp16 (Q rounded to K's type as it is loaded): the warpgroup
     * kernel, under auto too; fp16 Q over fp32 K/V: not the matrix units */
    for (int i = 0; i < 3; ++i) {
        flashcl_problem q = p;
        q.dtype = i == 1 ? FLASHCL_DTYPE_BF16 : i == 2 ? FLASHCL_DTYPE_F16 : FLASHCL_DTYPE_F32;
        q.kv_dtype = i == 2 ? FLASHCL_KV_DTYPE_F32 : FLASHCL_KV_DTYPE_F16;
        policy.path = FLASHCL_PATH_AUTO;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        if (i == 2)
            ck_assert_msg(!strcmp(c.kernel_name, "flash_fwd") && strstr(c.path_reason, "K and V in fp32"), "%s: %s",
                          c.kernel_name, c.path_reason);
        else
            ck_assert_msg(cfg_mma(&c) == 3, "Q %s over fp16: got %s (%s)", flashcl_dtype_name(q.dtype), c.kernel_name,
                          c.path_reason);
        policy.path = FLASHCL_PATH_WGMMA;
    }
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
    static const char *const names[] = {"portable", "mma", "wgmma", "decode", "decode_mma", "naive", "standard", "mfma", "wmma", "dpas", "?"};
    for (int k = 0; k < 11; ++k)
        ck_assert_str_eq(flashcl_kernel_name((flashcl_kernel)k), names[k]);
}
END_TEST

/* Short prefills (keys at most 1024, more row blocks than compute units) on the Hopper profile: one work-group
 * a compute unit (wgmma-short), two Q tiles in its local memory (the next block's copied during one), at d=128
 * and at d=64's 192 rows, fp16 and bf16; causal up to 2048 keys with 128-row blocks (wgmma-snake; past them the
 * grid's grouped order, wgmma-order2); softcap, ALiBi, sinks and a paged cache at d=128 without causal
 * (wgmma-feat); not past those, not with a window, packed sequences, a contiguous cache, a mask or key padding, not
 * where the blocks fit one wave, nor at d=256 (the block loop spills there). */
START_TEST(test_wgmma_short)
{
    flashcl_device_profile prof = hopper_profile();
    prof.compute_units = 132;
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.head_dim = 128;
    p.heads_q = p.heads_kv = 16;
    p.batch = 16;
    p.seq_q = p.seq_kv = 1024;
    p.dtype = FLASHCL_DTYPE_F16;
    flashcl_config c;
    for (int d = 64; d <= 128; d += 64)
        for (int bf = 0; bf < 2; ++bf) {
            flashcl_problem q = p;
            q.head_dim = d;
            q.dtype = bf ? FLASHCL_DTYPE_BF16 : FLASHCL_DTYPE_F16;
            ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_str_eq(c.kernel_name, "flash_wgmma");
            ck_assert_int_eq(c.block_m, d == 64 ? 192 : 128);
            ck_assert_int_eq(c.persistent, 132);
            ck_assert_msg(strstr(c.reason, "persistent work-groups"), "%s", c.reason);
            /* Q's block twice beside two stages of 128-key K and V tiles and the producer's mbarriers */
            ck_assert_uint_eq(c.local_mem_bytes, (2 * (uint64_t)c.block_m * d + 2 * 128 * 2 * (uint64_t)d) * 2 + 64);
            ck_assert_uint_le(c.local_mem_bytes, prof.local_mem_static);
        }
    enum { N_NOT = 27 };
    flashcl_problem no[N_NOT];
    for (int i = 0; i < N_NOT; ++i)
        no[i] = p;
    no[0].seq_kv = 1025;
    no[1].causal = 1, no[1].seq_q = no[1].seq_kv = 2049;
    no[2].window = 1, no[2].window_left = 256, no[2].window_right = 0;
    no[3].softcap = 30.0f;
    no[4].alibi = 1;
    no[5].sinks = 1;
    no[6].key_padding = 1;
    no[7].attn_mask = 1, no[7].mask_dtype = FLASHCL_MASK_BOOL;
    no[8].varlen = 1, no[8].total_q = no[8].total_kv = (int64_t)p.batch * p.seq_q;
    no[9].batch = 1, no[9].heads_q = no[9].heads_kv = 16; /* 128 blocks: one wave of 132 compute units */
    no[10].head_dim = 256;
    no[11].seq_q = no[11].seq_kv = 4096;
    no[12].seq_q = 4096; /* 4096 queries over 1024 keys: short blocks, taken */
    no[13].causal = 1, no[13].seq_q = no[13].seq_kv = 2048, no[13].batch = 8; /* taken (the snake) */
    no[14].causal = 1, no[14].head_dim = 64; /* 1024 queries: 128-row blocks, taken */
    no[15].causal = 1, no[15].head_dim = 64, no[15].seq_q = no[15].seq_kv = 2048; /* 192 rows: not measured */
    no[16].kv_cache = 1, no[16].seq_q = 512, no[16].seq_kv = 1024; /* a cache (chunked prefill) */
    no[17].kv_dtype = FLASHCL_KV_DTYPE_F16, no[17].dtype = FLASHCL_DTYPE_BF16; /* bf16 Q over fp16 K and V */
    no[18].batch = 33, no[18].heads_q = no[18].heads_kv = 1, no[18].seq_q = no[18].seq_kv = 512; /* 132 blocks */
    no[19].head_dim = 96; /* head dims other than 64 and 128: not measured */
    no[20].head_dim = 128, no[20].head_dim_v = 64;
    no[21].kv_cache = 1, no[21].page_size = 16, no[21].num_pages = 1024; /* a paged cache at d=128: taken */
    no[22].softcap = 30.0f, no[22].head_dim = 64; /* the features at d=64 and causal: not measured */
    no[23].alibi = 1, no[23].causal = 1;
    no[24].sinks = 1, no[24].head_dim = 64;
    no[25].kv_cache = 1, no[25].page_size = 16, no[25].num_pages = 1024, no[25].causal = 1;
    no[26].causal = 1, no[26].seq_q = no[26].seq_kv = 4096, no[26].batch = 4; /* the grouped grid */
    /* taken: softcap, ALiBi and sinks at d=128 (wgmma-feat), short blocks, causal in the snake order, pages */
    static const int taken[N_NOT] = {[3] = 1, [4] = 1, [5] = 1, [12] = 1, [13] = 1, [14] = 1, [21] = 1};
    for (int i = 0; i < N_NOT; ++i) {
        ck_assert_msg(choose(&prof, &no[i], FLASHCL_ALGO_FLASH, &c) == FLASHCL_SUCCESS, "case %d", i);
        ck_assert_msg(!strcmp(c.kernel_name, "flash_wgmma"), "case %d: %s %s", i, c.kernel_name, c.path_reason);
        ck_assert_msg(c.persistent == (taken[i] ? 132 : 0), "case %d: persistent %d", i, (int)c.persistent);
    }
}
END_TEST

/* fp8 Q, K and V (problem.qkv_format) on the Hopper profile: auto takes flash_wgmma at head dims 64, 128 and
 * 256 with the producer, its local memory by the fp8 layout (byte tiles in 16-bit units in 128-byte rows,
 * V's tiles transposed, the staging tile; the formula equals ptxas's shared-memory count for these programs,
 * docs/design/fp8.md), the config's qkv_format saying so; head dim 96, fp32 O and 8-byte aligned rows go to
 * the portable kernel, which flash_mma refuses too, by name. */
START_TEST(test_wgmma_fp8)
{
    flashcl_device_profile prof = hopper_profile();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = 16;
    p.heads_kv = 4;
    p.seq_q = p.seq_kv = 4096;
    p.dtype = FLASHCL_DTYPE_BF16;
    p.qkv_format = FLASHCL_KV_FP8_E4M3;
    p.fp8_descale = FLASHCL_DESCALE_HEAD;
    flashcl_config c;
    const struct {
        int d, bn;
        uint64_t bytes;
    } want[] = {{64, 128, 81984}, {128, 128, 114752}, {256, 64, 163904}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        p.head_dim = want[i].d;
        p.causal = (int)(i & 1);
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_msg(!strcmp(c.kernel_name, "flash_wgmma") && !c.emulated, "d=%d: %s %s", want[i].d, c.kernel_name,
                      c.path_reason);
        ck_assert_int_eq(c.qkv_format, FLASHCL_KV_FP8_E4M3);
        ck_assert_int_eq(c.block_m, 128);
        ck_assert_int_eq(c.block_n, want[i].bn);
        ck_assert_int_eq(c.work_group_size, 384);
        ck_assert_ptr_nonnull(strstr(c.reason, "fp8, V transposed"));
        ck_assert_uint_eq(c.local_mem_bytes, want[i].bytes);
        ck_assert_uint_eq(flashcl_flash_local_mem_bytes(want[i].d, &c), want[i].bytes);
    }
    static const char *const refused[] = {"head dims other than 64, 128 or 256", "fp32 O", "16-byte aligned"};
    for (int i = 0; i < 3; ++i) {
        flashcl_problem q = p;
        q.head_dim = i == 0 ? 96 : 128;
        q.dtype = i == 1 ? FLASHCL_DTYPE_F32 : FLASHCL_DTYPE_BF16;
        if (i == 2) { /* rows 8 bytes apart from 16-byte multiples: Q's seq stride 8 * 16 + 8 */
            q.q_strides = (flashcl_strides){(int64_t)q.seq_q * 136 * q.heads_q, 136 * q.heads_q, 136};
            q.head_dim = 128;
        }
        policy.path = FLASHCL_PATH_WGMMA;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_fwd");
        ck_assert_msg(strstr(c.path_reason, "not wgmma (fp8 Q, K and V") || (i == 2 && strstr(c.path_reason, refused[2])),
                      "%s", c.path_reason);
        ck_assert_ptr_nonnull(strstr(c.path_reason, refused[i]));
        policy.path = FLASHCL_PATH_MMA;
        ck_assert_int_eq(choose(&prof, &q, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_fwd");
        ck_assert_ptr_nonnull(strstr(c.path_reason, "fp8 Q, K and V (problem.qkv_format"));
        policy.path = FLASHCL_PATH_AUTO;
    }
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("choice-wgmma");
    TCase *tc = tcase_create("chooser");
    tcase_add_test(tc, test_wgmma_path);
    tcase_add_test(tc, test_wgmma_fp8);
    tcase_add_test(tc, test_wgmma_short);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
