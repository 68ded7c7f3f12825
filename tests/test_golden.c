/* SPDX-License-Identifier: MIT */
/*
 * test_golden.c: the configuration the chooser gives on every fake device profile (fake_devices.h, at
 * each matrix-unit level its compute capability allows) for a grid of problems (head dims, dtypes,
 * prefill, causal GQA, decode, a paged cache, packed sequences, biases, small shapes) under every path
 * and algorithm, against tests/data/tiles_golden.txt: the file the chooser wrote before the kernel
 * modules (issue 31) moved it, so a change of structure that changes a choice fails here, with the
 * lines that differ. A change meant to change choices rewrites the file (FLASHCL_GOLDEN_WRITE=path)
 * and says why in its commit.
 */
#include "fake_devices.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    int d, dv;
} shape;

static const shape shapes[] = {{64, 0}, {80, 0}, {128, 0}, {256, 0}, {192, 128}};
static const flashcl_dtype dtypes[] = {FLASHCL_DTYPE_F32, FLASHCL_DTYPE_F16, FLASHCL_DTYPE_BF16};
static const char *const kinds[] = {"prefill", "causal-gqa4", "decode-gqa8", "decode-paged", "varlen",
                                    "bias", "small", "decode-q4-window"};
#define N_KINDS ((int)(sizeof kinds / sizeof *kinds))

static flashcl_problem problem_of(int kind, shape sh, flashcl_dtype dt)
{
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = 2;
    p.heads_q = 8;
    p.seq_q = p.seq_kv = 4096;
    p.head_dim = sh.d;
    p.head_dim_v = sh.dv;
    p.dtype = dt;
    switch (kind) {
    case 1: p.causal = 1; p.heads_kv = 2; break;
    case 2: p.seq_q = 1; p.seq_kv = 32768; p.heads_q = 32; p.heads_kv = 4; break;
    case 3:
        p.seq_q = 1; p.seq_kv = 16384; p.heads_kv = 2; p.kv_cache = 1; p.page_size = 256;
        p.num_pages = 2 * 16384 / 256;
        break;
    case 4: p.varlen = 1; p.total_q = p.total_kv = 6000; p.seq_q = p.seq_kv = 3000; p.causal = 1; break;
    case 5: p.softcap = 30.0f; p.alibi = 1; p.seq_q = p.seq_kv = 2048; break;
    case 6: p.seq_q = 100; p.seq_kv = 77; p.batch = 1; break;
    case 7: p.seq_q = 4; p.seq_kv = 8192; p.window = 1; p.window_left = 1024; p.causal = 1; break;
    default: break;
    }
    return p;
}

/* A case's name and its result: every field a plan acts on (not the reasons' words). */
static void name_of(char *out, size_t n, int kind, shape sh, flashcl_dtype dt)
{
    snprintf(out, n, "d%d/%d %s %s", sh.d, sh.dv, flashcl_dtype_name(dt), kinds[kind]);
}

static void result_of(char *out, size_t n, flashcl_status st, const flashcl_config *c)
{
    if (st != FLASHCL_SUCCESS) {
        snprintf(out, n, "status %d", (int)st);
        return;
    }
    snprintf(out, n, "%s m%d n%d t%d r%d dc%d vc%d wg%d s%d g%d lm%llu/%llu mma%d dec%d sg%d", c->kernel_name,
             c->block_m, c->block_n, c->threads_per_row, c->rows_per_item, c->d_chunk, c->v_chunk,
             c->work_group_size, c->kv_splits, c->gqa_pack, (unsigned long long)c->local_mem_bytes,
             (unsigned long long)c->local_mem_budget, cfg_mma(c), cfg_decode(c), c->sub_group);
}

/* The matrix-unit levels a fake's probe could find: none; mma.sync from compute capability 8.0; sm_90a
 * programs on 9.x. */
#define MAX_RESULTS 4096
#define RESULT_LEN 160
#define N_CASES ((int)(sizeof shapes / sizeof *shapes * sizeof dtypes / sizeof *dtypes) * N_KINDS)

/* The file: "= result" lines, the distinct results in the order they first appear (numbered from 0),
 * then one line a block (fake, matrix-unit level, path, algorithm): its name, ':', and each case's result
 * number in the grid's order. */
static char results[MAX_RESULTS][RESULT_LEN];
static int n_results;

static int result_id(const char *r)
{
    for (int i = 0; i < n_results; i++) {
        if (!strcmp(results[i], r)) {
            return i;
        }
    }
    if (n_results == MAX_RESULTS) {
        fprintf(stderr, "test_golden: more than %d distinct results\n", MAX_RESULTS);
        exit(1);
    }
    snprintf(results[n_results], RESULT_LEN, "%s", r);
    return n_results++;
}

/* The golden file's blocks, read back: block name and its result numbers. */
typedef struct block {
    char name[64];
    int ids[N_CASES];
} block;

