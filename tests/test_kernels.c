/* SPDX-License-Identifier: MIT */
/*
 * test_kernels.c: the host's kernel table (src/kernels.c) against what the OpenCL compiler says of
 * each kernel: built with -cl-kernel-arg-info, every argument's name, position, address space and type.
 */
#include "fake_devices.h"
#include "testutil.h"

#include "../src/kernels.h"
#include "../src/probe.h"
#include "../src/ptx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The problem variants each kernel is built in: plain, and with every switch of src/kernels.c's
 * feature list (in the groups the problem checks allow together). */
enum { PLAIN, FEATURES_A, FEATURES_B, FEATURES_C, VARIANTS };

static flashcl_problem variant_problem(int variant, flashcl_dtype dtype)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.seq_q = 40;
    p.seq_kv = 96;
    p.head_dim = 32;
    p.dtype = dtype;
    if (variant == FEATURES_A) { /* window, softcap, biases, masks, forced splits */
        p.causal = 1;
        p.window = 1;
        p.window_left = 16;
        p.softcap = 30.0f;
        p.alibi = 2;
        p.attn_mask = 1;
        p.key_padding = 1;
        p.kv_splits = 3;
        p.return_lse = 1;
    } else if (variant == FEATURES_B) { /* packed sequences, ALiBi per head */
        p.varlen = 1;
        p.total_q = 60;
        p.total_kv = 150;
        p.alibi = 1;
        p.return_lse = 1;
    } else if (variant == FEATURES_C) { /* a paged KV cache with append, a GQA decode step (int8 where read) */
        p.seq_q = 2;
        p.kv_cache = 1;
        p.kv_append = 1;
        p.page_size = 16;
        p.num_pages = 16;
        p.seq_kv = 96;
        p.k_strides = p.v_strides = (flashcl_strides){16 * 2 * 32, 2 * 32, 32};
    }
    return p;
}

/* A configuration for kernel `id` on this device (the matrix-unit kernel emulated where the device
 * has no matrix units). */
static flashcl_config kernel_config(flashcl_context *ctx, fcl_kernel_id id, const flashcl_problem *p)
{
    flashcl_config c;
    memset(&c, 0, sizeof c);
    if (id == FCL_K_FLASH_FWD) {
        ck_assert_msg(flashcl_choose_config(flashcl_context_profile(ctx), p, FLASHCL_ALGO_FLASH, &c) ==
                          FLASHCL_SUCCESS,
                      "%s", flashcl_context_last_error(NULL));
        c.kernel = FLASHCL_KERNEL_PORTABLE;
    } else if (id == FCL_K_FLASH_DECODE) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = FLASHCL_KERNEL_DECODE;
        c.shuffles = flashcl_context_profile(ctx)->matrix_units != 0;
        c.block_m = 4;
        c.threads_per_row = c.team = 4; /* head_dim 32: 8 elements a lane */
        c.v_chunk = c.keys_per_step = 4;
        c.kv_splits = p->kv_splits;
    } else if (id == FCL_K_FLASH_DECODE_MMA) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = FLASHCL_KERNEL_DECODE_MMA;
        c.emulated = !flashcl_context_profile(ctx)->matrix_units;
        c.block_m = 4;
        c.v_chunk = c.keys_per_step = 16; /* one 16-key tile a warp and step: pages of 16 */
        c.kv_splits = p->kv_splits;
    } else if (id == FCL_K_FLASH_MMA) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = FLASHCL_KERNEL_MMA;
        c.emulated = !flashcl_context_profile(ctx)->matrix_units;
        c.block_m = 16;
        c.block_n = 16;
    } else if (id == FCL_K_FLASH_WGMMA) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = FLASHCL_KERNEL_WGMMA;
        c.emulated = flashcl_context_profile(ctx)->matrix_units < 2;
        c.block_m = 64;
        c.block_n = 64;
    } else if (id == FCL_K_FLASH_DPAS) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = FLASHCL_KERNEL_DPAS;
        c.emulated = !(flashcl_context_profile(ctx)->vendor == FLASHCL_VENDOR_INTEL && flashcl_context_profile(ctx)->matrix_units);
        c.block_m = 8;
        c.block_n = 16;
        c.sub_group = 16;
    } else if (id == FCL_K_FLASH_MFMA || id == FCL_K_FLASH_WMMA) {
        c.algorithm = FLASHCL_ALGO_FLASH;
        c.kernel = id == FCL_K_FLASH_MFMA ? FLASHCL_KERNEL_MFMA : FLASHCL_KERNEL_WMMA;
        c.emulated = !(flashcl_context_profile(ctx)->vendor == FLASHCL_VENDOR_AMD && flashcl_context_profile(ctx)->matrix_units);
        c.block_m = id == FCL_K_FLASH_MFMA ? 32 : 16;
        c.block_n = 32;
    }
    if (!cfg_decode(&c))
        c.work_group_size = 64; /* standard.cl's softmax work-group */
    else
        c.work_group_size = 128;
    return c;
}

