/* SPDX-License-Identifier: MIT */
/*
 * probe.c: what a device's driver does not report, found by building (and running) small programs: whether
 * its compiler takes the matrix-unit kernel's inline PTX, whether sm_90a programs run, and how much local
 * memory a work-group's static arrays may take (probe.h). device.c's profile query calls them.
 */
#include "probe.h"

#include "diskcache.h"
#include "kernels.h"
#include "ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The matrix-unit kernel needs NVIDIA's inline PTX with mma.sync.m16n8k16, ldmatrix, shfl.sync and
 * cp.async (compute capability 8.0 and up). The capability alone does not prove that this driver's
 * compiler takes them: the kernel itself is compiled, in its smallest configuration (one warp,
 * head_dim 32, fp16, aligned rows) with the build options its module gives a plan, and a device whose
 * compiler refuses it gets the portable kernel.
 * The build bypasses the program caches (it is not a plan's program). */
/* Whether kernel `id` builds on the device in configuration c for problem p, with its module's options
 * as a plan would give them (outside the caches). */
static int kernel_builds(cl_context context, cl_device_id device, fcl_kernel_id id, const flashcl_problem *p,
                         const flashcl_config *c)
{
    const fcl_kernel_def *def = fcl_kernel_def_of(id);
    const char *texts[FCL_MAX_PARTS];
    uint64_t hash;
    const size_t n_parts = fcl_source_texts(def->sources, texts, &hash);
    cl_int err;
    cl_program prog = n_parts ? clCreateProgramWithSource(context, (cl_uint)n_parts, texts, NULL, &err) : NULL;
    if (!prog)
        return 0;
    char options[512];
    fcl_kernel_options(id, p, c, options, sizeof options);
    int ok = 0;
    if (clBuildProgram(prog, 1, &device, options, NULL, NULL) == CL_SUCCESS) {
        cl_kernel k = clCreateKernel(prog, def->entry, &err);
        if (k) {
            ok = 1;
            clReleaseKernel(k);
        }
    }
    clReleaseProgram(prog);
    return ok;
}

/* The problem the build probes compile a kernel for: one head of 32 queries and keys, head_dim 32, fp16. */
static void probe_problem(flashcl_problem *p)
{
    flashcl_problem_default(p);
    p->batch = p->heads_q = p->heads_kv = 1;
    p->seq_q = p->seq_kv = 32;
    p->head_dim = 32;
    p->dtype = FLASHCL_DTYPE_F16;
}

int fcl_probe_matrix_units(cl_context context, cl_device_id device, const flashcl_device_profile *pr)
{
    if (pr->vendor != FLASHCL_VENDOR_NVIDIA || pr->nv_cc_major < 8)
        return 0;
    /* its options from its module, as a plan's are: one warp of 16 rows, 16-key tiles, one stage */
    flashcl_problem p;
    probe_problem(&p);
    const flashcl_config c = {.algorithm = FLASHCL_ALGO_FLASH, .kernel = FLASHCL_KERNEL_MMA, .block_m = 16, .block_n = 16,
                              .threads_per_row = 4, .rows_per_item = 2, .d_chunk = 32, .v_chunk = 16,
                              .work_group_size = 32, .kv_splits = 1, .gqa_pack = 1, .kv_stages = 1, .m_tiles = 1};
    return kernel_builds(context, device, FCL_K_FLASH_MMA, &p, &c);
}

/* Runs a probe kernel whose only argument is an int buffer of n elements: the buffer filled with `host`,
 * the kernel run on `global` work-items in groups of `local`, the buffer read back into `host`. 1 when
 * every step succeeded. */
static int run_probe_kernel(cl_context context, cl_device_id device, cl_kernel k, size_t global, size_t local,
                            int *host, size_t n)
{
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
    cl_mem out = q ? clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), NULL, &err) : NULL;
    const int ok = out && clSetKernelArg(k, 0, sizeof out, &out) == CL_SUCCESS &&
                   clEnqueueWriteBuffer(q, out, CL_TRUE, 0, n * sizeof(int), host, 0, NULL, NULL) == CL_SUCCESS &&
                   clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL) == CL_SUCCESS &&
                   clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * sizeof(int), host, 0, NULL, NULL) == CL_SUCCESS;
    if (out)
        clReleaseMemObject(out);
    if (q)
        clReleaseCommandQueue(q);
    return ok;
}

