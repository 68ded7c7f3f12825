/* SPDX-License-Identifier: MIT */
/*
 * device.c: what a device is: its profile (what tile choice depends on; what the driver does not report
 * is probed: probe.c), whether flashcl runs on it, and which device a selector (index, name or
 * $FLASHCL_DEVICE) names.
 */
#include "internal.h"
#include "probe.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Vendor extension queries (cl_nv_device_attribute_query, cl_amd_device_attribute_query,
 * cl_intel_required_subgroup_size). Defined here so that older headers build. */
#define FCL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define FCL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define FCL_DEVICE_WARP_SIZE_NV 0x4003
#define FCL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043
#define FCL_DEVICE_SUB_GROUP_SIZES_INTEL 0x4108

static flashcl_vendor classify_vendor(const char *vendor, const char *platform, int is_cpu)
{
    char v[192];
    snprintf(v, sizeof v, "%s %s", vendor, platform);
    for (char *c = v; *c; ++c)
        *c = (char)tolower((unsigned char)*c);
    if (strstr(v, "portable computing language") || strstr(v, "pocl"))
        return is_cpu ? FLASHCL_VENDOR_POCL : FLASHCL_VENDOR_OTHER;
    if (strstr(v, "rusticl") || strstr(v, "clover") || strstr(v, "mesa"))
        return FLASHCL_VENDOR_MESA;
    if (strstr(v, "nvidia"))
        return FLASHCL_VENDOR_NVIDIA;
    if (strstr(v, "advanced micro") || strstr(v, "amd"))
        return FLASHCL_VENDOR_AMD;
    if (strstr(v, "intel"))
        return FLASHCL_VENDOR_INTEL;
    if (strstr(v, "apple"))
        return FLASHCL_VENDOR_APPLE;
    if (strstr(v, "arm"))
        return FLASHCL_VENDOR_ARM;
    if (strstr(v, "qualcomm"))
        return FLASHCL_VENDOR_QUALCOMM;
    return FLASHCL_VENDOR_OTHER;
}

/* Reads a string property, truncated to the destination (the driver refuses a short buffer). */
static cl_int device_string(cl_device_id dev, cl_device_info what, char *dst, size_t n)
{
    char buf[1024];
    size_t len = 0;
    cl_int err = clGetDeviceInfo(dev, what, sizeof buf, buf, &len);
    if (err != CL_SUCCESS)
        return err;
    buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
    fcl_strlcpy(dst, buf, n);
    return CL_SUCCESS;
}

/* A failed query names itself and keeps its code: "clGetDeviceInfo(CL_DEVICE_TYPE) failed: ...". */
static flashcl_status query_failed(const char *call, const char *what, cl_int err)
{
    char name[96];
    snprintf(name, sizeof name, "%s(%s)", call, what);
    return fcl_fail_cl(NULL, err, name);
}

/* Shared memory per SM by compute capability (CUDA C++ Programming Guide, "Technical Specifications
 * per Compute Capability"), and the most a static array may take, the probe's upper bound. */
static uint64_t nv_shared_per_sm(int major, int minor)
{
    const int cc = major * 10 + minor;
    if (cc == 90 || cc == 100 || cc == 101 || cc == 103 || cc == 110)
        return 228 * 1024;
    if (cc == 80 || cc == 87)
        return 164 * 1024;
    if (cc == 86 || cc == 89 || cc == 120 || cc == 121)
        return 100 * 1024;
    if (cc == 70 || cc == 72)
        return 96 * 1024;
    if (cc == 75)
        return 64 * 1024;
    return 0;
}
#define FCL_STATIC_LOCAL_MAX (256u * 1024u)

/* The vendors' attribute extensions a profile reads beyond the standard queries. */
typedef struct device_extensions {
    int nv_attr, amd_attr, intel_sg, intel_attr;
} device_extensions;

/* CL_DEVICE_COMPILER_AVAILABLE and the extensions: fp16, fp64, sub-groups, Intel's sub-group matrices, and
 * which attribute extensions the vendor widths can be read through. */
