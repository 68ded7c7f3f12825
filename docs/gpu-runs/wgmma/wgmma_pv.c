/* Two more probes of Hopper's warpgroup MMA from OpenCL C (issue 17), after wgmma_probe.c:
 * 1. P*V's form: A (64 x 16) from registers in mma.sync's A fragment layout (warp w: rows 16w..16w+15),
 *    B (16 x 16, keys x columns) from local memory stored N-major (V's rows: a key's columns contiguous) and
 *    read with imm-trans-b = 1, element (k, n) at (n / 8) * X + (k / 8) * Y + (k % 8) * 16 + (n % 8) * 2
 *    bytes; launches with (LBO, SBO) = (X, Y) and (Y, X) say which field is which for this layout (both stay
 *    inside the buffer, so the wrong one gives wrong numbers, not a lost context).
 * 2. Throughput: m64n256k16 from local-memory descriptors (no swizzle), 2 warpgroups a work-group, a loop of
 *    ITERS products on the same tiles, 4 work-groups an SM's worth of the grid; TFLOP/s from profiling events.
 * Both built from source for sm_90 and finished (marks removed, .target sm_90a), as src/program.c does.
 * Build: gcc -O2 wgmma_pv.c -lOpenCL -lm; run: wgmma_pv */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *pv_source =
    "inline ulong desc(__local const void *p, int lbo, int sbo)\n"
    "{\n"
    "    return (ulong)(((uint)(size_t)p & 0x3ffffu) >> 4) | ((ulong)((uint)lbo >> 4) << 16) | ((ulong)((uint)sbo >> 4) << 32);\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void pv_probe(__global const ushort *A,\n"
    "    __global const ushort *B, __global float *D, const int x, const int y, const int lbo, const int sbo)\n"
    "{\n"
    "    __local uint4 sb4[256];\n" /* 4 KB */
    "    __local ushort *sb = (__local ushort *)sb4;\n"
    "    const int t = get_local_id(0), w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;\n"
    "    for (int i = t; i < 16 * 16; i += 128) {\n" /* B is 16 keys x 16 columns, row-major in global */
    "        const int k = i / 16, n = i % 16;\n"
    "        sb[((n / 8) * x + (k / 8) * y + (k % 8) * 16 + (n % 8) * 2) / 2] = B[i];\n"
    "    }\n"
    "    __asm__ volatile(\"//SM90A fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    const int r0 = 16 * w + g;\n" /* A is 64 x 16 row-major in global */
    "    uint a[4];\n"
    "    a[0] = (uint)A[r0 * 16 + 2 * q] | ((uint)A[r0 * 16 + 2 * q + 1] << 16);\n"
    "    a[1] = (uint)A[(r0 + 8) * 16 + 2 * q] | ((uint)A[(r0 + 8) * 16 + 2 * q + 1] << 16);\n"
    "    a[2] = (uint)A[r0 * 16 + 2 * q + 8] | ((uint)A[r0 * 16 + 2 * q + 9] << 16);\n"
    "    a[3] = (uint)A[(r0 + 8) * 16 + 2 * q + 8] | ((uint)A[(r0 + 8) * 16 + 2 * q + 9] << 16);\n"
    "    float d[8];\n"
    "    __attribute__((opencl_unroll_hint)) for (int i = 0; i < 8; ++i)\n"
    "        d[i] = 0.0f;\n"
    "    const ulong db = desc(sb, lbo, sbo);\n"
    "    __asm__ volatile(\"//SM90A wgmma.fence.sync.aligned;\");\n"
"    __asm__ volatile(\"{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %13, 0;\\n//SM90A wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1, 1;\\n}\"\n"
    "                     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7])\n"
    "                     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(0));\n"
    "    __asm__ volatile(\"//SM90A wgmma.commit_group.sync.aligned;\");\n"
    "    __asm__ volatile(\"//SM90A wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    for (int j = 0; j < 2; ++j)\n"
    "        for (int e = 0; e < 4; ++e)\n"
    "            D[(r0 + (e / 2) * 8) * 16 + 8 * j + 2 * q + e % 2] = d[4 * j + e];\n"
    "}\n";

