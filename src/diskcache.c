/* SPDX-License-Identifier: MIT */
/*
 * diskcache.c: the files flashcl writes: the program cache's entry format (header, key, binary, checksum
 * over both; verified on every read) and the atomic write that the cache and the tuning database share.
 */
#include "diskcache.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The few calls that differ on Windows (mingw-w64): one-argument mkdir, binary-mode opens, _commit for
 * fsync, and a rename that replaces an existing file (Windows' rename refuses to). */
#ifdef _WIN32
#include <direct.h>
#include <io.h>
#include <windows.h>
#define fcl_mkdir(path) _mkdir(path)
#define fsync(fd) _commit(fd)
static int fcl_replace(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    errno = EACCES;
    return -1;
}
#else
#define fcl_mkdir(path) mkdir((path), 0755)
#define fcl_replace(from, to) rename((from), (to))
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_BINARY
#define O_BINARY 0
#endif

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

/* (after a failed mkdir: whether the path is a directory anyway. Windows may say EACCES, not EEXIST, for
 * one that exists) */
static int fcl_is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A path part that exists but is no directory: said as such (mkdir's EEXIST read "File exists") */
static int not_dir(void)
{
    if (errno == EEXIST)
        errno = ENOTDIR;
    return -1;
}

static int mkdir_p(const char *path)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, n + 1);
    char *p = tmp + 1;
#ifdef _WIN32
    /* a drive ("C:") or a share ("//server/share") is not a directory to make; both separators count */
    if (n >= 2 && tmp[1] == ':')
        p = tmp + 2 + (tmp[2] == '/' || tmp[2] == '\\');
    else if ((tmp[0] == '/' || tmp[0] == '\\') && (tmp[1] == '/' || tmp[1] == '\\'))
        for (int seps = 0; *p && seps < 2; ++p)
            seps += *p == '/' || *p == '\\';
#define FCL_IS_SEP(c) ((c) == '/' || (c) == '\\')
#else
#define FCL_IS_SEP(c) ((c) == '/')
#endif
    for (; *p; ++p)
        if (FCL_IS_SEP(*p)) {
            const char sep = *p;
            *p = '\0';
            if (fcl_mkdir(tmp) != 0 && !fcl_is_dir(tmp))
                return not_dir();
            *p = sep;
        }
    return (fcl_mkdir(tmp) == 0 || fcl_is_dir(tmp)) ? 0 : not_dir();
}

/* The temporary name is the target's, the process id and a serial number taken atomically: no two
 * threads of one process and no two live processes ever pick the same name, and O_EXCL makes sure an
 * existing file (a crashed process's leftover, another host on a shared file system) is never written
 * into: it is skipped for the next number. Not mkstemp: it creates the file 0600 and the rename would
 * hand that mode to the cache entry or the tuning database; mode 0666 lets the umask decide, as the
 * plain fopen of the file itself would. */
static atomic_ulong temp_serial;

/* The file a path names through its symbolic links (40 at most, relative ones from the link's directory), into
 * out: the atomic write replaces that file, never the link (a tuning database kept elsewhere and linked stays
 * where it is). 0, or -1 with errno set (ELOOP, ENAMETOOLONG). */
static int link_target(const char *path, char *out, size_t n)
{
    if (strlen(path) >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(out, path);
#ifndef _WIN32
    for (int hop = 0; hop < 40; ++hop) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return 0; /* (not there yet, or a file: written where it is named) */
        char to[4096];
        const ssize_t len = readlink(out, to, sizeof to - 1);
        if (len < 0)
            return -1;
        to[len] = '\0';
        const char *slash = strrchr(out, '/');
        const size_t keep = to[0] != '/' && slash ? (size_t)(slash - out) + 1 : 0; /* (a relative link's dir) */
        if (keep + (size_t)len >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memmove(out + keep, to, (size_t)len + 1);
    }
    errno = ELOOP;
    return -1;
#else
    return 0;
#endif
}

int fcl_write_atomically(const char *named, int (*fill)(FILE *f, void *arg), void *arg)
{
    char dir[4096], tmp[4200], path[4096];
    if (link_target(named, path, sizeof path) != 0)
        return -1;
    const size_t n = strlen(path);
    if (n == 0 || n >= sizeof dir) {
        errno = n ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir_p(dir) != 0)
            return -1;
    }

    int fd = -1;
    for (int attempt = 0; attempt < 100; ++attempt) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), atomic_fetch_add(&temp_serial, 1));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_BINARY, 0666);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0)
        return -1;
#ifndef _WIN32
    {
        struct stat st; /* (the file replaced keeps its mode: a private database stays private) */
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            (void)fchmod(fd, st.st_mode & 07777);
    }
#endif

    FILE *f = fdopen(fd, "wb");
    if (!f)
        goto fail;
    errno = 0;
    /* fsync before the rename: after a crash the name holds the old file or the whole new one. */
    if (fill(f, arg) != 0 || fflush(f) != 0 || fsync(fd) != 0)
        goto fail;
    fd = -1; /* fclose closes it, failing or not */
    if (fclose(f) != 0) {
        f = NULL;
        goto fail;
    }
    f = NULL;
    if (fcl_replace(tmp, path) != 0)
        goto fail;
    return 0;

fail:;
    const int saved = errno ? errno : EIO; /* fill may fail without errno (a short write it noticed) */
    if (f)
        fclose(f);
    else if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
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

void fcl_cache_entry_path(const char *dir, const char *key, char *path, size_t n)
{
    snprintf(path, n, "%s/%016llx.bin", dir, (unsigned long long)fcl_hash64(key, strlen(key), 0));
}

unsigned char *fcl_cache_entry_read(const char *path, const char *key, size_t *bin_len, int *rejected)
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
    if (memcmp(stored_key, key, key_len) != 0 || entry_checksum(key, key_len, bin, h.binary_len) != h.checksum)
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

typedef struct cache_entry {
    const char *key;
    const unsigned char *bin;
    size_t bin_len;
} cache_entry;

static int write_entry(FILE *f, void *arg)
{
    const cache_entry *e = arg;
    cache_header h;
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.key_len = (uint32_t)strlen(e->key);
    h.reserved = 0;
    h.binary_len = e->bin_len;
    h.checksum = entry_checksum(e->key, h.key_len, e->bin, e->bin_len);
    const int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(e->key, 1, h.key_len, f) == h.key_len &&
                   fwrite(e->bin, 1, e->bin_len, f) == e->bin_len;
    return ok ? 0 : -1;
}

int fcl_cache_entry_write(const char *path, const char *key, const unsigned char *bin, size_t bin_len)
{
    cache_entry e = {key, bin, bin_len};
    return fcl_write_atomically(path, write_entry, &e);
}
