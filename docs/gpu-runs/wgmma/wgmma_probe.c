/* A probe of Hopper's warpgroup MMA from OpenCL C through the sm_90a finishing step (issue 17): one
 * warpgroup computes D = A * B^T + D for A 64 x 32 and B N x 32 (fp16, fp32 accumulators), two k16 steps,
 * with m64nNk16 (N = 8 and 16), A and B read by wgmma from local memory through matrix descriptors in the
 * no-swizzle layout: 8 x 8 core matrices (eight 16-byte rows, 128 contiguous bytes), element (r, k) of an
 * operand at (r / 8) * SBO + (k / 8) * LBO + (r % 8) * 16 + (k % 8) * 2 bytes. Each launch takes (LBO, SBO)
 * for its layout and the descriptor, and a flag that swaps them in the descriptor only: the layout whose
 * result is right says what the descriptor's two fields mean. (wgmma-1 ran with SBO = 2 LBO, which holds
 * one k16 step only: its k=32 results were wrong for that reason; k=16 was right as documented.) Checked against a float64 reference.
 * The kernel is built from source for sm_90, its PTX finished (marks removed, .target sm_90a) and built
 * again from the finished text, as src/program.c does. Build: gcc -O2 wgmma_probe.c -lOpenCL -lm */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "inline ulong desc(__local const void *p, int lbo, int sbo)\n"
    "{\n"
    "    return (ulong)(((uint)(size_t)p & 0x3ffffu) >> 4) | ((ulong)((uint)lbo >> 4) << 16) | ((ulong)((uint)sbo >> 4) << 32);\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void wgmma_probe(__global const ushort *A,\n"
    "    __global const ushort *B, __global float *D, const int lbo, const int sbo, const int swap, const int steps)\n"
    "{\n"
    "    __local uint4 sa4[64 * 32 * 2 / 16 * 2];\n" /* room for any (lbo, sbo) tried: 8 KB */
    "    __local uint4 sb4[NN * 32 * 2 / 16 * 2];\n"
    "    __local ushort *sa = (__local ushort *)sa4, *sb = (__local ushort *)sb4;\n"
    "    const int t = get_local_id(0);\n"
    "    for (int i = t; i < 64 * 32; i += 128) {\n"
    "        const int r = i / 32, k = i % 32;\n"
    "        sa[((r / 8) * sbo + (k / 8) * lbo + (r % 8) * 16 + (k % 8) * 2) / 2] = A[i];\n"
    "    }\n"
    "    for (int i = t; i < NN * 32; i += 128) {\n"
    "        const int r = i / 32, k = i % 32;\n"
    "        sb[((r / 8) * sbo + (k / 8) * lbo + (r % 8) * 16 + (k % 8) * 2) / 2] = B[i];\n"
    "    }\n"
    "    __asm__ volatile(\"//SM90A fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    float d[NN / 2];\n"
    "    for (int i = 0; i < NN / 2; ++i)\n"
    "        d[i] = 0.0f;\n"
    "    const int l = swap ? sbo : lbo, s = swap ? lbo : sbo;\n"
    "    __asm__ volatile(\"//SM90A wgmma.fence.sync.aligned;\");\n"
    "    for (int ks = 0; ks < steps; ++ks) {\n" /* k16 step ks: the core matrices from k = 16 ks on, 2 LBO further */
    "        const ulong da = desc(sa + ks * lbo, l, s), db = desc(sb + ks * lbo, l, s);\n"
    "        const int accumulate = ks;\n"
    "MMA_ASM\n"
    "    }\n"
    "    __asm__ volatile(\"//SM90A wgmma.commit_group.sync.aligned;\");\n"
    "    __asm__ volatile(\"//SM90A wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    const int w = t / 32, lane = t % 32, row = 16 * w + lane / 4;\n"
    "    for (int j = 0; j < NN / 8; ++j)\n"
    "        for (int e = 0; e < 4; ++e)\n"
    "            D[(row + (e / 2) * 8) * NN + 8 * j + 2 * (lane % 4) + e % 2] = d[4 * j + e];\n"
    "}\n";