static flashcl_status query_extensions(cl_device_id device, flashcl_device_profile *pr, device_extensions *x)
{
    cl_int err;
    cl_bool compiler;
    /* Without these two a device would be misjudged (no fp16, "no compiler"): their failure is the
     * driver's and is reported as such. */
    if ((err = clGetDeviceInfo(device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL)) != CL_SUCCESS)
        return query_failed("clGetDeviceInfo", "CL_DEVICE_COMPILER_AVAILABLE", err);
    size_t ext_len = 0;
    if ((err = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len)) != CL_SUCCESS)
        return query_failed("clGetDeviceInfo", "CL_DEVICE_EXTENSIONS", err);
    char *ext = calloc(1, ext_len + 1);
    if (!ext)
        return fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY,
                        "flashcl_device_profile_query: allocating %zu bytes for CL_DEVICE_EXTENSIONS", ext_len + 1);
    if (ext_len && (err = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, ext_len, ext, NULL)) != CL_SUCCESS) {
        free(ext);
        return query_failed("clGetDeviceInfo", "CL_DEVICE_EXTENSIONS", err);
    }
    pr->has_fp16 = strstr(ext, "cl_khr_fp16") != NULL;
    pr->has_fp64 = strstr(ext, "cl_khr_fp64") != NULL;
    pr->has_subgroups = strstr(ext, "cl_khr_subgroups") != NULL || strstr(ext, "cl_intel_subgroups") != NULL;
    x->nv_attr = strstr(ext, "cl_nv_device_attribute_query") != NULL;
    x->amd_attr = strstr(ext, "cl_amd_device_attribute_query") != NULL;
    x->intel_sg = strstr(ext, "cl_intel_required_subgroup_size") != NULL;
    x->intel_attr = strstr(ext, "cl_intel_device_attribute_query") != NULL;
    pr->has_intel_subgroup_matrix = strstr(ext, "cl_intel_subgroup_matrix_multiply_accumulate") != NULL;
    free(ext);

    pr->compiler_available = compiler == CL_TRUE;
    return FLASHCL_SUCCESS;
}

static void query_widths(cl_device_id device, flashcl_device_profile *pr, const device_extensions *x)
{
    /* The width work-groups should be a multiple of: what the driver says, else the vendor's known
     * width (NVIDIA warp 32, AMD wavefront 64, Intel's widest subgroup 16 to 32), else 8 for CPUs'
     * SIMD lanes and 32 for an unknown GPU. */
    pr->wg_multiple = pr->is_cpu ? 8 : 32;
    if (pr->vendor == FLASHCL_VENDOR_AMD)
        pr->wg_multiple = 64;
    if (pr->vendor == FLASHCL_VENDOR_INTEL && !pr->is_cpu)
        pr->wg_multiple = 16;
    if (x->nv_attr) {
        cl_uint v = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_WARP_SIZE_NV, sizeof v, &v, NULL) == CL_SUCCESS && v)
            pr->wg_multiple = v;
        v = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof v, &v, NULL) == CL_SUCCESS)
            pr->nv_cc_major = (int)v;
        v = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof v, &v, NULL) == CL_SUCCESS)
            pr->nv_cc_minor = (int)v;
    }
    if (x->amd_attr) {
        cl_uint v = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof v, &v, NULL) == CL_SUCCESS && v)
            pr->wg_multiple = v;
    }
    if (x->intel_sg) {
        size_t sizes[8] = {0}, n = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &n) == CL_SUCCESS)
            for (size_t i = 0; i < n / sizeof(size_t) && i < 8; ++i)
                if (sizes[i] > pr->wg_multiple && sizes[i] <= 32)
                    pr->wg_multiple = sizes[i];
    }
}

static void query_arch(cl_device_id device, flashcl_device_profile *pr, const device_extensions *x)
{
    /* Architecture, the middle level of the tuning database's identity. */
    if (pr->nv_cc_major)
        snprintf(pr->arch, sizeof pr->arch, "sm_%d%d", pr->nv_cc_major, pr->nv_cc_minor);
    else if (pr->vendor == FLASHCL_VENDOR_AMD && strncmp(pr->name, "gfx", 3) == 0)
        fcl_strlcpy(pr->arch, pr->name, sizeof pr->arch);
    else if (pr->vendor == FLASHCL_VENDOR_INTEL && x->intel_attr) {
        cl_uint ip = 0;
        if (clGetDeviceInfo(device, 0x4250 /* CL_DEVICE_IP_VERSION_INTEL */, sizeof ip, &ip, NULL) == CL_SUCCESS)
            snprintf(pr->arch, sizeof pr->arch, "ip_%08x", ip);
    } else if (pr->vendor == FLASHCL_VENDOR_POCL) {
        /* "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512": the LLVM CPU name */
        const char *gnu = strstr(pr->device_version, "-gnu-");
        if (gnu)
            fcl_strlcpy(pr->arch, gnu + 5, sizeof pr->arch);
    }
}