/* The sm_90a probe (fcl_probe_sm90a_cached): a marked wgmma.fence (an sm_90a instruction: ptxas refuses
 * the program's PTX for sm_90 with it unmarked) and a marked register move whose result is the answer;
 * unfinished, every work-item writes 0. */
static const char sm90a_source[] =
    "__kernel void sm90a_probe(__global int *out)\n"
    "{\n"
    "    const int a = (int)get_global_id(0) * 3 + 1;\n"
    "    int b = 0;\n"
    "    __asm__ volatile(\"//SM90A wgmma.fence.sync.aligned;\");\n"
    "    __asm__ volatile(\"mov.u32 %0, 0;\\n//SM90A mov.u32 %0, %1;\" : \"=r\"(b) : \"r\"(a));\n"
    "    out[get_global_id(0)] = b;\n"
    "}\n";

static int probe_sm90a(cl_context context, cl_device_id device, const char **why)
{
    enum { WG = 128, N = 2 * WG };
    const char *src = sm90a_source;
    cl_int err, bstatus;
    int ok = 0;
    unsigned char *ptx = NULL, *done = NULL;
    size_t len = 0, done_len = 0;
    cl_program finished = NULL;
    cl_kernel k = NULL;
    int host[N];
    cl_program prog = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    if (!prog || clBuildProgram(prog, 1, &device, "-cl-std=CL1.2", NULL, NULL) != CL_SUCCESS) {
        *why = "the probe's source did not build";
        goto done;
    }
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len ||
        !(ptx = malloc(len)) || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptx, &ptx, NULL) != CL_SUCCESS) {
        *why = "the driver gave no program binary";
        goto done;
    }
    int marks = 0;
    if (!(done = fcl_ptx_finish_sm90a(ptx, len, &done_len, &marks, why)))
        goto done;
    if (marks != 2) {
        *why = "the compiler did not keep the marked instructions in its PTX";
        goto done;
    }
    const unsigned char *bin = done;
    finished = clCreateProgramWithBinary(context, 1, &device, &done_len, &bin, &bstatus, &err);
    if (!finished || bstatus != CL_SUCCESS || clBuildProgram(finished, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) {
        *why = "the finished PTX (.target sm_90a) did not build";
        goto done;
    }
    k = clCreateKernel(finished, "sm90a_probe", &err);
    for (int i = 0; i < N; ++i)
        host[i] = -1;
    if (!k || !run_probe_kernel(context, device, k, N, WG, host, N)) {
        *why = "the finished program did not run";
        goto done;
    }
    ok = 1;
    for (int i = 0; i < N; ++i)
        ok = ok && host[i] == 3 * i + 1;
    if (!ok)
        *why = "the finished program ran with a wrong answer";
done:
    if (k)
        clReleaseKernel(k);
    if (finished)
        clReleaseProgram(finished);
    if (prog)
        clReleaseProgram(prog);
    free(ptx);
    free(done);
    return ok;
}

int fcl_probe_sm90a_cached(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                           const char *cache_dir, const char **why)
{
    *why = NULL;
    if (pr->vendor != FLASHCL_VENDOR_NVIDIA || pr->nv_cc_major != 9 || !pr->matrix_units) {
        *why = "not an NVIDIA GPU of compute capability 9.x with matrix units";
        return 0;
    }
    char key[640], path[4096];
    snprintf(key, sizeof key, "sm90a-probe-v1|%s|%s|%s|%s|%s", pr->platform_name, pr->vendor_name, pr->name,
             pr->device_version, pr->driver_version);
    if (cache_dir) {
        fcl_cache_entry_path(cache_dir, key, path, sizeof path);
        size_t len = 0;
        int rejected = 0;
        unsigned char *bin = fcl_cache_entry_read(path, key, &len, &rejected);
        const int cached = bin && len == 1 && bin[0] == '1';
        free(bin);
        if (cached)
            return 1;
    }
    /* (in a context of this device alone: a caller's context may hold several, and program binaries are
     * read one device each) */
    (void)context;
    cl_int err = CL_SUCCESS;
    cl_context own = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (!own) {
        *why = "no context of the device alone for the probe";
        return 0;
    }
    const int ok = probe_sm90a(own, device, why);
    clReleaseContext(own);
    if (cache_dir && ok) /* (a failure is probed again next time: it may have been transient) */
        fcl_cache_entry_write(path, key, (const unsigned char *)"1", 1);
    return ok;
}

