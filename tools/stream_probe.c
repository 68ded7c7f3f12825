/* SPDX-License-Identifier: MIT */
/*
 * stream_probe.c: the rate at which a decode step's work-groups can read a KV cache, apart from flashcl's
 * kernel (docs/design/decode_mma.md, decode-mma-32): K and V of `heads` KV heads, rows of 256 bytes (d=128
 * in 16 bits) interleaved by key, one work-group of WARPS warps for each (head, split) as flash_decode_mma
 * at batch 1, each warp reading DEPTH keys' K and V rows a step (2 * DEPTH * 256 bytes), and nothing done
 * with the bytes but an exclusive-or of every word, whose fold the host checks against its own. Two ways:
 *   loads  every lane's DEPTH 16-byte loads of a step issued before any is used (the fold takes the last
 *          load first, through an instruction the compiler cannot reorder, so the step waits for them all),
 *          as flash_decode_mma's step does;
 *   bulk   (compute capability 9.0: cp.async.bulk) the step's rows copied into local memory by the copy
 *          engine, 256 bytes a copy, an mbarrier counting the bytes, STAGES steps ahead; elsewhere the same
 *          walk by plain loads into local memory (the emulation that CI runs).
 * Each variant's kernel time from profiling events, its median over the runs with K and V rotated over
 * COPIES copies (so that a run does not find the last one's bytes in L2), and GB/s of the cache's bytes.
 * Not installed.
 *
 *   stream_probe [DEVICE] [--json] [--keys N] [--heads H] [--splits S] [--warps W] [--copies C] [--reps R]
 *                [--ptx DIR]
 */
#include <flashcl.h>

