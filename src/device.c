/*
 * device.c: the device profile (what tile choice depends on), and contexts: wrapping the
 * application's OpenCL objects or picking a device by index, name or $FLASHCL_DEVICE.
 */
#include "internal.h"

#include <ctype.h>
#include <stdatomic.h>
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

/* The largest local memory a work-group gets on the GPUs flashcl targets (AMD LDS and Intel SLM are
 * 64 KiB; NVIDIA gives OpenCL 48 KiB). CPUs report a cache (PoCL: its L2, 1 MiB or more) where tiles
 * larger than this only add cache misses, so no budget exceeds it. */
#define FCL_LOCAL_MEM_CEILING (64u * 1024u)

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

static uint64_t env_u64(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v *= 1024;
    return (uint64_t)v;
}

flashcl_status flashcl_device_profile_query(cl_device_id device, uint64_t local_mem_limit,
                                            flashcl_device_profile *pr)
{
    if (!device || !pr)
        return FLASHCL_INVALID_ARGUMENT;
    memset(pr, 0, sizeof *pr);
    cl_platform_id platform;
    cl_device_type type;
    cl_device_local_mem_type lmt;
    cl_ulong lms, gms, mas;
    size_t wgs;
    cl_uint cu;
    /* The first failure is the one reported (OR-ing error codes would mix them). */
    cl_int err = CL_SUCCESS;
#define FIRST_ERR(call)                                                                                    \
    do {                                                                                                   \
        const cl_int e_ = (call);                                                                          \
        if (e_ != CL_SUCCESS && err == CL_SUCCESS)                                                         \
            err = e_;                                                                                      \
    } while (0)
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_TYPE, sizeof lmt, &lmt, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lms, &lms, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gms, &gms, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof mas, &mas, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wgs, &wgs, NULL));
    FIRST_ERR(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL));
    FIRST_ERR(device_string(device, CL_DEVICE_NAME, pr->name, sizeof pr->name));
    FIRST_ERR(device_string(device, CL_DEVICE_VENDOR, pr->vendor_name, sizeof pr->vendor_name));
    FIRST_ERR(device_string(device, CL_DRIVER_VERSION, pr->driver_version, sizeof pr->driver_version));
    FIRST_ERR(device_string(device, CL_DEVICE_VERSION, pr->device_version, sizeof pr->device_version));
