/* SPDX-License-Identifier: MIT */
/*
 * tuning.c: the tuning database: parsing the shipped table and the user's file, looking up the most
 * specific entry for a (device, problem class), and storing tuned entries atomically.
 */
#include "diskcache.h"
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEVEL_VENDOR = 0, LEVEL_ARCH = 1, LEVEL_DEVICE = 2 };

typedef struct db_entry {
    char vendor[16], arch[32], device[128]; /* arch/device "" = any */
    int head_dim, dtype, causal, seq, mode; /* -1 = any */
    int block_m, block_n, tpr, rows, dchunk, vchunk;
    int user; /* from the user's file */
    int line;
} db_entry;

struct flashcl_tuning_db {
    db_entry *entries;
    size_t count, cap;
    char *warnings;
    size_t warn_len;
    char user_path[1024];
};

const char *flashcl_vendor_name(flashcl_vendor v)
{
    static const char *names[] = {"other", "nvidia", "amd", "intel", "pocl", "mesa", "apple", "arm", "qualcomm"};
    return (unsigned)v < sizeof names / sizeof *names ? names[v] : "other";
}

static const char *seq_names[] = {"short", "medium", "long"};
static const char *mode_names[] = {"prefill", "decode"};

static int seq_bucket(int32_t seq_kv)
{
    return seq_kv <= 512 ? 0 : seq_kv <= 4096 ? 1 : 2;
}

static int mode_of(const flashcl_problem *p)
{
    return fcl_is_decode(p);
}

static void warn(flashcl_tuning_db *db, const char *fmt, ...) FCL_PRINTF(2, 3);
static void warn(flashcl_tuning_db *db, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    line[n] = '\0';
    if (db->warn_len > 64 * 1024) /* enough to say what is wrong with a file */
        return;
    char *w = realloc(db->warnings, db->warn_len + (size_t)n + 1);
    if (!w)
        return;
    memcpy(w + db->warn_len, line, (size_t)n + 1);
    db->warnings = w;
    db->warn_len += (size_t)n;
}

/* Reads the next token "key=value" (value possibly "quoted"); returns 0 at the end of the fields. */
static int next_field(const char **cur, char *key, size_t kn, char *val, size_t vn, int *bad)
{
    const char *p = *cur;
    while (*p == ' ' || *p == '\t')
        ++p;
    if (!*p || *p == '#' || *p == ':') {
        *cur = p;
        return 0;
    }
    size_t i = 0;
    while (*p && *p != '=' && *p != ' ' && *p != '\t' && i + 1 < kn)
        key[i++] = *p++;
    key[i] = '\0';
    if (*p != '=') {
        *bad = 1;
        return 0;
    }
    ++p;
    i = 0;
    if (*p == '"') {
        ++p;
        while (*p && *p != '"' && i + 1 < vn)
            val[i++] = *p++;
        if (*p != '"') {
            *bad = 1;
            return 0;
        }
        ++p;
    } else {
        while (*p && *p != ' ' && *p != '\t' && *p != '#' && i + 1 < vn)
            val[i++] = *p++;
    }
    val[i] = '\0';
    *cur = p;
    return 1;
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return 0;
    *out = (int)x;
    return 1;
}

static int lookup_name(const char *v, const char **names, int n, int *out)
{
    if (!strcmp(v, "*")) {
        *out = -1;
        return 1;
    }
    for (int i = 0; i < n; ++i)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 1;
        }
    return 0;
}