#include "ptx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char source[] =
    "#define ROW 16 /* a row's 16-byte pieces: 256 bytes */\n"
    "#define STEP_KEYS (WARPS * DEPTH)\n"
    "#if FCL_PTX\n"
    "inline uint xor_opaque(const uint a, const uint b)\n"
    "{ uint r; __asm__(\"xor.b32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
    "#define WARP_SYNC() __asm__ volatile(\"bar.warp.sync -1;\" ::: \"memory\")\n"
    "#else\n"
    "#define xor_opaque(a, b) ((a) ^ (b))\n"
    "#endif\n"
    "inline uint fold4(uint acc, const uint4 x)\n"
    "{ return xor_opaque(xor_opaque(xor_opaque(xor_opaque(acc, x.w), x.z), x.y), x.x); }\n"
    "/* the work-group's (head, split), its keys [begin, end) (a share of whole DEPTH-key pieces) and the steps\n"
    " * every warp takes */\n"
    "#define SPLIT()                                                                                   \\\n"
    "    const int grp = get_group_id(0), h = grp % heads, s = grp / heads;                            \\\n"
    "    const int share = ((keys + splits - 1) / splits + DEPTH - 1) / DEPTH * DEPTH;                \\\n"
    "    const int begin = s * share, end = min(begin + share, keys);                                  \\\n"
    "    const int steps = (share + STEP_KEYS - 1) / STEP_KEYS;                                        \\\n"
    "    const int warp = get_local_id(0) >> 5, lane = get_local_id(0) & 31\n"
    "#define REDUCE(red, acc)                                                                          \\\n"
    "    do {                                                                                          \\\n"
    "        red[get_local_id(0)] = (acc);                                                             \\\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);                                                             \\\n"
    "        if (get_local_id(0) == 0) {                                                               \\\n"
    "            uint x = 0;                                                                           \\\n"
    "            for (int i = 0; i < 32 * WARPS; ++i)                                                  \\\n"
    "                x ^= red[i];                                                                      \\\n"
    "            atomic_xor(out, x);                                                                   \\\n"
    "        }                                                                                         \\\n"
    "    } while (0)\n"
    "__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1)))\n"
    "void stream_loads(__global const uint4 *k, __global const uint4 *v, const int keys, const int heads,\n"
    "                  const int splits, __global uint *out)\n"
    "{\n"
    "    __local uint red[32 * WARPS];\n"
    "    SPLIT();\n"
    "    uint acc = 0;\n"
    "    for (int t = 0; t < steps; ++t) {\n"
    "        const int k0 = begin + t * STEP_KEYS + warp * DEPTH;\n"
    "        uint4 r[DEPTH];\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < DEPTH / 2; ++j) { /* (a warp instruction: two whole rows) */\n"
    "            const int key = k0 + 2 * j + (lane >> 4), kc = min(key, end - 1); /* (no branch: a select) */\n"
    "            const long at = ((long)kc * heads + h) * ROW + (lane & 15);\n"
    "            const uint4 x = k[at], y = v[at];\n"
    "            r[j] = key < end ? x : (uint4)(0);\n"
    "            r[DEPTH / 2 + j] = key < end ? y : (uint4)(0);\n"
    "        }\n"
    "#pragma unroll\n"
    "        for (int j = DEPTH - 1; j >= 0; --j) /* (the last load first: the step waits for every one) */\n"
    "            acc = fold4(acc, r[j]);\n"
    "    }\n"
    "    REDUCE(red, acc);\n"
    "}\n"
    "#if FCL_PTX && FCL_BULK\n"
    "#define LADDR(p) ((uint)(size_t)(p))\n"
    "inline void mbar_init(__local ulong *b)\n"
    "{\n"
    "    __asm__ volatile(\"//SM90A mbarrier.init.shared.b64 [%0], 1;\\n\"\n"
    "                     \"//SM90A fence.mbarrier_init.release.cluster;\"\n"
    "                     ::\"r\"(LADDR(b)) : \"memory\");\n"
    "}\n"
    "inline void mbar_expect(__local ulong *b, const uint bytes)\n"
    "{\n"
    "    __asm__ volatile(\"{\\n//SM90A .reg .b64 st;\\n\"\n"
    "                     \"//SM90A mbarrier.arrive.expect_tx.shared.b64 st, [%0], %1;\\n}\"\n"
    "                     ::\"r\"(LADDR(b)), \"r\"(bytes)\n"
    "                     : \"memory\");\n"
    "}\n"
    "inline void bulk_row(__local uint4 *dst, __global const uint4 *src, __local ulong *b)\n"
    "{\n"
    "    __asm__ volatile(\"//SM90A cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes\"\n"
    "                     \" [%0], [%1], 256, [%2];\"\n"
    "                     ::\"r\"(LADDR(dst)), \"l\"((ulong)(size_t)src), \"r\"(LADDR(b)) : \"memory\");\n"
    "}\n"
    "inline void mbar_wait(__local ulong *b, const uint parity)\n"
    "{\n"
    "    uint done;\n"
    "    do {\n"
    "        __asm__ volatile(\"{\\n//SM90A .reg .pred p;\\n\"\n"
    "                         \"//SM90A mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\\n\"\n"
    "                         \"mov.u32 %0, 1;\\n//SM90A selp.u32 %0, 1, 0, p;\\n}\"\n"
    "                         : \"=r\"(done) : \"r\"(LADDR(b)), \"r\"(parity) : \"memory\");\n"
    "    } while (!done);\n"
    "}\n"
    "#define PROXY_FENCE() __asm__ volatile(\"//SM90A fence.proxy.async.shared::cta;\" ::: \"memory\")\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1)))\n"
    "void stream_bulk(__global const uint4 *k, __global const uint4 *v, const int keys, const int heads,\n"
    "                 const int splits, __global uint *out)\n"
    "{\n"
    "    __local uint4 stage[WARPS * STAGES * 2 * DEPTH * ROW];\n"
    "    __local uint red[32 * WARPS];\n"
    "#if FCL_PTX && FCL_BULK\n"
    "    __local ulong bar[WARPS * STAGES];\n"
    "#endif\n"
    "    SPLIT();\n"
    "    __local uint4 *const mine = stage + warp * STAGES * 2 * DEPTH * ROW;\n"
    "    uint acc = 0;\n"
    "#if FCL_PTX && FCL_BULK\n"
    "    if (lane == 0)\n"
    "        for (int i = 0; i < STAGES; ++i)\n"
    "            mbar_init(bar + warp * STAGES + i);\n"
    "    WARP_SYNC();\n"
    "/* step t's rows into stage t % STAGES: K's DEPTH, then V's; a row past the split not copied, nor counted */\n"
    "#define ISSUE(t)                                                                                  \\\n"
    "    do {                                                                                          \\\n"
    "        const int k0_ = begin + (t) * STEP_KEYS + warp * DEPTH, n_ = clamp(end - k0_, 0, DEPTH);  \\\n"
    "        __local ulong *b_ = bar + warp * STAGES + (t) % STAGES;                                   \\\n"
    "        __local uint4 *d_ = mine + ((t) % STAGES) * 2 * DEPTH * ROW;                              \\\n"
    "        if (n_ > 0) {                                                                             \\\n"
    "            if (lane == 0)                                                                        \\\n"
    "                mbar_expect(b_, (uint)n_ * 512u);                                                 \\\n"
    "            WARP_SYNC();                                                                          \\\n"
    "            for (int c_ = lane; c_ < 2 * DEPTH; c_ += 32)                                         \\\n"
    "                if (c_ % DEPTH < n_)                                                              \\\n"
    "                    bulk_row(d_ + c_ * ROW,                                               \\\n"
    "                             (c_ < DEPTH ? k : v) + ((long)(k0_ + c_ % DEPTH) * heads + h) * ROW, b_); \\\n"
    "        }                                                                                         \\\n"
    "    } while (0)\n"
    "    for (int t = 0; t < STAGES && t < steps; ++t)\n"
    "        ISSUE(t);\n"
    "    for (int t = 0; t < steps; ++t) {\n"
    "        const int k0 = begin + t * STEP_KEYS + warp * DEPTH, n = clamp(end - k0, 0, DEPTH);\n"
    "        __local const uint4 *src = mine + (t % STAGES) * 2 * DEPTH * ROW;\n"
    "        if (n > 0) {\n"
    "            mbar_wait(bar + warp * STAGES + t % STAGES, (uint)(t / STAGES) & 1u);\n"
    "            for (int u = lane; u < 2 * DEPTH * ROW; u += 32)\n"
    "                if ((u / ROW) % DEPTH < n)\n"
    "                    acc = fold4(acc, src[u]);\n"
    "        }\n"
    "        PROXY_FENCE(); /* (this warp's reads of the stage before the copy engine writes it again) */\n"
    "        WARP_SYNC();\n"
    "        if (t + STAGES < steps)\n"
    "            ISSUE(t + STAGES);\n"
    "    }\n"
    "#else /* (the same walk by plain loads into local memory, a step at a time) */\n"
    "    for (int t = 0; t < steps; ++t) {\n"
    "        const int k0 = begin + t * STEP_KEYS + warp * DEPTH, n = clamp(end - k0, 0, DEPTH);\n"
    "        for (int u = lane; u < 2 * DEPTH * ROW; u += 32)\n"
    "            if ((u / ROW) % DEPTH < n)\n"
    "                mine[u] = (u / ROW < DEPTH ? k : v)[((long)(k0 + (u / ROW) % DEPTH) * heads + h) * ROW +\n"
    "                                                     u % ROW];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int u = lane; u < 2 * DEPTH * ROW; u += 32)\n"
    "            if ((u / ROW) % DEPTH < n)\n"
    "                acc = fold4(acc, mine[u]);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "#endif\n"
    "    REDUCE(red, acc);\n"
    "}\n";