/* The profile's facts from the driver; matrix_units is left 0 (fcl_probe_matrix_units proves it). */
static flashcl_status query_limits(cl_device_id device, flashcl_device_profile *pr)
{
    if (!device || !pr)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_device_profile_query: %s is NULL",
                        !device ? "device" : "profile");
    memset(pr, 0, sizeof *pr);
    cl_platform_id platform;
    cl_device_type type;
    cl_device_local_mem_type lmt;
    cl_ulong lms, gms, mas;
    size_t wgs;
    cl_uint cu;
    /* Queried in this order (the fault tests count the calls); the first failure is the one reported. */
#define FACT(what, var) {what, #what, sizeof var, &var}
    const struct {
        cl_device_info what;
        const char *name;
        size_t size;
        void *dst;
    } facts[] = {
        FACT(CL_DEVICE_PLATFORM, platform),
        FACT(CL_DEVICE_TYPE, type),
        FACT(CL_DEVICE_LOCAL_MEM_TYPE, lmt),
        FACT(CL_DEVICE_LOCAL_MEM_SIZE, lms),
        FACT(CL_DEVICE_GLOBAL_MEM_SIZE, gms),
        FACT(CL_DEVICE_MAX_MEM_ALLOC_SIZE, mas),
        FACT(CL_DEVICE_MAX_WORK_GROUP_SIZE, wgs),
        FACT(CL_DEVICE_MAX_COMPUTE_UNITS, cu),
    };
#undef FACT
#define TEXT(what, field) {what, #what, field, sizeof field}
    const struct {
        cl_device_info what;
        const char *name;
        char *dst;
        size_t n;
    } texts[] = {
        TEXT(CL_DEVICE_NAME, pr->name),
        TEXT(CL_DEVICE_VENDOR, pr->vendor_name),
        TEXT(CL_DRIVER_VERSION, pr->driver_version),
        TEXT(CL_DEVICE_VERSION, pr->device_version),
    };
#undef TEXT
    cl_int err;
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; ++i)
        if ((err = clGetDeviceInfo(device, facts[i].what, facts[i].size, facts[i].dst, NULL)) != CL_SUCCESS)
            return query_failed("clGetDeviceInfo", facts[i].name, err);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i)
        if ((err = device_string(device, texts[i].what, texts[i].dst, texts[i].n)) != CL_SUCCESS)
            return query_failed("clGetDeviceInfo", texts[i].name, err);
    char buf[1024];
    size_t len = 0;
    if ((err = clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof buf, buf, &len)) != CL_SUCCESS)
        return query_failed("clGetPlatformInfo", "CL_PLATFORM_NAME", err);
    buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
    fcl_strlcpy(pr->platform_name, buf, sizeof pr->platform_name);
    device_extensions x = {0, 0, 0, 0};
    flashcl_status st = query_extensions(device, pr, &x);
    if (st != FLASHCL_SUCCESS)
        return st;
    if (sscanf(pr->device_version, "OpenCL %d.%d", &pr->opencl_major, &pr->opencl_minor) != 2)
        pr->opencl_major = pr->opencl_minor = 0;
    pr->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    pr->vendor = classify_vendor(pr->vendor_name, pr->platform_name, pr->is_cpu);
    pr->local_mem_size = lms;
    pr->local_mem_is_global = lmt == CL_GLOBAL;
    pr->global_mem_size = gms;
    pr->max_alloc_size = mas;
    pr->max_work_group_size = wgs;
    pr->compute_units = cu;

    query_widths(device, pr, &x);
    query_arch(device, pr, &x);
    if (pr->wg_multiple > pr->max_work_group_size)
        pr->wg_multiple = pr->max_work_group_size;

    return FLASHCL_SUCCESS;
}