int fcl_amd_matrix_kind(const flashcl_device_profile *pr)
{
    const char *a = pr->arch;
    if (pr->vendor != FLASHCL_VENDOR_AMD || pr->is_cpu)
        return 0;
    if (pr->wg_multiple == 64 && (!strncmp(a, "gfx90a", 6) || !strncmp(a, "gfx940", 6) || !strncmp(a, "gfx941", 6) ||
                                  !strncmp(a, "gfx942", 6) || !strncmp(a, "gfx950", 6)))
        return FLASHCL_KERNEL_MFMA;
    if (pr->wg_multiple == 32 && (!strncmp(a, "gfx11", 5) || !strncmp(a, "gfx12", 5)))
        return FLASHCL_KERNEL_WMMA;
    return 0;
}

/* The matrix probes: one wave computes D = 1 + A B with the instruction (A and B fp16, small integers from
 * the element's indices: every product and sum exact; MFMA 32x32x8 in cl/mfma.cl's layout, WMMA 16x16x16
 * in cl/wmma.cl's for the target) and compares each of its accumulators with the sum it computes itself; a
 * lane writes its global id + 1 where all are right, else 0. */
static const char mfma_probe_source[] =
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void amd_probe(__global int *out)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 31, hf = lane >> 5;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[MFMA_XW];\n"
    "#endif\n"
    "    ushort a[4], b[4];\n"
    "    for (int t = 0; t < 4; ++t) {\n"
    "        const int k = 4 * hf + t;\n"
    "        vstore_half((float)((r + 2 * k) % 5 - 2), 0, (__private half *)&a[t]);\n"
    "        vstore_half((float)((3 * k + r) % 7 - 3), 0, (__private half *)&b[t]);\n"
    "    }\n"
    "    const uint2 av = (uint2)(a[0] | (uint)a[1] << 16, a[2] | (uint)a[3] << 16);\n"
    "    const uint2 bv = (uint2)(b[0] | (uint)b[1] << 16, b[2] | (uint)b[3] << 16);\n"
    "    float16 d = (float16)(1.0f);\n"
    "    MFMA32(d, av, bv);\n"
    "    int ok = 1;\n"
    "    for (int t = 0; t < 16; ++t) {\n"
    "        const int i = AMX_ROW(t, hf);\n"
    "        int want = 1;\n"
    "        for (int k = 0; k < 8; ++k)\n"
    "            want += ((i + 2 * k) % 5 - 2) * ((3 * k + r) % 7 - 3);\n"
    "        ok &= ((float *)&d)[t] == (float)want;\n"
    "    }\n"
    "    out[get_global_id(0)] = ok ? (int)get_global_id(0) + 1 : 0;\n"
    "}\n";