#undef FIRST_ERR
    if (err == CL_SUCCESS) {
        char buf[1024];
        size_t len = 0;
        err = clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof buf, buf, &len);
        buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
        fcl_strlcpy(pr->platform_name, buf, sizeof pr->platform_name);
    }
    if (err != CL_SUCCESS)
        return fcl_fail_cl(NULL, err, "clGetDeviceInfo/clGetPlatformInfo (the device's name and limits)");

    size_t ext_len = 0;
    char *ext = NULL;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len) == CL_SUCCESS && ext_len) {
        ext = calloc(1, ext_len + 1);
        if (!ext)
            return FLASHCL_OUT_OF_HOST_MEMORY;
        clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, ext_len, ext, NULL);
    }
    const char *e = ext ? ext : "";
    pr->has_fp16 = strstr(e, "cl_khr_fp16") != NULL;
    pr->has_fp64 = strstr(e, "cl_khr_fp64") != NULL;
    pr->has_subgroups = strstr(e, "cl_khr_subgroups") != NULL || strstr(e, "cl_intel_subgroups") != NULL;
    int nv_attr = strstr(e, "cl_nv_device_attribute_query") != NULL;
    int amd_attr = strstr(e, "cl_amd_device_attribute_query") != NULL;
    int intel_sg = strstr(e, "cl_intel_required_subgroup_size") != NULL;
    int intel_attr = strstr(e, "cl_intel_device_attribute_query") != NULL;
    pr->has_intel_subgroup_matrix = strstr(e, "cl_intel_subgroup_matrix_multiply_accumulate") != NULL;
    free(ext);

    cl_bool compiler = CL_FALSE;
    clGetDeviceInfo(device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
    pr->compiler_available = compiler == CL_TRUE;
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

    /* The width work-groups should be a multiple of: what the driver says, else the vendor's known
     * width (NVIDIA warp 32, AMD wavefront 64, Intel's widest subgroup 16 to 32), else 8 for CPUs'
     * SIMD lanes and 32 for an unknown GPU. */
    pr->wg_multiple = pr->is_cpu ? 8 : 32;
    if (pr->vendor == FLASHCL_VENDOR_AMD)
        pr->wg_multiple = 64;
    if (pr->vendor == FLASHCL_VENDOR_INTEL && !pr->is_cpu)
        pr->wg_multiple = 16;
    if (nv_attr) {
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
    if (amd_attr) {
        cl_uint v = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof v, &v, NULL) == CL_SUCCESS && v)
            pr->wg_multiple = v;
    }
    if (intel_sg) {
        size_t sizes[8] = {0}, n = 0;
        if (clGetDeviceInfo(device, FCL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &n) == CL_SUCCESS)
            for (size_t i = 0; i < n / sizeof(size_t) && i < 8; ++i)
                if (sizes[i] > pr->wg_multiple && sizes[i] <= 32)
                    pr->wg_multiple = sizes[i];
    }
    /* Architecture, the middle level of the tuning database's identity. */
    if (pr->nv_cc_major)
        snprintf(pr->arch, sizeof pr->arch, "sm_%d%d", pr->nv_cc_major, pr->nv_cc_minor);
    else if (pr->vendor == FLASHCL_VENDOR_AMD && strncmp(pr->name, "gfx", 3) == 0)
        fcl_strlcpy(pr->arch, pr->name, sizeof pr->arch);
    else if (pr->vendor == FLASHCL_VENDOR_INTEL && intel_attr) {
        cl_uint ip = 0;
        if (clGetDeviceInfo(device, 0x4250 /* CL_DEVICE_IP_VERSION_INTEL */, sizeof ip, &ip, NULL) == CL_SUCCESS)
            snprintf(pr->arch, sizeof pr->arch, "ip_%08x", ip);
    } else if (pr->vendor == FLASHCL_VENDOR_POCL) {
        /* "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512": the LLVM CPU name */
        const char *gnu = strstr(pr->device_version, "-gnu-");
        if (gnu)
            fcl_strlcpy(pr->arch, gnu + 5, sizeof pr->arch);
    }
    if (pr->wg_multiple > pr->max_work_group_size)
        pr->wg_multiple = pr->max_work_group_size;

    uint64_t cap = local_mem_limit ? local_mem_limit : env_u64("FLASHCL_LOCAL_MEM_LIMIT");
    uint64_t budget = lms < FCL_LOCAL_MEM_CEILING ? lms : FCL_LOCAL_MEM_CEILING;
    if (cap && cap < budget)
        budget = cap;
    pr->local_mem_budget = budget;
    return FLASHCL_SUCCESS;
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

flashcl_status flashcl_device_supported(const flashcl_device_profile *pr, char *why, size_t n)
{
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
    } else if (pr->local_mem_budget < smallest_tile_bytes() || pr->max_work_group_size < 1) {
        snprintf(buf, sizeof buf, "%s has %llu B of local memory for tiles: too little for the smallest tile", pr->name,
                 (unsigned long long)pr->local_mem_budget);
        st = FLASHCL_UNSUPPORTED;
    }
    if (why && n)
        fcl_strlcpy(why, buf, n);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */

void flashcl_settings_default(flashcl_settings *s)
{
    if (!s)
        return;
    *s = (flashcl_settings){0};
    s->validate = -1;
    s->disk_cache = -1;
    s->tuning_db = -1;
    s->path = -1;
}

/* Numbers every context of the process: a thread's error record names its context by address and
 * serial, since a destroyed context's address may be reused by the next one (error.c). */
static atomic_uint_least64_t context_serials;

static int env_flag(const char *name, int fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    return !(strcmp(s, "0") == 0 || strcmp(s, "off") == 0 || strcmp(s, "no") == 0 || strcmp(s, "false") == 0);
}

