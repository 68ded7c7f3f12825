/* SPDX-License-Identifier: MIT */
/*
 * test_choice_decode.c: the chooser's choice of the decode kernels (src/kernels/decode.c,
 * cl/flash_decode.cl; src/kernels/decode_mma.c, cl/flash_decode_mma.cl) and the portable kernel's decode
 * path on fake device profiles (no device needed): GQA packing, split-KV, where auto takes each kernel,
 * their tiles (quantized caches too), and what falls back with the reason.
 */
#include "choice.h"

/* GQA decode steps pack the query heads of a KV head into one work-group; prefill and MHA do not.
 * Split-KV only where the grid leaves compute units idle. */
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
     * packed rows, eight warps of two 16-key tiles up to d=128 (four of one above), as many splits as fill
     * one wave of eight warps per compute unit (never past it), each of at least 4 steps of 128 keys. */
    p.dtype = FLASHCL_DTYPE_F16;
    p.seq_kv = 131072;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
    ck_assert_int_eq(cfg_decode(&c), 3);
    ck_assert_int_eq(c.gqa_pack, 4);
    ck_assert_int_eq(c.block_m, 4);
    ck_assert_int_eq(c.work_group_size, 256);
    ck_assert_int_eq(c.v_chunk, 32);
    ck_assert_int_eq(c.block_n, 256);
    ck_assert_int_eq(c.kv_splits, 16); /* 8 work-groups a split: 128 <= 132, merged in the kernel */
    ck_assert_uint_eq(c.local_mem_bytes, 8 * 4 * (128 + 2) * 4); /* cl/flash_decode_mma.cl's merge area */
    ck_assert_uint_eq(c.local_mem_bytes, flashcl_flash_local_mem_bytes(128, &c));
    p.batch = 8;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 2); /* 64 work-groups a split: 128 <= 132 */
    p.batch = 64;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 1);
    p.batch = 1;
    p.seq_kv = 8192;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.kv_splits, 16); /* 4 steps of 128 keys a split (2 of the work-group's 256) */
    p.head_dim = 256; /* (one tile a warp above d=128: four warps, two work-groups an SM) */
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_int_eq(c.kv_splits, 32); /* 8192 / (4 steps of 64 keys) < 2 x 132 / 8 */
    p.head_dim = 128;
    /* Quantized caches (decode-mma-19): int8 two 16-key tiles a warp, as fp16; E4M3 two where sm_89's pair
     * conversion is (FCL_SM), 3 on the permute path; E5M2 four. int8 with fp32 scales takes eight warps as
     * fp16 does (decode-mma-31), the others four; it takes three tiles where flash_combine merges the splits
     * (past 16) and a split holds 1024 keys or more (decode-mma-24). E4M3 through the pair conversion takes
     * eight warps of three tiles where their splits are a whole wave of 8 or more (decode-mma-37): batch 1 from
     * 16384 keys (16 splits of 4 steps or more) and batch 2 (8), not batch 1 x 8192 (the keys cut them to 10),
     * batch 4 (4) or forced splits. */
    p.kv_cache = 1;
    const struct {
        flashcl_kv_format format;
        flashcl_dtype scales;
        int cc, batch, keys, splits, v_chunk, warps;
    } quant[] = {{FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 1, 131072, 0, 32, 8},  /* 16 splits, merged in the kernel */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F16, 90, 1, 131072, 0, 32, 4},  /* (the shuffled scales' two) */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 1, 49152, 0, 32, 8},   /* 16 */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 1, 32768, 0, 32, 8},   /* 16 */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 1, 131072, 66, 48, 8}, /* 66 of 1986, flash_combine */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 1, 16384, 33, 32, 8},  /* 33 of 497 */
                 {FLASHCL_KV_INT8, FLASHCL_DTYPE_F32, 90, 8, 131072, 0, 32, 8},  /* 2 splits */
                 {FLASHCL_KV_FP8_E5M2, FLASHCL_DTYPE_F32, 90, 1, 131072, 0, 64, 4},
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 131072, 0, 48, 8}, /* 16, in the kernel */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 89, 1, 131072, 0, 48, 8},
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 16384, 0, 48, 8},  /* 16 of 1024 keys */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 12287, 0, 32, 4},  /* 15: the keys cut them */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 8192, 0, 32, 4},
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 2, 32768, 0, 48, 8},  /* 8 */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 4, 32768, 0, 32, 4},  /* 4 would be */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 131072, 33, 32, 4}, /* forced */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 90, 1, 131072, 16, 32, 4}, /* forced, a wave's count */
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 86, 1, 131072, 0, 48, 4},
                 {FLASHCL_KV_FP8_E4M3, FLASHCL_DTYPE_F32, 80, 1, 131072, 0, 48, 4},
                 {FLASHCL_KV_PLAIN, FLASHCL_DTYPE_F32, 90, 1, 131072, 0, 32, 8}};
    for (size_t i = 0; i < sizeof quant / sizeof quant[0]; ++i) {
        p.kv_format = quant[i].format;
        p.kv_scale_dtype = quant[i].scales;
        p.batch = quant[i].batch;
        p.seq_kv = quant[i].keys;
        p.kv_splits = quant[i].splits;
        prof.nv_cc_major = quant[i].cc / 10;
        prof.nv_cc_minor = quant[i].cc % 10;
        ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
        ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
        ck_assert_msg(c.v_chunk == quant[i].v_chunk && c.work_group_size == 32 * quant[i].warps,
                      "%s sm_%d B=%d N=%d splits %d: %d keys a warp and %d warps, want %d and %d",
                      flashcl_kv_format_name(p.kv_format), quant[i].cc, quant[i].batch, quant[i].keys,
                      (int)c.kv_splits, (int)c.v_chunk, (int)c.work_group_size / 32, quant[i].v_chunk,
                      quant[i].warps);
        ck_assert_int_eq(c.block_n, quant[i].warps * c.v_chunk);
        if (quant[i].format == FLASHCL_KV_FP8_E4M3 && quant[i].warps == 8) /* the wave: 132 / (8 x batch) */
            ck_assert_int_eq(c.kv_splits, 132 / (8 * quant[i].batch));
        if (quant[i].batch == 1 && !quant[i].splits && quant[i].keys >= 32768) /* 8 KV heads: a wave of eight
                                                                                  * warps an SM, or two of four */
            ck_assert_int_eq(c.kv_splits, quant[i].warps == 8 ? 16 : 33);
    }
    /* Under 256 work-items a work-group int8 with fp32 scales runs four warps, and at batch 1 x 131072 their
     * 33 splits of 3971 keys go to flash_combine: three tiles (decode-mma-24) */
    const size_t most_items = prof.max_work_group_size;
    prof.max_work_group_size = 128;
    p.kv_format = FLASHCL_KV_INT8;
    p.kv_scale_dtype = FLASHCL_DTYPE_F32;
    p.batch = 1;
    p.seq_kv = 131072;
    p.kv_splits = 0;
    ck_assert_int_eq(choose(&prof, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, "flash_decode_mma");
    ck_assert_int_eq(c.work_group_size, 128);
    ck_assert_int_eq(c.v_chunk, 48);
    ck_assert_int_eq(c.kv_splits, 33);
    prof.max_work_group_size = most_items;
    p.kv_cache = 0;
    p.kv_splits = 0;
    p.batch = 1;
    p.kv_scale_dtype = FLASHCL_DTYPE_F32;
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
    ck_assert_uint_eq(c.local_mem_bytes, 8 * 4 * (128 + 2) * 4 + 8 * 32 * 8 * 4); /* (eight warps) */
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

static Suite *make_suite(void)
{
    Suite *s = suite_create("choice-decode");
    TCase *tc = tcase_create("chooser");
    tcase_add_test(tc, test_decode_packing_and_splits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
