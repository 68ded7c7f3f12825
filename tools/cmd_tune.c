/* SPDX-License-Identifier: MIT */
/*
 * cmd_tune.c: `flashcl tune`: for each problem class asked for, every flash tile configuration that
 * fits the device is built, checked against what the compiler reports, validated against the naive
 * kernel and timed; the fastest is written to the user's tuning database, with its gain over the
 * heuristic's choice.
 */
#include "cli.h"
#include "commands.h"
#include "hostmath.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 16
#define MAX_CANDIDATES 512
/* Private memory per work-item above which a candidate is taken to spill registers. */
#define SPILL_BYTES 1024

static void usage(FILE *f)
{
    fprintf(f,
            "usage: flashcl tune [options]\n"
            "Times every flash tile configuration that fits the device for each problem class, validates\n"
            "each against the naive kernel, and stores the fastest in the user's tuning database.\n"
            "  --device SEL       \"P:D\" or a name substring (default: $FLASHCL_DEVICE, a GPU, a CPU)\n"
            "  -d, --dim LIST     head dims, comma-separated (default 128)\n"
            "  --dtype LIST       f32,f16,bf16 (default f32)\n"
            "  --causal           tune the causal class (default: non-causal)\n"
            "  -n, --seq N        seq_q = seq_kv = N (default 4096); --seq-q N, --seq-kv N; --decode: seq_q 1\n"
            "  -b, --batch N      batch (default 16384 / seq_kv, at least 1)\n"
            "  -H, --heads N      query heads (default 2048 / head dim, at least 1); --gqa R (default 1)\n"
            "  --iters N          timed runs per candidate (default 10), after 2 warm-up runs\n"
            "  --db PATH          the database file to write (default: the user's, see flashcl tiles)\n"
            "  --dry-run          list the candidates and what the heuristic picks; build and time nothing\n"
            "Noise: a candidate's spread is the range (min to max) of its timed runs. Where the winner's spread\n"
            "overlaps the runner-up's or the heuristic's, the three are timed again, with twice the runs each\n"
            "time (at most twice). Then the heuristic's tiles fastest, or still within the winner's noise, stores\n"
            "nothing (it says so); a winner beyond the heuristic's noise is stored, with a note when the\n"
            "runner-up is still within its own.\n"
            "exit status: 0 ok, 1 a flashcl error or no valid candidate, 2 bad usage\n");
}

typedef struct candidate {
    flashcl_config cfg;
    double median, min, max;
    const char *verdict; /* NULL: timed */
    char detail[96];
} candidate;

/*
 * The configurations worth timing that the kernel accepts and the device's limits allow: column groups
 * (tpr) giving 4 to 32 output columns per work-item, 1 to 8 rows per work-item with 16 to 64
 * accumulators and 8 to 32 scores (smaller register blocks reload local memory too often to
 * compete), work-groups of whole warps of 128 or 256 items (64 where the device allows no more),
 * 1 to 8 keys per item, and Q/K chunks of the whole head dimension or of 32 columns. V's chunk is the
 * largest that fits beside them (it only sets how often the P*V loop waits at a barrier).
 */
