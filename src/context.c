/* SPDX-License-Identifier: MIT */
/*
 * context.c: a context's life (made on the application's OpenCL objects or on a device a selector
 * names, destroyed) and its settings: the defaults, the environment, and those changed while in use.
 */
#include "internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

flashcl_status flashcl_settings_default_abi(const flashcl_abi *abi, flashcl_settings *s)
{
    flashcl_status st = fcl_abi_guard(abi, "flashcl_settings_default");
    if (st != FLASHCL_SUCCESS)
        return st;
    if (!s)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_settings_default: settings is NULL");
    *s = (flashcl_settings){0};
    s->validate = -1;
    s->disk_cache = -1;
    s->tuning_db = -1;
    s->path = -1;
    return FLASHCL_SUCCESS;
}

/* Numbers every context of the process: a thread's error record names its context by address and
 * serial, since a destroyed context's address may be reused by the next one (error.c). */
static atomic_uint_least64_t context_serials;

/* Releases what a context holds. Creation's failures come here too, with the context partly built:
 * every field starts zeroed and is set only once its resource is held. */
static void context_free(flashcl_context *ctx)
{
    if (!ctx)
        return;
    fcl_release_programs(ctx);
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->device)
        clReleaseDevice(ctx->device);
    if (ctx->cl_ctx)
        clReleaseContext(ctx->cl_ctx);
    if (ctx->mutexes > 1)
        pthread_mutex_destroy(&ctx->override_lock);
    if (ctx->mutexes > 0)
        pthread_mutex_destroy(&ctx->lock);
    free(ctx->cache_dir);
    free(ctx->extra_build_options);
    flashcl_tuning_db_destroy(&ctx->tuning_db);
    fcl_forget_errors(ctx);
    free(ctx);
}

flashcl_status flashcl_context_create_abi(const flashcl_abi *abi, cl_context context, cl_device_id device,
                                          cl_command_queue queue, const flashcl_settings *settings,
                                          flashcl_context **out)
{
    validate_or_return(NULL, out, FLASHCL_INVALID_ARGUMENT, "flashcl_context_create: out is NULL");
    *out = NULL;
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_context_create");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
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

    flashcl_path path;
    uint64_t local_mem_limit;
    flashcl_status st = fcl_resolve_policy("flashcl_context_create: settings", settings->path,
                                           settings->local_mem_limit, &path, &local_mem_limit);
    if (st != FLASHCL_SUCCESS)
        return st;

    /* From here on everything is held in ctx, acquired in order, and released by context_free at
     * `fail` whatever was reached. */
    flashcl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_context_create: allocating the context (%zu bytes)",
                        sizeof *ctx);
    ctx->serial = atomic_fetch_add(&context_serials, 1) + 1;
    if (pthread_mutex_init(&ctx->lock, NULL) == 0)
        ctx->mutexes = 1;
    if (ctx->mutexes == 1 && pthread_mutex_init(&ctx->override_lock, NULL) == 0)
        ctx->mutexes = 2;
    if (ctx->mutexes < 2) {
        st = fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_context_create: pthread_mutex_init failed");
        goto fail;
    }

    int disk = settings->disk_cache != 0, validate = settings->validate != 0;
    if ((settings->disk_cache < 0 &&
         (st = fcl_env_flag("flashcl_context_create", "FLASHCL_CACHE", 1, &disk)) != FLASHCL_SUCCESS) ||
        (settings->validate < 0 &&
         (st = fcl_env_flag("flashcl_context_create", "FLASHCL_VALIDATE", 0, &validate)) != FLASHCL_SUCCESS))
        goto fail;
    if (disk)
        ctx->cache_dir = fcl_resolve_cache_dir(settings->cache_dir); /* NULL (no location): no disk cache */
    if ((st = fcl_profile_query(device, context, ctx->cache_dir, &ctx->profile)) != FLASHCL_SUCCESS) {
        char cause[512];
        fcl_strlcpy(cause, flashcl_context_last_error(NULL), sizeof cause);
        st = fcl_fail_code(NULL, st, flashcl_context_last_cl_error(NULL),
                           "flashcl_context_create: querying the device failed: %s", cause);
        goto fail;
    }
    ctx->path = path;
    ctx->local_mem_limit = local_mem_limit;
    char why[512];
    if ((st = flashcl_device_supported(&ctx->profile, why, sizeof why)) != FLASHCL_SUCCESS) {
        st = fcl_fail(NULL, st, "flashcl_context_create: %s", why);
        goto fail;
    }

    atomic_init(&ctx->validate, validate);
    ctx->validate_max_rows = settings->validate_max_rows > 0 ? settings->validate_max_rows : 4096;
    const char *extra = settings->extra_build_options;
    if (!extra || !*extra)
        extra = getenv("FLASHCL_BUILD_OPTIONS");
    if (extra && *extra && !(ctx->extra_build_options = fcl_strdup(extra))) {
        st = fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_context_create: copying the extra build options");
        goto fail;
    }
    if (settings->tuning_db != 0)
        flashcl_tuning_db_load(settings->tuning_db_path, 1, &ctx->tuning_db); /* NULL on OOM: heuristic */
    snprintf(ctx->device_identity, sizeof ctx->device_identity, "%s|%s|%s|%s|%s", ctx->profile.platform_name,
             ctx->profile.vendor_name, ctx->profile.name, ctx->profile.device_version,
             ctx->profile.driver_version);

    cl_int err;
    if ((err = clRetainContext(context)) != CL_SUCCESS) {
        st = fcl_fail_cl(NULL, err, "flashcl_context_create: clRetainContext");
        goto fail;
    }
    ctx->cl_ctx = context;
    if ((err = clRetainDevice(device)) != CL_SUCCESS) {
        st = fcl_fail_cl(NULL, err, "flashcl_context_create: clRetainDevice");
        goto fail;
    }
    ctx->device = device;
    if ((err = clRetainCommandQueue(queue)) != CL_SUCCESS) {
        st = fcl_fail_cl(NULL, err, "flashcl_context_create: clRetainCommandQueue");
        goto fail;
    }
    ctx->queue = queue;
    *out = ctx;
    return FLASHCL_SUCCESS;

