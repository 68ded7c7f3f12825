/* SPDX-License-Identifier: MIT */
/*
 * program.c: builds kernels from the embedded cl/ sources with -D specialisation, and caches the result
 * twice: in memory per context (a second plan never recompiles) and on disk as a binary (a second
 * process never recompiles; the file format is diskcache.c's). Compiles run outside the context lock.
 */
#include "diskcache.h"
#include "internal.h"
#include "ptx.h"

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

/* A program from a binary; NULL when it does not build, with the start of the build log in `log` where
 * one is given (log_len bytes). */
static cl_program build_from_binary_log(flashcl_context *ctx, const unsigned char *bin, size_t len,
                                        const char *options, char *log, size_t log_len)
{
    cl_int err, bstatus;
    if (log && log_len)
        log[0] = '\0';
    cl_program prog = clCreateProgramWithBinary(ctx->cl_ctx, 1, &ctx->device, &len, &bin, &bstatus, &err);
    if (!prog)
        return NULL;
    if (err != CL_SUCCESS || bstatus != CL_SUCCESS ||
        clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL) != CL_SUCCESS) {
        if (log && log_len > 1)
            clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, log_len - 1, log, NULL);
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

static cl_program build_from_binary(flashcl_context *ctx, const unsigned char *bin, size_t len,
                                    const char *options)
{
    return build_from_binary_log(ctx, bin, len, options, NULL, 0);
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

/* The finishing step for a program built from source (fcl_ptx_finish_sm90a): its PTX, finished, built
 * again as a binary. Replaces *prog; the finished text in *bin (the disk cache's entry). */
static flashcl_status finish_sm90a(flashcl_context *ctx, cl_program *prog, const char *source_name,
                                   const char *options, unsigned char **bin, size_t *bin_len)
{
    size_t len = 0;
    unsigned char *ptx = program_binary(ctx, *prog, &len);
    if (!ptx)
        return fcl_fail(ctx, FLASHCL_BUILD_FAILED, "finishing %s for sm_90a: the driver gave no program binary",
                        source_name);
    int marks = 0;
    const char *why = NULL;
    unsigned char *done = fcl_ptx_finish_sm90a(ptx, len, bin_len, &marks, &why);
    free(ptx);
    if (!done)
        return fcl_fail(ctx, FLASHCL_BUILD_FAILED, "finishing %s for sm_90a: %s", source_name, why);
    char log[1024];
    cl_program finished = build_from_binary_log(ctx, done, *bin_len, options, log, sizeof log);
    if (!finished) {
        free(done);
        log[sizeof log - 1] = '\0';
        return fcl_fail(ctx, FLASHCL_BUILD_FAILED,
                        "finishing %s for sm_90a: the finished PTX (%d marks removed) did not build:\n%s", source_name,
                        marks, log);
    }
    clReleaseProgram(*prog);
    *prog = finished;
    *bin = done;
    if (getenv("FLASHCL_BUILD_LOG"))
        print_build_log(ctx, finished, source_name, "(finished for sm_90a)");
    return FLASHCL_SUCCESS;
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
        /* (a finished sm_90a program's key names the finishing step's version: a change to it is a new entry) */
        snprintf(key, key_cap, "%s\n%s %016llx%s\n%s", ctx->device_identity, source_name, (unsigned long long)src_hash,
                 fcl_options_sm90a(options) ? " sm90a-finish-2" : "", options);
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
    unsigned char *finished = NULL; /* the sm_90a program's finished PTX: what the disk cache keeps */
    size_t finished_len = 0;
    if (fcl_options_sm90a(options)) {
        const flashcl_status fst = finish_sm90a(ctx, &prog, source_name, options, &finished, &finished_len);
        if (fst != FLASHCL_SUCCESS) {
            clReleaseProgram(prog);
            free(key);
            return fst;
        }
    }
    if (key) {
        size_t len = finished_len;
        unsigned char *bin = finished ? finished : program_binary(ctx, prog, &len);
        finished = NULL;
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
    free(finished);
    *out = prog;
    return FLASHCL_SUCCESS;
}

static void add_counts(flashcl_stats *to, const flashcl_stats *c)
{
    to->programs_from_blob += c->programs_from_blob;
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
    /* An NVIDIA device's compute capability (FCL_SM, x 10) for the PTX only some architectures have, and
     * FCL_SHFL where the matrix-unit test compile proved inline PTX (shfl.sync among it) on the device:
     * the portable kernel's row reductions take warp shuffles there (cl/flash_fwd.cl ROW_SHFL). FCL_CPU on a
     * CPU device. */
    char arch[40] = "";
    if (ctx->profile.vendor == FLASHCL_VENDOR_NVIDIA && ctx->profile.nv_cc_major > 0)
        snprintf(arch, sizeof arch, " -DFCL_SM=%d%s", ctx->profile.nv_cc_major * 10 + ctx->profile.nv_cc_minor,
                 ctx->profile.matrix_units >= 1 ? " -DFCL_SHFL=1" : "");
    else if (ctx->profile.is_cpu) /* fp16 tensors through integer conversions (cl/common.cl FCL_HALF_BITS) */
        snprintf(arch, sizeof arch, " -DFCL_CPU=1");
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

/*
 * Program blobs. Layout (host byte order): the magic line, the device identity (u32 length, bytes), the
 * entry count (u32), then per entry its in-memory key ("sources|options": u32 length, bytes), the hash of
 * its kernel sources (u64), its binary (u64 length, bytes).
 */
static const char blob_magic[] = "FLASHCL-PROGRAMS 1\n";

typedef struct blob_writer {
    unsigned char *at, *end; /* at == NULL: only counting */
    size_t size;
} blob_writer;

static void put(blob_writer *w, const void *data, size_t n)
{
    if (w->at && (size_t)(w->end - w->at) >= n) {
        memcpy(w->at, data, n);
        w->at += n;
    }
    w->size += n;
}

static void put_u32(blob_writer *w, uint32_t v)
{
    put(w, &v, sizeof v);
}

static void put_u64(blob_writer *w, uint64_t v)
{
    put(w, &v, sizeof v);
}

/* The kernel sources' name of a key ("sources|options") and their hash now; 0 when unknown. */
static uint64_t key_source_hash(const char *key)
{
    const char *bar = strchr(key, '|');
    char sources[256];
    const char *texts[FCL_MAX_PARTS];
    uint64_t hash = 0;
    if (!bar || (size_t)(bar - key) >= sizeof sources)
        return 0;
    memcpy(sources, key, (size_t)(bar - key));
    sources[bar - key] = '\0';
    return fcl_source_texts(sources, texts, &hash) ? hash : 0;
}

flashcl_status flashcl_context_save_programs(flashcl_context *ctx, void *buffer, size_t *size)
{
    if (!ctx || !size)
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT, "flashcl_context_save_programs: %s is NULL",
                        !ctx ? "ctx" : "size");
    pthread_mutex_lock(&ctx->lock);
    size_t n = 0;
    for (program_entry *e = ctx->programs; e; e = e->next)
        n += e->state == ENTRY_READY;
    unsigned char **bins = calloc(n ? n : 1, sizeof *bins);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!bins || !lens || !keys) {
        pthread_mutex_unlock(&ctx->lock);
        free(bins);
        free(lens);
        free(keys);
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_context_save_programs: out of host memory");
    }
    size_t k = 0;
    for (program_entry *e = ctx->programs; e && k < n; e = e->next)
        if (e->state == ENTRY_READY && (bins[k] = program_binary(ctx, e->program, &lens[k])))
            keys[k++] = e->key;
    blob_writer w = {buffer, buffer ? (unsigned char *)buffer + *size : NULL, 0};
    put(&w, blob_magic, sizeof blob_magic - 1);
    put_u32(&w, (uint32_t)strlen(ctx->device_identity));
    put(&w, ctx->device_identity, strlen(ctx->device_identity));
    put_u32(&w, (uint32_t)k);
    for (size_t i = 0; i < k; ++i) {
        put_u32(&w, (uint32_t)strlen(keys[i]));
        put(&w, keys[i], strlen(keys[i]));
        put_u64(&w, key_source_hash(keys[i]));
        put_u64(&w, (uint64_t)lens[i]);
        put(&w, bins[i], lens[i]);
    }
    pthread_mutex_unlock(&ctx->lock);
    for (size_t i = 0; i < k; ++i)
        free(bins[i]);
    free(bins);
    free(lens);
    free(keys);
    const size_t have = *size;
    *size = w.size;
    if (buffer && have < w.size)
        return fcl_fail(ctx, FLASHCL_BUFFER_TOO_SMALL,
                        "flashcl_context_save_programs: the blob is %zu bytes, *size was %zu", w.size, have);
    return FLASHCL_SUCCESS;
}

typedef struct blob_reader {
    const unsigned char *at, *end, *start;
} blob_reader;

static int take(blob_reader *r, void *out, size_t n)
{
    if ((size_t)(r->end - r->at) < n)
        return 0;
    if (out)
        memcpy(out, r->at, n);
    r->at += n;
    return 1;
}

typedef struct blob_entry {
    const char *key;
    uint32_t key_len;
    uint64_t hash, bin_len;
    const unsigned char *bin;
} blob_entry;

flashcl_status flashcl_context_load_programs(flashcl_context *ctx, const void *blob, size_t size, size_t *loaded)
{
    if (loaded)
        *loaded = 0;
    if (!ctx || !blob)
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT, "flashcl_context_load_programs: %s is NULL",
                        !ctx ? "ctx" : "blob");
    blob_reader r = {blob, (const unsigned char *)blob + size, blob};
    char magic[sizeof blob_magic - 1];
    if (!take(&r, magic, sizeof magic) || memcmp(magic, blob_magic, sizeof magic) != 0)
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                        "flashcl_context_load_programs: not a flashcl program blob (its first bytes are not "
                        "\"FLASHCL-PROGRAMS 1\")");
    uint32_t id_len = 0, count = 0;
    const unsigned char *id = NULL;
    if (take(&r, &id_len, sizeof id_len)) {
        id = r.at;
        if (!take(&r, NULL, id_len) || !take(&r, &count, sizeof count))
            id = NULL;
    }
    if (!id)
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT, "flashcl_context_load_programs: the blob is cut short at "
                        "byte %zu of %zu (its header)", (size_t)(r.end - r.start), size);
    if (id_len != strlen(ctx->device_identity) || memcmp(id, ctx->device_identity, id_len) != 0)
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED,
                        "flashcl_context_load_programs: the blob's programs are for \"%.*s\", this context's device is "
                        "\"%s\"; nothing loaded", (int)(id_len > 300 ? 300 : id_len), (const char *)id,
                        ctx->device_identity);
    if (count > size / (sizeof(uint32_t) + 2 * sizeof(uint64_t)))
        return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                        "flashcl_context_load_programs: the blob claims %u programs in %zu bytes", count, size);
    blob_entry *ents = calloc(count ? count : 1, sizeof *ents);
    if (!ents)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_context_load_programs: out of host memory");
    for (uint32_t i = 0; i < count; ++i) { /* the whole blob first: a cut one loads nothing */
        blob_entry *b = &ents[i];
        const size_t at = (size_t)(r.at - r.start);
        int ok = take(&r, &b->key_len, sizeof b->key_len);
        b->key = (const char *)r.at;
        ok = ok && take(&r, NULL, b->key_len) && take(&r, &b->hash, sizeof b->hash) &&
             take(&r, &b->bin_len, sizeof b->bin_len);
        b->bin = r.at;
        ok = ok && b->bin_len <= (uint64_t)(r.end - r.at) && take(&r, NULL, (size_t)b->bin_len);
        if (!ok || b->key_len == 0 || b->key_len > 4096 || b->bin_len == 0) {
            free(ents);
            return fcl_fail(ctx, FLASHCL_INVALID_ARGUMENT,
                            "flashcl_context_load_programs: the blob is cut short or damaged in program %u of %u "
                            "(at byte %zu of %zu); nothing loaded", i + 1, count, at, size);
        }
    }
    size_t n_loaded = 0;
    for (uint32_t i = 0; i < count; ++i) {
        char *key = malloc((size_t)ents[i].key_len + 1);
        if (!key)
            break;
        memcpy(key, ents[i].key, ents[i].key_len);
        key[ents[i].key_len] = '\0';
        const char *bar = strchr(key, '|');
        if (!bar || key_source_hash(key) != ents[i].hash || ents[i].hash == 0) { /* other kernel sources */
            free(key);
            continue;
        }
        pthread_mutex_lock(&ctx->lock);
        program_entry *e = ctx->programs;
        while (e && strcmp(e->key, key) != 0)
            e = e->next;
        pthread_mutex_unlock(&ctx->lock);
        if (e) { /* already there (or being built) */
            free(key);
            continue;
        }
        cl_program prog = build_from_binary(ctx, ents[i].bin, (size_t)ents[i].bin_len, bar + 1);
        program_entry *ne = prog ? calloc(1, sizeof *ne) : NULL;
        if (!ne || pthread_cond_init(&ne->done, NULL) != 0) {
            if (prog)
                clReleaseProgram(prog);
            free(ne);
            free(key);
            continue;
        }
        ne->key = key;
        ne->program = prog;
        ne->state = ENTRY_READY;
        pthread_mutex_lock(&ctx->lock);
        program_entry *again = ctx->programs; /* (another thread may have built it meanwhile) */
        while (again && strcmp(again->key, key) != 0)
            again = again->next;
        if (again) {
            pthread_mutex_unlock(&ctx->lock);
            free_entry(ne);
            continue;
        }
        ne->next = ctx->programs;
        ctx->programs = ne;
        ctx->stats.programs_from_blob++;
        pthread_mutex_unlock(&ctx->lock);
        ++n_loaded;
    }
    free(ents);
    if (loaded)
        *loaded = n_loaded;
    return FLASHCL_SUCCESS;
}