static int enumerate(const flashcl_device_profile *pr, uint64_t budget, const flashcl_problem *p, candidate *out)
{
    int n = 0;
    const int d = p->head_dim;
    const size_t max_wg = pr->max_work_group_size < 256 ? pr->max_work_group_size : 256;
    const size_t mult = pr->wg_multiple ? pr->wg_multiple : 1;
    for (int tpr = 1; tpr <= 32; tpr *= 2) {
        if (d % tpr || d / tpr > 32 || d / tpr < 4)
            continue;
        for (int tm = 1; tm <= 8; tm *= 2) {
            if (tm * (d / tpr) > 64 || tm * (d / tpr) < 16)
                continue;
            for (int rg = 1; rg <= 256; rg *= 2) {
                const size_t wg = (size_t)rg * tpr;
                if (wg > max_wg || wg % mult || wg < (max_wg >= 128 ? 128 : 64) || rg * tm > 128)
                    continue;
                for (int tn = 1; tn <= 8; tn *= 2) {
                    const int bn = tn * tpr;
                    if (tm * tn < 8 || tm * tn > 32 || bn % 4 || bn > 128)
                        continue;
                    const int chunks[] = {d, 32};
                    for (int k = 0; k < 2; ++k) {
                        const int dc = chunks[k];
                        if (dc > d || d % dc || (k > 0 && dc == d) || n >= MAX_CANDIDATES)
                            continue;
                        flashcl_config c0;
                        memset(&c0, 0, sizeof c0);
                        c0.block_m = rg * tm;
                        c0.block_n = bn;
                        c0.threads_per_row = tpr;
                        c0.rows_per_item = tm;
                        c0.d_chunk = dc;
                        int vc = 0;
                        for (int v = 4; v <= bn; v += 4) { /* the largest V chunk that adds no memory */
                            c0.v_chunk = v;
                            if (bn % v == 0 && (!vc || flashcl_flash_local_mem_bytes(d, &c0) ==
                                                           (c0.v_chunk = vc, flashcl_flash_local_mem_bytes(d, &c0))))
                                vc = v;
                        }
                        c0.v_chunk = vc;
                        c0.work_group_size = (int32_t)wg;
                        c0.local_mem_bytes = flashcl_flash_local_mem_bytes(d, &c0);
                        if (c0.local_mem_bytes > budget)
                            continue;
                        candidate *c = &out[n++];
                        memset(c, 0, sizeof *c);
                        c->cfg = c0;
                    }
                }
            }
        }
    }
    return n;
}

static void progress(int tty, int i, int n, const candidate *c, double best)
{
    if (tty) {
        char bar[31];
        const int fill = n ? (30 * i) / n : 30;
        for (int k = 0; k < 30; ++k)
            bar[k] = k < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r  [%s] %3d/%d  best %.3f ms ", bar, i, n, best);
        if (i == n)
            fprintf(stderr, "\n");
    } else if (c) {
        char t[64];
        fprintf(stderr, "  %3d/%d  %s: %s\n", i, n, cli_tiles(&c->cfg, t, sizeof t), c->verdict ? c->verdict : c->detail);
    }
    fflush(stderr);
}

static int same_tiles(const flashcl_config *a, const flashcl_config *b)
{
    return a->block_m == b->block_m && a->block_n == b->block_n && a->threads_per_row == b->threads_per_row &&
           a->rows_per_item == b->rows_per_item && a->d_chunk == b->d_chunk && a->v_chunk == b->v_chunk;
}

/* Times a candidate that passed (its stats replaced): `iters` runs after 2 warm-up runs. */
static flashcl_status time_candidate(flashcl_context *ctx, const flashcl_problem *p, cl_mem *b, long iters,
                                     candidate *c)
{
    flashcl_plan *plan = NULL;
    flashcl_context_override_config(ctx, &c->cfg);
    flashcl_status st = flashcl_plan_create(ctx, p, &plan);
    flashcl_context_override_config(ctx, NULL);
    int host_clock = 0;
    const flashcl_tensors t = {.q = b[0], .k = b[1], .v = b[2], .o = b[3], .lse = b[4]};
    if (st == FLASHCL_SUCCESS)
        st = cli_time_plan(plan, &t, 2, iters, &c->median, &c->min, &c->max, &host_clock, NULL);
    if (st == FLASHCL_SUCCESS)
        snprintf(c->detail, sizeof c->detail, "%.3f ms (%.3f to %.3f)%s", c->median, c->min, c->max,
                 host_clock ? " host clock" : "");
    flashcl_plan_destroy(&plan);
    return st;
}