static const char *mma_asm[2] = {
"    __asm__ volatile(\"{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %6, 0;\\n//SM90A wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\\n}\"\n                     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n                     : \"l\"(da), \"l\"(db), \"r\"(accumulate));\n",
"    __asm__ volatile(\"{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %10, 0;\\n//SM90A wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\\n}\"\n                     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7])\n                     : \"l\"(da), \"l\"(db), \"r\"(accumulate));\n"};

static unsigned short to_half(float f) /* (values k/64, exact in fp16) */
{
    unsigned int b;
    memcpy(&b, &f, 4);
    const int e = (int)((b >> 23) & 0xff) - 127 + 15;
    if ((b & 0x7fffffff) == 0)
        return (unsigned short)((b >> 16) & 0x8000);
    return (unsigned short)(((b >> 16) & 0x8000) | (e << 10) | ((b >> 13) & 0x3ff));
}

/* The finishing step (src/program.c's fcl_ptx_finish_sm90a, reduced): marks removed, .target sm_90a. */
static char *finish(const char *ptx)
{
    char *out = calloc(strlen(ptx) + 2, 1), *w = out;
    for (const char *r = ptx; *r;) {
        if (!strncmp(r, "//SM90A ", 8)) {
            r += 8;
            continue;
        }
        if (!strncmp(r, ".target sm_90", 13) && r[13] != 'a') {
            memcpy(w, ".target sm_90a", 14);
            w += 14;
            r += 13;
            continue;
        }
        *w++ = *r++;
    }
    return out;
}