static int parse_line(const char *line, db_entry *e, const char **why)
{
    memset(e, 0, sizeof *e);
    e->dtype = e->causal = e->seq = e->mode = -1;
    const char *cur = line;
    char key[32], val[160];
    int bad = 0, side = 0;
    static const char *dtypes[] = {"f32", "f16", "bf16"};
    static const char *const fields[] = {"vendor", "arch",    "device", "head_dim", "dtype", "causal", "seq",
                                         "mode",   "block_m", "block_n", "tpr",     "rows",  "dchunk", "vchunk"};
    unsigned seen = 0; /* (the fields given: each at most once) */
    for (;;) {
        if (!next_field(&cur, key, sizeof key, val, sizeof val, &bad)) {
            if (bad) {
                *why = "a field is not key=value";
                return 0;
            }
            if (*cur == ':' && side == 0) {
                side = 1;
                ++cur;
                continue;
            }
            break;
        }
        int ok = 1;
        for (unsigned f = 0; f < sizeof fields / sizeof *fields; ++f)
            if (!strcmp(key, fields[f])) {
                if (seen >> f & 1u) {
                    *why = "a field given twice";
                    return 0;
                }
                seen |= 1u << f;
            }
        if (side == 0) {
            if (!strcmp(key, "vendor")) {
                /* (a vendor flashcl_vendor_name says, or the entry could never match) */
                ok = 0;
                for (int v = FLASHCL_VENDOR_OTHER; v <= FLASHCL_VENDOR_QUALCOMM && !ok; ++v)
                    ok = !strcmp(val, flashcl_vendor_name((flashcl_vendor)v));
                fcl_strlcpy(e->vendor, val, sizeof e->vendor);
            } else if (!strcmp(key, "arch"))
                fcl_strlcpy(e->arch, strcmp(val, "*") ? val : "", sizeof e->arch);
            else if (!strcmp(key, "device"))
                fcl_strlcpy(e->device, strcmp(val, "*") ? val : "", sizeof e->device);
            else if (!strcmp(key, "head_dim"))
                ok = parse_int(val, 8, 256, &e->head_dim) && e->head_dim % 8 == 0;
            else if (!strcmp(key, "dtype"))
                ok = lookup_name(val, dtypes, 3, &e->dtype);
            else if (!strcmp(key, "causal"))
                ok = !strcmp(val, "*") ? (e->causal = -1, 1) : parse_int(val, 0, 1, &e->causal);
            else if (!strcmp(key, "seq"))
                ok = lookup_name(val, seq_names, 3, &e->seq);
            else if (!strcmp(key, "mode"))
                ok = lookup_name(val, mode_names, 2, &e->mode);
            else
                ok = 0;
        } else {
            if (!strcmp(key, "block_m"))
                ok = parse_int(val, 1, 1024, &e->block_m);
            else if (!strcmp(key, "block_n"))
                ok = parse_int(val, 1, 1024, &e->block_n);
            else if (!strcmp(key, "tpr"))
                ok = parse_int(val, 1, 256, &e->tpr);
            else if (!strcmp(key, "rows"))
                ok = parse_int(val, 1, 64, &e->rows);
            else if (!strcmp(key, "dchunk"))
                ok = parse_int(val, 4, 256, &e->dchunk);
            else if (!strcmp(key, "vchunk"))
                ok = parse_int(val, 4, 1024, &e->vchunk);
            else if (!strcmp(key, "kv_shared")) {
                *why = "kv_shared: an entry for the earlier kernel (no rows/dchunk/vchunk); run flashcl tune again";
                return 0;
            } else
                ok = 0;
        }
        if (!ok) {
            *why = side ? "an unknown or out-of-range tile field" : "an unknown or out-of-range match field";
            return 0;
        }
    }
    while (*cur == ' ' || *cur == '\t')
        ++cur;
    if (*cur && *cur != '#') {
        *why = "text after the fields";
        return 0;
    }
    if (!side) {
        *why = "no ':' between the match fields and the tiles";
        return 0;
    }
    if (!e->vendor[0] || !e->head_dim || !e->block_m || !e->block_n || !e->tpr || !e->rows || !e->dchunk ||
        !e->vchunk) {
        *why = "vendor, head_dim, block_m, block_n, tpr, rows, dchunk and vchunk are required";
        return 0;
    }
    /* The portable kernel's own rules (cl/flash_fwd.cl's #errors): an entry that breaks them would match,
     * be refused when a plan checks it, and hide a good entry below it. */
    if (e->block_m % e->rows || e->block_n % e->tpr || e->head_dim % e->tpr) {
        *why = "rows must divide block_m, tpr must divide block_n and head_dim";
        return 0;
    }
    if (e->dchunk % 4 || e->head_dim % e->dchunk || e->vchunk % 4 || e->block_n % e->vchunk) {
        *why = "dchunk must be a multiple of 4 dividing head_dim, vchunk a multiple of 4 dividing block_n";
        return 0;
    }
    return 1;
}