flashcl_status fcl_profile_query(cl_device_id device, cl_context context, const char *cache_dir,
                                 flashcl_device_profile *pr)
{
    flashcl_status st = query_limits(device, pr);
    if (st != FLASHCL_SUCCESS)
        return st;
    pr->local_mem_static = pr->local_mem_size;
    pr->local_mem_per_cu = pr->local_mem_size;
    const int nv = pr->vendor == FLASHCL_VENDOR_NVIDIA && !pr->is_cpu && pr->nv_cc_major >= 7;
    if (nv && nv_shared_per_sm(pr->nv_cc_major, pr->nv_cc_minor))
        pr->local_mem_per_cu = nv_shared_per_sm(pr->nv_cc_major, pr->nv_cc_minor);
    cl_int err = CL_SUCCESS;
    /* Intel's matrix engines (flash_dpas built, the DPAS probe run) and AMD CDNA's and RDNA3/4's matrix cores
     * (flash_mfma or flash_wmma built, the instruction's probe run) */
    int (*const vendor_probe)(cl_context, cl_device_id, const flashcl_device_profile *, const char **) =
        fcl_intel_dpas_sg(pr) ? fcl_probe_dpas : fcl_amd_matrix_kind(pr) ? fcl_probe_amd : NULL;
    if (vendor_probe && pr->compiler_available) {
        cl_context probe = context ? context : clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        if (!probe)
            return fcl_fail_cl(NULL, err, "flashcl_device_profile_query: clCreateContext for the test compiles");
        const char *why_not = NULL;
        pr->matrix_units = vendor_probe(probe, device, pr, &why_not);
        if (!pr->matrix_units && getenv("FLASHCL_BUILD_LOG"))
            fprintf(stderr, "flashcl: %s: the matrix units not proven: %s\n", pr->name, why_not);
        if (!context)
            clReleaseContext(probe);
        return FLASHCL_SUCCESS;
    }
    if (!nv || !pr->compiler_available)
        return FLASHCL_SUCCESS;
    cl_context probe = context ? context : clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (!probe)
        return fcl_fail_cl(NULL, err, "flashcl_device_profile_query: clCreateContext for the test compiles");
    if (pr->nv_cc_major >= 8)
        pr->matrix_units = fcl_probe_matrix_units(probe, device, pr);
    if (pr->matrix_units && pr->nv_cc_major == 9) {
        const char *why_not = NULL;
        if (fcl_probe_sm90a_cached(probe, device, pr, cache_dir, &why_not))
            pr->matrix_units = 2;
        else if (getenv("FLASHCL_BUILD_LOG"))
            fprintf(stderr, "flashcl: %s: sm_90a programs not proven: %s\n", pr->name, why_not);
    }
    pr->local_mem_static = fcl_static_local_cached(probe, device, pr, FCL_STATIC_LOCAL_MAX, cache_dir, NULL);
    if (!context)
        clReleaseContext(probe);
    return FLASHCL_SUCCESS;
}

flashcl_status flashcl_device_profile_query_abi(const flashcl_abi *abi, cl_device_id device,
                                                flashcl_device_profile *pr)
{
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_device_profile_query");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    int disk;
    flashcl_status st = fcl_env_flag("flashcl_device_profile_query", "FLASHCL_CACHE", 1, &disk);
    if (st != FLASHCL_SUCCESS)
        return st;
    char *dir = disk ? fcl_resolve_cache_dir(NULL) : NULL;
    st = fcl_profile_query(device, NULL, dir, pr);
    free(dir);
    return st;
}

/* The flash kernel's smallest tile: head_dim 8, one row, four keys, one work-item. */
static uint64_t smallest_tile_bytes(void)
{
    flashcl_config c = {0};
    c.block_m = c.threads_per_row = c.rows_per_item = 1;
    c.block_n = c.v_chunk = 4;
    c.d_chunk = 8;
    return flashcl_flash_local_mem_bytes(8, &c);
}