typedef struct {
    const char *kernel;
    int depth, stages;
} variant;

static const variant variants[] = {
    {"stream_loads", 8, 1}, {"stream_loads", 16, 1}, {"stream_loads", 32, 1},
    {"stream_bulk", 16, 1}, {"stream_bulk", 16, 2},  {"stream_bulk", 32, 1},
};
enum { N_VARIANTS = sizeof variants / sizeof *variants, MAX_COPIES = 16 };

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define CHECK(x, what)                                                                                             \
    do {                                                                                                           \
        cl_int e_ = (x);                                                                                           \
        if (e_ != CL_SUCCESS) {                                                                                    \
            fprintf(stderr, "stream_probe: %s failed (%d)\n", what, (int)e_);                                      \
            goto fail;                                                                                             \
        }                                                                                                          \
    } while (0)

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: stream_probe [DEVICE] [--json] [--keys N] [--heads H] [--splits S] [--warps W] [--copies C]\n"
               "                    [--reps R] [--ptx DIR]\n"
               "the rate at which a decode step's work-groups read a KV cache of H heads' 256-byte rows (default\n"
               "8192 keys, 8 heads, 16 splits, 8 warps: flash_decode_mma's batch-1 grid), by loads and by bulk\n"
               "copies, the bytes checked; K and V rotated over C copies (default 4), R timed runs (default 30);\n"
               "--ptx DIR writes each variant's program (PTX on NVIDIA) into the folder DIR, which exists, for\n"
               "tools/nv_driver_sass.py\n");
    return rc;
}

