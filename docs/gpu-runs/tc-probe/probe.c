/* Host side of probe.cl: builds it twice (32-bit and 64-bit shared addresses), runs f16 and bf16, and
 * compares with the host. cc -O2 probe.c -lOpenCL -lm */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned short f2h(float f) /* round to nearest even, normal range only */
{
    unsigned u; memcpy(&u, &f, 4);
    unsigned s = (u >> 16) & 0x8000; int e = (int)((u >> 23) & 0xff) - 127 + 15; unsigned m = u & 0x7fffff;
    if (f == 0.0f) return (unsigned short)s;
    unsigned r = m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    if (r == 0x400) { r = 0; e++; }
    return (unsigned short)(s | (unsigned)e << 10 | r);
}
static float h2f(unsigned short h)
{
    unsigned s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0) { float f = ldexpf((float)m, -24); return s ? -f : f; }
    u = s | (e - 15 + 127) << 23 | m << 13; float f; memcpy(&f, &u, 4); return f;
}
static unsigned short f2b(float f) { unsigned u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return (unsigned short)(u >> 16); }
static float b2f(unsigned short b) { unsigned u = (unsigned)b << 16; float f; memcpy(&f, &u, 4); return f; }

int main(void)
{
    cl_platform_id plats[8]; cl_uint np = 0; clGetPlatformIDs(8, plats, &np);
    cl_device_id dev = NULL;
    for (cl_uint i = 0; i < np && !dev; ++i) {
        char name[256]; clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "NVIDIA")) clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL);
    }
    if (!dev) { puts("no NVIDIA device"); return 77; }
    cl_uint ccmaj = 0, ccmin = 0;
    cl_int e1 = clGetDeviceInfo(dev, 0x4000, sizeof ccmaj, &ccmaj, NULL);
    cl_int e2 = clGetDeviceInfo(dev, 0x4001, sizeof ccmin, &ccmin, NULL);
    printf("compute capability %u.%u (query %d %d)\n", ccmaj, ccmin, e1, e2);
    cl_int err; cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    FILE *f = fopen(getenv("PROBE_CL") ? getenv("PROBE_CL") : "probe.cl", "rb");
    static char src[65536]; size_t n = fread(src, 1, sizeof src - 1, f); src[n] = 0; fclose(f);
    const char *opts[2] = {"", "-DADDR64"};
    int fails = 0;
    for (int o = 0; o < 2; ++o) {
        const char *s = src;
        cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        err = clBuildProgram(p, 1, &dev, opts[o], NULL, NULL);
        static char log[65536]; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("build '%s': %d\n%s\n", opts[o], err, log);
        if (err) { fails++; continue; }
        cl_kernel k = clCreateKernel(p, "probe", &err);
        for (int bf = 0; bf < 2; ++bf) {
            unsigned short A[256], Bt[128], Br[128]; float fa[256], fbt[128];
            srand(1 + bf);
            for (int i = 0; i < 256; ++i) { float x = (float)(rand() % 17 - 8) / 8.0f; A[i] = bf ? f2b(x) : f2h(x); fa[i] = bf ? b2f(A[i]) : h2f(A[i]); }
            for (int i = 0; i < 128; ++i) { float x = (float)(rand() % 13 - 6) / 4.0f; Bt[i] = bf ? f2b(x) : f2h(x); fbt[i] = bf ? b2f(Bt[i]) : h2f(Bt[i]); }
            /* Br is Bt transposed: Br[k*8+n] = Bt[n*16+k] */
            for (int kk = 0; kk < 16; ++kk) for (int nn = 0; nn < 8; ++nn) Br[kk * 8 + nn] = Bt[nn * 16 + kk];
            cl_mem mA = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof A, A, &err);
            cl_mem mBt = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof Bt, Bt, &err);
            cl_mem mBr = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof Br, Br, &err);
            cl_mem mc[3]; for (int i = 0; i < 3; ++i) mc[i] = clCreateBuffer(ctx, 0, 128 * 4, NULL, &err);
            cl_mem mm = clCreateBuffer(ctx, 0, 96 * 4, NULL, &err);
            clSetKernelArg(k, 0, sizeof mA, &mA); clSetKernelArg(k, 1, sizeof mBt, &mBt); clSetKernelArg(k, 2, sizeof mBr, &mBr);
            for (int i = 0; i < 3; ++i) clSetKernelArg(k, 3 + i, sizeof mc[i], &mc[i]);
            clSetKernelArg(k, 6, sizeof mm, &mm); clSetKernelArg(k, 7, sizeof bf, &bf);
            size_t gs = 32, ls = 32;
            err = clEnqueueNDRangeKernel(q, k, 1, NULL, &gs, &ls, 0, NULL, NULL);
            float C[3][128]; unsigned misc[96];
            for (int i = 0; i < 3; ++i) clEnqueueReadBuffer(q, mc[i], CL_TRUE, 0, sizeof C[i], C[i], 0, NULL, NULL);
            err |= clEnqueueReadBuffer(q, mm, CL_TRUE, 0, sizeof misc, misc, 0, NULL, NULL);
            double maxe[3] = {0, 0, 0};
            for (int i = 0; i < 16; ++i) for (int j = 0; j < 8; ++j) {
                double ref = 0; for (int kk = 0; kk < 16; ++kk) ref += (double)fa[i * 16 + kk] * fbt[j * 16 + kk];
                for (int v = 0; v < 3; ++v) { double d = fabs(C[v][i * 8 + j] - ref); if (d > maxe[v]) maxe[v] = d; }
            }
            int cvt_bad = 0;
            for (int l = 0; l < 32; ++l) {
                float x0 = (float)l + 0.5f, x1 = -(float)l * 0.25f;
                unsigned want = (unsigned)f2h(x0) | (unsigned)f2h(x1) << 16, wantb = (unsigned)f2b(x0) | (unsigned)f2b(x1) << 16;
                if (misc[l] != want || misc[32 + l] != wantb) cvt_bad++;
            }
            printf("  %s %s: enqueue/read %d; max|err| direct %.3g, ldmatrix %.3g, ldmatrix.trans %.3g; cvt mismatches %d; local addrs %u %u %u\n",
                   opts[o][0] ? "addr64" : "addr32", bf ? "bf16" : "f16", err, maxe[0], maxe[1], maxe[2], cvt_bad, misc[64], misc[65], misc[95]);
            if (err || maxe[0] > 1e-3 || maxe[1] > 1e-3 || maxe[2] > 1e-3 || cvt_bad) fails++;
            clReleaseMemObject(mA); clReleaseMemObject(mBt); clReleaseMemObject(mBr); clReleaseMemObject(mm);
            for (int i = 0; i < 3; ++i) clReleaseMemObject(mc[i]);
        }
        clReleaseKernel(k); clReleaseProgram(p);
    }
    printf("probe: %d failures\n", fails);
    return fails != 0;
}