fail:
    context_free(ctx);
    return st;
}

flashcl_status flashcl_context_create_default_abi(const flashcl_abi *abi, const char *selector,
                                                  const flashcl_settings *settings, flashcl_context **out)
{
    validate_or_return(NULL, out, FLASHCL_INVALID_ARGUMENT, "flashcl_context_create_default: out is NULL");
    *out = NULL;
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_context_create_default");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    if (!selector || !*selector)
        selector = getenv("FLASHCL_DEVICE");
    cl_device_id dev;
    flashcl_status st = fcl_find_device(selector, &dev);
    if (st != FLASHCL_SUCCESS)
        return st;
    cl_int err;
    cl_context clctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!clctx)
        return fcl_fail_cl(NULL, err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueue(clctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q) {
        clReleaseContext(clctx);
        return fcl_fail_cl(NULL, err, "clCreateCommandQueue");
    }
    st = flashcl_context_create(clctx, dev, q, settings, out);
    /* The context retained what it keeps; drop the creation references. */
    clReleaseCommandQueue(q);
    clReleaseContext(clctx);
    return st;
}

void flashcl_context_destroy(flashcl_context **pctx)
{
    if (!pctx || !*pctx)
        return;
    context_free(*pctx);
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

flashcl_status flashcl_context_override_config(flashcl_context *ctx, const flashcl_config *config)
{
    if (!ctx)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_context_override_config: ctx is NULL");
    pthread_mutex_lock(&ctx->override_lock);
    ctx->has_override = config != NULL;
    if (config)
        ctx->override = *config;
    pthread_mutex_unlock(&ctx->override_lock);
    return FLASHCL_SUCCESS;
}

void fcl_context_get_override(flashcl_context *ctx, int *has, flashcl_config *cfg)
{
    pthread_mutex_lock(&ctx->override_lock);
    *has = ctx->has_override;
    if (ctx->has_override)
        *cfg = ctx->override;
    pthread_mutex_unlock(&ctx->override_lock);
}

/* Relaxed: the flag publishes nothing else; an enqueue sees the value before or after a change. */
void flashcl_context_set_validation(flashcl_context *ctx, int enabled)
{
    if (ctx)
        atomic_store_explicit(&ctx->validate, enabled != 0, memory_order_relaxed);
}

int fcl_context_validating(const flashcl_context *ctx)
{
    return atomic_load_explicit(&ctx->validate, memory_order_relaxed);
}

int flashcl_context_validation(const flashcl_context *ctx)
{
    return ctx ? fcl_context_validating(ctx) : 0;
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

flashcl_status flashcl_context_policy(const flashcl_context *ctx, flashcl_policy *policy)
{
    if (!ctx || !policy)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_context_policy: %s is NULL", !ctx ? "ctx" : "policy");
    *policy = (flashcl_policy){.path = (int)ctx->path, .local_mem_limit = ctx->local_mem_limit,
                               .tuning_db = ctx->tuning_db};
    return FLASHCL_SUCCESS;
}
