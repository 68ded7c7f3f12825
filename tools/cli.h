/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the flashcl command's subcommands share (defined in cli.c): option parsing helpers,
 * failure messages, profiling-event timing, FLOP counts and JSON string output.
 */
#ifndef FLASHCL_CLI_H
#define FLASHCL_CLI_H

#include "flashcl.h"
#include "hostmath.h"

#include <stdio.h>

/*
 * Options: every subcommand parses with getopt_long (cli_getopt), so "--opt=value", "--opt value" and
 * the short spellings ("-n 64", "-n64") are one thing. A subcommand's options without a short letter take
 * codes from CLI_OPT_BASE up (below CLI_OPT_WINDOW); the mask and bias options every command shares have
 * the codes below (CLI_MASK_LONGOPTS); every code is below CLI_OPT_END (an array of that many flags says
 * which options were given).
 */
#include <getopt.h>

enum {
    CLI_BAD_OPTION = -2,
    CLI_OPT_BASE = 256,
    CLI_OPT_WINDOW = 400,
    CLI_OPT_SOFTCAP,
    CLI_OPT_ALIBI,
    CLI_OPT_SINKS,
    CLI_OPT_KV_SPLITS,
    CLI_OPT_PRECISION,
    CLI_OPT_FP8,
    CLI_OPT_DESCALE,
    CLI_OPT_CONFIG,
    CLI_OPT_END
};
/* --config KEY=VALUE,...: the tiles of one kernel forced for every flash plan (flashcl_context_override_config;
 * bench, run and tiles). CLI_CONFIG_HELP(PAD, IND): its --help lines, PAD after "--config SPEC" and IND before
 * each further line reaching the command's description column. */
#define CLI_CONFIG_LONGOPT {"config", required_argument, NULL, CLI_OPT_CONFIG}
#define CLI_CONFIG_HELP(PAD, IND)                                                                           \
    "  --config SPEC" PAD "force one kernel's tiles for the flash plans, over --path; SPEC =\n"              \
    IND "KEY=VALUE,...: kernel (portable, mma, wgmma, mfma, wmma or dpas; default\n"                       \
    IND "portable) and the fields it reads: block_m, block_n; threads_per_row,\n"                          \
    IND "rows_per_item, d_chunk, v_chunk (portable); m_tiles (mma); kv_stages (mma,\n"                     \
    IND "wgmma); producer (-1, 0, 1), persistent (wgmma); sub_group (dpas). A plan\n"                     \
    IND "it does not fit fails, naming the field (flashcl_context_override_config)\n"
#define CLI_MASK_LONGOPTS                                                                                \
    {"window", required_argument, NULL, CLI_OPT_WINDOW}, {"softcap", required_argument, NULL, CLI_OPT_SOFTCAP}, \
        {"alibi", no_argument, NULL, CLI_OPT_ALIBI}, {"sinks", required_argument, NULL, CLI_OPT_SINKS},        \
        {"kv-splits", required_argument, NULL, CLI_OPT_KV_SPLITS},                                              \
        {"precision", required_argument, NULL, CLI_OPT_PRECISION}, {"fp8", required_argument, NULL, CLI_OPT_FP8}, \
        {"descale", required_argument, NULL, CLI_OPT_DESCALE}

/*
 * getopt_long for subcommand `cmd` (its name in messages): the next option's code, optarg its value;
 * -1 at the end; CLI_BAD_OPTION, with a message, for an unknown or ambiguous option, a missing value, a
 * value given to a flag, or a word that is no option (options stop there: no reordering).
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shorts, const struct option *longs);
/* "--name" of the option with code `code` in `longs`, "--name (-c)" for one with a letter (a thread-local buffer). */
const char *cli_option_name(const struct option *longs, int code);
/* Usage error: options `a` and `b` contradict each other; says so and why, returns the exit status 2. */
int cli_conflict(const char *cmd, const char *a, const char *b, const char *why);

/* Parses an integer option value; prints an error naming the option and returns 0 on bad input. */
int cli_int(const char *opt, const char *value, long min, long max, long *out);
/* A comma-separated list of at most `most` integers from min to max into out[0 .. *n): 1, or 0 with a message
 * naming the option (a missing value, an empty item, too many, a bad number) */
