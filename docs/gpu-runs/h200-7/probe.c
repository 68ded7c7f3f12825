/* Why flashcl's static local memory probe found 231424 B (226 KiB) on the H200 where a 227 KiB array
 * was reported to build: the build logs of both probe kernels at 227 KiB and 227 KiB - 16. */
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *mine =
    "__kernel void static_local_probe(__global int *out)\n{\n    __local uint l[PROBE_INTS];\n"
    "    const int lid = (int)get_local_id(0), n = (int)get_local_size(0), grp = (int)get_group_id(0);\n"
    "    for (int i = lid; i < PROBE_INTS; i += n)\n        l[i] = (uint)i * 2654435761u ^ (uint)grp;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n    int bad = 0;\n"
    "    for (int i = (lid + 1) % n; i < PROBE_INTS; i += n)\n"
    "        bad += l[i] != ((uint)i * 2654435761u ^ (uint)grp);\n    out[grp * n + lid] = bad;\n}\n";
static const char *readme =
    "__kernel void k(__global int *o) { __local int l[PROBE_INTS]; int t = get_local_id(0), n = get_local_size(0);"
    " for (int i = t; i < PROBE_INTS; i += n) l[i] = i * 7 + get_group_id(0); barrier(CLK_LOCAL_MEM_FENCE);"
    " int bad = 0; for (int i = (t + 37) % n; i < PROBE_INTS; i += n) bad += l[i] != i * 7 + (int)get_group_id(0);"
    " atomic_add(&o[get_group_id(0)], bad + (t == 0 ? 1000 : 0)); }";

int main(void)
{
    cl_platform_id ps[8];
    cl_uint np;
    cl_device_id dev = NULL;
    clGetPlatformIDs(8, ps, &np);
    for (cl_uint i = 0; i < np; i++) {
        char n[256];
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, 256, n, NULL);
        if (strstr(n, "NVIDIA"))
            clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL);
    }
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    const char *srcs[2] = {mine, readme}, *names[2] = {"flashcl probe", "probes/local_mem.c"};
    const long sizes[] = {232448, 232448 - 16, 232448 - 256, 232448 - 512, 231424};
    for (int s = 0; s < 2; ++s)
        for (int z = 0; z < 5; ++z) {
            char opts[128], log[4096] = "";
            snprintf(opts, sizeof opts, "-cl-std=CL1.2 -DPROBE_INTS=%ld %s", sizes[z] / 4, z == 0 ? "-cl-nv-verbose" : "");
            cl_program p = clCreateProgramWithSource(ctx, 1, &srcs[s], NULL, &e);
            e = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
            clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
            printf("== %s, %ld B (-cl-std=CL1.2%s): build %d\n%s\n", names[s], sizes[z], z == 0 ? ", verbose" : "", e, log);
            clReleaseProgram(p);
        }
    /* the same without -cl-std=CL1.2, as probes/local_mem.c built it */
    for (int s = 0; s < 2; ++s) {
        char opts[64], log[4096] = "";
        snprintf(opts, sizeof opts, "-DPROBE_INTS=%d", 232448 / 4);
        cl_program p = clCreateProgramWithSource(ctx, 1, &srcs[s], NULL, &e);
        e = clBuildProgram(p, 1, &dev, opts, NULL, NULL);
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        printf("== %s, 232448 B, no -cl-std: build %d\n%s\n", names[s], e, log);
        clReleaseProgram(p);
    }
    return 0;
}
