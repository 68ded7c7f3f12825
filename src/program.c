/*
 * program.c: builds kernels from the embedded cl/ sources with -D specialisation, and caches the result
 * twice: in memory per context (a second plan never recompiles) and on disk as a binary (a second
 * process never recompiles; the file format is diskcache.c's). Compiles run outside the context lock.
 */
#include "diskcache.h"
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One program of the context's in-memory cache, or one being compiled. A thread that needs a program
 * nobody has yet inserts the entry as BUILDING and compiles without the context lock; a thread that
 * needs the same key meanwhile waits on `done` instead of compiling it a second time (an emulated
 * matrix-unit build takes half a minute on PoCL, and programs_built stays what one thread would have
 * counted), while threads that need other keys, or cached programs, go on. A failed build is taken out
 * of the cache (the next caller tries again: a failure may be transient) and handed to the threads that
 * waited for it, with the builder's status and message, so each of them reports the build log too.
 */
enum entry_state { ENTRY_BUILDING, ENTRY_READY, ENTRY_FAILED };

struct program_entry {
    char *key; /* source name + build options */
    cl_program program; /* ENTRY_READY */
    enum entry_state state;
    int waiters; /* threads in pthread_cond_wait on `done`; the last one frees a failed entry */
    pthread_cond_t done;
    flashcl_status status; /* ENTRY_FAILED: what the builder got */
    cl_int cl_error;
    char *message;
    struct program_entry *next;
};

const char *flashcl_source_text(const char *name)
{
    for (size_t i = 0; i < flashcl_embedded_source_count; ++i)
        if (strcmp(flashcl_embedded_sources[i].name, name) == 0)
            return flashcl_embedded_sources[i].text;
    return NULL;
}

char *fcl_resolve_cache_dir(const char *setting)
{
    char buf[4096];
    const char *env;
    if (setting && *setting)
        return fcl_strdup(setting);
    if ((env = getenv("FLASHCL_CACHE_DIR")) && *env)
        return fcl_strdup(env);
    if ((env = getenv("XDG_CACHE_HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/flashcl", env);
        return fcl_strdup(buf);
    }
    if ((env = getenv("HOME")) && *env) {
        snprintf(buf, sizeof buf, "%s/.cache/flashcl", env);
        return fcl_strdup(buf);
    }
    return NULL;
}

/* Diagnostics on request ($FLASHCL_BUILD_LOG): what the compiler said about a build that worked. */
static void print_build_log(flashcl_context *ctx, cl_program prog, const char *name, const char *options)
{
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS)
        return;
    char *log = malloc(len + 1);
    if (log && clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len, log, NULL) == CL_SUCCESS) {
        log[len] = '\0';
        fprintf(stderr, "flashcl: build log of %s (%s):\n%s\n", name, options, log);
    }
    free(log);
}

/* The message and code a failure just recorded, for the threads that waited for the same build: the
 * last error is per thread (error.c), so this reads the builder's own. */
static char *copy_last_error(flashcl_context *ctx, cl_int *cl_error)
{
    *cl_error = flashcl_context_last_cl_error(ctx);
    return fcl_strdup(flashcl_context_last_error(ctx));
}

static flashcl_status build_failed(flashcl_context *ctx, cl_program prog, cl_int err, const char *name,
                                   const char *options)
{
    char log[FLASHCL_ERRMSG_MAX - 512];
    size_t len = 0;
    log[0] = '\0';
    if (prog && clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) == CL_SUCCESS) {
        char *full = malloc(len + 1);
        if (full && clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, len, full, NULL) == CL_SUCCESS) {
            full[len] = '\0';
            fcl_strlcpy(log, full, sizeof log);
        }
        free(full);
    }
    flashcl_status st = err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS
                            ? FLASHCL_BUILD_FAILED
                            : fcl_status_from_cl(err);
    const char *last = strrchr(name, ' '); /* the kernel's own file, the last of its program's parts */
    return fcl_fail_code(ctx, st, err, "building %s (from %s) with options '%s' failed: %s (%d)\nbuild log:\n%s",
                         last ? last + 1 : name, name, options, fcl_cl_error_name(err), (int)err, log);
}

