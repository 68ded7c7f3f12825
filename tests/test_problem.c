/* SPDX-License-Identifier: MIT */
/*
 * test_problem.c: host-only checks: status strings and names, version, dtype helpers, and the
 * problem-description validator (every field at and past its limits, strides that overlap or
 * overflow), through flashcl_choose_config with a fake device profile, and the ABI guard. Needs no
 * OpenCL device.
 */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static flashcl_device_profile fake_gpu(void)
{
    flashcl_device_profile p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "fake GPU");
    p.vendor = FLASHCL_VENDOR_NVIDIA;
    p.local_mem_size = 48 * 1024;
    p.max_work_group_size = 1024;
    p.wg_multiple = 32;
    return p;
}

START_TEST(test_status_strings)
{
    ck_assert_str_eq(flashcl_status_string(FLASHCL_SUCCESS), "success");
    ck_assert_str_eq(flashcl_status_name(FLASHCL_VALIDATION_FAILED), "VALIDATION_FAILED");
    ck_assert_int_eq(FLASHCL_INVALID_ARGUMENT, 1);
    ck_assert_int_eq(FLASHCL_CACHE_ERROR, 10);
    ck_assert_int_eq(FLASHCL_ABI_MISMATCH, 11);
    for (int s = 0; s <= 11; ++s) {
        ck_assert_str_ne(flashcl_status_string((flashcl_status)s), "unknown status");
        ck_assert_str_ne(flashcl_status_name((flashcl_status)s), "UNKNOWN");
    }
    ck_assert_str_eq(flashcl_status_string((flashcl_status)999), "unknown status");
    ck_assert_str_eq(flashcl_status_name((flashcl_status)-5), "UNKNOWN");
}
END_TEST

START_TEST(test_version)
{
    ck_assert_uint_eq(flashcl_version(), FLASHCL_VERSION_NUMBER);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", FLASHCL_VERSION_MAJOR, FLASHCL_VERSION_MINOR, FLASHCL_VERSION_PATCH);
    ck_assert_str_eq(flashcl_version_string(), expect);
}
END_TEST

START_TEST(test_dtypes)
{
    ck_assert_uint_eq(flashcl_dtype_size(FLASHCL_DTYPE_F32), 4);
    ck_assert_uint_eq(flashcl_dtype_size(FLASHCL_DTYPE_F16), 2);
    ck_assert_uint_eq(flashcl_dtype_size(FLASHCL_DTYPE_BF16), 2);
    ck_assert_uint_eq(flashcl_dtype_size((flashcl_dtype)7), 0);
    ck_assert_str_eq(flashcl_dtype_name(FLASHCL_DTYPE_BF16), "bf16");
    /* Host conversions used by the tests and the tool: exact round trips and rounding. */
    ck_assert(hm_half_to_float(hm_float_to_half(1.0f)) == 1.0f);
    ck_assert(hm_half_to_float(hm_float_to_half(65504.0f)) == 65504.0f);
    ck_assert(hm_half_to_float(hm_float_to_half(1e-7f)) == 1.1920928955078125e-07f);
    ck_assert(hm_bf16_to_float(hm_float_to_bf16(1.00390625f)) == 1.0f); /* tie rounds to even */
    ck_assert(hm_bf16_to_float(hm_float_to_bf16(-3.0f)) == -3.0f);
    /* fp8 (flashcl.h's flashcl_kv_format): every finite code round-trips; the format's extremes, ties
     * to even, saturation, NaN. */
    for (int f = FLASHCL_KV_FP8_E4M3; f <= FLASHCL_KV_FP8_E5M2; ++f)
        for (int c = 0; c < 256; ++c) {
            const double x = hm_kv_byte((uint8_t)c, (flashcl_kv_format)f);
            if (isfinite(x) && c != 0x80) /* (-0 encodes as 0x80 too, but compares equal to 0) */
                ck_assert_int_eq(hm_kv_from_float(x, (flashcl_kv_format)f), c);
        }
    ck_assert(hm_kv_byte(0x7e, FLASHCL_KV_FP8_E4M3) == 448.0 && isnan(hm_kv_byte(0xff, FLASHCL_KV_FP8_E4M3)));
    ck_assert(hm_kv_byte(0x01, FLASHCL_KV_FP8_E4M3) == ldexp(1.0, -9));
    ck_assert(hm_kv_byte(0x7b, FLASHCL_KV_FP8_E5M2) == 57344.0 && isinf(hm_kv_byte(0x7c, FLASHCL_KV_FP8_E5M2)));
    ck_assert(hm_kv_byte(0x01, FLASHCL_KV_FP8_E5M2) == ldexp(1.0, -16));
    ck_assert_int_eq(hm_kv_from_float(1.0625, FLASHCL_KV_FP8_E4M3), 0x38); /* halfway 1 .. 1.125: even, 1 */
    ck_assert_int_eq(hm_kv_from_float(1.1875, FLASHCL_KV_FP8_E4M3), 0x3a); /* halfway 1.125 .. 1.25: 1.25 */
    ck_assert_int_eq(hm_kv_from_float(1e9, FLASHCL_KV_FP8_E4M3), 0x7e);    /* saturates */
    ck_assert_int_eq(hm_kv_from_float(-1e9, FLASHCL_KV_FP8_E5M2), 0xfb);
    ck_assert_int_eq(hm_kv_from_float(NAN, FLASHCL_KV_FP8_E5M2) & 0x7f, 0x7f);
    ck_assert_int_eq((int8_t)hm_kv_from_float(-200.0, FLASHCL_KV_INT8), -127);
    ck_assert_str_eq(flashcl_kv_format_name(FLASHCL_KV_FP8_E5M2), "fp8e5m2");
    ck_assert_ptr_null(flashcl_kv_format_name((flashcl_kv_format)4));
    ck_assert_str_eq(flashcl_precision_name(FLASHCL_PRECISION_TF32X3), "tf32x3");
    ck_assert_ptr_null(flashcl_precision_name((flashcl_precision)3));
}
END_TEST

