/*
 * cli.h: what the flashcl command's subcommands share (defined in cli.c): option parsing helpers,
 * failure messages, profiling-event timing, FLOP counts and JSON string output.
 */
#ifndef FLASHCL_CLI_H
#define FLASHCL_CLI_H

#include "flashcl.h"
#include "hostmath.h"

#include <stdio.h>

/* Parses an integer option value; prints an error naming the option and returns 0 on bad input. */
int cli_int(const char *opt, const char *value, long min, long max, long *out);
int cli_dtype(const char *value, flashcl_dtype *out);

/* Nonzero when arg is name or alias (alias may be NULL). */
int cli_is(const char *arg, const char *name, const char *alias);

/*
 * Inside a subcommand's option loop (variables argc, argv, i): when argv[i] is name or alias (alias may
 * be NULL), parses the next argument as an integer in [lo, hi] into dst and continues the loop; on a
 * bad value the message names the option and the subcommand returns 2.
 */
#define CLI_INT_OPTION(name, alias, lo, hi, dst)                                                         \
    if (cli_is(argv[i], name, alias)) {                                                              \
        long cli_value_;                                                                             \
        if (!cli_int(argv[i], i + 1 < argc ? argv[i + 1] : NULL, lo, hi, &cli_value_))               \
            return 2;                                                                                \
        dst = cli_value_;                                                                            \
        ++i;                                                                                         \
        continue;                                                                                    \
    }
/* Prints a flashcl failure with the context's message and returns the exit status 1. */
int cli_fail(const flashcl_context *ctx, const char *what, flashcl_status st);
/* NULL when `path` can be written (an existing writable file, or a new one in an existing writable
 * directory, which is not created); else why not ("DIR: reason"), in a thread-local buffer. */
const char *cli_unwritable(const char *path);
/* "12.345 TFLOP/s", or GFLOP/s below 0.1 TFLOP/s (a CPU), into buf. */
const char *cli_flop_rate(double tflops, char *buf, size_t n);
void cli_json_string(FILE *f, const char *s);
/* Median, minimum and maximum of n doubles (sorts them). */
void cli_stats(double *v, int n, double *median, double *min, double *max);

/* Times `iters` enqueues after `warmup` ones, in milliseconds, from profiling events (the host clock
 * around each run when the driver's events give no duration, *host_clock then set). */
flashcl_status cli_time_plan(flashcl_plan *plan, const flashcl_tensors *t, long warmup, long iters,
                             double *median, double *min, double *max, int *host_clock);
/* FLOPs as FlashAttention counts them: 4*B*H*Sq*Sk*d, only computed pairs under a causal mask. */
double cli_flops(const flashcl_problem *p);
/* cli_flops for packed sequences (problem.varlen): the sum over the sequences' own lengths. */
double cli_flops_packed(const flashcl_problem *p, const int32_t *cu_q, const int32_t *cu_k);
/*
 * The mask and bias options every command shares: --window L,R (a sliding window; -1 unbounded) and
 * --softcap C, --kv-splits N (split-KV: 0 chosen, 1 none) and --alibi (ALiBi slopes 2^(-8(h+1)/H), no
 * value). Returns 1 when `a` was one with a
 * value (consumed, stored in *p), 3 for --alibi, 0 when it was none of them, 2 on a bad value (a
 * message on stderr naming `cmd`).
 */
int cli_mask_option(const char *cmd, const char *a, const char *val, flashcl_problem *p);
/* --kv-dtype: f32, f16 or bf16 (problem.kv_dtype: K and V in that type), or plain, int8 (fp32 scales),
 * int8-f16 (fp16 scales), fp8e4m3 or fp8e5m2; a quantized format
 * makes the problem a KV cache. 0 (and a message) for another name. */
int cli_kv_format(const char *value, flashcl_problem *p);
/* An int8 cache's scales: how many (one per cache row and KV head), and a buffer of them, each about
 * 1/32 (NULL, *err set, on failure). */
size_t cli_kv_scale_count(const flashcl_problem *p);
cl_mem cli_kv_scales(cl_context ctx, const flashcl_problem *p, hm_rng *rng, cl_int *err);
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