static cl_program build_from_binary(flashcl_context *ctx, const unsigned char *bin, size_t len,
                                    const char *options)
{
    cl_int err, bstatus;
    cl_program prog = clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &len, &bin, &bstatus, &err);
    if (!prog)
        return NULL;
    if (err != CL_SUCCESS || bstatus != CL_SUCCESS ||
        clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL) != CL_SUCCESS) {
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

static unsigned char *program_binary(flashcl_context *ctx, cl_program prog, size_t *len)
{
    size_t size = 0;
    cl_uint ndev = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL) != CL_SUCCESS || ndev != 1 ||
        clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0)
        return NULL;
    unsigned char *bin = malloc(size);
    if (!bin || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        free(bin);
        return NULL;
    }
    (void)ctx;
    *len = size;
    return bin;
}

size_t fcl_source_texts(const char *sources, const char *texts[FCL_MAX_PARTS], uint64_t *hash)
{
    size_t n = 0;
    *hash = 1;
    for (const char *p = sources; *p;) {
        const size_t len = strcspn(p, " ");
        char name[64];
        if (len == 0 || len >= sizeof name || n == FCL_MAX_PARTS)
            return 0;
        memcpy(name, p, len);
        name[len] = '\0';
        if (!(texts[n] = flashcl_source_text(name)))
            return 0;
        *hash = fcl_hash64(texts[n], strlen(texts[n]), *hash);
        ++n;
        p += len;
        p += strspn(p, " ");
    }
    return n;
}

/* Compiles (or loads from disk) without touching the in-memory cache and without the context lock:
 * what it did is counted in *counts, which the caller adds to the context's stats under the lock. */
static flashcl_status obtain_program(flashcl_context *ctx, const char *source_name, const char *options,
                                     cl_program *out, flashcl_stats *counts)
{
    const char *texts[FCL_MAX_PARTS];
    uint64_t src_hash;
    const size_t n_parts = fcl_source_texts(source_name, texts, &src_hash);
    if (!n_parts)
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED, "no embedded kernel sources named %s", source_name);

    char path[4300] = "";
    char *key = NULL;
    if (ctx->cache_dir) {
        size_t key_cap = strlen(ctx->device_identity) + strlen(source_name) + strlen(options) + 64;
        key = malloc(key_cap);
        if (!key)
            return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "out of host memory for a cache key");
        snprintf(key, key_cap, "%s\n%s %016llx\n%s", ctx->device_identity, source_name,
                 (unsigned long long)src_hash, options);
        fcl_cache_entry_path(ctx->cache_dir, key, path, sizeof path);
        size_t len = 0;
        int rejected = 0;
        unsigned char *bin = fcl_cache_entry_read(path, key, &len, &rejected);
        if (bin) {
            cl_program prog = build_from_binary(ctx, bin, len, options);
            free(bin);
            if (prog) {
                counts->programs_from_disk++;
                free(key);
                *out = prog;
                return FLASHCL_SUCCESS;
            }
            rejected = 1;
        }
        if (rejected)
            counts->disk_cache_rejected++;
    }

    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx->cl_ctx, (cl_uint)n_parts, texts, NULL, &err);
    if (!prog) {
        free(key);
        return fcl_fail_cl(ctx, err, "clCreateProgramWithSource");
    }
    err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        flashcl_status st = build_failed(ctx, prog, err, source_name, options);
        clReleaseProgram(prog);
        free(key);
        return st;
    }
    counts->programs_built++;
    if (getenv("FLASHCL_BUILD_LOG"))
        print_build_log(ctx, prog, source_name, options);
    if (key) {
        size_t len = 0;
        unsigned char *bin = program_binary(ctx, prog, &len);
        if (bin && fcl_cache_entry_write(path, key, bin, len) == 0) {
            counts->disk_cache_writes++;
        } else {
            /* The cache is an optimisation: flashcl works on without it, and says so once. */
            static atomic_flag reported = ATOMIC_FLAG_INIT;
            const int saved = errno;
            counts->disk_cache_write_failures++;
            if (!atomic_flag_test_and_set(&reported))
                fprintf(stderr, "flashcl: cannot write the program cache in %s (%s); compiling without it\n",
                        ctx->cache_dir, bin ? strerror(saved) : "the driver gave no binary");
        }
        free(bin);
        free(key);
    }
    *out = prog;
    return FLASHCL_SUCCESS;
}

static void add_counts(flashcl_stats *to, const flashcl_stats *c)
{
    to->programs_built += c->programs_built;
    to->programs_from_disk += c->programs_from_disk;
    to->program_cache_hits += c->program_cache_hits;
    to->disk_cache_writes += c->disk_cache_writes;
    to->disk_cache_rejected += c->disk_cache_rejected;
    to->disk_cache_write_failures += c->disk_cache_write_failures;
}