static const char *kind_type(fcl_arg_kind kind)
{
    return kind == FCL_ARG_INT      ? "int"
           : kind == FCL_ARG_LONG   ? "long"
           : kind == FCL_ARG_FLOAT  ? "float"
           : kind == FCL_ARG_PARAMS ? "fcl_params"
                                    : "fcl_kernel_offsets";
}

/* Builds kernel `id` for variant `variant` with -cl-kernel-arg-info and compares its arguments with
 * the table. */
static void check_kernel(fcl_kernel_id id, int variant)
{
    const fcl_kernel_def *def = fcl_kernel_def_of(id);
    ck_assert_ptr_nonnull(def);
    flashcl_context *ctx = tu_context_create();
    ck_assert_ptr_nonnull(ctx);
    const int mma = id == FCL_K_FLASH_MMA || id == FCL_K_FLASH_WGMMA || id == FCL_K_FLASH_MFMA || id == FCL_K_FLASH_WMMA ||
                    id == FCL_K_FLASH_DPAS,
              decode_mma = id == FCL_K_FLASH_DECODE_MMA;
    if ((mma && variant >= FEATURES_B) || (id == FCL_K_KV_APPEND && variant != FEATURES_C)) {
        flashcl_context_destroy(&ctx); /* the matrix-unit kernel has no cache; kv_append only a cache */
        return;
    }
    flashcl_problem p = variant_problem(variant, mma || decode_mma || variant == FEATURES_C ? FLASHCL_DTYPE_F16
                                                 : variant == FEATURES_B ? FLASHCL_DTYPE_BF16
                                                                         : FLASHCL_DTYPE_F32);
    if ((id == FCL_K_FLASH_DECODE || decode_mma) && variant == FEATURES_B) {
        flashcl_context_destroy(&ctx); /* the decode kernels take no packed sequences */
        return;
    }
    if (id == FCL_K_FLASH_DECODE || decode_mma)
        p.attn_mask = 0; /* nor an additive mask */
    if (id == FCL_K_FLASH_WGMMA)
        p.head_dim = 64; /* (64, 128 or 256) */
    if (decode_mma) { /* head dims that are multiples of 64 */
        p.head_dim = 64;
        if (variant == FEATURES_C)
            p.k_strides = p.v_strides = (flashcl_strides){16 * 2 * 64, 2 * 64, 64};
    }
    if (mma && variant == FEATURES_A) { /* its features: causal and a window, LSE */
        p.alibi = p.attn_mask = p.key_padding = p.varlen = 0;
        p.softcap = 0.0f;
        p.kv_splits = 0;
    }
    if (variant == FEATURES_C && (id == FCL_K_FLASH_DECODE || decode_mma || id == FCL_K_NAIVE_FWD ||
                                  id == FCL_K_NAIVE_REF_ROWS || id == FCL_K_KV_APPEND)) {
        p.kv_format = FLASHCL_KV_INT8; /* the readers and the writer of a quantized cache */
        p.kv_scale_dtype = FLASHCL_DTYPE_F16;
    }
    const flashcl_config c = kernel_config(ctx, id, &p);
    char options[640];
    fcl_kernel_options(id, &p, &c, options, sizeof options);
    strcat(options, " -cl-kernel-arg-info");

    const char *texts[16];
    cl_uint n = 0;
    char names[256];
    snprintf(names, sizeof names, "%s", def->sources);
    for (char *tok = strtok(names, " "); tok; tok = strtok(NULL, " ")) {
        ck_assert_uint_lt(n, 16);
        texts[n] = flashcl_source_text(tok);
        ck_assert_msg(texts[n] != NULL, "%s: no embedded source %s", def->entry, tok);
        ++n;
    }
    cl_int err;
    cl_program prog = clCreateProgramWithSource(tu_context, n, texts, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    err = clBuildProgram(prog, 1, &tu_device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        static char log[16384];
        clGetProgramBuildInfo(prog, tu_device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        ck_abort_msg("%s (%s): build failed (%d):\n%.4000s", def->entry, options, (int)err, log);
    }
    cl_kernel k = clCreateKernel(prog, def->entry, &err);
    ck_assert_msg(k != NULL, "%s: clCreateKernel failed (%d)", def->entry, (int)err);
    cl_uint nargs = 0;
    ck_assert_int_eq(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL), CL_SUCCESS);
    ck_assert_msg((int)nargs == def->n_args, "%s: the kernel has %u arguments, the table %d", def->entry, nargs,
                  def->n_args);
    ck_assert_msg(def->n_args <= 40, "%s takes %d arguments: more than 40", def->entry, def->n_args);
    for (cl_uint i = 0; i < nargs; ++i) {
        char name[128] = "", type[128] = "";
        cl_kernel_arg_address_qualifier aq = 0;
        ck_assert_int_eq(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof name, name, NULL), CL_SUCCESS);
        ck_assert_int_eq(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, NULL), CL_SUCCESS);
        ck_assert_int_eq(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL), CL_SUCCESS);
        ck_assert_msg(!strcmp(name, def->arg_names[i]), "%s argument %u: the kernel names it %s, the table %s",
                      def->entry, i, name, def->arg_names[i]);
        const fcl_arg_kind kind = def->arg_kinds[i];
        if (kind == FCL_ARG_MEM)
            ck_assert_msg(aq == CL_KERNEL_ARG_ADDRESS_GLOBAL && strchr(type, '*'),
                          "%s argument %s: the table says a buffer, the kernel has %s (address space %#x)",
                          def->entry, name, type, (unsigned)aq);
        else if (kind == FCL_ARG_PARAMS || kind == FCL_ARG_OFFSETS) /* ("fcl_params" or "struct fcl_params") */
            ck_assert_msg(aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && strstr(type, kind_type(kind)) &&
                              !strchr(type, '*'),
                          "%s argument %s: the table says %s by value, the kernel has %s", def->entry, name,
                          kind_type(kind), type);
        else
            ck_assert_msg(aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && !strcmp(type, kind_type(kind)),
                          "%s argument %s: the table says %s, the kernel has %s", def->entry, name, kind_type(kind),
                          type);
    }
    clReleaseKernel(k);
    clReleaseProgram(prog);
    flashcl_context_destroy(&ctx);
}

