/* What NVIDIA's OpenCL driver makes of a kernel of 384 work-items that splits its registers with setmaxnreg
 * (issue 17, wgmma-12): built from source for sm_90, finished for sm_90a as src/program.c does (marks
 * removed, the target, a thread or register count written into the entry's header: each variant below),
 * then CL_KERNEL_WORK_GROUP_SIZE as the driver reports it, and a launch of two work-groups of 384 whatever
 * it reports, checked. wgmma-11 found the producer kernel reported at 256 work-items.
 * Build: gcc -O2 producer_probe.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel __attribute__((reqd_work_group_size(384, 1, 1))) void probe(__global int *out)\n"
    "{\n"
    "    const int tid = get_local_id(0);\n"
    "    int v;\n"
    "    if (tid >= 256) {\n"
    "        REGS_DEC\n"
    "        v = tid * 3;\n"
    "    } else {\n"
    "        REGS_INC\n"
    "        v = tid * 5 + 1;\n"
    "    }\n"
    "    out[get_global_id(0)] = v;\n"
    "}\n";

/* marks removed, .target sm_90a, `head` after the entry's parameter list */
static char *finish(const char *ptx, const char *head)
{
    char *out = calloc(strlen(ptx) + strlen(head) + 8, 1), *w = out;
    int entry = 0;
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
        if (!strncmp(r, ".entry ", 7))
            entry = 1;
        if (entry == 1 && !strncmp(r, "\n{", 2)) {
            entry = 2;
            *w++ = '\n';
            w += sprintf(w, "%s", head);
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
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 768 * sizeof(int), NULL, &err);
    const char *heads[] = {"", ".reqntid 384, 1, 1", ".maxntid 384, 1, 1", ".reqntid 384, 1, 1\n.minnctapersm 1",
                           ".maxnreg 168", ".reqntid 384, 1, 1\n.maxnreg 168"};
    for (int regs = 0; regs < 2; ++regs)
        for (size_t h = 0; h < sizeof heads / sizeof heads[0]; ++h) {
            char text[2048];
            char dec[96] = "", inc[96] = "";
            if (regs) {
                strcpy(dec, "__asm__ volatile(\"//SM90A setmaxnreg.dec.sync.aligned.u32 40;\" ::: \"memory\");");
                strcpy(inc, "__asm__ volatile(\"//SM90A setmaxnreg.inc.sync.aligned.u32 232;\" ::: \"memory\");");
            }
            const char *a = strstr(source, "REGS_DEC"), *b = strstr(source, "REGS_INC");
            snprintf(text, sizeof text, "%.*s%s%.*s%s%s", (int)(a - source), source, dec, (int)(b - a - 8), a + 8, inc,
                     b + 8);
            const char *t = text;
            cl_program p = clCreateProgramWithSource(ctx, 1, &t, NULL, &err);
            if (clBuildProgram(p, 1, &dev, "-cl-std=CL1.2", NULL, NULL)) {
                printf("source build failed\n");
                return 1;
            }
            size_t bsz = 0;
            clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL);
            char *bin = calloc(bsz + 1, 1);
            clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
            char *ptx = finish(bin, heads[h]);
            size_t len = strlen(ptx) + 1;
            const unsigned char *pb = (const unsigned char *)ptx;
            cl_int bs;
            cl_program p2 = clCreateProgramWithBinary(ctx, 1, &dev, &len, &pb, &bs, &err);
            err = clBuildProgram(p2, 1, &dev, "-cl-nv-verbose", NULL, NULL);
            char log[4096] = "";
            clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
            for (char *c = log; *c; ++c)
                if (*c == '\n')
                    *c = ' ';
            printf("setmaxnreg %d, header \"%s\": build %d (%.200s)", regs, heads[h], err, log);
            if (err) {
                printf("\n");
                continue;
            }
            cl_kernel k = clCreateKernel(p2, "probe", &err);
            size_t kwg = 0, cwg[3] = {0};
            clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
            clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL);
            int poison[768];
            for (int i = 0; i < 768; ++i)
                poison[i] = -7;
            clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof poison, poison, 0, NULL, NULL);
            clSetKernelArg(k, 0, sizeof buf, &buf);
            const size_t global = 768, local = 384;
            const cl_int e1 = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
            const cl_int e2 = clFinish(q);
            int got[768];
            clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            int wrong = 0;
            for (int i = 0; i < 768; ++i) {
                const int tid = i % 384;
                wrong += got[i] != (tid >= 256 ? tid * 3 : tid * 5 + 1);
            }
            printf(" -> work-group size %zu, compile size %zu; launch at 384: enqueue %d, finish %d, %d of 768 wrong\n",
                   kwg, cwg[0], e1, e2, wrong);
            clReleaseKernel(k);
            clReleaseProgram(p2);
            clReleaseProgram(p);
            free(ptx);
            free(bin);
        }
    return 0;
}