flashcl_status flashcl_context_create(cl_context context, cl_device_id device, cl_command_queue queue,
                                      const flashcl_settings *settings, flashcl_context **out)
{
    validate_or_return(NULL, out, FLASHCL_INVALID_ARGUMENT, "flashcl_context_create: out is NULL");
    *out = NULL;
    validate_or_return(NULL, context && device && queue, FLASHCL_INVALID_ARGUMENT,
                       "flashcl_context_create: %s is NULL",
                       !context ? "context" : !device ? "device" : "queue");
    flashcl_settings defaults;
    if (!settings) {
        flashcl_settings_default(&defaults);
        settings = &defaults;
    }
    /* The queue must belong to this context and device: a mismatch would fail at every enqueue. */
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL) != CL_SUCCESS ||
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL) != CL_SUCCESS ||
        qctx != context || qdev != device)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT,
                        "flashcl_context_create: queue does not belong to the given context and device");

    flashcl_path path = FLASHCL_PATH_AUTO;
    if (settings->path >= 0) {
        if (settings->path > FLASHCL_PATH_MMA)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT,
                            "flashcl_context_create: settings.path = %d is not a flashcl_path", settings->path);
        path = (flashcl_path)settings->path;
    } else {
        const char *env = getenv("FLASHCL_PATH");
        if (env && *env && flashcl_path_parse(env, &path) != FLASHCL_SUCCESS)
            return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT,
                            "flashcl_context_create: FLASHCL_PATH=\"%.40s\": use auto, portable or mma", env);
    }

    flashcl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return FLASHCL_OUT_OF_HOST_MEMORY;
    ctx->serial = atomic_fetch_add(&context_serials, 1) + 1;
    flashcl_status st = flashcl_device_profile_query(device, settings->local_mem_limit, &ctx->profile);
    ctx->profile.path = path;
    if (st != FLASHCL_SUCCESS) {
        free(ctx);
        char cause[512];
        fcl_strlcpy(cause, flashcl_context_last_error(NULL), sizeof cause);
        return fcl_fail(NULL, st, "flashcl_context_create: querying the device failed: %s", cause);
    }
    char why[512];
    if ((st = flashcl_device_supported(&ctx->profile, why, sizeof why)) != FLASHCL_SUCCESS) {
        free(ctx);
        return fcl_fail(NULL, st, "flashcl_context_create: %s", why);
    }
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return FLASHCL_OUT_OF_HOST_MEMORY;
    }
    ctx->validate = settings->validate >= 0 ? settings->validate != 0 : env_flag("FLASHCL_VALIDATE", 0);
    ctx->validate_max_rows = settings->validate_max_rows > 0 ? settings->validate_max_rows : 4096;
    int disk = settings->disk_cache >= 0 ? settings->disk_cache != 0 : env_flag("FLASHCL_CACHE", 1);
    if (disk)
        ctx->cache_dir = fcl_resolve_cache_dir(settings->cache_dir);
    const char *extra = settings->extra_build_options;
    if (!extra || !*extra)
        extra = getenv("FLASHCL_BUILD_OPTIONS");
    if (extra && *extra)
        ctx->extra_build_options = fcl_strdup(extra);
    if (settings->tuning_db != 0)
        flashcl_tuning_db_load(settings->tuning_db_path, 1, &ctx->tuning_db); /* NULL on OOM: heuristic */
    snprintf(ctx->device_identity, sizeof ctx->device_identity, "%s|%s|%s|%s|%s", ctx->profile.platform_name,
             ctx->profile.vendor_name, ctx->profile.name, ctx->profile.device_version,
             ctx->profile.driver_version);

    clRetainContext(context);
    clRetainDevice(device);
    clRetainCommandQueue(queue);
    ctx->cl_ctx = context;
    ctx->device = device;
    ctx->queue = queue;
    fcl_probe_matrix_units(ctx);
    *out = ctx;
    return FLASHCL_SUCCESS;
}