static const char wmma_probe_source[] =
    "#if WMMA_GFX == 11\n"
    "#define NE 16 /* a lane's elements of A or B: all sixteen k positions */\n"
    "#define KP(t) (t)\n"
    "typedef uint8 probe_ab;\n"
    "#else\n"
    "#define NE 8\n"
    "#define KP(t) WMMA12_K(lane, t)\n"
    "typedef uint4 probe_ab;\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void amd_probe(__global int *out)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 15, hf = lane >> 4;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[WMMA_XW];\n"
    "#endif\n"
    "    ushort a[NE], b[NE];\n"
    "    for (int t = 0; t < NE; ++t) {\n"
    "        const int k = KP(t);\n"
    "        vstore_half((float)((r + 2 * k) % 5 - 2), 0, (__private half *)&a[t]);\n"
    "        vstore_half((float)((3 * k + r) % 7 - 3), 0, (__private half *)&b[t]);\n"
    "    }\n"
    "    uint pa[NE / 2], pb[NE / 2];\n"
    "    for (int t = 0; t < NE / 2; ++t) {\n"
    "        pa[t] = a[2 * t] | (uint)a[2 * t + 1] << 16;\n"
    "        pb[t] = b[2 * t] | (uint)b[2 * t + 1] << 16;\n"
    "    }\n"
    "    float8 d = (float8)(1.0f);\n"
    "    WMMA16(d, *(probe_ab *)pa, *(probe_ab *)pb);\n"
    "    int ok = 1;\n"
    "    for (int t = 0; t < 8; ++t) {\n"
    "        const int i = AMX_ROW(t, hf);\n"
    "        int want = 1;\n"
    "        for (int k = 0; k < 16; ++k)\n"
    "            want += ((i + 2 * k) % 5 - 2) * ((3 * k + r) % 7 - 3);\n"
    "        ok &= ((float *)&d)[t] == (float)want;\n"
    "    }\n"
    "    out[get_global_id(0)] = ok ? (int)get_global_id(0) + 1 : 0;\n"
    "}\n";

/* Builds the probe program of three parts (common.cl, the instruction's file, the probe) with `opts`, and
 * (where run is nonzero) runs its kernel `entry` on 128 work-items in groups of wg: 1 where it built, ran
 * and every work-item wrote its global id + 1. */
static int probe_program(cl_context context, cl_device_id device, const char *const texts[3], const char *opts,
                         const char *entry, size_t wg, int run)
{
    enum { N = 128 };
    cl_int err;
    int ok = 0, host[N];
    cl_kernel k = NULL;
    cl_program prog =
        texts[0] && texts[1] ? clCreateProgramWithSource(context, 3, (const char **)texts, NULL, &err) : NULL;
    if (!prog || clBuildProgram(prog, 1, &device, opts, NULL, NULL) != CL_SUCCESS)
        goto done;
    if (!(k = clCreateKernel(prog, entry, &err)))
        goto done;
    ok = !run;
    for (int i = 0; run && i < N; ++i)
        host[i] = -1;
    if (!run || !run_probe_kernel(context, device, k, N, wg, host, N))
        goto done;
    ok = 1;
    for (int i = 0; i < N; ++i)
        ok &= host[i] == i + 1;
done:
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    return ok;
}

int fcl_probe_amd_program(cl_context context, cl_device_id device, int kind, const char *options)
{
    if (kind != FLASHCL_KERNEL_MFMA && kind != FLASHCL_KERNEL_WMMA)
        return 0;
    const int mfma = kind == FLASHCL_KERNEL_MFMA;
    /* (after common.cl, as in the kernels' programs: the emulation's fp16 conversions) */
    const char *const texts[3] = {flashcl_source_text("common.cl"), flashcl_source_text(mfma ? "mfma.cl" : "wmma.cl"),
                                  mfma ? mfma_probe_source : wmma_probe_source};
    char opts[256];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DMFMA_BF16=0 -DWMMA_BF16=0 %s", options ? options : "");
    return probe_program(context, device, texts, opts, "amd_probe", mfma ? 64 : 32, 1);
}

int fcl_probe_amd(cl_context context, cl_device_id device, const flashcl_device_profile *pr, const char **why)
{
    *why = NULL;
    const int kind = fcl_amd_matrix_kind(pr);
    if (!kind) {
        *why = "not an AMD GPU with matrix cores flashcl has a kernel for (CDNA gfx90a, gfx94x, gfx950 with wave64; "
               "RDNA3/4 gfx11, gfx12 with wave32)";
        return 0;
    }
    /* the kernel in its smallest configuration (one wave, one part of keys, head_dim 32, fp16), with the
     * options its module gives a plan */
    const int mfma = kind == FLASHCL_KERNEL_MFMA;
    flashcl_problem p;
    probe_problem(&p);
    const flashcl_config c = {.algorithm = FLASHCL_ALGO_FLASH, .kernel = (flashcl_kernel)kind, .block_m = mfma ? 32 : 16,
                              .block_n = 32, .threads_per_row = 2, .rows_per_item = 1, .d_chunk = 32, .v_chunk = 32,
                              .work_group_size = mfma ? 64 : 32, .kv_splits = 1, .gqa_pack = 1, .kv_stages = 1};
    if (!kernel_builds(context, device, mfma ? FCL_K_FLASH_MFMA : FCL_K_FLASH_WMMA, &p, &c)) {
        *why = mfma ? "flash_mfma with clang's MFMA built-in did not build"
                    : "flash_wmma with clang's WMMA built-in did not build";
        return 0;
    }
    if (!fcl_probe_amd_program(context, device, kind, "-DFCL_AMD_MMA=1")) {
        *why = "the matrix probe program did not build, run or give the right answer";
        return 0;
    }
    return 1;
}