static void free_entry(program_entry *e)
{
    if (e->program)
        clReleaseProgram(e->program);
    pthread_cond_destroy(&e->done);
    free(e->message);
    free(e->key);
    free(e);
}

static void unlink_entry(flashcl_context *ctx, program_entry *e)
{
    for (program_entry **p = &ctx->programs; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            return;
        }
}

/* A waiter's copy of the build failure it waited for. Called with ctx->lock held, and after it the
 * entry may be gone: the status, code and message are copied first. */
static flashcl_status take_failure(program_entry *e, cl_int *cl_error, char **message)
{
    const flashcl_status st = e->status;
    *cl_error = e->cl_error;
    *message = fcl_strdup(e->message ? e->message : "the build failed in another thread");
    if (--e->waiters == 0)
        free_entry(e); /* the builder unlinked it and left it to us */
    return st;
}

flashcl_status fcl_get_program(flashcl_context *ctx, const char *source_name, const char *options,
                               cl_program *out)
{
    /* An NVIDIA device's compute capability (FCL_SM, x 10) for the PTX only some architectures have. */
    char arch[24] = "";
    if (ctx->profile.vendor == FLASHCL_VENDOR_NVIDIA && ctx->profile.nv_cc_major > 0)
        snprintf(arch, sizeof arch, " -DFCL_SM=%d", ctx->profile.nv_cc_major * 10 + ctx->profile.nv_cc_minor);
    char full_opts[1024];
    const int len = snprintf(full_opts, sizeof full_opts, "%s%s%s%s", options, arch, ctx->extra_build_options ? " " : "",
                             ctx->extra_build_options ? ctx->extra_build_options : "");
    if (len < 0 || (size_t)len >= sizeof full_opts) /* a cut option string would also be a wrong cache key */
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                        "the build options of %s are %d bytes with the extra build options, more than %zu",
                        source_name, len, sizeof full_opts - 1);
    size_t key_len = strlen(source_name) + strlen(full_opts) + 2;
    char *key = malloc(key_len);
    if (!key)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(key, key_len, "%s|%s", source_name, full_opts);

    pthread_mutex_lock(&ctx->lock);
    program_entry *e = ctx->programs;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    if (e) {
        free(key);
        if (e->state == ENTRY_BUILDING) {
            e->waiters++;
            while (e->state == ENTRY_BUILDING)
                pthread_cond_wait(&e->done, &ctx->lock);
            if (e->state == ENTRY_READY)
                e->waiters--;
        }
        if (e->state == ENTRY_READY) {
            ctx->stats.program_cache_hits++;
            *out = e->program;
            pthread_mutex_unlock(&ctx->lock);
            return FLASHCL_SUCCESS;
        }
        cl_int cl_error;
        char *message;
        const flashcl_status st = take_failure(e, &cl_error, &message);
        pthread_mutex_unlock(&ctx->lock);
        fcl_fail_code(ctx, st, cl_error, "%s",
                      message ? message : "a build failed (and out of host memory for its message)");
        free(message);
        return st;
    }

    e = calloc(1, sizeof *e);
    if (!e || pthread_cond_init(&e->done, NULL) != 0) {
        pthread_mutex_unlock(&ctx->lock);
        free(e);
        free(key);
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "out of host memory for a program cache entry");
    }
    e->key = key;
    e->state = ENTRY_BUILDING;
    e->next = ctx->programs;
    ctx->programs = e;
    pthread_mutex_unlock(&ctx->lock);

    flashcl_stats counts = {0};
    cl_program prog = NULL;
    const flashcl_status st = obtain_program(ctx, source_name, full_opts, &prog, &counts);
    cl_int cl_error = CL_SUCCESS;
    char *message = st == FLASHCL_SUCCESS ? NULL : copy_last_error(ctx, &cl_error);

    pthread_mutex_lock(&ctx->lock);
    add_counts(&ctx->stats, &counts);
    if (st == FLASHCL_SUCCESS) {
        e->program = prog;
        e->state = ENTRY_READY;
        *out = prog;
    } else {
        e->state = ENTRY_FAILED;
        e->status = st;
        e->cl_error = cl_error;
        e->message = message;
        unlink_entry(ctx, e);
    }
    pthread_cond_broadcast(&e->done);
    if (st != FLASHCL_SUCCESS && e->waiters == 0)
        free_entry(e);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void fcl_release_programs(flashcl_context *ctx)
{
    /* No build is in flight: the context is destroyed by its last user. */
    program_entry *e = ctx->programs;
    while (e) {
        program_entry *next = e->next;
        free_entry(e);
        e = next;
    }
    ctx->programs = NULL;
}
