/* SPDX-License-Identifier: MIT */
/*
 * diskcache.h: the files flashcl writes: the program cache's entry format (key, checksum, binary) and
 * the one atomic write (a uniquely named temporary file, then rename) that every file goes through.
 */
#ifndef FLASHCL_DISKCACHE_H
#define FLASHCL_DISKCACHE_H

#include <stddef.h>
#include <stdio.h>

/*
 * Replaces the file at `path` with what `fill` writes to the stream it is given, atomically: readers
 * see the old file or the new one, whole. The parent directories are created. The temporary file is
 * unique to this call (threads of one process and other processes never share one) and removed on
 * failure. `fill` returns 0 when it wrote everything. Returns 0, or -1 with errno saying why.
 */
int fcl_write_atomically(const char *path, int (*fill)(FILE *f, void *arg), void *arg);

/* The entry file for `key` in `dir` (named by the key's hash; the file stores the whole key). */
void fcl_cache_entry_path(const char *dir, const char *key, char *path, size_t n);

/* Reads an entry; returns the binary (malloc'd) when the file is whole and holds exactly `key`.
 * *rejected is 1 when a file exists but is not that (torn, corrupt, another key). */
unsigned char *fcl_cache_entry_read(const char *path, const char *key, size_t *bin_len, int *rejected);

/* Writes an entry through fcl_write_atomically. Returns 0, or -1 with errno set. */
int fcl_cache_entry_write(const char *path, const char *key, const unsigned char *bin, size_t bin_len);

#endif