int fcl_intel_dpas_sg(const flashcl_device_profile *pr)
{
    if (pr->vendor != FLASHCL_VENDOR_INTEL || pr->is_cpu || !pr->has_intel_subgroup_matrix)
        return 0;
    return pr->local_mem_size >= 128 * 1024 ? 16 : 8; /* (Xe-HPC and Xe2: 128 KiB of local memory, DPAS at 16) */
}

/* The DPAS probe: one sub-group computes C = 1 + A B (A 8 x 16, B 16 x SG fp16, small integers from the
 * element's indices) in cl/dpas.cl's operand layout and compares each of its eight results with the sum
 * it computes itself; a work-item writes its global id + 1 where all are right, else 0. */
static const char dpas_probe_source[] =
    "#if FCL_INTEL_MMA\n"
    "#define PROBE_SG_ATTR __attribute__((intel_reqd_sub_group_size(DPAS_SG)))\n"
    "#else\n"
    "#define PROBE_SG_ATTR\n"
    "#endif\n"
    "inline uint probe_h(const int x)\n"
    "{\n"
    "    ushort s;\n"
    "    vstore_half((float)x, 0, (__private half *)&s);\n"
    "    return s;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(DPAS_SG, 1, 1))) PROBE_SG_ATTR void intel_probe(__global int *out)\n"
    "{\n"
    "    const int lane = get_local_id(0);\n"
    "#if !FCL_INTEL_MMA\n"
    "    __local float xw[DPAS_XW];\n"
    "#endif\n"
    "    DPAS_A a;\n"
    "    int8 b;\n"
    "    for (int m = 0; m < 8; ++m) {\n"
    "#if DPAS_SG == 8\n"
    "        ((int *)&a)[m] = (int)(probe_h((m + 4 * lane) % 5 - 2) | probe_h((m + 4 * lane + 2) % 5 - 2) << 16);\n"
    "#else\n"
    "        ((short *)&a)[m] = (short)probe_h((m + 2 * lane) % 5 - 2);\n"
    "#endif\n"
    "    }\n"
    "    for (int j = 0; j < 8; ++j)\n"
    "        ((int *)&b)[j] = (int)(probe_h((6 * j + lane) % 7 - 3) | probe_h((6 * j + 3 + lane) % 7 - 3) << 16);\n"
    "    float8 c = (float8)(1.0f);\n"
    "    DPAS(c, a, b);\n"
    "    int ok = 1;\n"
    "    for (int m = 0; m < 8; ++m) {\n"
    "        int want = 1;\n"
    "        for (int k = 0; k < 16; ++k)\n"
    "            want += ((m + 2 * k) % 5 - 2) * ((3 * k + lane) % 7 - 3);\n"
    "        ok &= ((float *)&c)[m] == (float)want;\n"
    "    }\n"
    "    out[get_global_id(0)] = ok ? (int)get_global_id(0) + 1 : 0;\n"
    "}\n";

int fcl_probe_dpas_program(cl_context context, cl_device_id device, int sg, const char *options, int run)
{
    if (sg != 8 && sg != 16)
        return 0;
    const char *const texts[3] = {flashcl_source_text("common.cl"), flashcl_source_text("dpas.cl"), dpas_probe_source};
    char opts[256];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DDPAS_BF16=0 -DDPAS_SG=%d %s", sg, options ? options : "");
    return probe_program(context, device, texts, opts, "intel_probe", (size_t)sg, run);
}