/* A variant's program: built from source, and on compute capability 9.0 finished for sm_90a (its marked
 * bulk copies and mbarriers: src/ptx.c) and built again from the finished PTX. */
static cl_program build(cl_context ctx, cl_device_id dev, const char *options, int finish, const char *ptx_path)
{
    const char *src = source;
    cl_int err, bstatus;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (!prog)
        return NULL;
    if (clBuildProgram(prog, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "stream_probe: the program (%s) did not build:\n%s\n", options, log);
        clReleaseProgram(prog);
        return NULL;
    }
    if (!finish && !ptx_path)
        return prog;
    size_t len = 0;
    unsigned char *bin = NULL, *done = NULL;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len ||
        !(bin = malloc(len)) || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        free(bin);
        return finish ? (clReleaseProgram(prog), NULL) : prog;
    }
    const unsigned char *out = bin;
    size_t out_len = len;
    if (finish) {
        int marks = 0;
        const char *why = NULL;
        if (!(done = fcl_ptx_finish_sm90a(bin, len, &out_len, &marks, &why))) {
            fprintf(stderr, "stream_probe: the program's PTX: %s\n", why);
            free(bin);
            clReleaseProgram(prog);
            return NULL;
        }
        out = done;
        clReleaseProgram(prog);
        prog = clCreateProgramWithBinary(ctx, 1, &dev, &out_len, &out, &bstatus, &err);
        if (!prog || bstatus != CL_SUCCESS || clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS) {
            fprintf(stderr, "stream_probe: the finished PTX (%s) did not build\n", options);
            if (prog)
                clReleaseProgram(prog);
            prog = NULL;
        }
    }
    if (ptx_path) {
        FILE *f = fopen(ptx_path, "wb");
        if (!f || fwrite(out, 1, out_len, f) != out_len)
            fprintf(stderr, "stream_probe: cannot write %s\n", ptx_path);
        if (f)
            fclose(f);
    }
    free(done);
    free(bin);
    return prog;
}