/* Builds, checks, validates and times one candidate on the given buffers. */
static void try_candidate(flashcl_context *ctx, const flashcl_problem *p, cl_mem *b, long iters, candidate *c)
{
    flashcl_plan *plan = NULL;
    flashcl_context_override_config(ctx, &c->cfg);
    flashcl_status st = flashcl_plan_create(ctx, p, &plan);
    flashcl_context_override_config(ctx, NULL);
    if (st) {
        c->verdict = "rejected: does not build";
        snprintf(c->detail, sizeof c->detail, "%s", flashcl_status_name(st));
        return;
    }
    flashcl_config got;
    flashcl_plan_config(plan, &got);
    flashcl_kernel_info ki;
    flashcl_plan_kernel_info(plan, &ki);
    if (!same_tiles(&got, &c->cfg)) {
        c->verdict = "rejected: the compiled kernel needs smaller tiles";
    } else if (ki.private_mem_bytes > SPILL_BYTES) {
        c->verdict = "rejected: spills registers";
        snprintf(c->detail, sizeof c->detail, "%llu B private memory per work-item",
                 (unsigned long long)ki.private_mem_bytes);
    } else {
        flashcl_context_set_validation(ctx, 1);
        st = flashcl_plan_enqueue(plan, b[0], b[1], b[2], b[3], b[4], 0, NULL, NULL);
        flashcl_context_set_validation(ctx, 0);
        flashcl_validation rep;
        flashcl_plan_last_validation(plan, &rep);
        if (st == FLASHCL_VALIDATION_FAILED) {
            c->verdict = rep.nan_count ? "rejected: NaN against the naive kernel" : "rejected: wrong against the naive kernel";
            snprintf(c->detail, sizeof c->detail, "max rel error %.2e", rep.max_rel_error);
        } else if (st) {
            c->verdict = "rejected: enqueue failed";
            snprintf(c->detail, sizeof c->detail, "%s", flashcl_status_name(st));
        } else if (time_candidate(ctx, p, b, iters, c) != FLASHCL_SUCCESS) {
            c->verdict = "rejected: timed run failed";
        }
    }
    flashcl_plan_destroy(&plan);
}

/*
 * The noise policy. A candidate's spread is the range (min to max) of its timed runs; two candidates whose
 * spreads overlap are not told apart by this measurement. The winner (fastest median) is compared with the
 * runner-up and with the heuristic's tiles; where either overlaps, the three are timed again, with twice
 * the runs each time, at most TUNE_REPEATS times. Then: the heuristic fastest, or still within the noise of the
 * winner, stores nothing (the database would only pin the heuristic's answer, or a guess); a winner beyond
 * the heuristic's noise is stored, with a note where the runner-up is still within its noise.
 */
#define TUNE_REPEATS 2

typedef enum tune_verdict {
    TUNE_STORE,     /* the winner beats the heuristic beyond the noise (or the heuristic was rejected) */
    TUNE_REPEAT,    /* spreads overlap: time the contenders again */
    TUNE_HEURISTIC, /* the heuristic's tiles are the fastest: nothing to store */
    TUNE_NOISE      /* the winner is within the heuristic's noise after every repeat: nothing stored */
} tune_verdict;

static int within_noise(const candidate *a, const candidate *b)
{
    return a->min <= b->max && b->min <= a->max;
}

/* w: the fastest candidate; r: the runner-up (NULL: none); h: the heuristic's (h->verdict set: rejected). */
static tune_verdict tune_decide(const candidate *w, const candidate *r, const candidate *h, int repeats_left)
{
    if (w == h)
        return TUNE_HEURISTIC; /* (a repeat could only crown something within its noise) */
    const int close = (!h->verdict && within_noise(w, h)) || (r && within_noise(w, r));
    if (close && repeats_left)
        return TUNE_REPEAT;
    return !h->verdict && within_noise(w, h) ? TUNE_NOISE : TUNE_STORE;
}

/* The fastest timed candidate (-1: none) and the runner-up (-1: none). */
static int fastest(const candidate *c, int n, int *runner_up)
{
    int best = -1, second = -1;
    for (int i = 0; i < n; ++i) {
        if (c[i].verdict)
            continue;
        if (best < 0 || c[i].median < c[best].median) {
            second = best;
            best = i;
        } else if (second < 0 || c[i].median < c[second].median) {
            second = i;
        }
    }
    *runner_up = second;
    return best;
}