int fcl_probe_dpas(cl_context context, cl_device_id device, const flashcl_device_profile *pr, const char **why)
{
    *why = NULL;
    const int sg = fcl_intel_dpas_sg(pr);
    if (!sg) {
        *why = "not an Intel GPU that lists cl_intel_subgroup_matrix_multiply_accumulate";
        return 0;
    }
    /* Intel's runtime in AUB mode (no GPU: it writes command streams instead of running them) builds for
     * real and runs nothing: there the proof is the build alone */
    const char *aub = getenv("SetCommandStreamReceiver");
    const int run = !(aub && *aub && strcmp(aub, "0"));
    flashcl_problem p;
    probe_problem(&p);
    const flashcl_config c = {.algorithm = FLASHCL_ALGO_FLASH, .kernel = FLASHCL_KERNEL_DPAS, .block_m = 8,
                              .block_n = 16, .threads_per_row = sg, .rows_per_item = 8, .d_chunk = 32, .v_chunk = 16,
                              .work_group_size = sg, .kv_splits = 1, .gqa_pack = 1, .kv_stages = 1, .sub_group = sg};
    if (!kernel_builds(context, device, FCL_K_FLASH_DPAS, &p, &c)) {
        *why = "flash_dpas with the extension's built-ins did not build";
        return 0;
    }
    if (!fcl_probe_dpas_program(context, device, sg, "-DFCL_INTEL_MMA=1", run)) {
        *why = run ? "the DPAS probe program did not build, run or give the right answer"
                   : "the DPAS probe program did not build (AUB mode: nothing runs)";
        return 0;
    }
    return 1;
}

/* The largest multiple of `step` in [lo, hi] that `fits`, given that fits is monotone (true up to a
 * limit, false past it) and true at lo: a binary search, about log2((hi - lo) / step) calls. */
uint64_t fcl_search_limit(uint64_t lo, uint64_t hi, uint64_t step, int (*fits)(void *arg, uint64_t bytes), void *arg)
{
    uint64_t good = lo / step, bad = hi / step + 1; /* good fits; bad is past the range or does not */
    while (bad - good > 1) {
        const uint64_t mid = good + (bad - good) / 2;
        if (fits(arg, mid * step))
            good = mid;
        else
            bad = mid;
    }
    return good * step < lo ? lo : good * step;
}

/* The static local memory probe: a kernel whose only __local array is PROBE_INTS ints; each work-item
 * writes its share, and after the barrier checks what its neighbour wrote. */
static const char static_local_source[] =
    "__kernel void static_local_probe(__global int *out)\n"
    "{\n"
    "    __local uint l[PROBE_INTS];\n"
    "    const int lid = (int)get_local_id(0), n = (int)get_local_size(0), grp = (int)get_group_id(0);\n"
    "    for (int i = lid; i < PROBE_INTS; i += n)\n"
    "        l[i] = (uint)i * 2654435761u ^ (uint)grp;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int bad = 0;\n"
    "    for (int i = (lid + 1) % n; i < PROBE_INTS; i += n)\n"
    "        bad += l[i] != ((uint)i * 2654435761u ^ (uint)grp);\n"
    "    out[grp * n + lid] = bad;\n"
    "}\n";

typedef struct static_probe {
    cl_context context;
    cl_device_id device;
    int builds; /* programs built so far */
} static_probe;