int cli_int_list(const char *cmd, const char *opt, const char *val, long min, long max, long *out, int most, int *n);
/* Parses a number of seconds: finite, > 0, at most 10^9; prints an error and returns 0 on bad input. */
int cli_seconds(const char *opt, const char *value, double *out);
int cli_dtype(const char *value, flashcl_dtype *out);
/* Parses --config's SPEC into *c (every other field 0, producer -1); prints an error naming the field and
 * returns 0 on bad input. */
int cli_config(const char *cmd, const char *spec, flashcl_config *c);
/* Sets the parsed --config on the context (has: whether it was given); the exit status 1 after a message
 * on failure, else 0. */
int cli_apply_config(flashcl_context *ctx, int has, const flashcl_config *c);

/* Whether two paths name one file: the same device and inode where both exist, else the same path once
 * their directories are resolved (realpath). */
int cli_same_file(const char *a, const char *b);

/* Prints a flashcl failure with the context's message and returns the exit status 1. */
int cli_fail(const flashcl_context *ctx, const char *what, flashcl_status st);
/* NULL when `path` can be written (an existing writable file, or a new one in an existing writable
 * directory, which is not created); else why not ("DIR: reason"), in a thread-local buffer. */
const char *cli_unwritable(const char *path);
/* "12.345 TFLOP/s", or GFLOP/s below 0.1 TFLOP/s (a CPU), into buf. */
const char *cli_flop_rate(double tflops, char *buf, size_t n);
/* s as a JSON string: '"', '\\' and control characters escaped, well-formed UTF-8 kept as it is, and each byte
 * of no well-formed sequence (a path's Latin-1 name, a cut sequence) written as \ufffd, so that the document
 * stays valid JSON (the byte itself is lost: U+FFFD is the replacement character) */
void cli_json_string(FILE *f, const char *s);
/* A JSON number: the shortest of %.15g, %.16g and %.17g that reads back as x; null when x is NaN or inf
 * (JSON has neither). */
void cli_json_number(FILE *f, double x);
/* Writes `path` through write(f, arg): to a temporary file beside it, renamed over it when complete, so that
 * the file is always whole (the last complete version); as npy_write does, a symbolic link is written
 * through (a dangling one's target created), a replaced file keeps its permissions and a path that is no
 * regular file (a device, a pipe) is written in place. 0, or -1 with a message on stderr naming `cmd`. */
int cli_write_file(const char *cmd, const char *path, void (*write)(FILE *f, void *arg), void *arg);
/* Median, minimum and maximum of n doubles (sorts them). */
void cli_stats(double *v, int n, double *median, double *min, double *max);

/* The host's side of the timed runs, medians in microseconds: the enqueue call alone, and from it to the
 * plan's event completed (enqueue, the device's work, the wait), on an idle queue. */
typedef struct cli_host_times {
    double enqueue_us, step_us;
    int plain_queue; /* measured on a queue without profiling, no event (else on the profiling queue, with one) */
    /* The device's time alone, microseconds (median, min, max; NaN where not measured): from the end of a
     * buffer fill enqueued before the plan, long enough to keep the queue busy through the enqueue call,
     * to the plan's end, so that the interval holds no enqueue call (flash steps of up to 5 ms) */
    double device_us, device_us_min, device_us_max;
    /* The same steps back to back, CLI_B2B_STEPS enqueued behind fills of the pad (a CUDA graph's replays'
     * way): the time a step adds to a busy queue, its inputs left in the device's cache by the step before
     * (median, min, max over rounds; NaN where not measured) */
    double device_b2b_us, device_b2b_us_min, device_b2b_us_max;
    double device_pad_bytes; /* the fill's bytes, written before each step (each of them may evict a cached
                                byte of the step's inputs); 0 where not measured */
} cli_host_times;

/* cli_time_plan's steps back to back (device_b2b_us): steps a round, rounds at most, and the fills of the
 * pad before a round at most */