/* Times the winner, the runner-up and the heuristic's candidate again (each once, in turn), `iters` runs. */
static void repeat_contenders(flashcl_context *ctx, const flashcl_problem *p, cl_mem *b, long iters,
                              candidate *cands, int best, int runner, int heur)
{
    const int who[3] = {best, runner, heur};
    for (int k = 0; k < 3; ++k) {
        int again = who[k] >= 0 && !cands[who[k]].verdict;
        for (int j = 0; j < k; ++j)
            again &= who[j] != who[k];
        if (again && time_candidate(ctx, p, b, iters, &cands[who[k]]) != FLASHCL_SUCCESS)
            cands[who[k]].verdict = "rejected: timed run failed";
    }
}

/* Prints the class's outcome and stores the winner where the verdict says so; the exit status. */
static int report(const flashcl_device_profile *pr, const flashcl_problem *p, const candidate *cands, int best,
                  int runner, int heur_index, tune_verdict verdict, const char *db_path)
{
    const candidate *w = &cands[best], *h = &cands[heur_index], *r = runner >= 0 ? &cands[runner] : NULL;
    const double tflops = cli_flops(p) / (w->median * 1e-3) / 1e12;
    char tag[64], rate[32];
    printf("  winner %s: %s, %s", cli_tiles(&w->cfg, tag, sizeof tag), w->detail, cli_flop_rate(tflops, rate, sizeof rate));
    if (!h->verdict && w != h)
        printf("; heuristic %s: %.2fx faster\n", h->detail, h->median / w->median);
    else
        printf("; heuristic %s\n", w == h ? "the same tiles" : h->verdict);
    const int close_runner = r && r != h && within_noise(w, r);
    if (close_runner)
        printf("  the runner-up %s (%s) is within the winner's noise: either would do\n",
               cli_tiles(&r->cfg, tag, sizeof tag), r->detail);
    if (verdict == TUNE_HEURISTIC) {
        printf("  the heuristic's tiles are the fastest: nothing stored\n");
        return 0;
    }
    if (verdict == TUNE_NOISE) {
        printf("  the winner is within the heuristic's noise (spreads %.3f-%.3f and %.3f-%.3f ms overlap after %d "
               "repeats): not distinguishable, nothing stored\n", w->min, w->max, h->min, h->max, TUNE_REPEATS);
        return 0;
    }
    char comment[200], date[16];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    snprintf(comment, sizeof comment, "flashcl tune %s: %.3f ms (%.3f-%.3f), %s, heuristic %.3f ms%s", date, w->median,
             w->min, w->max, rate, h->verdict ? 0.0 : h->median,
             close_runner ? "; the runner-up within the noise" : "");
    if (flashcl_tuning_db_store(db_path, pr, p, &w->cfg, comment) != FLASHCL_SUCCESS) {
        fprintf(stderr, "flashcl tune: writing the tuning database: %s\n", flashcl_context_last_error(NULL));
        return 1;
    }
    printf("  stored in %s\n", db_path);
    return 0;
}