int main(void)
{
    cl_platform_id ps[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, ps, &np);
    for (cl_uint i = 0; i < np && !dev; ++i) {
        char name[256];
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "NVIDIA"))
            clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL);
    }
    if (!dev) {
        printf("no NVIDIA device\n");
        return 77;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    for (int v = 0; v < 2; ++v) {
        const int nn = v ? 16 : 8;
        char *text = malloc(strlen(source) + strlen(mma_asm[v]) + 64);
        const char *at = strstr(source, "MMA_ASM\n");
        sprintf(text, "#define NN %d\n%.*s%s%s", nn, (int)(at - source), source, mma_asm[v], at + 8);
        const char *t = text;
        cl_program p = clCreateProgramWithSource(ctx, 1, &t, NULL, &err);
        err = clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
        if (err) {
            char log[8192] = "";
            clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
            printf("N=%d: source build %d\n%s\n", nn, err, log);
            return 1;
        }
        size_t bsz = 0;
        clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL);
        char *bin = calloc(bsz + 1, 1);
        clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
        char *ptx = finish(bin);
        const char *m = strstr(ptx, "wgmma.mma_async");
        printf("N=%d: finished PTX around the first wgmma:\n%.300s\n", nn, m ? m - 60 : "(none)");
        size_t len = strlen(ptx) + 1;
        const unsigned char *b = (const unsigned char *)ptx;
        cl_int bs;
        cl_program p2 = clCreateProgramWithBinary(ctx, 1, &dev, &len, &b, &bs, &err);
        err = clBuildProgram(p2, 1, &dev, NULL, NULL, NULL);
        if (err) {
            char log[8192] = "";
            clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
            printf("N=%d: finished build %d\n%s\n", nn, err, log);
            continue;
        }
        cl_kernel k = clCreateKernel(p2, "wgmma_probe", &err);
        unsigned short ha[64 * 32], hb[16 * 32];
        float hd[64 * 16];
        double ref[64 * 16];
        srand(7 + v);
        for (int i = 0; i < 64 * 32; ++i)
            ha[i] = to_half((float)(rand() % 129 - 64) / 64.0f);
        for (int i = 0; i < nn * 32; ++i)
            hb[i] = to_half((float)(rand() % 129 - 64) / 64.0f);
        float fa[64 * 32], fb[16 * 32];
        for (int i = 0; i < 64 * 32; ++i) { /* back from fp16 (exact values) */
            const int s = ha[i] >> 15, e = (ha[i] >> 10) & 31, f = ha[i] & 1023;
            fa[i] = (s ? -1.0f : 1.0f) * (e ? ldexpf(1.0f + f / 1024.0f, e - 15) : ldexpf(f / 1024.0f, -14));
        }
        for (int i = 0; i < nn * 32; ++i) {
            const int s = hb[i] >> 15, e = (hb[i] >> 10) & 31, f = hb[i] & 1023;
            fb[i] = (s ? -1.0f : 1.0f) * (e ? ldexpf(1.0f + f / 1024.0f, e - 15) : ldexpf(f / 1024.0f, -14));
        }
        for (int steps = 1; steps <= 2; ++steps) {
        for (int r = 0; r < 64; ++r)
            for (int c = 0; c < nn; ++c) {
                double acc = 0;
                for (int kk = 0; kk < 16 * steps; ++kk)
                    acc += (double)fa[r * 32 + kk] * fb[c * 32 + kk];
                ref[r * nn + c] = acc;
            }
        cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof ha, ha, &err);
        cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof hb, hb, &err);
        cl_mem bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof hd, NULL, &err);
        /* (SBO >= 4 LBO: four K core matrices a row group. wgmma-2 also tried the two offsets swapped in the
         * descriptor: an illegal address, after which the context is lost; wgmma-1 had shown them wrong) */
        const int layouts[2][3] = {{128, 512, 0}, {256, 1024, 0}};
        for (int L = 0; L < 2; ++L) {
            for (int i = 0; i < 64 * nn; ++i)
                hd[i] = NAN;
            clEnqueueWriteBuffer(q, bd, CL_TRUE, 0, sizeof hd, hd, 0, NULL, NULL);
            clSetKernelArg(k, 0, sizeof ba, &ba);
            clSetKernelArg(k, 1, sizeof bb, &bb);
            clSetKernelArg(k, 2, sizeof bd, &bd);
            clSetKernelArg(k, 3, sizeof(int), &layouts[L][0]);
            clSetKernelArg(k, 4, sizeof(int), &layouts[L][1]);
            clSetKernelArg(k, 5, sizeof(int), &layouts[L][2]);
            clSetKernelArg(k, 6, sizeof(int), &steps);
            const size_t g = 128, l = 128;
            cl_int e1 = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL), e2 = clFinish(q);
            clEnqueueReadBuffer(q, bd, CL_TRUE, 0, sizeof hd, hd, 0, NULL, NULL);
            int bad = 0;
            double worst = 0;
            for (int i = 0; i < 64 * nn; ++i) {
                const double e = fabs(hd[i] - ref[i]);
                bad += !(e <= 1e-3);
                if (e > worst || isnan(hd[i]))
                    worst = isnan(hd[i]) ? INFINITY : e;
            }
            printf("N=%d k=%d LBO=%d SBO=%d %s: enqueue %d finish %d, %d of %d wrong, worst error %.3g%s\n", nn, 16 * steps,
                   layouts[L][0], layouts[L][1], layouts[L][2] ? "(swapped in the descriptor)" : "(as documented)", e1, e2,
                   bad, 64 * nn, worst, bad ? "" : "  RIGHT");
            if (bad && L == 0) { /* which rows are wrong, and where a wrong value's right place is */
                printf("  wrong columns by row:");
                for (int r = 0; r < 64; ++r) {
                    int n = 0;
                    for (int c = 0; c < nn; ++c)
                        n += !(fabs(hd[r * nn + c] - ref[r * nn + c]) <= 1e-3);
                    printf(" %d", n);
                }
                printf("\n");
                int shown = 0;
                for (int i = 0; i < 64 * nn && shown < 12; ++i) {
                    if (fabs(hd[i] - ref[i]) <= 1e-3)
                        continue;
                    int at = -1;
                    for (int j = 0; j < 64 * nn && at < 0; ++j)
                        if (fabs(hd[i] - ref[j]) <= 1e-4)
                            at = j;
                    printf("  D[%d][%d] = %.4f (want %.4f): the value of [%d][%d]\n", i / nn, i % nn, hd[i], ref[i],
                           at < 0 ? -1 : at / nn, at < 0 ? -1 : at % nn);
                    ++shown;
                }
            }
        }
        }
    }
    return 0;
}