static const char *tp_source =
    "inline ulong desc(__local const void *p, int lbo, int sbo)\n"
    "{\n"
    "    return (ulong)(((uint)(size_t)p & 0x3ffffu) >> 4) | ((ulong)((uint)lbo >> 4) << 16) | ((ulong)((uint)sbo >> 4) << 32);\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void tp_probe(__global float *D, const int iters)\n"
    "{\n"
    "    __local uint4 s4[(2 * 64 * 16 + 256 * 16) * 2 / 16];\n" /* A for each warpgroup (64 x 16), B (256 x 16) */
    "    __local ushort *s = (__local ushort *)s4;\n"
    "    const int t = get_local_id(0), wg = t / 128;\n"
    "    for (int i = t; i < (2 * 64 * 16 + 256 * 16); i += 256)\n"
    "        s[i] = (ushort)(0x3c00 | ((i * 7) & 0x3f));\n" /* values near 1 */
    "    __asm__ volatile(\"//SM90A fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    const ulong da = desc(s + wg * 64 * 16, 128, 256), db = desc(s + 2 * 64 * 16, 128, 256);\n"
    "    float d[128];\n"
    "    __attribute__((opencl_unroll_hint)) for (int i = 0; i < 128; ++i)\n"
    "        d[i] = 0.0f;\n"
    "    __asm__ volatile(\"//SM90A wgmma.fence.sync.aligned;\");\n"
    "    for (int it = 0; it < iters; ++it) {\n"
"        __asm__ volatile(\"{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %130, 0;\\n//SM90A wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 0;\\n}\"\n"
    "                     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]), \"+f\"(d[4]), \"+f\"(d[5]), \"+f\"(d[6]), \"+f\"(d[7]), \"+f\"(d[8]), \"+f\"(d[9]), \"+f\"(d[10]), \"+f\"(d[11]), \"+f\"(d[12]), \"+f\"(d[13]), \"+f\"(d[14]), \"+f\"(d[15]), \"+f\"(d[16]), \"+f\"(d[17]), \"+f\"(d[18]), \"+f\"(d[19]), \"+f\"(d[20]), \"+f\"(d[21]), \"+f\"(d[22]), \"+f\"(d[23]), \"+f\"(d[24]), \"+f\"(d[25]), \"+f\"(d[26]), \"+f\"(d[27]), \"+f\"(d[28]), \"+f\"(d[29]), \"+f\"(d[30]), \"+f\"(d[31]), \"+f\"(d[32]), \"+f\"(d[33]), \"+f\"(d[34]), \"+f\"(d[35]), \"+f\"(d[36]), \"+f\"(d[37]), \"+f\"(d[38]), \"+f\"(d[39]), \"+f\"(d[40]), \"+f\"(d[41]), \"+f\"(d[42]), \"+f\"(d[43]), \"+f\"(d[44]), \"+f\"(d[45]), \"+f\"(d[46]), \"+f\"(d[47]), \"+f\"(d[48]), \"+f\"(d[49]), \"+f\"(d[50]), \"+f\"(d[51]), \"+f\"(d[52]), \"+f\"(d[53]), \"+f\"(d[54]), \"+f\"(d[55]), \"+f\"(d[56]), \"+f\"(d[57]), \"+f\"(d[58]), \"+f\"(d[59]), \"+f\"(d[60]), \"+f\"(d[61]), \"+f\"(d[62]), \"+f\"(d[63]), \"+f\"(d[64]), \"+f\"(d[65]), \"+f\"(d[66]), \"+f\"(d[67]), \"+f\"(d[68]), \"+f\"(d[69]), \"+f\"(d[70]), \"+f\"(d[71]), \"+f\"(d[72]), \"+f\"(d[73]), \"+f\"(d[74]), \"+f\"(d[75]), \"+f\"(d[76]), \"+f\"(d[77]), \"+f\"(d[78]), \"+f\"(d[79]), \"+f\"(d[80]), \"+f\"(d[81]), \"+f\"(d[82]), \"+f\"(d[83]), \"+f\"(d[84]), \"+f\"(d[85]), \"+f\"(d[86]), \"+f\"(d[87]), \"+f\"(d[88]), \"+f\"(d[89]), \"+f\"(d[90]), \"+f\"(d[91]), \"+f\"(d[92]), \"+f\"(d[93]), \"+f\"(d[94]), \"+f\"(d[95]), \"+f\"(d[96]), \"+f\"(d[97]), \"+f\"(d[98]), \"+f\"(d[99]), \"+f\"(d[100]), \"+f\"(d[101]), \"+f\"(d[102]), \"+f\"(d[103]), \"+f\"(d[104]), \"+f\"(d[105]), \"+f\"(d[106]), \"+f\"(d[107]), \"+f\"(d[108]), \"+f\"(d[109]), \"+f\"(d[110]), \"+f\"(d[111]), \"+f\"(d[112]), \"+f\"(d[113]), \"+f\"(d[114]), \"+f\"(d[115]), \"+f\"(d[116]), \"+f\"(d[117]), \"+f\"(d[118]), \"+f\"(d[119]), \"+f\"(d[120]), \"+f\"(d[121]), \"+f\"(d[122]), \"+f\"(d[123]), \"+f\"(d[124]), \"+f\"(d[125]), \"+f\"(d[126]), \"+f\"(d[127])\n"
    "                     : \"l\"(da), \"l\"(db), \"r\"(1));\n"
    "        __asm__ volatile(\"//SM90A wgmma.commit_group.sync.aligned;\");\n"
    "        __asm__ volatile(\"//SM90A wgmma.wait_group.sync.aligned 1;\" ::: \"memory\");\n"
    "    }\n"
    "    __asm__ volatile(\"//SM90A wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    float sum = 0.0f;\n"
    "    __attribute__((opencl_unroll_hint)) for (int i = 0; i < 128; ++i)\n"
    "        sum += d[i];\n"
    "    D[get_global_id(0)] = sum;\n"
    "}\n";