static int tune_class(flashcl_context *ctx, flashcl_problem *p, long iters, int dry_run, const char *db_path)
{
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    flashcl_config heur;
    flashcl_policy policy; /* the context's: the portable kernel, no database */
    flashcl_context_policy(ctx, &policy);
    flashcl_status st = flashcl_choose_config_policy(pr, &policy, p, FLASHCL_ALGO_FLASH, &heur);
    if (st)
        return cli_fail(NULL, "choosing the heuristic configuration", st);
    candidate *cands = calloc(MAX_CANDIDATES + 1, sizeof *cands);
    if (!cands)
        return 1;
    int n = enumerate(pr, cli_tile_budget(pr, &policy), p, cands);
    int heur_index = -1;
    for (int i = 0; i < n; ++i)
        if (same_tiles(&cands[i].cfg, &heur))
            heur_index = i;
    if (heur_index < 0) { /* the heuristic may pick a work-group that is not a whole warp */
        cands[n].cfg = heur;
        heur_index = n++;
    }
    char tag[64];
    printf("class  d=%d %s %s Sq=%d Sk=%d B=%d Hq=%d Hkv=%d: %d candidates; heuristic %s\n", p->head_dim,
           flashcl_dtype_name(p->dtype), p->causal ? "causal" : "non-causal", p->seq_q, p->seq_kv, p->batch, p->heads_q,
           p->heads_kv, n, cli_tiles(&heur, tag, sizeof tag));
    if (dry_run) {
        for (int i = 0; i < n; ++i)
            printf("  %-30s wg %-4d local %6llu B%s\n", cli_tiles(&cands[i].cfg, tag, sizeof tag),
                   cands[i].cfg.work_group_size, (unsigned long long)cands[i].cfg.local_mem_bytes,
                   i == heur_index ? "  <- heuristic" : "");
        free(cands);
        return 0;
    }

    size_t sz[5];
    flashcl_plan *probe = NULL;
    if ((st = flashcl_plan_create(ctx, p, &probe))) {
        free(cands);
        return cli_fail(ctx, "planning the class", st);
    }
    flashcl_plan_buffer_sizes(probe, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    flashcl_plan_destroy(&probe);
    cl_context clctx;
    flashcl_context_cl_objects(ctx, &clctx, NULL, NULL);
    cl_mem b[5] = {0};
    hm_rng rng;
    hm_rng_seed(&rng, 7);
    cl_int err = CL_SUCCESS;
    const size_t es = flashcl_dtype_size(p->dtype);
    for (int i = 0; i < 4 && err == CL_SUCCESS; ++i) {
        void *h = i < 3 ? malloc(sz[i]) : NULL;
        if (h)
            hm_fill_normal(h, p->dtype, sz[i] / es, &rng, 1.0);
        b[i] = clCreateBuffer(clctx, CL_MEM_READ_WRITE | (h ? CL_MEM_COPY_HOST_PTR : 0), sz[i], h, &err);
        free(h);
    }
    if (err != CL_SUCCESS) {
        fprintf(stderr, "flashcl tune: allocating buffers failed (OpenCL error %d)\n", (int)err);
        for (int i = 0; i < 5; ++i)
            if (b[i])
                clReleaseMemObject(b[i]);
        free(cands);
        return 1;
    }

    const int tty = isatty(fileno(stderr));
    for (int i = 0, best = -1; i < n; ++i) {
        try_candidate(ctx, p, b, iters, &cands[i]);
        if (!cands[i].verdict && (best < 0 || cands[i].median < cands[best].median))
            best = i;
        progress(tty, i + 1, n, &cands[i], best >= 0 ? cands[best].median : 0.0);
    }
    int rejected = 0;
    for (int i = 0; i < n; ++i)
        if (cands[i].verdict) {
            if (!rejected++)
                printf("  rejected:\n");
            printf("    %-30s  %s %s\n", cli_tiles(&cands[i].cfg, tag, sizeof tag), cands[i].verdict,
                   cands[i].detail);
        }
    int runner = -1, best = fastest(cands, n, &runner), repeats = 0;
    tune_verdict verdict = TUNE_STORE;
    while (best >= 0 && (verdict = tune_decide(&cands[best], runner >= 0 ? &cands[runner] : NULL, &cands[heur_index],
                                               TUNE_REPEATS - repeats)) == TUNE_REPEAT) {
        ++repeats;
        printf("  within the noise: timing the winner, the runner-up and the heuristic again (%ld runs, repeat %d of "
               "%d)\n", iters << repeats, repeats, TUNE_REPEATS);
        repeat_contenders(ctx, p, b, iters << repeats, cands, best, runner, heur_index);
        best = fastest(cands, n, &runner);
    }
    int rc = 1;
    if (best >= 0)
        rc = report(pr, p, cands, best, runner, heur_index, verdict, db_path);
    else
        printf("  no candidate passed\n");
    for (int i = 0; i < 5; ++i)
        if (b[i])
            clReleaseMemObject(b[i]);
    free(cands);
    return rc;
}

enum { OPT_GQA = CLI_OPT_BASE, OPT_ITERS, OPT_DEVICE, OPT_DB, OPT_DTYPE, OPT_SEQ_Q, OPT_SEQ_KV, OPT_CAUSAL,
       OPT_DECODE, OPT_DRY_RUN };

static const struct option longopts[] = {
    {"batch", required_argument, NULL, 'b'}, {"heads", required_argument, NULL, 'H'},
    {"gqa", required_argument, NULL, OPT_GQA}, {"iters", required_argument, NULL, OPT_ITERS},
    {"device", required_argument, NULL, OPT_DEVICE}, {"db", required_argument, NULL, OPT_DB},
    {"dim", required_argument, NULL, 'd'}, {"dtype", required_argument, NULL, OPT_DTYPE},
    {"seq", required_argument, NULL, 'n'}, {"seq-q", required_argument, NULL, OPT_SEQ_Q},
    {"seq-kv", required_argument, NULL, OPT_SEQ_KV}, {"causal", no_argument, NULL, OPT_CAUSAL},
    {"decode", no_argument, NULL, OPT_DECODE}, {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

typedef struct tune_opts {
    const char *device, *db_path;
    long dims[MAX_LIST], iters, batch, heads, gqa, seq[3]; /* seq: -n, --seq-q, --seq-kv (0: not given) */
    int n_dims, n_types, dry_run, causal, decode;
    flashcl_dtype types[MAX_LIST];
} tune_opts;

/* One option's value into *o; 0 after a message on a bad value. */
static int parse_value(int c, const char *val, tune_opts *o)
{
    const char *name = cli_option_name(longopts, c);
    switch (c) {
    case 'b': return cli_int(name, val, 1, 1L << 20, &o->batch);
    case 'H': return cli_int(name, val, 1, 1L << 20, &o->heads);
    case OPT_GQA: return cli_int(name, val, 1, 1024, &o->gqa);
    case OPT_ITERS: return cli_int(name, val, 1, 100000, &o->iters);
    case 'd': return cli_int_list("tune", name, val, 8, 256, o->dims, MAX_LIST, &o->n_dims);
    case 'n': case OPT_SEQ_Q: case OPT_SEQ_KV:
        return cli_int(name, val, 1, 1L << 30, &o->seq[c == 'n' ? 0 : c == OPT_SEQ_Q ? 1 : 2]);
    case OPT_DTYPE: {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", val ? val : "");
        o->n_types = 0;
        if (!val || !*val || strstr(buf, ",,") || *buf == ',' || buf[strlen(buf) - 1] == ',') {
            fprintf(stderr, "flashcl tune: --dtype %s: f32, f16 or bf16, comma-separated, no empty item\n",
                    val ? val : "(missing)");
            return 0;
        }
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
            if (o->n_types == MAX_LIST || !cli_dtype(tok, &o->types[o->n_types++])) {
                if (o->n_types == MAX_LIST)
                    fprintf(stderr, "flashcl tune: --dtype %s: at most %d types\n", val, MAX_LIST);
                return 0;
            }
        return 1;
    }
    }
    return 0;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse(int argc, char **argv, tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dims[0] = 128;
    o->n_dims = o->n_types = 1;
    o->types[0] = FLASHCL_DTYPE_F32;
    o->iters = 10;
    o->gqa = 1;
    for (int c; (c = cli_getopt("tune", argc, argv, "b:H:d:n:h", longopts)) != -1;) {
        switch (c) {
        case CLI_BAD_OPTION: return 2;
        case 'h': usage(stdout); return 0;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_DB: o->db_path = optarg; break;
        case OPT_CAUSAL: o->causal = 1; break;
        case OPT_DECODE: o->decode = 1; break;
        case OPT_DRY_RUN: o->dry_run = 1; break;
        default:
            if (!parse_value(c, optarg, o))
                return 2;
        }
    }
    if (o->seq[0] && o->seq[1] && o->seq[2])
        return cli_conflict("tune", "--seq (-n)", "--seq-q with --seq-kv", "-n sets both lengths");
    for (int di = 0; di < o->n_dims; ++di) { /* (the heads default to 2048 / head dim) */
        const long heads = o->heads ? o->heads : (2048 / o->dims[di] > 0 ? 2048 / o->dims[di] : 1);
        if (heads % o->gqa) {
            char what[96];
            snprintf(what, sizeof what, "%ld does not divide the %ld query heads at d=%ld", o->gqa, heads, o->dims[di]);
            return cli_conflict("tune", "--gqa", o->heads ? "--heads (-H)" : "the default heads", what);
        }
    }
    return -1;
}

int cmd_tune(int argc, char **argv)
{
    tune_opts o;
    const int parsed = parse(argc, argv, &o);
    if (parsed >= 0)
        return parsed;
    const char *db_path = o.db_path; /* (the user's default when not given) */
    const int32_t seq_kv = (int32_t)(o.seq[2] ? o.seq[2] : o.seq[0] ? o.seq[0] : 4096);
    const int32_t seq_q = (int32_t)(o.seq[1] ? o.seq[1] : o.decode ? 1 : o.seq[0] ? o.seq[0] : 4096);
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.validate = 0;
    s.tuning_db = 0; /* candidates are forced; the database is only written */
    /* The database holds the portable kernel's tiles (the matrix-unit kernel has one shape): its
     * heuristic baseline must be the portable kernel's too. */
    s.path = FLASHCL_PATH_PORTABLE;
    flashcl_context *ctx = NULL;
    flashcl_status st = flashcl_context_create_default(o.device, &s, &ctx);
    if (st)
        return cli_fail(NULL, "opening a device", st);
    char default_db[1100];
    if (db_path && !o.dry_run) { /* a file the user named: its directory must be there and writable, now, not
                                  after the timing (and none is created for it) */
        const char *why = cli_unwritable(db_path);
        if (why) {
            fprintf(stderr, "flashcl tune: --db %s: cannot write there (%s); nothing was timed\n", db_path, why);
            flashcl_context_destroy(&ctx);
            return 1;
        }
    }
    if (!db_path) {
        flashcl_tuning_db *db = NULL;
        flashcl_tuning_db_load(NULL, 0, &db);
        snprintf(default_db, sizeof default_db, "%s", flashcl_tuning_db_user_path(db));
        flashcl_tuning_db_destroy(&db);
        db_path = default_db;
    }
    const flashcl_device_profile *pr = flashcl_context_profile(ctx);
    flashcl_policy policy;
    flashcl_context_policy(ctx, &policy);
    printf("device %s / %s [%s%s%s], local memory budget %llu B, work-group %zu, multiple %zu\n", pr->platform_name,
           pr->name, flashcl_vendor_name(pr->vendor), pr->arch[0] ? ", " : "", pr->arch,
           (unsigned long long)cli_tile_budget(pr, &policy), pr->max_work_group_size, pr->wg_multiple);
    int rc = 0;
    for (int di = 0; di < o.n_dims; ++di)
        for (int ti = 0; ti < o.n_types; ++ti) {
            flashcl_problem p;
            flashcl_problem_default(&p);
            p.head_dim = (int32_t)o.dims[di];
            p.dtype = o.types[ti];
            p.causal = o.causal;
            p.seq_q = seq_q;
            p.seq_kv = seq_kv;
            p.batch = o.batch ? (int32_t)o.batch : (seq_kv >= 16384 ? 1 : 16384 / seq_kv);
            p.heads_q = o.heads ? (int32_t)o.heads : (2048 / p.head_dim > 0 ? 2048 / p.head_dim : 1);
            p.heads_kv = p.heads_q / (int32_t)o.gqa; /* (parse checked that it divides) */
            rc |= tune_class(ctx, &p, o.iters, o.dry_run, db_path);
        }
    flashcl_context_destroy(&ctx);
    return rc;
}