/* A valid problem, then one field broken per case: the validator names the field. */
typedef struct bad_case {
    const char *field;
    flashcl_status expect;
} bad_case;

static const bad_case bad_cases[] = {
    {"problem.batch", FLASHCL_INVALID_ARGUMENT},     {"problem.batch", FLASHCL_INVALID_ARGUMENT},
    {"problem.heads_q", FLASHCL_INVALID_ARGUMENT},   {"problem.heads_kv", FLASHCL_INVALID_ARGUMENT},
    {"problem.heads_q", FLASHCL_INVALID_ARGUMENT},   {"problem.seq_q", FLASHCL_INVALID_ARGUMENT},
    {"problem.seq_kv", FLASHCL_INVALID_ARGUMENT},    {"problem.head_dim", FLASHCL_UNSUPPORTED},
    {"problem.head_dim", FLASHCL_UNSUPPORTED},       {"problem.head_dim", FLASHCL_UNSUPPORTED},
    {"problem.head_dim", FLASHCL_UNSUPPORTED},       {"problem.dtype", FLASHCL_INVALID_ARGUMENT},
    {"problem.scale", FLASHCL_INVALID_ARGUMENT},     {"problem.o_strides", FLASHCL_INVALID_ARGUMENT},
    {"problem.q_strides", FLASHCL_INVALID_ARGUMENT}, {"problem.k_strides", FLASHCL_INVALID_ARGUMENT},
    {"problem.batch * problem.heads_q", FLASHCL_INVALID_ARGUMENT},
    {"overflows 64 bits", FLASHCL_INVALID_ARGUMENT},
    {"problem.window_left", FLASHCL_INVALID_ARGUMENT},  {"window_right = -2", FLASHCL_INVALID_ARGUMENT},
    {"problem.softcap", FLASHCL_INVALID_ARGUMENT},      {"problem.softcap", FLASHCL_INVALID_ARGUMENT},
    {"problem.alibi", FLASHCL_INVALID_ARGUMENT},        {"problem.mask_strides", FLASHCL_INVALID_ARGUMENT},
    {"problem.total_q", FLASHCL_INVALID_ARGUMENT},      {"exceed total_q", FLASHCL_INVALID_ARGUMENT},
    {"problem.varlen with key_padding", FLASHCL_UNSUPPORTED},
    {"problem.kv_splits", FLASHCL_INVALID_ARGUMENT},
    {"problem.page_size = 10", FLASHCL_INVALID_ARGUMENT}, {"problem.num_pages = 0", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_append is set without problem.kv_cache", FLASHCL_INVALID_ARGUMENT},
    {"problem.total_kv = 300 with varlen over a KV cache", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_format = 9", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_format = int8 without problem.kv_cache", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_format = fp8e4m3 with seq_q = 100", FLASHCL_UNSUPPORTED},
    {"problem.kv_format = fp8e5m2 with attn_mask", FLASHCL_UNSUPPORTED},
    {"problem.kv_scale_dtype = 2", FLASHCL_INVALID_ARGUMENT},
    {"problem.alignment = 2", FLASHCL_INVALID_ARGUMENT},
    {"problem.mask_dtype = 3", FLASHCL_INVALID_ARGUMENT},
    {"problem.sinks = 2", FLASHCL_INVALID_ARGUMENT},
    {"problem.cache_batch_idx is set without problem.kv_cache", FLASHCL_INVALID_ARGUMENT},
    {"problem.cache_leftpad with a paged cache", FLASHCL_UNSUPPORTED},
    {"problem.cache_batch_idx with an int8 cache", FLASHCL_UNSUPPORTED},
    {"problem.cache_batch = 3", FLASHCL_INVALID_ARGUMENT},
    {"problem.cache_batch = -1", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_dtype = 4", FLASHCL_INVALID_ARGUMENT},
    {"problem.kv_dtype = 2 with kv_format = int8", FLASHCL_INVALID_ARGUMENT},
    {"problem.head_dim_v = 12", FLASHCL_UNSUPPORTED},
    {"problem.head_dim_v = 264", FLASHCL_UNSUPPORTED},
    {"problem.head_dim_v = -8", FLASHCL_UNSUPPORTED},
    {"problem.head_dim_v = 32 with kv_format = fp8e4m3", FLASHCL_UNSUPPORTED},
    {"problem.kv_append with varlen", FLASHCL_UNSUPPORTED},
    {"problem.varlen with kv_format = fp8e4m3", FLASHCL_UNSUPPORTED},
    {"problem.precision = 3", FLASHCL_INVALID_ARGUMENT},
    {"problem.precision = tf32: a TF32 precision is for fp32 Q, K and V (dtype f16", FLASHCL_INVALID_ARGUMENT},
    {"problem.precision = tf32x3: a TF32 precision is for fp32 Q, K and V (dtype f32, K and V f16)",
     FLASHCL_INVALID_ARGUMENT},
    {"problem.precision = tf32x3: a TF32 precision is for fp32 Q, K and V (dtype f32, K and V int8)",
     FLASHCL_INVALID_ARGUMENT},
    {"problem.qkv_format = 1: 0, FLASHCL_KV_FP8_E4M3 (2) or FLASHCL_KV_FP8_E5M2 (3)", FLASHCL_INVALID_ARGUMENT},
    {"problem.fp8_descale = 3", FLASHCL_INVALID_ARGUMENT},
    {"problem.fp8_descale = 1 without problem.qkv_format", FLASHCL_INVALID_ARGUMENT},
    {"problem.qkv_format = fp8e4m3 with kv_format", FLASHCL_UNSUPPORTED},
    {"problem.qkv_format = fp8e5m2 with kv_dtype", FLASHCL_UNSUPPORTED},
    {"problem.qkv_format = fp8e4m3 with head_dim_v", FLASHCL_UNSUPPORTED},
    {"problem.qkv_format = fp8e4m3 with kv_append", FLASHCL_UNSUPPORTED},
    {"problem.qkv_format = fp8e4m3 with a TF32 precision", FLASHCL_UNSUPPORTED},
    {"problem.scale = -3e+38: must be finite, at most", FLASHCL_INVALID_ARGUMENT},
    {"problem.softcap = 3e+38: must be from 0", FLASHCL_INVALID_ARGUMENT},
    {"problem: k_scale and v_scale's size in bytes overflows 64 bits", FLASHCL_INVALID_ARGUMENT},
    {"problem.k_strides = {12800, 0, 64}: the cache's (kv_append writes it) elements overlap", FLASHCL_INVALID_ARGUMENT},
    {"problem.v_strides = {1024, 128, 64}: the cache's (kv_append writes it) elements overlap",
     FLASHCL_INVALID_ARGUMENT},
};

static void break_field(flashcl_problem *p, int i)
{
    switch (i) {
    case 0: p->batch = 0; break;
    case 1: p->batch = (int32_t)0x80000000u; break; /* a negative through a cast */
    case 2: p->heads_q = -1; break;
    case 3: p->heads_kv = -2; /* (0 is the query side's: test_defaults_and_tensor_bytes) */ break;
    case 4: p->heads_q = 6; p->heads_kv = 4; break;
    case 5: p->seq_q = 0; break;
    case 6: p->seq_kv = INT_MIN; break;
    case 7: p->head_dim = 0; break;
    case 8: p->head_dim = 12; break;
    case 9: p->head_dim = 264; break;
    case 10: p->head_dim = INT_MAX; break;
    case 11: p->dtype = (flashcl_dtype)3; break;
    case 12: p->scale = 1.0f / 0.0f; break;
    case 13: p->o_strides = (flashcl_strides){64 * 4, 64, 32}; break; /* heads overlap within a row */
    case 14: p->q_strides = (flashcl_strides){-1, 64, 64}; break;
    case 15: p->k_strides = (flashcl_strides){INT64_MAX, INT64_MAX / 2, 64}; break;
    case 16: p->batch = INT_MAX; p->heads_q = 4; p->heads_kv = 4; break;
    /* Found by fuzz_problem: default strides of seq x heads x head_dim past 2^63 (signed overflow). */
    case 17: p->seq_q = INT_MAX; p->heads_q = INT_MAX; p->heads_kv = 1; p->batch = 1; p->head_dim = 256; break;
    case 18: p->window = 1; p->window_left = INT_MIN; break;
    case 19: p->window = 1; p->window_left = 4; p->window_right = -2; break;
    case 20: p->softcap = -1.0f; break;
    case 21: p->softcap = 0.0f / 0.0f; break;
    case 22: p->alibi = 3; break;
    case 23: p->attn_mask = 1; p->mask_strides = (flashcl_strides){-5, 100, 0}; break;
    case 24: p->varlen = 1; p->total_q = 0; p->total_kv = 100; break;
    case 25: p->varlen = 1; p->total_q = 50; p->total_kv = 500; break; /* seq_q 100 > total_q */
    case 26: p->varlen = 1; p->total_q = 300; p->total_kv = 300; p->key_padding = 1; break;
    case 27: p->kv_splits = 1025; break;
    case 28: p->kv_cache = 1; p->page_size = 10; break;
    case 29: p->kv_cache = 1; p->page_size = 16; p->num_pages = 0; break;
    case 30: p->kv_append = 1; break;
    case 31: p->kv_cache = 1; p->varlen = 1; p->total_q = 300; p->total_kv = 300; break;
    case 32: p->kv_format = 9; break;
    case 33: p->kv_format = FLASHCL_KV_INT8; break;
    case 34: p->kv_cache = 1; p->kv_format = FLASHCL_KV_FP8_E4M3; break;
    case 35: p->kv_cache = 1; p->seq_q = 1; p->attn_mask = 1; p->kv_format = FLASHCL_KV_FP8_E5M2; break;
    case 36: p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_INT8; p->kv_scale_dtype = FLASHCL_DTYPE_BF16; break;
    case 37: p->alignment = 2; break;
    case 38: p->attn_mask = 1; p->mask_dtype = 3; break;
    case 39: p->sinks = 2; break;
    case 40: p->cache_batch_idx = 1; break;
    case 41: p->kv_cache = 1; p->page_size = 16; p->num_pages = 4; p->cache_leftpad = 1; break;
    case 42: p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_INT8; p->cache_batch_idx = 1; break;
    case 43: p->kv_cache = 1; p->cache_batch = 3; break; /* (without cache_batch_idx) */
    case 44: p->kv_cache = 1; p->cache_batch_idx = 1; p->cache_batch = -1; break;
    case 45: p->kv_dtype = 4; break;
    case 46: p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_INT8; p->kv_dtype = FLASHCL_KV_DTYPE_F16; break;
    case 47: p->head_dim_v = 12; break;
    case 48: p->head_dim_v = 264; break;
    case 49: p->head_dim_v = -8; break;
    case 50: p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_FP8_E4M3; p->head_dim_v = 32; break;
    case 51: p->kv_cache = 1; p->varlen = 1; p->total_q = 300; p->kv_append = 1; break;
    case 52: p->kv_cache = 1; p->varlen = 1; p->seq_q = 1; p->total_q = 2; p->kv_format = FLASHCL_KV_FP8_E4M3; break;
    case 53: p->precision = 3; break;
    case 54: p->dtype = FLASHCL_DTYPE_F16; p->precision = FLASHCL_PRECISION_TF32; break;
    case 55: p->kv_dtype = FLASHCL_KV_DTYPE_F16; p->precision = FLASHCL_PRECISION_TF32X3; break;
    case 56: p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_INT8; p->precision = FLASHCL_PRECISION_TF32X3; break;
    case 57: p->qkv_format = FLASHCL_KV_INT8; break;
    case 58: p->qkv_format = FLASHCL_KV_FP8_E4M3; p->fp8_descale = 3; break;
    case 59: p->fp8_descale = FLASHCL_DESCALE_TENSOR; break;
    case 60: p->qkv_format = FLASHCL_KV_FP8_E4M3; p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_FP8_E4M3; break;
    case 61: p->qkv_format = FLASHCL_KV_FP8_E5M2; p->kv_dtype = FLASHCL_KV_DTYPE_F16; break;
    case 62: p->qkv_format = FLASHCL_KV_FP8_E4M3; p->head_dim_v = 32; break;
    case 63: p->qkv_format = FLASHCL_KV_FP8_E4M3; p->kv_cache = 1; p->kv_append = 1; break;
    case 64: p->qkv_format = FLASHCL_KV_FP8_E4M3; p->precision = FLASHCL_PRECISION_TF32X3; break;
    /* finite, but times log2(e) (the kernels' exp2 arguments) past FLT_MAX */
    case 65: p->scale = -3e38f; break;
    case 66: p->softcap = 3e38f; break;
    /* an int8 cache of 2^30 pages of 2^30 rows (rows broadcast): its scales' bytes past 2^64 */
    case 67:
        p->kv_cache = 1; p->seq_q = 1; p->kv_format = FLASHCL_KV_INT8; p->heads_q = p->heads_kv = 8;
        p->page_size = 1 << 30; p->num_pages = 1 << 30; p->kv_scale_dtype = FLASHCL_DTYPE_F16;
        p->k_strides = p->v_strides = (flashcl_strides){0, 0, 64};
        break;
    /* under kv_append the cache is written: K's rows on one another (row stride 0), and pages of 16 rows 8 rows
     * apart (each page's second half the next page's first) */
    case 68:
        p->kv_cache = p->kv_append = 1; p->seq_q = 1;
        p->k_strides = (flashcl_strides){12800, 0, 64};
        break;
    case 69:
        p->kv_cache = p->kv_append = 1; p->seq_q = 1; p->page_size = 16; p->num_pages = 20;
        p->v_strides = (flashcl_strides){1024, 128, 64};
        break;
    }
}

START_TEST(test_bad_problem)
{
    flashcl_device_profile prof = fake_gpu();
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.seq_q = p.seq_kv = 100;
    flashcl_config cfg;
    ck_assert_int_eq(flashcl_choose_config(&prof, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_SUCCESS);
    break_field(&p, _i);
    flashcl_status st = flashcl_choose_config(&prof, &p, FLASHCL_ALGO_FLASH, &cfg);
    const char *msg = flashcl_context_last_error(NULL);
    ck_assert_msg(st == bad_cases[_i].expect, "case %d: got %s, expected %s (%s)", _i, flashcl_status_name(st),
                  flashcl_status_name(bad_cases[_i].expect), msg);
    ck_assert_msg(strstr(msg, bad_cases[_i].field) != NULL, "case %d: message '%s' does not name %s", _i, msg,
                  bad_cases[_i].field);
}
END_TEST

START_TEST(test_limits_accepted)
{
    flashcl_device_profile prof = fake_gpu();
    flashcl_problem p;
    flashcl_problem_default(&p);
    flashcl_config cfg;
    const int dims[] = {8, 16, 40, 248, 256};
    for (int i = 0; i < 5; ++i) {
        p.head_dim = dims[i];
        ck_assert_int_eq(flashcl_choose_config(&prof, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_SUCCESS);
    }
    /* Huge but representable: 2^31 - 1 keys (offsets are 64-bit), negative scale, stride-0 broadcast. */
    p.head_dim = 128;
    p.seq_kv = INT_MAX;
    p.scale = -0.5f;
    p.k_strides = (flashcl_strides){0, 128, 0};
    ck_assert_int_eq(flashcl_choose_config(&prof, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_SUCCESS);
    ck_assert_int_eq(flashcl_choose_config(NULL, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_choose_config(&prof, NULL, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_choose_config(&prof, &p, (flashcl_algorithm)9, &cfg), FLASHCL_INVALID_ARGUMENT);
}
END_TEST

/* A device flashcl cannot use is refused with the reason: too old, no compiler, no local memory. */
START_TEST(test_device_supported)
{
    flashcl_device_profile p = fake_gpu();
    p.compiler_available = 1;
    p.opencl_major = 3;
    char why[160];
    ck_assert_int_eq(flashcl_device_supported(&p, why, sizeof why), FLASHCL_SUCCESS);
    ck_assert_str_eq(why, "");
    p.opencl_major = 1;
    p.opencl_minor = 1;
    strcpy(p.device_version, "OpenCL 1.1 ");
    ck_assert_int_eq(flashcl_device_supported(&p, why, sizeof why), FLASHCL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "OpenCL 1.2"));
    p.opencl_minor = 2;
    p.compiler_available = 0;
    ck_assert_int_eq(flashcl_device_supported(&p, why, sizeof why), FLASHCL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "no OpenCL C compiler"));
    p.compiler_available = 1;
    p.local_mem_size = 256;
    ck_assert_int_eq(flashcl_device_supported(&p, why, sizeof why), FLASHCL_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "local memory"));
    ck_assert_int_eq(flashcl_device_supported(NULL, NULL, 0), FLASHCL_INVALID_ARGUMENT);
}
END_TEST

/* The ABI guard: the header's descriptor passes; a descriptor with another version, another struct
 * count or one struct of another size is refused by every guarded entry point, naming the struct,
 * before anything is read or written. */
START_TEST(test_abi_guard)
{
    char why[256];
    ck_assert_int_eq(flashcl_abi_check(flashcl_abi_of_header(), why, sizeof why), FLASHCL_SUCCESS);
    ck_assert_str_eq(why, "");
    ck_assert_int_eq(flashcl_abi_check(NULL, why, sizeof why), FLASHCL_INVALID_ARGUMENT);
    ck_assert_uint_eq(flashcl_abi_of_header()->sizes[FLASHCL_ABI_PROBLEM], sizeof(flashcl_problem));
    ck_assert_uint_eq(flashcl_abi_of_header()->count, FLASHCL_ABI_STRUCTS);

    static const char *const names[FLASHCL_ABI_STRUCTS] = {
        "flashcl_problem", "flashcl_device_profile", "flashcl_config",  "flashcl_policy",    "flashcl_settings",
        "flashcl_stats",   "flashcl_kernel_info",    "flashcl_tensors", "flashcl_validation"};
    for (int i = 0; i < FLASHCL_ABI_STRUCTS; ++i) {
        flashcl_abi bad = *flashcl_abi_of_header();
        bad.sizes[i] += 8; /* a field the caller's header has and the library does not */
        ck_assert_int_eq(flashcl_abi_check(&bad, why, sizeof why), FLASHCL_ABI_MISMATCH);
        ck_assert_msg(strstr(why, names[i]) && strstr(why, "bytes in the caller's header"), "%s", why);
    }
    flashcl_abi bad = *flashcl_abi_of_header();
    bad.version += 1;
    ck_assert_int_eq(flashcl_abi_check(&bad, why, sizeof why), FLASHCL_ABI_MISMATCH);
    ck_assert_ptr_nonnull(strstr(why, "ABI"));
    bad = *flashcl_abi_of_header();
    bad.count -= 1;
    ck_assert_int_eq(flashcl_abi_check(&bad, NULL, 0), FLASHCL_ABI_MISMATCH);

    /* every guarded entry point, with a flashcl_problem 8 bytes longer than the library's */
    bad = *flashcl_abi_of_header();
    bad.sizes[FLASHCL_ABI_PROBLEM] += 8;
    flashcl_problem p;
    memset(&p, 0x5a, sizeof p);
    ck_assert_int_eq(flashcl_problem_default_abi(&bad, &p), FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(((unsigned char *)&p)[0], 0x5a); /* untouched */
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "flashcl_problem_default: flashcl_problem is"));
    flashcl_settings st;
    memset(&st, 0x5a, sizeof st);
    ck_assert_int_eq(flashcl_settings_default_abi(&bad, &st), FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(((unsigned char *)&st)[0], 0x5a);
    flashcl_policy pol;
    ck_assert_int_eq(flashcl_policy_default_abi(&bad, &pol), FLASHCL_ABI_MISMATCH);
    flashcl_context *ctx = (flashcl_context *)&p;
    ck_assert_int_eq(flashcl_context_create_default_abi(&bad, "no such device", NULL, &ctx), FLASHCL_ABI_MISMATCH);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "flashcl_context_create_default"));
    ctx = (flashcl_context *)&p;
    ck_assert_int_eq(flashcl_context_create_abi(&bad, NULL, NULL, NULL, NULL, &ctx), FLASHCL_ABI_MISMATCH);
    ck_assert_ptr_null(ctx);
    flashcl_device_profile prof = fake_gpu();
    flashcl_problem_default(&p);
    flashcl_config cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    ck_assert_int_eq(flashcl_choose_config_abi(&bad, &prof, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(((unsigned char *)&cfg)[0], 0x5a);
    ck_assert_int_eq(flashcl_choose_config_policy_abi(&bad, &prof, NULL, &p, FLASHCL_ALGO_FLASH, &cfg),
                     FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(flashcl_device_supported_abi(&bad, &prof, why, sizeof why), FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(flashcl_device_profile_query_abi(&bad, NULL, &prof), FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(flashcl_tuning_db_store_abi(&bad, "/nonexistent/x.db", &prof, &p, &cfg, NULL),
                     FLASHCL_ABI_MISMATCH);
    ck_assert_int_eq(flashcl_problem_default(NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_settings_default(NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_int_eq(flashcl_policy_default(NULL), FLASHCL_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(NULL), "policy is NULL"));
    ck_assert_int_eq(flashcl_choose_config(&prof, &p, FLASHCL_ALGO_FLASH, &cfg), FLASHCL_SUCCESS);
    ck_assert_uint_eq(flashcl_flash_local_mem_bytes_abi(&bad, 64, &cfg), 0);
    ck_assert_uint_gt(flashcl_flash_local_mem_bytes(64, &cfg), 0);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("problem");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_status_strings);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_dtypes);
    tcase_add_loop_test(tc, test_bad_problem, 0, (int)(sizeof bad_cases / sizeof *bad_cases));
    tcase_add_test(tc, test_limits_accepted);
    tcase_add_test(tc, test_device_supported);
    tcase_add_test(tc, test_abi_guard);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