#define CLI_B2B_STEPS 8
#define CLI_B2B_ROUNDS 5
#define CLI_B2B_FILLS 16

/* Times `iters` enqueues after `warmup` ones, in milliseconds, from profiling events (the host clock
 * around each run when the driver's events give no duration, *host_clock then set); `host` (NULL: not
 * wanted) the host's side, as many steps again on an in-order queue without profiling and no event, and
 * the device's time alone, as many steps again (up to twice as many where the fill ended first) behind
 * a fill that keeps the queue busy. */
flashcl_status cli_time_plan(flashcl_plan *plan, const flashcl_tensors *t, long warmup, long iters,
                             double *median, double *min, double *max, int *host_clock, cli_host_times *host);
/* FLOPs as FlashAttention counts them: 4*B*H*Sq*Sk*d, only computed pairs under a causal mask. */
double cli_flops(const flashcl_problem *p);
/* cli_flops for packed sequences (problem.varlen): the sum over the sequences' own lengths. */
double cli_flops_packed(const flashcl_problem *p, const int32_t *cu_q, const int32_t *cu_k);
/*
 * The mask and bias options every command shares (CLI_MASK_LONGOPTS): --window L,R (a sliding window; -1
 * unbounded), --softcap C, --kv-splits N (split-KV: 0 chosen, 1 none), --sinks L and --alibi (ALiBi slopes
 * 2^(-8(h+1)/H), no value), --precision fp32|tf32x3|tf32 (problem.precision: how fp32 data may be
 * multiplied), --fp8 e4m3|e5m2 (problem.qkv_format: fp8 Q, K and V) and --descale tensor|head
 * (problem.fp8_descale). Stores option `code`'s value in *p; 0 (a message naming `cmd`) on a bad value.
 */
int cli_mask_option(const char *cmd, int code, const char *val, flashcl_problem *p);
/* --kv-dtype: f32, f16 or bf16 (problem.kv_dtype: K and V in that type), or plain, int8 (fp32 scales),
 * int8-f16 (fp16 scales), fp8e4m3 or fp8e5m2; a quantized format
 * makes the problem a KV cache. 0 (and a message) for another name. */
int cli_kv_format(const char *value, flashcl_problem *p);
/* An int8 cache's scales: how many (one per cache row and KV head), and a buffer of them, each about
 * 1/32 (NULL, *err set, on failure). */
size_t cli_kv_scale_count(const flashcl_problem *p);
cl_mem cli_kv_scales(cl_context ctx, const flashcl_problem *p, hm_rng *rng, cl_int *err);
/* fp8 attention's descale factors (problem.fp8_descale: 3 or 3 x batch x heads_kv fp32), each drawn from
 * 0.5 .. 2, in a new buffer (NULL, *err set, on failure). */
cl_mem cli_descale(cl_context ctx, const flashcl_problem *p, hm_rng *rng, cl_int *err);
/* ALiBi's slopes for problem.alibi == 1: 2^(-8(h+1)/heads_q) for head h, in a new buffer (NULL, *err
 * set, on failure). */
cl_mem cli_alibi_slopes(cl_context ctx, const flashcl_problem *p, cl_int *err);
/* --sinks L: the sink logit every query head gets (problem.sinks), and its buffer (heads_q floats of it;
 * NULL, *err set, on failure). */
extern double cli_sink_logit;
cl_mem cli_sinks(cl_context ctx, const flashcl_problem *p, cl_int *err);
/* "causal", "full", plus " window L,R", " softcap C", " alibi" and " sinks L" when set. */
const char *cli_mask_name(const flashcl_problem *p, char *buf, size_t n);
/* The local memory tiles may use on a device under a policy (NULL: the default one): policy, not a
 * fact of the device, so it is read off the chooser's answer for a small problem. 0 when none fits. */
uint64_t cli_tile_budget(const flashcl_device_profile *pr, const flashcl_policy *policy);
/* A flash configuration's tiles in a few characters: "64x64 tpr16 r4 dc32 vc32". */
const char *cli_tiles(const flashcl_config *c, char *buf, size_t n);

#endif