int main(int argc, char **argv)
{
    const char *sel = NULL, *ptx_dir = NULL;
    int json = 0;
    long keys = 8192, heads = 8, splits = 16, warps = 8, copies = 4, reps = 30;
    for (int i = 1; i < argc; ++i) {
        long *num = !strcmp(argv[i], "--keys")     ? &keys
                    : !strcmp(argv[i], "--heads")  ? &heads
                    : !strcmp(argv[i], "--splits") ? &splits
                    : !strcmp(argv[i], "--warps")  ? &warps
                    : !strcmp(argv[i], "--copies") ? &copies
                    : !strcmp(argv[i], "--reps")   ? &reps
                                                   : NULL;
        if (num) {
            const char *name = argv[i];
            char *end = NULL;
            if (i + 1 >= argc || (*num = strtol(argv[++i], &end, 10)) < 1 || *end) {
                fprintf(stderr, "stream_probe: %s takes a positive integer\n", name);
                return usage(stderr, 2);
            }
        } else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--ptx") && i + 1 < argc)
            ptx_dir = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout, 0);
        else if (argv[i][0] == '-')
            return usage(stderr, 2);
        else
            sel = argv[i];
    }
    if (copies > MAX_COPIES || warps > 32 || keys > (1L << 22) || heads > 256 || splits > keys) {
        fprintf(stderr, "stream_probe: --copies at most %d, --warps 32, --keys 2^22, --heads 256, --splits --keys\n",
                MAX_COPIES);
        return 2;
    }
    flashcl_context *fctx = NULL;
    const flashcl_status fst = flashcl_context_create_default(sel, NULL, &fctx);
    if (fst != FLASHCL_SUCCESS) {
        fprintf(stderr, "stream_probe: %s\n", flashcl_context_last_error(NULL));
        return fst == FLASHCL_NO_DEVICE ? 77 : 1;
    }
    const flashcl_device_profile *pr = flashcl_context_profile(fctx);
    cl_device_id dev;
    cl_context ctx;
    flashcl_context_cl_objects(fctx, &ctx, &dev, NULL);
    /* inline PTX on NVIDIA; the copy engine's bulk copies at compute capability 9.0, whose programs ptx.c finishes */
    const int ptx = pr->vendor == FLASHCL_VENDOR_NVIDIA, bulk = ptx && pr->nv_cc_major == 9; /* (src/ptx.c: sm_90) */
    const size_t bytes = (size_t)keys * (size_t)heads * 256;
    int rc = 1;
    cl_int err;
    cl_command_queue q = NULL;
    cl_mem kb[MAX_COPIES] = {NULL}, vb[MAX_COPIES] = {NULL}, out = NULL;
    uint32_t expect[MAX_COPIES] = {0};
    uint32_t *host = malloc(bytes);
    double *t = calloc((size_t)reps, sizeof *t);
    if (!host || !t) {
        fprintf(stderr, "stream_probe: out of host memory\n");
        goto fail;
    }
    q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err, "clCreateCommandQueue");
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (long c = 0; c < copies; ++c)
        for (int which = 0; which < 2; ++which) {
            for (size_t i = 0; i < bytes / 4; ++i) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                host[i] = (uint32_t)(rng >> 16);
                expect[c] ^= host[i];
            }
            cl_mem *m = which ? &vb[c] : &kb[c];
            *m = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
            CHECK(err, "clCreateBuffer (K/V)");
        }
    out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(uint32_t), NULL, &err);
    CHECK(err, "clCreateBuffer (out)");
    if (json)
        printf("{\"device\": \"%s / %s\", \"keys\": %ld, \"heads\": %ld, \"splits\": %ld, \"warps\": %ld, "
               "\"copies\": %ld, "
               "\"reps\": %ld, \"bytes\": %zu, \"bulk_copies\": %s, \"results\": [",
               pr->platform_name, pr->name, keys, heads, splits, warps, copies, reps, bytes, bulk ? "true" : "false");
    else
        printf("%s / %s: %ld keys x %ld heads of 256-byte K and V rows (%.1f MB), %ld splits, %ld warps a "
               "work-group; bulk copies %s\n",
               pr->platform_name, pr->name, keys, heads, 2.0 * (double)bytes / 1e6, splits, warps,
               bulk ? "by the copy engine" : "emulated by loads");
    int printed = 0;
    for (int vi = 0; vi < N_VARIANTS; ++vi) {
        const variant *va = &variants[vi];
        const int is_bulk = !strcmp(va->kernel, "stream_bulk");
        char options[256], path[1024];
        snprintf(options, sizeof options, "-cl-std=CL1.2 -DWARPS=%ld -DDEPTH=%d -DSTAGES=%d -DFCL_PTX=%d -DFCL_BULK=%d",
                 warps, va->depth, va->stages, ptx, bulk);
        if (ptx_dir) /* (an existing folder) */
            snprintf(path, sizeof path, "%s/%s_d%d_s%d.ptx", ptx_dir, va->kernel, va->depth, va->stages);
        /* (a variant the device cannot build or launch, say one whose local memory it lacks, is skipped and
         * said to be; a run whose bytes fold wrong fails the probe) */
        const char *skip = NULL;
        cl_program prog = build(ctx, dev, options, is_bulk && bulk, ptx_dir ? path : NULL);
        cl_kernel kern = prog ? clCreateKernel(prog, va->kernel, &err) : NULL;
        if (!kern)
            skip = prog ? "clCreateKernel failed" : "its program did not build";
        const cl_int nk = (cl_int)keys, nh = (cl_int)heads, ns = (cl_int)splits;
        const size_t local = (size_t)(32 * warps), global = local * (size_t)(heads * splits);
        int ok = 1, runs = 0;
        const uint32_t zero = 0;
        for (long r = -3; r < reps && ok && !skip; ++r) { /* (three warm-up runs first) */
            const long c = (r + 3) % copies;
            cl_event ev = NULL;
            uint32_t got = 0;
            cl_ulong s0 = 0, s1 = 0;
            err = clSetKernelArg(kern, 0, sizeof(cl_mem), &kb[c]);
            err |= clSetKernelArg(kern, 1, sizeof(cl_mem), &vb[c]);
            err |= clSetKernelArg(kern, 2, sizeof nk, &nk);
            err |= clSetKernelArg(kern, 3, sizeof nh, &nh);
            err |= clSetKernelArg(kern, 4, sizeof ns, &ns);
            err |= clSetKernelArg(kern, 5, sizeof(cl_mem), &out);
            err |= clEnqueueFillBuffer(q, out, &zero, sizeof zero, 0, sizeof zero, 0, NULL, NULL);
            err |= clEnqueueNDRangeKernel(q, kern, 1, NULL, &global, &local, 0, NULL, &ev);
            err |= clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, &got, 0, NULL, NULL);
            err |= clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s0, &s0, NULL);
            err |= clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof s1, &s1, NULL);
            if (ev)
                clReleaseEvent(ev);
            if (err != CL_SUCCESS && r == -3) {
                skip = "its first run failed (local memory or work-group limits?)";
            } else if (err != CL_SUCCESS) {
                fprintf(stderr, "stream_probe: %s (depth %d): a run failed (%d)\n", va->kernel, va->depth, (int)err);
                ok = 0;
            } else if (got != expect[c]) {
                fprintf(stderr, "stream_probe: %s (depth %d, %d stages): the bytes read fold to %08x, the cache's "
                                "to %08x\n", va->kernel, va->depth, va->stages, got, expect[c]);
                ok = 0;
            } else if (r >= 0)
                t[runs++] = (double)(s1 - s0) * 1e-3;
        }
        if (kern)
            clReleaseKernel(kern);
        if (prog)
            clReleaseProgram(prog);
        if (!ok)
            goto fail;
        if (skip) {
            fprintf(stderr, "stream_probe: %s depth %d, %d stages: skipped: %s\n", va->kernel, va->depth, va->stages,
                    skip);
            if (json)
                printf("%s\n  {\"kernel\": \"%s\", \"depth\": %d, \"stages\": %d, \"skipped\": \"%s\"}",
                       printed++ ? "," : "", va->kernel, va->depth, va->stages, skip);
            continue;
        }
        qsort(t, (size_t)runs, sizeof *t, cmp);
        const double med = t[runs / 2], p10 = t[runs / 10], p90 = t[runs - 1 - runs / 10];
        const double gbs = 2.0 * (double)bytes / med * 1e-3;
        if (json)
            printf("%s\n  {\"kernel\": \"%s\", \"depth\": %d, \"stages\": %d, \"bulk_by_copy_engine\": %s, "
                   "\"median_us\": "
                   "%.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, \"gb_per_s\": %.1f, \"checked\": true}",
                   printed++ ? "," : "", va->kernel, va->depth, va->stages, is_bulk && bulk ? "true" : "false", med,
                   p10, p90, gbs);
        else
            printf("  %-12s depth %2d, %d stage%s  %9.2f us [%.2f-%.2f]  %7.1f GB/s  (the bytes checked)\n", va->kernel,
                   va->depth, va->stages, va->stages > 1 ? "s" : " ", med, p10, p90, gbs);
    }
    if (json)
        printf("\n]}\n");
    rc = 0;
fail:
    for (long c = 0; c < MAX_COPIES; ++c) {
        if (kb[c])
            clReleaseMemObject(kb[c]);
        if (vb[c])
            clReleaseMemObject(vb[c]);
    }
    if (out)
        clReleaseMemObject(out);
    if (q)
        clReleaseCommandQueue(q);
    free(host);
    free(t);
    flashcl_context_destroy(&fctx);
    return rc;
}