static void parse_text(flashcl_tuning_db *db, const char *text, const char *origin, int user)
{
    int lineno = 0;
    const char *p = text;
    char line[1024];
    while (*p) {
        size_t n = 0;
        const char *start = p;
        while (*p && *p != '\n')
            ++p;
        n = (size_t)(p - start);
        if (*p == '\n')
            ++p;
        ++lineno;
        if (n >= sizeof line) {
            warn(db, "%s:%d: line longer than %zu characters, ignored", origin, lineno, sizeof line - 1);
            continue;
        }
        memcpy(line, start, n);
        line[n] = '\0';
        const char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            ++s;
        if (!*s || *s == '#')
            continue;
        for (char *c = line; *c; ++c)
            if (*c == '\r')
                *c = ' ';
        db_entry e;
        const char *why = "";
        if (!parse_line(s, &e, &why)) {
            warn(db, "%s:%d: %s, line ignored", origin, lineno, why);
            continue;
        }
        e.user = user;
        e.line = lineno;
        if (db->count == db->cap) {
            size_t cap = db->cap ? db->cap * 2 : 32;
            db_entry *ne = realloc(db->entries, cap * sizeof *ne);
            if (!ne) {
                warn(db, "%s:%d: out of memory, rest ignored", origin, lineno);
                return;
            }
            db->entries = ne;
            db->cap = cap;
        }
        db->entries[db->count++] = e;
    }
}

flashcl_tuning_db *fcl_tuning_db_from_text(const char *text)
{
    flashcl_tuning_db *db = calloc(1, sizeof *db);
    if (db)
        parse_text(db, text, "text", 1);
    return db;
}

static void default_user_path(char *buf, size_t n)
{
    const char *env;
    if ((env = getenv("FLASHCL_TUNING_DB")) && *env)
        snprintf(buf, n, "%s", env);
    else if ((env = getenv("XDG_CONFIG_HOME")) && *env)
        snprintf(buf, n, "%s/flashcl/tuning.db", env);
    else if ((env = getenv("HOME")) && *env)
        snprintf(buf, n, "%s/.config/flashcl/tuning.db", env);
    else
        snprintf(buf, n, "flashcl-tuning.db");
}

flashcl_status flashcl_tuning_db_load(const char *user_path, int with_shipped, flashcl_tuning_db **out)
{
    if (!out)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_tuning_db_load: out is NULL");
    *out = NULL;
    flashcl_tuning_db *db = calloc(1, sizeof *db);
    if (!db)
        return fcl_fail(NULL, FLASHCL_OUT_OF_HOST_MEMORY, "flashcl_tuning_db_load: out of host memory");
    if (with_shipped) {
        const char *shipped = flashcl_source_text("tuning.db");
        if (shipped)
            parse_text(db, shipped, "shipped tuning.db", 0);
    }
    if (user_path && *user_path)
        fcl_strlcpy(db->user_path, user_path, sizeof db->user_path);
    else
        default_user_path(db->user_path, sizeof db->user_path);
    FILE *f = fopen(db->user_path, "rb");
    if (f) {
        char *text = NULL;
        size_t len = 0, cap = 0;
        char chunk[4096];
        size_t got;
        int too_big = 0;
        while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
            if (len + got + 1 > cap) {
                if (len > (8u << 20)) {
                    too_big = 1;
                    break;
                }
                cap = (len + got + 1) * 2;
                char *nt = realloc(text, cap);
                if (!nt)
                    break;
                text = nt;
            }
            memcpy(text + len, chunk, got);
            len += got;
        }
        int read_error = ferror(f);
        fclose(f);
        if (too_big || read_error || !text) {
            if (too_big || read_error)
                warn(db, "%s: %s, file ignored", db->user_path, too_big ? "larger than 8 MiB" : "read error");
        } else {
            text[len] = '\0';
            if (strlen(text) != len)
                warn(db, "%s: contains NUL bytes, file ignored", db->user_path);
            else
                parse_text(db, text, db->user_path, 1);
        }
        free(text);
    } else if (errno != ENOENT) {
        warn(db, "%s: %s, file ignored", db->user_path, strerror(errno));
    }
    *out = db;
    return FLASHCL_SUCCESS;
}