static unsigned short to_half(float f) /* (values k/64, exact in fp16) */
{
    unsigned int b;
    memcpy(&b, &f, 4);
    if ((b & 0x7fffffff) == 0)
        return (unsigned short)((b >> 16) & 0x8000);
    const int e = (int)((b >> 23) & 0xff) - 127 + 15;
    return (unsigned short)(((b >> 16) & 0x8000) | (e << 10) | ((b >> 13) & 0x3ff));
}

static float from_half(unsigned short h)
{
    const int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    return (s ? -1.0f : 1.0f) * (e ? ldexpf(1.0f + f / 1024.0f, e - 15) : ldexpf(f / 1024.0f, -14));
}

static char *finish(const char *ptx) /* marks removed, .target sm_90a (src/program.c, reduced) */
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

static cl_kernel build(cl_context ctx, cl_device_id dev, const char *src, const char *name)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    char log[8192] = "";
    if (clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL)) {
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("%s: source build failed\n%s\n", name, log);
        return NULL;
    }
    size_t bsz = 0;
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL);
    char *bin = calloc(bsz + 1, 1);
    clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    char *ptx = finish(bin);
    size_t len = strlen(ptx) + 1;
    const unsigned char *b = (const unsigned char *)ptx;
    cl_int bs;
    cl_program p2 = clCreateProgramWithBinary(ctx, 1, &dev, &len, &b, &bs, &err);
    if (clBuildProgram(p2, 1, &dev, "-cl-nv-verbose", NULL, NULL)) {
        clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("%s: finished build failed\n%s\n", name, log);
        return NULL;
    }
    clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    printf("%s: built (%s)\n", name, log[0] ? log : "no log");
    return clCreateKernel(p2, name, &err);
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
    if (!dev)
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    /* 1. P*V's form */
    cl_kernel k = build(ctx, dev, pv_source, "pv_probe");
    if (k) {
        unsigned short ha[64 * 16], hb[16 * 16];
        float hd[64 * 16];
        double ref[64 * 16];
        srand(5);
        for (int i = 0; i < 64 * 16; ++i)
            ha[i] = to_half((float)(rand() % 129 - 64) / 64.0f);
        for (int i = 0; i < 16 * 16; ++i)
            hb[i] = to_half((float)(rand() % 129 - 64) / 64.0f);
        for (int r = 0; r < 64; ++r)
            for (int c = 0; c < 16; ++c) {
                double acc = 0;
                for (int kk = 0; kk < 16; ++kk)
                    acc += (double)from_half(ha[r * 16 + kk]) * from_half(hb[kk * 16 + c]);
                ref[r * 16 + c] = acc;
            }
        cl_mem ba = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof ha, ha, &err);
        cl_mem bb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof hb, hb, &err);
        cl_mem bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof hd, NULL, &err);
        /* layout (X: between 8-column groups, Y: between 8-key groups) and the descriptor's (LBO, SBO) */
        const int v[4][4] = {{256, 128, 256, 128}, {256, 128, 128, 256}, {128, 256, 128, 256}, {128, 256, 256, 128}};
        for (int L = 0; L < 4; ++L) {
            for (int i = 0; i < 64 * 16; ++i)
                hd[i] = NAN;
            clEnqueueWriteBuffer(q, bd, CL_TRUE, 0, sizeof hd, hd, 0, NULL, NULL);
            clSetKernelArg(k, 0, sizeof ba, &ba);
            clSetKernelArg(k, 1, sizeof bb, &bb);
            clSetKernelArg(k, 2, sizeof bd, &bd);
            for (int a = 0; a < 4; ++a)
                clSetKernelArg(k, 3 + a, sizeof(int), &v[L][a]);
            const size_t g = 128, l = 128;
            const cl_int e1 = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL), e2 = clFinish(q);
            clEnqueueReadBuffer(q, bd, CL_TRUE, 0, sizeof hd, hd, 0, NULL, NULL);
            int bad = 0;
            for (int i = 0; i < 64 * 16; ++i)
                bad += !(fabs(hd[i] - ref[i]) <= 1e-3);
            printf("P*V form, B N-major (trans-b 1): layout X=%d Y=%d, descriptor LBO=%d SBO=%d: enqueue %d finish %d, %d of 1024 wrong%s\n",
                   v[L][0], v[L][1], v[L][2], v[L][3], e1, e2, bad, bad ? "" : "  RIGHT");
        }
    }
    /* 2. throughput */
    k = build(ctx, dev, tp_source, "tp_probe");
    if (k) {
        cl_uint cus = 0;
        clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
        const int iters = 4096;
        const size_t l = 256, g = (size_t)cus * 2 * l;
        cl_mem bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, g * sizeof(float), NULL, &err);
        clSetKernelArg(k, 0, sizeof bd, &bd);
        clSetKernelArg(k, 1, sizeof iters, &iters);
        double ms[7];
        for (int i = -2; i < 7; ++i) {
            cl_event ev;
            clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, &ev);
            clWaitForEvents(1, &ev);
            cl_ulong t0, t1;
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
            clReleaseEvent(ev);
            if (i >= 0)
                ms[i] = (t1 - t0) * 1e-6;
        }
        qsort(ms, 7, sizeof ms[0], cmp);
        const double flops = (double)g / 128 * iters * 2.0 * 64 * 256 * 16;
        printf("throughput: m64n256k16 from local memory, %zu work-groups of 2 warpgroups, %d products each: median %.3f ms "
               "(%.3f-%.3f), %.1f TFLOP/s\n", g / l, iters, ms[3], ms[0], ms[6], flops / ms[3] * 1e-9);
    }
    return 0;
}