flashcl_status flashcl_device_supported_abi(const flashcl_abi *abi, const flashcl_device_profile *pr, char *why, size_t n)
{
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_device_supported");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    char buf[512] = ""; /* a device name (127) and a version (127) fit */
    flashcl_status st = FLASHCL_SUCCESS;
    if (!pr) {
        snprintf(buf, sizeof buf, "profile is NULL");
        st = FLASHCL_INVALID_ARGUMENT;
    } else if (pr->opencl_major < 1 || (pr->opencl_major == 1 && pr->opencl_minor < 2)) {
        snprintf(buf, sizeof buf, "%s reports \"%s\": flashcl needs OpenCL 1.2 or later", pr->name, pr->device_version);
        st = FLASHCL_UNSUPPORTED;
    } else if (!pr->compiler_available) {
        snprintf(buf, sizeof buf, "%s has no OpenCL C compiler: flashcl compiles its kernels for the device at run time",
                 pr->name);
        st = FLASHCL_UNSUPPORTED;
    } else if (fcl_local_mem_budget(pr, 0) < smallest_tile_bytes() || pr->max_work_group_size < 1) {
        snprintf(buf, sizeof buf, "%s has %llu B of local memory for tiles: too little for the smallest tile", pr->name,
                 (unsigned long long)fcl_local_mem_budget(pr, 0));
        st = FLASHCL_UNSUPPORTED;
    }
    if (why && n)
        fcl_strlcpy(why, buf, n);
    /* The reason is also the thread's last error, as for every call that does not succeed. */
    return st == FLASHCL_SUCCESS ? st : fcl_fail(NULL, st, "%s", buf);
}

/* ------------------------------------------------------------------------------------------------ */

static int contains_icase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* *found: the device a selector names (see flashcl_context_create_default), else NULL and NO_DEVICE. */
flashcl_status fcl_find_device(const char *selector, cl_device_id *found)
{
    *found = NULL;
    const char *shown = selector && *selector ? selector : "(any)";
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */ || (err == CL_SUCCESS && np == 0))
        return fcl_fail(NULL, FLASHCL_NO_DEVICE,
                        "no OpenCL device matches selector '%s' (no OpenCL platform is installed)", shown);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(NULL, err, "listing OpenCL platforms and devices: clGetPlatformIDs");
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "listing OpenCL platforms: allocating %u platform ids", np);
    if ((err = clGetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) {
        free(plats);
        return fcl_fail_cl(NULL, err, "listing OpenCL platforms and devices: clGetPlatformIDs");
    }

    int want_p = -1, want_d = -1;
    if (selector && *selector) {
        char tail;
        if (sscanf(selector, "%d:%d%c", &want_p, &want_d, &tail) != 2)
            want_p = want_d = -1;
    }
    /* A platform whose devices cannot be listed is skipped, so that one broken driver does not hide
     * the others; its error is named if nothing else matches. */
    char skipped[160] = "";
    flashcl_status st = FLASHCL_SUCCESS;
    cl_device_id best_gpu = NULL, best_cpu = NULL, best_any = NULL;
    for (cl_uint p = 0; p < np && !*found && st == FLASHCL_SUCCESS; ++p) {
        cl_uint nd = 0;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && nd == 0))
            continue;
        cl_device_id *devs = err == CL_SUCCESS ? calloc(nd, sizeof *devs) : NULL;
        if (err == CL_SUCCESS && !devs) {
            st = fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "listing OpenCL devices: allocating %u device ids", nd);
            break;
        }
        if (err == CL_SUCCESS)
            err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        if (err != CL_SUCCESS) {
            if (!*skipped)
                snprintf(skipped, sizeof skipped, " (platform %u skipped: clGetDeviceIDs failed: %s (%d))", p,
                         fcl_cl_error_name(err), (int)err);
            free(devs);
            continue;
        }
        /* A name that cannot be read stays empty: that device matches no name, only its index. */
        char pname[1024] = "", both[2100];
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        for (cl_uint d = 0; d < nd && !*found; ++d) {
            char dname[1024] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            snprintf(both, sizeof both, "%s / %s", pname, dname);
            cl_device_type type = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (want_p >= 0) {
                if ((int)p == want_p && (int)d == want_d)
                    *found = devs[d];
            } else if (selector && *selector) {
                if (contains_icase(both, selector))
                    *found = devs[d];
            } else {
                if ((type & CL_DEVICE_TYPE_GPU) && !best_gpu)
                    best_gpu = devs[d];
                if ((type & CL_DEVICE_TYPE_CPU) && !best_cpu)
                    best_cpu = devs[d];
                if (!best_any)
                    best_any = devs[d];
            }
        }
        free(devs);
    }
    free(plats);
    if (st != FLASHCL_SUCCESS) {
        *found = NULL;
        return st;
    }
    if (!*found)
        *found = best_gpu ? best_gpu : best_cpu ? best_cpu : best_any;
    if (!*found)
        return fcl_fail(NULL, FLASHCL_NO_DEVICE, "no OpenCL device matches selector '%s'%s", shown, skipped);
    return FLASHCL_SUCCESS;
}