static block *read_golden(const char *path, int *n_blocks, char (*table)[RESULT_LEN], int *n_table)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        perror(path);
        exit(1);
    }
    block *b = NULL;
    int nb = 0, cap = 0;
    char buf[8192];
    *n_table = 0;
    while (fgets(buf, sizeof buf, in)) {
        buf[strcspn(buf, "\n")] = 0;
        if (buf[0] == '#' || !buf[0]) {
            continue;
        }
        if (buf[0] == '=' && *n_table < MAX_RESULTS) {
            snprintf(table[(*n_table)++], RESULT_LEN, "%.159s", buf + 2);
            continue;
        }
        char *colon = strchr(buf, ':');
        if (!colon) {
            continue;
        }
        if (nb == cap) {
            cap = cap ? 2 * cap : 64;
            b = realloc(b, (size_t)cap * sizeof *b);
        }
        *colon = 0;
        snprintf(b[nb].name, sizeof b[nb].name, "%.63s", buf);
        char *q = colon + 1;
        for (int i = 0; i < N_CASES; i++) {
            b[nb].ids[i] = (int)strtol(q, &q, 10);
        }
        nb++;
    }
    fclose(in);
    *n_blocks = nb;
    return b;
}

static char golden_table[MAX_RESULTS][RESULT_LEN];

int main(void)
{
    const char *src = getenv("FLASHCL_GOLDEN");
    const char *write = getenv("FLASHCL_GOLDEN_WRITE");
    if (!write && !src) {
        fprintf(stderr, "test_golden: set FLASHCL_GOLDEN (the file to compare with) or FLASHCL_GOLDEN_WRITE\n");
        return 1;
    }
    int n_golden = 0, n_table = 0;
    block *golden = write ? NULL : read_golden(src, &n_golden, golden_table, &n_table);
    block *now = NULL;
    int nb = 0, cap = 0;
    long wrong = 0, cases = 0;
    char r[RESULT_LEN];
    for (int f = 0; f < N_FAKES; f++) {
        for (int mu = 0; mu <= fake_matrix_level(&fakes[f]); mu++) {
            flashcl_device_profile prof = fake_profile(&fakes[f]);
            prof.matrix_units = mu;
            for (int path = FLASHCL_PATH_AUTO; path <= FLASHCL_PATH_DPAS; path++) {
                flashcl_policy pol = {.path = path};
                for (int algo = FLASHCL_ALGO_FLASH; algo <= FLASHCL_ALGO_NAIVE; algo++) {
                    if (algo == FLASHCL_ALGO_NAIVE && path != FLASHCL_PATH_AUTO) {
                        continue; /* the path picks among flash kernels only */
                    }
                    if (nb == cap) {
                        cap = cap ? 2 * cap : 64;
                        now = realloc(now, (size_t)cap * sizeof *now);
                    }
                    block *b = &now[nb++];
                    snprintf(b->name, sizeof b->name, "f%d mu%d %s %s", f, mu,
                             flashcl_path_name((flashcl_path)path), flashcl_algorithm_name((flashcl_algorithm)algo));
                    int i = 0;
                    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                        for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
                            for (int kind = 0; kind < N_KINDS; kind++, i++) {
                                const flashcl_problem p = problem_of(kind, shapes[s], dtypes[t]);
                                flashcl_config c;
                                memset(&c, 0, sizeof c);
                                const flashcl_status st =
                                    flashcl_choose_config_policy(&prof, &pol, &p, (flashcl_algorithm)algo, &c);
                                result_of(r, sizeof r, st, &c);
                                b->ids[i] = result_id(r);
                                cases++;
                                if (write) {
                                    continue;
                                }
                                const block *g = nb <= n_golden ? &golden[nb - 1] : NULL;
                                const char *was = !g || strcmp(g->name, b->name)  ? "(not in the file)"
                                                  : g->ids[i] < 0 || g->ids[i] >= n_table ? "(a bad number)"
                                                                                           : golden_table[g->ids[i]];
                                if (strcmp(was, r) != 0 && ++wrong <= 20) {
                                    char name[64];
                                    name_of(name, sizeof name, kind, shapes[s], dtypes[t]);
                                    printf("%s, %s\n  was: %s\n  is:  %s\n", b->name, name, was, r);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (write) {
        FILE *out = fopen(write, "w");
        if (!out) {
            perror(write);
            return 1;
        }
        fprintf(out, "# SPDX-License-Identifier: MIT\n");
        fprintf(out, "# tests/test_golden.c's grid: the chooser's %d distinct results, then each block's cases "
                     "by result number\n", n_results);
        for (int i = 0; i < n_results; i++) {
            fprintf(out, "= %s\n", results[i]);
        }
        for (int k = 0; k < nb; k++) {
            fprintf(out, "%s:", now[k].name);
            for (int i = 0; i < N_CASES; i++) {
                fprintf(out, " %d", now[k].ids[i]);
            }
            fputc('\n', out);
        }
        fclose(out);
        printf("test_golden: wrote %ld configurations (%d distinct) to %s\n", cases, n_results, write);
        free(now);
        return 0;
    }
    if (n_golden != nb) {
        printf("the file has %d blocks, the grid %d\n", n_golden, nb);
        wrong++;
    }
    printf("test_golden: %ld of %ld configurations differ from %s\n", wrong, cases, src);
    free(now);
    free(golden);
    return wrong ? 1 : 0;
}
