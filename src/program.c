/*
 * program.c: builds kernels from the embedded cl/ sources sources with -D specialisation, and caches the
 * result twice: in memory per context (a second plan never recompiles) and on disk as a binary (a
 * second process never recompiles). Disk entries are keyed by platform, device, driver, source hash
 * and build options, verified on load, written atomically, and rebuilt when unusable.
 */
#include "kernels.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "FLCLBIN1"

/* FNV-1a with a seed, then a final avalanche (splitmix64): fast and good enough to name cache files;
 * correctness never rests on it because the full key is stored in the file and compared. */
uint64_t fcl_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < len; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

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

static int mkdir_p(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; ++p)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}

typedef struct cache_header {
    char magic[8];
    uint32_t key_len;
    uint32_t reserved;
    uint64_t binary_len;
    uint64_t checksum; /* of key and binary */
} cache_header;

static uint64_t entry_checksum(const char *key, size_t key_len, const unsigned char *bin, size_t bin_len)
{
    return fcl_hash64(bin, bin_len, fcl_hash64(key, key_len, 0x5eed));
}

/* Reads a cache file; returns the binary (malloc'd) when the file is whole and holds exactly `key`. */
static unsigned char *cache_read(const char *path, const char *key, size_t *bin_len, int *rejected)
{
    *rejected = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cache_header h;
    size_t key_len = strlen(key);
    unsigned char *bin = NULL;
    char *stored_key = NULL;
    *rejected = 1;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CACHE_MAGIC, 8) != 0 || h.key_len != key_len ||
        h.binary_len == 0 || h.binary_len > (1ull << 31))
        goto fail;
    stored_key = malloc(key_len + 1);
    bin = malloc(h.binary_len);
    if (!stored_key || !bin || fread(stored_key, 1, key_len, f) != key_len ||
        fread(bin, 1, h.binary_len, f) != h.binary_len || fgetc(f) != EOF)
        goto fail;
    if (memcmp(stored_key, key, key_len) != 0 ||
        entry_checksum(key, key_len, bin, h.binary_len) != h.checksum)
        goto fail;
    free(stored_key);
    fclose(f);
    *rejected = 0;
    *bin_len = h.binary_len;
    return bin;
fail:
    free(stored_key);
    free(bin);
    fclose(f);
    return NULL;
}

/* Writes to a private temporary file, then renames: readers see the old file or the new one, whole. */
static int cache_write(const char *dir, const char *path, const char *key, const unsigned char *bin,
                       size_t bin_len)
{
    if (mkdir_p(dir) != 0)
        return -1;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%p", path, (long)getpid(), (const void *)&tmp);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    cache_header h;
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.key_len = (uint32_t)strlen(key);
    h.reserved = 0;
    h.binary_len = bin_len;
    h.checksum = entry_checksum(key, h.key_len, bin, bin_len);
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(key, 1, h.key_len, f) == h.key_len &&
             fwrite(bin, 1, bin_len, f) == bin_len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
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

/* Compiles (or loads from disk) without touching the in-memory cache. Caller holds ctx->lock. */
static flashcl_status obtain_program(flashcl_context *ctx, const char *source_name, const char *options,
                                     cl_program *out)
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
        snprintf(path, sizeof path, "%s/%016llx.bin", ctx->cache_dir,
                 (unsigned long long)fcl_hash64(key, strlen(key), 0));
        size_t len = 0;
        int rejected = 0;
        unsigned char *bin = cache_read(path, key, &len, &rejected);
        if (bin) {
            cl_program prog = build_from_binary(ctx, bin, len, options);
            free(bin);
            if (prog) {
                ctx->stats.programs_from_disk++;
                free(key);
                *out = prog;
                return FLASHCL_SUCCESS;
            }
            rejected = 1;
        }
        if (rejected)
            ctx->stats.disk_cache_rejected++;
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
    ctx->stats.programs_built++;
    if (getenv("FLASHCL_BUILD_LOG"))
        print_build_log(ctx, prog, source_name, options);
    if (key) {
        size_t len = 0;
        unsigned char *bin = program_binary(ctx, prog, &len);
        if (bin && cache_write(ctx->cache_dir, path, key, bin, len) == 0) {
            ctx->stats.disk_cache_writes++;
        } else {
            /* The cache is an optimisation: flashcl works on without it, and says so once. */
            static atomic_flag reported = ATOMIC_FLAG_INIT;
            const int saved = errno;
            ctx->stats.disk_cache_write_failures++;
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

flashcl_status fcl_get_program(flashcl_context *ctx, const char *source_name, const char *options,
                               cl_program *out)
{
    char full_opts[1024];
    snprintf(full_opts, sizeof full_opts, "%s%s%s", options, ctx->extra_build_options ? " " : "",
             ctx->extra_build_options ? ctx->extra_build_options : "");
    size_t key_len = strlen(source_name) + strlen(full_opts) + 2;
    char *key = malloc(key_len);
    if (!key)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "out of host memory");
    snprintf(key, key_len, "%s|%s", source_name, full_opts);

    pthread_mutex_lock(&ctx->lock);
    for (program_entry *e = ctx->programs; e; e = e->next)
        if (strcmp(e->key, key) == 0) {
            ctx->stats.program_cache_hits++;
            *out = e->program;
            pthread_mutex_unlock(&ctx->lock);
            free(key);
            return FLASHCL_SUCCESS;
        }
    cl_program prog = NULL;
    flashcl_status st = obtain_program(ctx, source_name, full_opts, &prog);
    if (st == FLASHCL_SUCCESS) {
        program_entry *e = malloc(sizeof *e);
        if (!e) {
            clReleaseProgram(prog);
            st = FLASHCL_OUT_OF_HOST_MEMORY;
        } else {
            e->key = key;
            key = NULL;
            e->program = prog;
            e->next = ctx->programs;
            ctx->programs = e;
            *out = prog;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    free(key);
    return st;
}

void fcl_release_programs(flashcl_context *ctx)
{
    program_entry *e = ctx->programs;
    while (e) {
        program_entry *next = e->next;
        clReleaseProgram(e->program);
        free(e->key);
        free(e);
        e = next;
    }
    ctx->programs = NULL;
}