void flashcl_context_destroy(flashcl_context **pctx)
{
    if (!pctx || !*pctx)
        return;
    flashcl_context *ctx = *pctx;
    fcl_release_programs(ctx);
    clReleaseCommandQueue(ctx->queue);
    clReleaseDevice(ctx->device);
    clReleaseContext(ctx->cl_ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->cache_dir);
    free(ctx->extra_build_options);
    flashcl_tuning_db_destroy(&ctx->tuning_db);
    fcl_forget_errors(ctx);
    free(ctx);
    *pctx = NULL;
}

void flashcl_context_cl_objects(const flashcl_context *ctx, cl_context *context, cl_device_id *device,
                                cl_command_queue *queue)
{
    if (context)
        *context = ctx ? ctx->cl_ctx : NULL;
    if (device)
        *device = ctx ? ctx->device : NULL;
    if (queue)
        *queue = ctx ? ctx->queue : NULL;
}

const flashcl_tuning_db *flashcl_context_tuning_db(const flashcl_context *ctx)
{
    return ctx ? ctx->tuning_db : NULL;
}

const flashcl_device_profile *flashcl_context_profile(const flashcl_context *ctx)
{
    return ctx ? &ctx->profile : NULL;
}

void flashcl_context_set_validation(flashcl_context *ctx, int enabled)
{
    if (ctx)
        ctx->validate = enabled != 0;
}

int flashcl_context_validation(const flashcl_context *ctx)
{
    return ctx ? ctx->validate : 0;
}

void flashcl_context_stats(const flashcl_context *ctx, flashcl_stats *stats)
{
    if (!stats)
        return;
    if (!ctx) {
        *stats = (flashcl_stats){0};
        return;
    }
    pthread_mutex_lock((pthread_mutex_t *)&ctx->lock);
    *stats = ctx->stats;
    pthread_mutex_unlock((pthread_mutex_t *)&ctx->lock);
}

const char *flashcl_context_cache_dir(const flashcl_context *ctx)
{
    return ctx ? ctx->cache_dir : NULL;
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

/* Finds the device a selector names; *found stays NULL when none does. */
static cl_int pick_device(const char *selector, cl_device_id *found)
{
    *found = NULL;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */ || np == 0)
        return CL_SUCCESS;
    if (err != CL_SUCCESS)
        return err;
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return CL_OUT_OF_HOST_MEMORY;
    clGetPlatformIDs(np, plats, NULL);

    int want_p = -1, want_d = -1;
    if (selector && *selector) {
        char tail;
        if (sscanf(selector, "%d:%d%c", &want_p, &want_d, &tail) != 2)
            want_p = want_d = -1;
    }
    cl_device_id best_gpu = NULL, best_cpu = NULL, best_any = NULL;
    for (cl_uint p = 0; p < np && !*found; ++p) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        if (!devs)
            break;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        char pname[1024] = "", dname[1024] = "", both[2100];
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        for (cl_uint d = 0; d < nd && !*found; ++d) {
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
    if (!*found)
        *found = best_gpu ? best_gpu : best_cpu ? best_cpu : best_any;
    free(plats);
    return CL_SUCCESS;
}

flashcl_status flashcl_context_create_default(const char *selector, const flashcl_settings *settings,
                                              flashcl_context **out)
{
    validate_or_return(NULL, out, FLASHCL_INVALID_ARGUMENT, "flashcl_context_create_default: out is NULL");
    *out = NULL;
    if (!selector || !*selector)
        selector = getenv("FLASHCL_DEVICE");
    cl_device_id dev = NULL;
    cl_int err = pick_device(selector, &dev);
    if (err != CL_SUCCESS)
        return fcl_fail_cl(NULL, err, "listing OpenCL platforms and devices");
    if (!dev)
        return fcl_fail(NULL, FLASHCL_NO_DEVICE, "no OpenCL device matches selector '%s'",
                        selector && *selector ? selector : "(any)");
    cl_context clctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!clctx)
        return fcl_fail_cl(NULL, err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(clctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q) {
        clReleaseContext(clctx);
        return fcl_fail_cl(NULL, err, "clCreateCommandQueue");
    }
    flashcl_status st = flashcl_context_create(clctx, dev, q, settings, out);
    /* The context retained what it keeps; drop the creation references. */
    clReleaseCommandQueue(q);
    clReleaseContext(clctx);
    return st;
}