void flashcl_tuning_db_destroy(flashcl_tuning_db **db)
{
    if (!db || !*db)
        return;
    free((*db)->entries);
    free((*db)->warnings);
    free(*db);
    *db = NULL;
}

const char *flashcl_tuning_db_warnings(const flashcl_tuning_db *db)
{
    return db && db->warnings ? db->warnings : "";
}

size_t flashcl_tuning_db_size(const flashcl_tuning_db *db)
{
    return db ? db->count : 0;
}

const char *flashcl_tuning_db_user_path(const flashcl_tuning_db *db)
{
    return db ? db->user_path : "";
}

/* The identity level at which an entry matches the device, or -1. */
static int identity_level(const db_entry *e, const flashcl_device_profile *pr)
{
    if (strcmp(e->vendor, flashcl_vendor_name(pr->vendor)) != 0)
        return -1;
    if (e->arch[0] && strcmp(e->arch, pr->arch) != 0)
        return -1;
    if (e->device[0] && strcmp(e->device, pr->name) != 0)
        return -1;
    return e->device[0] ? LEVEL_DEVICE : e->arch[0] ? LEVEL_ARCH : LEVEL_VENDOR;
}

/* Number of problem fields the entry pins (more is more specific), or -1 when it does not match. */
static int problem_match(const db_entry *e, const flashcl_problem *p)
{
    if (e->head_dim != p->head_dim || fcl_head_dim_v(p) != p->head_dim) /* (entries are tuned at one head dim) */
        return -1;
    int n = 0;
    const int fields[4][2] = {{e->dtype, (int)p->dtype},
                              {e->causal, p->causal != 0},
                              {e->seq, seq_bucket(p->seq_kv)},
                              {e->mode, mode_of(p)}};
    for (int i = 0; i < 4; ++i) {
        if (fields[i][0] < 0)
            continue;
        if (fields[i][0] != fields[i][1])
            return -1;
        ++n;
    }
    return n;
}

int fcl_tuning_lookup(const flashcl_tuning_db *db, const flashcl_device_profile *pr, const flashcl_problem *p,
                      flashcl_config *cfg, char *source, size_t source_len, char *detail, size_t detail_len,
                      int (*fits)(flashcl_config *cfg, const char *source, const char *detail, void *arg), void *arg)
{
    if (!db)
        return 0;
    static const char *level_names[] = {"vendor", "arch", "device"};
    /* (the entries in order: the most specific identity, the user's before the shipped, more problem fields
     * matched, then later lines, which appended entries override with) */
    for (int level = LEVEL_DEVICE; level >= LEVEL_VENDOR; --level)
        for (int user = 1; user >= 0; --user)
            for (int fields = 4; fields >= 0; --fields)
                for (size_t i = db->count; i-- > 0;) {
                    const db_entry *e = &db->entries[i];
                    if (e->user != user || identity_level(e, pr) != level || problem_match(e, p) != fields)
                        continue;
                    memset(cfg, 0, sizeof *cfg);
                    cfg->block_m = e->block_m;
                    cfg->block_n = e->block_n;
                    cfg->threads_per_row = e->tpr;
                    cfg->rows_per_item = e->rows;
                    cfg->d_chunk = e->dchunk;
                    cfg->v_chunk = e->vchunk;
                    snprintf(source, source_len, "tuning-db:%s:%s", user ? "user" : "shipped", level_names[level]);
                    snprintf(detail, detail_len, "%s line %d matches %s and %d of 4 problem fields",
                             user ? db->user_path : "shipped tuning.db", e->line, level_names[level], fields);
                    if (!fits || fits(cfg, source, detail, arg))
                        return 1;
                }
    return 0;
}