START_TEST(test_kernel_table)
{
    check_kernel((fcl_kernel_id)(_i / VARIANTS), _i % VARIANTS);
}
END_TEST

/* The config a plan runs names the table's entry point of the kernel its mma field selects. */
START_TEST(test_config_names_table_kernel)
{
    flashcl_context *ctx = tu_context_create();
    ck_assert_ptr_nonnull(ctx);
    flashcl_problem p = variant_problem(PLAIN, FLASHCL_DTYPE_F16);
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_config c;
    ck_assert_int_eq(flashcl_plan_config(plan, &c), FLASHCL_SUCCESS);
    ck_assert_str_eq(c.kernel_name, fcl_kernel_def_of(fcl_config_kernel(&c))->entry);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

/* The static local memory search: the largest KiB multiple a monotone predicate allows, by bisection. */
typedef struct limit_probe {
    uint64_t limit;
    int calls;
} limit_probe;

static int below_limit(void *arg, uint64_t bytes)
{
    limit_probe *lp = arg;
    ++lp->calls;
    return bytes <= lp->limit;
}

START_TEST(test_search_limit)
{
    const struct {
        uint64_t lo, hi, limit, want;
    } cases[] = {
        {49152, 262144, 232448, 232448}, /* Hopper: 227 KiB */
        {49152, 262144, 232451, 232448}, /* not a multiple of the step: the multiple below */
        {49152, 262144, 166912, 166912}, /* A100: 163 KiB */
        {49152, 262144, 101376, 101376}, /* Ampere/Ada: 99 KiB */
        {49152, 262144, 65536, 65536},   /* Turing: 64 KiB */
        {49152, 262144, 49152, 49152},   /* nothing past the reported size */
        {49152, 262144, 1 << 20, 262144}, /* everything fits: the upper bound */
        {49152, 49152, 1 << 20, 49152},   /* an empty range */
        {49152, 262144, 232444, 232444},  /* Hopper's array: 232448 less the compiler's 4 bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        limit_probe lp = {cases[i].limit, 0};
        const uint64_t got = fcl_search_limit(cases[i].lo, cases[i].hi, 4, below_limit, &lp);
        ck_assert_msg(got == cases[i].want, "limit %llu: found %llu, want %llu", (unsigned long long)cases[i].limit,
                      (unsigned long long)got, (unsigned long long)cases[i].want);
        ck_assert_msg(lp.calls <= 16, "limit %llu: %d builds", (unsigned long long)cases[i].limit, lp.calls);
        lp.calls = 0; /* in KiB steps: the KiB multiple below, in 8 builds */
        const uint64_t kib = fcl_search_limit(cases[i].lo, cases[i].hi, 1024, below_limit, &lp);
        ck_assert_uint_eq(kib, cases[i].want / 1024 * 1024);
        ck_assert_int_le(lp.calls, 8);
    }
}
END_TEST

/* The probe on this device, between a reported 16 KiB and 32 KiB (every runtime here builds and runs
 * those): the builds of the search, one run at the result, and the disk cache answering the second time. */
START_TEST(test_static_local_probe)
{
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    if (pr.vendor == FLASHCL_VENDOR_NVIDIA && !pr.is_cpu && pr.nv_cc_major >= 7 && pr.compiler_available)
        ck_assert_uint_gt(pr.local_mem_static, pr.local_mem_size); /* 232448 against 49152 on the H200 */
    else
        ck_assert_uint_eq(pr.local_mem_static, pr.local_mem_size);
    ck_assert_uint_ge(pr.local_mem_per_cu, pr.local_mem_size);
    if (pr.local_mem_size < 32768)
        return; /* no device here reports less; the range below needs 32 KiB */
    pr.local_mem_size = 16384;
    char dir[] = "/tmp/flashcl-test-probe-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* every array up to the bound builds here: the bound, plus what the compiler adds of its own */
    int builds = -1;
    const uint64_t found = fcl_static_local_cached(tu_context, tu_device, &pr, 32768, dir, &builds);
    ck_assert_uint_ge(found, 32768);
    ck_assert_uint_le(found, 32768 + 1024);
    ck_assert_int_ge(builds, 2); /* the search (the upper bound fits at once) and the run */
    ck_assert_uint_eq(fcl_static_local_cached(tu_context, tu_device, &pr, 32768, dir, &builds), found);
    ck_assert_int_eq(builds, 0); /* from the cache */
    const uint64_t smaller = fcl_static_local_cached(tu_context, tu_device, &pr, 20480, NULL, &builds);
    ck_assert_uint_ge(smaller, 20480);
    ck_assert_uint_le(smaller, 20480 + 1024);
    ck_assert_int_ge(builds, 2);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The finishing step for sm_90a (src/program.c) on PTX text like NVIDIA's OpenCL compiler's: marks
 * removed wherever they are, the one .target directive retargeted (its options kept), the NUL counted
 * as NVIDIA counts it; text that is not PTX for sm_90 refused with a reason. And on this device: a 9.x
 * NVIDIA GPU with matrix units proves the finished probe program (level 2), every other device does not. */
START_TEST(test_ptx_finish_sm90a)
{
    static const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.5\n.target sm_90, texmode_independent\n"
                              ".address_size 64\n\t// begin inline asm\n\t//SM90A wgmma.fence.sync.aligned;\n"
                              "\t// end inline asm\n\tmov.u32 %r2, 0;\n//SM90A mov.u32 %r2, %r1;\n\tret;\n";
    static const char want[] = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.5\n.target sm_90a, texmode_independent\n"
                               ".address_size 64\n\t// begin inline asm\n\twgmma.fence.sync.aligned;\n"
                               "\t// end inline asm\n\tmov.u32 %r2, 0;\nmov.u32 %r2, %r1;\n\tret;\n";
    size_t len = 0;
    int marks = -1;
    const char *why = "unset";
    unsigned char *out = fcl_ptx_finish_sm90a((const unsigned char *)ptx, sizeof ptx, &len, &marks, &why);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_null(why);
    ck_assert_int_eq(marks, 2);
    ck_assert_str_eq((const char *)out, want);
    ck_assert_uint_eq(len, sizeof want); /* with its NUL */
    /* finished again: nothing left to remove, the target already sm_90a */
    unsigned char *again = fcl_ptx_finish_sm90a(out, len, &len, &marks, &why);
    ck_assert_ptr_nonnull(again);
    ck_assert_int_eq(marks, 0);
    ck_assert_str_eq((const char *)again, want);
    free(again);
    free(out);
    const struct {
        const char *text;
        const char *reason;
    } bad[] = {
        {".version 8.0\n.target sm_80\n//SM90A wgmma.fence.sync.aligned;\n", "not for .target sm_90"},
        {".version 8.0\n.target sm_900\n", "not for .target sm_90"},
        {".version 8.0\n", "not for .target sm_90"},
        {".target sm_90\n.target sm_90\n", "more than one"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        why = NULL;
        ck_assert_ptr_null(fcl_ptx_finish_sm90a((const unsigned char *)bad[i].text, strlen(bad[i].text), &len, &marks, &why));
        ck_assert_msg(why && strstr(why, bad[i].reason), "%s: %s", bad[i].text, why ? why : "(no reason)");
    }
    /* a thread-count mark: the entry's .reqntid (setmaxnreg's need), once, unless the header has a count */
    static const char threads[] = ".version 8.0\n.target sm_90\n.visible .entry k(\n\t.param .u32 a\n)\n{\n"
                                  "\t//SM90A-THREADS 384\n//SM90A setmaxnreg.inc.sync.aligned.u32 232;\n\tret;\n}\n";
    static const char threads_want[] = ".version 8.0\n.target sm_90a\n.visible .entry k(\n\t.param .u32 a\n)\n"
                                       ".reqntid 384, 1, 1\n.minnctapersm 1\n{\n\t//SM90A-THREADS 384\n"
                                       "setmaxnreg.inc.sync.aligned.u32 232;\n\tret;\n}\n";
    out = fcl_ptx_finish_sm90a((const unsigned char *)threads, sizeof threads, &len, &marks, &why);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq((const char *)out, threads_want);
    ck_assert_uint_eq(len, sizeof threads_want);
    again = fcl_ptx_finish_sm90a(out, len, &len, &marks, &why);
    ck_assert_ptr_nonnull(again);
    ck_assert_str_eq((const char *)again, threads_want);
    free(again);
    free(out);
    /* NVIDIA's compiler writes the required size itself: only the register count fixed then; a header with
     * both: unchanged */
    static const char counted[] = ".target sm_90\n.entry k(\n)\n.reqntid 256, 1, 1\n{\n//SM90A-THREADS 256\n}\n";
    out = fcl_ptx_finish_sm90a((const unsigned char *)counted, sizeof counted, &len, &marks, &why);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq((const char *)out,
                     ".target sm_90a\n.entry k(\n)\n.reqntid 256, 1, 1\n.minnctapersm 1\n{\n//SM90A-THREADS 256\n}\n");
    again = fcl_ptx_finish_sm90a(out, len, &len, &marks, &why);
    ck_assert_ptr_nonnull(again);
    ck_assert_str_eq((const char *)again, (const char *)out);
    free(again);
    free(out);
    static const char stray[] = ".target sm_90\n//SM90A-THREADS 384\n.entry k(\n)\n{\n}\n";
    ck_assert_ptr_null(fcl_ptx_finish_sm90a((const unsigned char *)stray, sizeof stray, &len, &marks, &why));
    ck_assert_ptr_nonnull(strstr(why, "thread-count mark"));
    const unsigned char cubin[] = {0x7f, 'E', 'L', 'F', 0, 1, 2};
    ck_assert_ptr_null(fcl_ptx_finish_sm90a(cubin, sizeof cubin, &len, &marks, &why));
    ck_assert_ptr_nonnull(strstr(why, "not PTX text"));
    ck_assert(fcl_options_sm90a("-cl-std=CL1.2 -DFCL_SM90A=1 -DHEAD_DIM=64"));
    ck_assert(!fcl_options_sm90a("-cl-std=CL1.2 -DHEAD_DIM=64"));

    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    const int hopper = pr.vendor == FLASHCL_VENDOR_NVIDIA && pr.nv_cc_major == 9 && pr.compiler_available;
    ck_assert_int_eq(pr.matrix_units, hopper ? 2 : pr.matrix_units ? 1 : 0);
    const int proven = fcl_probe_sm90a_cached(tu_context, tu_device, &pr, NULL, &why);
    ck_assert_int_eq(proven, hopper);
    if (!proven)
        ck_assert_ptr_nonnull(why);
}
END_TEST

/* common.cl's fp16 conversions of register values (half_bits_to_float, float_to_half_bits) in the integer
 * form every program but AMD's and Intel's matrix-unit ones takes, against vload_half and vstore_half_rte on
 * global memory, the spec's conversions. */
typedef struct {
    float *f, *f_ref;     /* the 65536 halves as floats: ours, the reference's */
    float *f4, *f8;       /* the same by half4_bits_to_float4 and half8_bits_to_float8 */
    uint16_t *y, *y_ref; /* x's floats as halves */
} fp16_run;

static fp16_run run_fp16_bits(const float *x, size_t nx)
{
    static const char *src =
        "__kernel void fp16_bits(__global const ushort *h, __global const half *hg, __global float *f,\n"
        "                        __global float *f_ref, __global const float *x, __global ushort *y,\n"
        "                        __global half *y_ref, __global float *f4, __global float *f8)\n"
        "{\n"
        "    const size_t i = get_global_id(0);\n"
        "    if (i < 65536) {\n"
        "        f[i] = half_bits_to_float(h[i]);\n"
        "        f_ref[i] = vload_half(i, hg);\n"
        "    }\n"
        "    if (i < 65536 / 4)\n"
        "        vstore4(half4_bits_to_float4(vload4(i, h)), i, f4);\n"
        "    if (i < 65536 / 8)\n"
        "        vstore8(half8_bits_to_float8(vload8(i, h)), i, f8);\n"
        "    y[i] = float_to_half_bits(x[i]);\n"
        "    vstore_half_rte(x[i], i, y_ref);\n"
        "}\n";
    static uint16_t h[65536];
    for (uint32_t i = 0; i < 65536; ++i)
        h[i] = (uint16_t)i;
    const char *texts[2] = {flashcl_source_text("common.cl"), src};
    ck_assert_ptr_nonnull(texts[0]);
    cl_int err;
    cl_program prog = clCreateProgramWithSource(tu_context, 2, texts, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    err = clBuildProgram(prog, 1, &tu_device, "-DFLASHCL_DTYPE_F32", NULL, NULL);
    if (err != CL_SUCCESS) {
        static char log[8192];
        clGetProgramBuildInfo(prog, tu_device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        ck_abort_msg("fp16_bits: build failed (%d):\n%.4000s", (int)err, log);
    }
    cl_kernel k = clCreateKernel(prog, "fp16_bits", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_uint_ge(nx, 65536);
    cl_mem m[9] = {tu_buffer(sizeof h, h),     tu_buffer(sizeof h, h),     tu_buffer(65536 * 4, NULL),
                   tu_buffer(65536 * 4, NULL), tu_buffer(nx * 4, x),       tu_buffer(nx * 2, NULL),
                   tu_buffer(nx * 2, NULL),    tu_buffer(65536 * 4, NULL), tu_buffer(65536 * 4, NULL)};
    for (cl_uint a = 0; a < 9; ++a)
        ck_assert_int_eq(clSetKernelArg(k, a, sizeof(cl_mem), &m[a]), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(tu_queue, k, 1, NULL, &nx, NULL, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    fp16_run r = {tu_read(m[2], 65536 * 4), tu_read(m[3], 65536 * 4), tu_read(m[7], 65536 * 4),
                  tu_read(m[8], 65536 * 4), tu_read(m[5], nx * 2), tu_read(m[6], nx * 2)};
    for (int a = 0; a < 9; ++a)
        clReleaseMemObject(m[a]);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    /* every half to float bit for bit (NaNs as NaNs); every float to half so (NaNs as NaN halves) */
    for (uint32_t i = 0; i < 65536; ++i) {
        uint32_t a, b;
        memcpy(&a, &r.f[i], 4);
        memcpy(&b, &r.f_ref[i], 4);
        ck_assert_msg(a == b || (isnan(r.f[i]) && isnan(r.f_ref[i])), "half %#06x to float: %#010x, vload_half %#010x",
                      i, a, b);
        for (int w = 0; w < 2; ++w) { /* (four and eight at a time: every value too) */
            memcpy(&a, w ? &r.f8[i] : &r.f4[i], 4);
            ck_assert_msg(a == b || (isnan(w ? r.f8[i] : r.f4[i]) && isnan(r.f_ref[i])),
                          "half %#06x to float, %d at a time: %#010x, vload_half %#010x", i, w ? 8 : 4, a, b);
        }
    }
    for (size_t i = 0; i < nx; ++i)
        ck_assert_msg(r.y[i] == r.y_ref[i] || ((r.y[i] & 0x7fff) > 0x7c00 && (r.y_ref[i] & 0x7fff) > 0x7c00),
                      "float %a to half: %#06x, vstore_half_rte %#06x", (double)x[i], r.y[i], r.y_ref[i]);
    return r;
}

static void free_fp16_run(fp16_run r)
{
    free(r.f);
    free(r.f_ref);
    free(r.f4);
    free(r.f8);
    free(r.y);
    free(r.y_ref);
}

/* To float: all 65536 halves. To half: each half's value, each midpoint between neighbouring halves (a
 * tie: to even) with the float either side of it, the subnormals' and the overflow's edges, infinities
 * and NaN, and random bit patterns (every exponent). */
START_TEST(test_fp16_bits)
{
    enum { NX = 4 * 65536 + 19 + 65536 };
    float *x = calloc(NX, sizeof *x);
    ck_assert_ptr_nonnull(x);
    fp16_run first = run_fp16_bits(x, 65536); /* (the halves' values, by the reference) */
    size_t n = 0;
    for (uint32_t i = 0; i < 65536; ++i) {
        if (isnan(first.f_ref[i]))
            continue;
        x[n++] = first.f_ref[i];
        if ((i & 0x7fff) < 0x7bff) { /* the next magnitude, the same sign, finite */
            const float mid = (float)(((double)first.f_ref[i] + (double)first.f_ref[i + 1]) / 2.0); /* (exact) */
            x[n++] = mid;
            x[n++] = nextafterf(mid, 0.0f);
            x[n++] = nextafterf(mid, mid > 0.0f ? INFINITY : -INFINITY);
        }
    }
    free_fp16_run(first);
    static const float edges[] = {65504.0f, 0x1.ffdffep15f, 65520.0f, 65536.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f};
    for (size_t e = 0; e < sizeof edges / sizeof *edges; ++e) {
        x[n++] = edges[e];
        x[n++] = -edges[e];
    }
    x[n++] = INFINITY;
    x[n++] = -INFINITY;
    x[n++] = NAN;
    hm_rng rng;
    hm_rng_seed(&rng, 16);
    while (n < NX) {
        const uint32_t u = (uint32_t)(hm_rng_uniform(&rng) * 4294967296.0);
        memcpy(&x[n++], &u, 4);
    }
    free_fp16_run(run_fp16_bits(x, n));
    free(x);
}
END_TEST

/* flash_wgmma's build options on a fake H200 whose sm_90a probe passed: the consumers' turns (WG_PINGPONG)
 * with the producer on 16-bit operands up to d_v = 128 (d=64's three warpgroups included, fp32 Q over fp16
 * K/V too), not at d=256, not with fp8, not without the producer (64 query rows), not emulated. */
START_TEST(test_wgmma_pingpong_options)
{
    flashcl_device_profile prof = fake_profile(&fakes[0]); /* (tests/fake_devices.h's H200, with its probes) */
    prof.local_mem_static = 232448;
    prof.local_mem_per_cu = 233472;
    prof.compute_units = 132;
    prof.compiler_available = 1;
    prof.nv_cc_major = 9;
    static const struct {
        int d, dv, seq_q, fp8, f32;
        int want; /* -DWG_PINGPONG=1 in the options */
    } cases[] = {{128, 0, 4096, 0, 0, 1}, {64, 0, 4096, 0, 0, 1}, {192, 128, 4096, 0, 0, 1}, {128, 0, 4096, 0, 1, 1},
                 {256, 0, 4096, 0, 0, 0}, {128, 0, 4096, 1, 0, 0}, {128, 0, 64, 0, 0, 0}};
    for (int emulated = 0; emulated < 2; ++emulated) {
        prof.matrix_units = emulated ? 0 : 2;
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            flashcl_problem p;
            flashcl_problem_default(&p);
            p.heads_q = p.heads_kv = 16;
            p.seq_q = cases[i].seq_q;
            p.seq_kv = 4096;
            p.head_dim = cases[i].d;
            p.head_dim_v = cases[i].dv;
            p.dtype = cases[i].f32 ? FLASHCL_DTYPE_F32 : FLASHCL_DTYPE_F16;
            if (cases[i].f32)
                p.kv_dtype = FLASHCL_KV_DTYPE_F16;
            if (cases[i].fp8) {
                p.qkv_format = FLASHCL_KV_FP8_E4M3;
                p.fp8_descale = FLASHCL_DESCALE_HEAD;
            }
            flashcl_policy pol;
            flashcl_policy_default(&pol);
            pol.path = FLASHCL_PATH_WGMMA;
            pol.local_mem_limit = (uint64_t)1 << 40; /* (the device's, not $FLASHCL_LOCAL_MEM_LIMIT's) */
            flashcl_config c;
            ck_assert_int_eq(flashcl_choose_config_policy(&prof, &pol, &p, FLASHCL_ALGO_FLASH, &c), FLASHCL_SUCCESS);
            ck_assert_msg(!strcmp(c.kernel_name, "flash_wgmma"), "case %zu: %s (%s)", i, c.kernel_name, c.path_reason);
            ck_assert_int_eq(c.emulated, emulated);
            char options[1024];
            fcl_kernel_options(FCL_K_FLASH_WGMMA, &p, &c, options, sizeof options);
            const int has = strstr(options, "-DWG_PINGPONG=1") != NULL;
            ck_assert_msg(has == (cases[i].want && !emulated), "case %zu%s: %s", i, emulated ? " emulated" : "", options);
        }
    }
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_kernel_table, 0, FCL_KERNEL_COUNT * VARIANTS);
    tcase_add_test(tc, test_config_names_table_kernel);
    tcase_add_test(tc, test_search_limit);
    tcase_add_test(tc, test_static_local_probe);
    tcase_add_test(tc, test_ptx_finish_sm90a);
    tcase_add_test(tc, test_fp16_bits);
    tcase_add_test(tc, test_wgmma_pingpong_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