static cl_program static_local_program(static_probe *sp, uint64_t bytes)
{
    const char *src = static_local_source;
    cl_int err;
    cl_program prog = clCreateProgramWithSource(sp->context, 1, &src, NULL, &err);
    if (!prog)
        return NULL;
    char opts[96];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DPROBE_INTS=%llu", (unsigned long long)(bytes / 4));
    ++sp->builds;
    if (clBuildProgram(prog, 1, &sp->device, opts, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

static int static_local_builds(void *arg, uint64_t bytes)
{
    cl_program prog = static_local_program(arg, bytes);
    if (!prog)
        return 0;
    cl_int err;
    cl_kernel k = clCreateKernel(prog, "static_local_probe", &err);
    if (k)
        clReleaseKernel(k);
    clReleaseProgram(prog);
    return k != NULL;
}

/* Runs the probe kernel with `bytes` of local memory in 4 work-groups: 1 when every work-item read back
 * what its neighbour wrote; *kernel_bytes: the local memory the compiled kernel takes (CL_KERNEL_LOCAL_MEM_SIZE:
 * the array and the compiler's own, 4 bytes more on the H200). */
static int static_local_runs(static_probe *sp, uint64_t bytes, size_t wg, uint64_t *kernel_bytes)
{
    cl_program prog = static_local_program(sp, bytes);
    if (!prog)
        return 0;
    cl_int err;
    int ok = 0;
    const size_t global = 4 * wg;
    int *host = calloc(global, sizeof *host);
    cl_kernel k = clCreateKernel(prog, "static_local_probe", &err);
    cl_ulong lm = 0;
    if (k && clGetKernelWorkGroupInfo(k, sp->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL) == CL_SUCCESS)
        *kernel_bytes = lm > bytes && lm <= bytes + 1024 ? lm : bytes; /* (some runtimes report their maximum) */
    if (host && k) {
        for (size_t i = 0; i < global; ++i)
            host[i] = -1;
        ok = run_probe_kernel(sp->context, sp->device, k, global, wg, host, global);
        for (size_t i = 0; ok && i < global; ++i)
            ok = host[i] == 0;
    }
    if (k)
        clReleaseKernel(k);
    clReleaseProgram(prog);
    free(host);
    return ok;
}

uint64_t fcl_probe_static_local(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                                uint64_t hi, int *builds, int *trusted)
{
    static_probe sp = {context, device, 0};
    uint64_t found = pr->local_mem_size;
    int sure = 1;
    if (hi > pr->local_mem_size) {
        /* the largest array that builds, to 4 bytes (the compiler adds its own bytes: the limit is on the
         * sum), then the kernel's whole local memory at that size, once it ran right */
        const uint64_t array = fcl_search_limit(pr->local_mem_size, hi, 4, static_local_builds, &sp);
        const size_t wg = pr->max_work_group_size < 256 ? pr->max_work_group_size : 256;
        uint64_t total = array;
        if (array > pr->local_mem_size) {
            if (static_local_runs(&sp, array, wg ? wg : 1, &total))
                found = total;
            else
                sure = 0; /* it built but did not run right (or could not run): the driver's figure, for now */
        }
    }
    if (builds)
        *builds = sp.builds;
    if (trusted)
        *trusted = sure;
    return found;
}

uint64_t fcl_static_local_cached(cl_context context, cl_device_id device, const flashcl_device_profile *pr,
                                 uint64_t hi, const char *cache_dir, int *builds)
{
    char key[640], path[4096];
    snprintf(key, sizeof key, "static-local-probe-v2|%s|%s|%s|%s|%s|%llu|%llu", pr->platform_name, pr->vendor_name,
             pr->name, pr->device_version, pr->driver_version, (unsigned long long)pr->local_mem_size,
             (unsigned long long)hi);
    if (builds)
        *builds = 0;
    if (cache_dir) {
        fcl_cache_entry_path(cache_dir, key, path, sizeof path);
        size_t len = 0;
        int rejected = 0;
        unsigned char *bin = fcl_cache_entry_read(path, key, &len, &rejected);
        unsigned long long v = 0;
        char text[32];
        int ok = 0;
        if (bin && len < sizeof text) {
            memcpy(text, bin, len);
            text[len] = '\0';
            ok = sscanf(text, "%llu", &v) == 1 && v >= pr->local_mem_size && v <= hi + 1024;
        }
        free(bin);
        if (ok)
            return v;
    }
    int trusted = 0;
    const uint64_t found = fcl_probe_static_local(context, device, pr, hi, builds, &trusted);
    if (cache_dir && trusted) { /* (a run that failed, perhaps for a passing reason, is probed again next time) */
        char text[32];
        const int n = snprintf(text, sizeof text, "%llu", (unsigned long long)found);
        fcl_cache_entry_write(path, key, (const unsigned char *)text, (size_t)n); /* a cache: failure is fine */
    }
    return found;
}