static void format_key(char *buf, size_t n, const flashcl_device_profile *pr, const flashcl_problem *p)
{
    snprintf(buf, n, "vendor=%s arch=%s device=\"%s\" head_dim=%d dtype=%s causal=%d seq=%s mode=%s",
             flashcl_vendor_name(pr->vendor), pr->arch[0] ? pr->arch : "*", pr->name, p->head_dim,
             flashcl_dtype_name(p->dtype), p->causal != 0, seq_names[seq_bucket(p->seq_kv)],
             mode_names[mode_of(p)]);
}

/* flashcl_tuning_db_store's new file: every line of the old one but the entry's key, then the entry. */
typedef struct store_job {
    const char *path, *key, *entry;
} store_job;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;

static int write_store(FILE *out, void *arg)
{
    const store_job *job = arg;
    FILE *in = fopen(job->path, "rb");
    int ok = 1;
    if (!in && errno != ENOENT) /* (a file that is there but cannot be read is not replaced: its entries kept) */
        return -1;
    if (!in)
        ok = fputs("# flashcl tuning database (written by flashcl tune); see include/flashcl.h for the format\n",
                   out) >= 0;
    if (in) {
        char line[1100];
        const size_t klen = strlen(job->key);
        int ended = 1; /* (the last line copied ends in a newline: a file's last line may not) */
        while (fgets(line, sizeof line, in)) {
            const size_t len = strlen(line);
            if (strncmp(line, job->key, klen) != 0 || (line[klen] != ' ' && line[klen] != ':')) {
                ok &= fputs(line, out) >= 0;
                ended = len > 0 && line[len - 1] == '\n';
            }
        }
        const int read_failed = ferror(in);
        fclose(in);
        if (read_failed) {
            errno = EIO;
            return -1;
        }
        if (!ended)
            ok &= fputc('\n', out) != EOF;
    }
    ok &= fputs(job->entry, out) >= 0;
    return ok ? 0 : -1;
}

flashcl_status flashcl_tuning_db_store_abi(const flashcl_abi *abi, const char *path, const flashcl_device_profile *pr,
                                       const flashcl_problem *p, const flashcl_config *c, const char *comment)
{
    {
        const flashcl_status abi_st = fcl_abi_guard(abi, "flashcl_tuning_db_store");
        if (abi_st != FLASHCL_SUCCESS)
            return abi_st;
    }
    if (!path || !pr || !p || !c)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT, "flashcl_tuning_db_store: %s is NULL",
                        !path ? "path" : !pr ? "profile" : !p ? "problem" : "config");
    if (p->head_dim_v && p->head_dim_v != p->head_dim)
        return fcl_fail(NULL, FLASHCL_INVALID_ARGUMENT,
                        "flashcl_tuning_db_store: problem.head_dim_v = %d: entries are keyed by one head dim (%d)",
                        (int)p->head_dim_v, (int)p->head_dim);
    flashcl_problem sides;
    p = fcl_problem_sides(p, &sides);
    char key[512], entry[768];
    format_key(key, sizeof key, pr, p);
    snprintf(entry, sizeof entry, "%s : block_m=%d block_n=%d tpr=%d rows=%d dchunk=%d vchunk=%d%s%s\n", key,
             c->block_m, c->block_n, c->threads_per_row, c->rows_per_item, c->d_chunk, c->v_chunk,
             comment && *comment ? "  # " : "", comment && *comment ? comment : "");
    for (char *q = entry; *q && q[1]; ++q) /* one line, whatever the comment holds */
        if (*q == '\n' || *q == '\r')
            *q = ' ';
    entry[strlen(entry) - 1] = '\n'; /* (a comment cut to the buffer: still a line of its own) */

    store_job job = {path, key, entry};
    /* The file is read, changed and replaced as one step: two threads storing at once would each
     * replace the file with their own change of the same old one, and one entry would be lost. Other
     * processes are not excluded: one of two concurrent stores may be lost, never a file torn. */
    pthread_mutex_lock(&store_lock);
    const int failed = fcl_write_atomically(path, write_store, &job);
    const int saved = errno;
    pthread_mutex_unlock(&store_lock);
    if (failed)
        return fcl_fail(NULL, FLASHCL_CACHE_ERROR, "flashcl_tuning_db_store: cannot write %s: %s", path,
                        strerror(saved));
    return FLASHCL_SUCCESS;
}
