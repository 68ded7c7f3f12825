/* SPDX-License-Identifier: MIT */
/*
 * internal.h: the library's private types and the functions its files share.
 * Nothing here is exported; the public API is include/flashcl.h.
 */
#ifndef FLASHCL_INTERNAL_H
#define FLASHCL_INTERNAL_H

#include "flashcl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#define FLASHCL_ERRMSG_MAX 8192

/* One program in the context's in-memory cache, or one being compiled (program.c). */
typedef struct program_entry program_entry;

struct flashcl_context {
    cl_context cl_ctx;
    cl_device_id device;
    cl_command_queue queue;
    flashcl_device_profile profile;
    char device_identity[512]; /* platform, device, driver: part of every disk-cache key */
    uint64_t serial;           /* this context among all of the process's, for error.c's records */

    atomic_int validate;       /* set from any thread: read it with fcl_context_validating() */
    int32_t validate_max_rows;
    char *cache_dir;          /* NULL: disk cache off */
    char *extra_build_options;
    flashcl_tuning_db *tuning_db; /* NULL: heuristic only */
    flashcl_path path;            /* the policy: which flash kernel (settings.path / $FLASHCL_PATH) */
    uint64_t local_mem_limit;     /* the policy: a cap on tiles' local memory, 0 none */
    int has_override;         /* with override: guarded by override_lock, read with fcl_context_get_override() */
    flashcl_config override;

    pthread_mutex_t lock;          /* guards the program cache and the stats */
    pthread_mutex_t override_lock; /* guards the override; a leaf: nothing else is taken under it */
    int mutexes;                   /* how many of the two are initialised (a context torn down half made) */
    program_entry *programs;
    flashcl_stats stats;
    /* The last error is kept per thread (error.c), not here: two threads failing at once on one
     * context each read their own. */
};

/* Embedded kernel sources (generated at build time from cl/ sources by tools/embed_cl.py). */
typedef struct embedded_source {
    const char *name;
    const char *text;
} embedded_source;
extern const embedded_source flashcl_embedded_sources[];
extern const size_t flashcl_embedded_source_count;
const char *flashcl_source_text(const char *name);
/* The embedded texts of a program's parts ("common.cl geometry.cl flash_fwd.cl": a kernel's `sources`
 * in src/kernels.c), in order, and one hash of them all (program.c). Returns the number of parts, 0
 * when a part is missing or there are more than FCL_MAX_PARTS. */
#define FCL_MAX_PARTS 16
size_t fcl_source_texts(const char *sources, const char *texts[FCL_MAX_PARTS], uint64_t *hash);

/* The ABI guard of an entry point (src/abi.c): FLASHCL_SUCCESS, or the mismatch reported as
 * "function: ..." in the thread's last error without a context. */
flashcl_status fcl_abi_guard(const flashcl_abi *abi, const char *function);

/* printf-style checks of the library's own formats (vsnprintf: C99's, mingw-w64's too with
 * __USE_MINGW_ANSI_STDIO, whose archetype is gnu_printf there) */
#if defined(__MINGW32__)
#define FCL_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define FCL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif

/* error.c */
flashcl_status fcl_fail(flashcl_context *ctx, flashcl_status status, const char *fmt, ...) FCL_PRINTF(3, 4);
flashcl_status fcl_fail_cl(flashcl_context *ctx, cl_int err, const char *what);
/* fcl_fail that also keeps the OpenCL code behind the failure (flashcl_context_last_cl_error). */
flashcl_status fcl_fail_code(flashcl_context *ctx, flashcl_status status, cl_int err, const char *fmt, ...)
    FCL_PRINTF(4, 5);
/* Drops the calling thread's error record of ctx (ctx is being destroyed). */
void fcl_forget_errors(const flashcl_context *ctx);
flashcl_status fcl_status_from_cl(cl_int err);
const char *fcl_cl_error_name(cl_int err);

/* Checks a condition at the API boundary; on failure records the message and returns the status. */
#define validate_or_return(ctx, cond, status, ...)              \
    do {                                                        \
        if (!(cond))                                            \
            return fcl_fail((ctx), (status), __VA_ARGS__);      \
    } while (0)

/* context.c: the settings other threads may change while plans are made and enqueued. */
/* *has: whether the context has an override; *cfg: a copy of it (left alone without one). */
void fcl_context_get_override(flashcl_context *ctx, int *has, flashcl_config *cfg);
int fcl_context_validating(const flashcl_context *ctx);

/* device.c: the device a selector names (see flashcl_context_create_default); NO_DEVICE when none. */
flashcl_status fcl_find_device(const char *selector, cl_device_id *found);

/* The device probes are src/probe.h's, the PTX finishing src/ptx.h's. */
/* flashcl_device_profile_query with the test compiles in `context` (NULL: a temporary one) and the
 * static local memory probe's result kept in `cache_dir` (NULL: probed every time). */
flashcl_status fcl_profile_query(cl_device_id device, cl_context context, const char *cache_dir,
                                 flashcl_device_profile *pr);
/* program.c: build with in-memory and disk caches. */
flashcl_status fcl_get_program(flashcl_context *ctx, const char *source_name, const char *options,
                               cl_program *out);
void fcl_release_programs(flashcl_context *ctx);
char *fcl_resolve_cache_dir(const char *setting);
/* diskcache.c (its other functions: diskcache.h): names and checks cache files; validation samples rows. */
uint64_t fcl_hash64(const void *data, size_t len, uint64_t seed);

/* problem.c: description checks and layout math shared by plans and the chooser. */
typedef struct resolved_layout {
    flashcl_strides q, k, v, o;
    uint64_t q_bytes, k_bytes, v_bytes, o_bytes, lse_bytes; /* minimum buffer sizes */
    flashcl_strides mask;                         /* resolved mask strides (when attn_mask) */
    uint64_t alibi_bytes, mask_bytes, key_padding_bytes, cu_seqlens_bytes, sinks_bytes;
    uint64_t cache_seqlens_bytes, block_table_bytes, kv_new_bytes, v_new_bytes; /* k_new's, v_new's */
    uint64_t kv_scale_bytes; /* each of k_scale and v_scale (an int8 cache) */
    uint64_t cache_batch_idx_bytes, cache_leftpad_bytes;
    uint64_t descale_bytes; /* fp8 attention's descale factors (problem.fp8_descale) */
    int32_t cache_batch; /* the cache's sequences (K/V batches): problem.cache_batch, else batch */
    int32_t max_pages; /* paged cache: pages per sequence, ceil(seq_kv / page_size) */
    /* Output rows as (groups, rows per group): (batch * heads_q, seq_q), or (heads_q, total_q) for
     * packed sequences; flat row = group * rows + row, the LSE's layout too. */
    int64_t row_groups, group_rows;
    int64_t kv_batches, kv_rows; /* K's and V's batches (num_pages of a paged cache) of rows (page_size) */
} resolved_layout;
flashcl_status fcl_check_problem(flashcl_context *ctx, const flashcl_problem *p, resolved_layout *layout);
/* The problem with heads_kv and seq_kv of 0 read as the query side's (flashcl_problem_default leaves
 * them 0): p itself when both are set, else a copy in *scratch. Every public call that takes a problem
 * passes it through here first. */
const flashcl_problem *fcl_problem_sides(const flashcl_problem *p, flashcl_problem *scratch);
float fcl_effective_scale(const flashcl_problem *p);
/* A decode step: at most this many queries per sequence. The chooser gives such problems split keys,
 * packed GQA heads and wide column groups, and the tuning database files them apart from prefill. */
#define FCL_DECODE_MAX_QUERIES 16
int fcl_is_decode(const flashcl_problem *p);
/* K's and V's storage dtype (problem.kv_dtype, else dtype), and whether it differs from Q's. */
flashcl_dtype fcl_kv_dtype(const flashcl_problem *p);
int fcl_kv_mixed(const flashcl_problem *p);
/* Bytes an element of K and V as stored (1: a quantized cache, or fp8 attention; else K's and V's dtype),
 * and of Q (1 under fp8 attention) */
size_t fcl_kv_elem(const flashcl_problem *p);
size_t fcl_q_elem(const flashcl_problem *p);
/* an int8 cache's scale (f32 or f16); 1 for the other caches, which have none */
size_t fcl_kv_scale_elem(const flashcl_problem *p);
/* TF32 products a product under problem.precision: 3 (tf32x3), 1 (tf32) or 0 (fp32). */
int fcl_tf32(const flashcl_problem *p);
/* V's and O's head dim: problem.head_dim_v, or head_dim where that is 0. */
int32_t fcl_head_dim_v(const flashcl_problem *p);
/* The keys row i sees, as offsets from its aligned position i + seq_kv - seq_q: [-left, +right], -1 for
 * an unbounded side; the causal mask folded in (right <= 0); a side wider than the sequences clamped
 * to them (the same keys). */
void fcl_visible_window(const flashcl_problem *p, int32_t *left, int32_t *right);
/* Whether the kernels' key positions (geometry.cl visible_keys) need 64 bits: sequences past 2^30. */
int fcl_wide_positions(const flashcl_problem *p);
/* Whether two different indices of a strided layout (n <= FCL_LAYOUT_DIMS dimensions of strides >= 0, over a
 * last one of stride 1 and extent d) map to one element (the usual sufficient test: each stride, in order, at
 * least the span of the smaller ones). */
#define FCL_LAYOUT_DIMS 4
int fcl_layout_overlaps(const int64_t *strides, const int64_t *extents, int n, int64_t d);
/* Bytes per element of the attn_mask buffer (problem.mask_dtype). */
size_t fcl_mask_elem(const flashcl_problem *p);

/* tiles.c: the configuration choice. */
/* What a choice is made within: the path, the tuning database, an override, the local memory and
 * work-group limits; `shrunk` (the reason) when a plan asks again after compiling, with smaller
 * limits and neither database nor override; `portable_why` forces the portable kernel and says why. */
typedef struct fcl_choice {
    flashcl_path path;
    const flashcl_tuning_db *db;     /* NULL: heuristic only */
    const flashcl_config *override;  /* NULL: none */
    uint64_t local_mem;              /* bytes of local memory the chooser's tiles may use */
    uint64_t local_mem_max;          /* what one work-group may take at all (an override's limit): the
                                        device's static size under the cap; local_mem is the chooser's
                                        budget within it (two work-groups a compute unit) */
    size_t work_group;               /* work-items a work-group may have */
    const char *shrunk;
    const char *portable_why;
    /* Halvings of the register block after a build kept arrays in private memory (a GPU's
     * CL_KERNEL_PRIVATE_MEM_SIZE > 0: spilled registers, or arrays the compiler left in memory). */
    int reg_shift;
} fcl_choice;
int32_t fcl_naive_chunk(const flashcl_device_profile *pr); /* (src/kernels/naive.c) */
/* The choice a profile gets under a policy (resolved: path a flashcl_path, local_mem_limit the cap or
 * 0): its limits, the policy's path and database, no override. */
void fcl_choice_of(const flashcl_device_profile *pr, flashcl_path path, uint64_t local_mem_limit,
                   const flashcl_tuning_db *db, fcl_choice *ch);
/* The local memory tiles may use: min(the device's, 64 KiB, the cap when nonzero); on a GPU whose
 * static arrays may take more (profile.local_mem_static), up to that or half a compute unit's. */
uint64_t fcl_local_mem_budget(const flashcl_device_profile *pr, uint64_t cap);
/* The most local memory one work-group may take at all, under cap (0: none), an override's limit: on a
 * GPU whose static arrays reach past the reported size the whole static size, on a CPU the reported
 * size; else the budget. */
uint64_t fcl_local_mem_max(const flashcl_device_profile *pr, uint64_t cap);
/* Work-groups of `local_bytes` each that a compute unit's local memory holds (0 on CPUs). */
uint32_t fcl_groups_per_cu(const flashcl_device_profile *pr, uint64_t local_bytes);
/* A policy's path and cap with the environment's defaults filled in; INVALID_ARGUMENT (the message
 * names `who`) for a path that is not one, or a FLASHCL_PATH that does not parse. */
flashcl_status fcl_resolve_policy(const char *who, int path, uint64_t local_mem_limit, flashcl_path *path_out,
                                  uint64_t *limit_out);
/* The one chooser: the override, else the matrix-unit kernel where path, device and problem allow
 * it, else the database, else the heuristic; every flash config finished in one place. Failures are
 * reported on ctx (may be NULL: the thread's context-free message). */
flashcl_status fcl_choose(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                          const flashcl_problem *p, flashcl_algorithm algorithm, flashcl_config *config);
/* The same for a problem fcl_check_problem already passed (a plan's: checked once). */
flashcl_status fcl_choose_checked(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                                  const flashcl_problem *p, flashcl_algorithm algorithm, flashcl_config *config);
/* The chooser's ordered candidates for a plan (src/candidates.c): the first is fcl_choose_checked's
 * config; after it the same kernel with a smaller register block, then its ladders of smaller tiles (one
 * under each work-group bound: the device's, then halvings), then the next kernel in the order of
 * preference with its own. A plan walks them with what the compiler reported. */
#define FCL_MAX_CANDIDATES 160
typedef enum fcl_step {
    FCL_STEP_FIRST = 0,     /* the chooser's config */
    FCL_STEP_REGISTERS = 1, /* the same kernel, a smaller register block */
    FCL_STEP_SHRINK = 2,    /* the same kernel, smaller tiles (a ladder's) */
    FCL_STEP_NEXT_KERNEL = 3
} fcl_step;
typedef struct fcl_candidates {
    int n;
    flashcl_config config[FCL_MAX_CANDIDATES];
    unsigned char step[FCL_MAX_CANDIDATES]; /* fcl_step */
    size_t wg_bound[FCL_MAX_CANDIDATES];    /* the work-items it was chosen within */
} fcl_candidates;
/* What the compiler reported for a candidate's kernel. */
typedef struct fcl_compiled {
    int built;           /* 0: its program did not build (the log is in the context's last error) */
    size_t work_group;   /* CL_KERNEL_WORK_GROUP_SIZE */
    uint64_t local_mem;  /* CL_KERNEL_LOCAL_MEM_SIZE */
    uint64_t private_mem; /* CL_KERNEL_PRIVATE_MEM_SIZE */
} fcl_compiled;
/* Puts "not wgmma (why_not); " before c's path reason (truncated to the field). */
void fcl_note_not_wgmma(flashcl_config *c, const char *why_not);
/* Whether two configs run the same kernel with the same shape (every field a plan acts on). */
int fcl_config_same_shape(const flashcl_config *a, const flashcl_config *b);
flashcl_status fcl_choose_candidates(flashcl_context *ctx, const flashcl_device_profile *pr, const fcl_choice *ch,
                                     const flashcl_problem *p, flashcl_algorithm algorithm, fcl_candidates *list);
/* The candidate a plan takes after candidate i compiled as `got` (local_limit: the local memory a compiled
 * kernel may take; dv: V's head dim; *out on entry: the config the plan holds for candidate i): i itself
 * where it fits (a spill with no smaller register block keeps it), else the index of the next with *out
 * its config and why, else -1. */
int fcl_next_candidate(const flashcl_device_profile *pr, const fcl_candidates *list, int i, const fcl_compiled *got,
                       uint64_t local_limit, int32_t dv, flashcl_config *out);
/* The portable kernel's heuristic tiles within explicit limits (no packing, splits or finishing;
 * src/kernels/portable.c). */
flashcl_status fcl_choose_flash(const flashcl_device_profile *pr, const flashcl_problem *p, uint64_t budget, int reg_shift,
                                size_t max_wg, flashcl_config *cfg);
/* Query heads packed per work-group for flash: heads_q / heads_kv for GQA decode steps (fcl_is_decode),
 * else 1. The problem as the tiles see it then has seq_q * pack rows and heads_q / pack heads. */
int32_t fcl_gqa_pack(const flashcl_problem *p);
void fcl_packed_view(const flashcl_problem *p, int32_t pack, flashcl_problem *view);
/* Key splits (split-KV) for flash tiles cfg: the problem's kv_splits, or the device's choice (kernels.c:
 * below the kernels' modules, which ask it too). */
int32_t fcl_choose_splits(const flashcl_device_profile *pr, const flashcl_problem *p, const flashcl_config *cfg);

/* tuning.c */
flashcl_tuning_db *fcl_tuning_db_from_text(const char *text); /* the user-file parser, for the fuzzer */
/* The first entry for the device and problem, in the lookup's order (the most specific identity, the user's file
 * before the shipped table, more problem fields, later lines), that `fits` accepts (NULL: any): its tiles into cfg,
 * where it came from into source and detail; 0 where none. */
int fcl_tuning_lookup(const flashcl_tuning_db *db, const flashcl_device_profile *pr, const flashcl_problem *p,
                      flashcl_config *cfg, char *source, size_t source_len, char *detail, size_t detail_len,
                      int (*fits)(flashcl_config *cfg, const char *source, const char *detail, void *arg), void *arg);

/* standard.c (CLBlast) */
typedef struct standard_state standard_state;
flashcl_status fcl_standard_setup(flashcl_plan *pl);
flashcl_status fcl_standard_enqueue(flashcl_plan *pl, cl_mem q, cl_mem k, cl_mem v, cl_mem o, cl_mem lse,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event);
void fcl_standard_free(standard_state *st);
uint64_t fcl_standard_extra_bytes(const standard_state *st);

/* validate.c */
typedef struct validation_state validation_state;
flashcl_status fcl_validate_run(flashcl_plan *plan, const flashcl_tensors *t,
                                cl_event flash_done);
void fcl_validation_free(validation_state *vs);
void fcl_tolerance(const flashcl_problem *p, int matrix_units, double *atol, double *rtol);

/* The caller's offsets into its buffers for one enqueue, in elements of each buffer (the kernels' *_off
 * arguments): flashcl_tensors.offsets over the element sizes. */
typedef struct fcl_offsets {
    cl_long q, k, v, o, lse, alibi, mask, kpm, cu_q, cu_k, cache_lens, bt, k_new, v_new, k_scale, v_scale, sinks, ws,
        cache_idx, leftpad, descale;
} fcl_offsets;

struct flashcl_plan {
    flashcl_context *ctx;
    flashcl_problem problem; /* defaults resolved */
    resolved_layout layout;
    flashcl_config config;
    char options[512];
    int kernel_id; /* fcl_kernel_id (src/kernels.h) of `kernel` */
    cl_kernel kernel;
    size_t global[2], local[2];
    validation_state *validation;
    flashcl_validation report;
    standard_state *standard; /* FLASHCL_ALGO_STANDARD only */
    cl_kernel combine;        /* split-KV: merges the splits' partial results */
    /* split-KV's scratch: the partial outputs (splits, rows, head_dim) then their log-sum-exps (splits,
     * rows), fp32, ws_bytes in all; in the caller's workspace or, without one, in `partial` (allocated by
     * the first enqueue that needs it) */
    uint64_t ws_bytes, ws_lse_floats; /* (ws_lse_floats: where the log-sum-exps start, in floats) */
    cl_mem partial;
    /* flash_decode_mma under split-KV (up to 16 splits) merges in the kernel (no `combine`): a counter an
     * (batch, KV head, row block), the plan's own, zeroed by the first enqueue (allocated there) and left
     * zero by every step */
    int fused_merge;
    size_t counter_slots;
    cl_mem counters;
    /* The last enqueue that used the plan's own scratch (partial, or standard attention's scores): its
     * queue, retained, and where that queue is out of order its event, retained; the next such enqueue on
     * another queue or an out-of-order one waits on that event (on an in-order last queue: a marker
     * enqueued there then), one on the same in-order queue on nothing (enqueue.c). */
    cl_event last_use;
    cl_command_queue last_queue;
    int last_in_order; /* last_queue runs its commands in order */
    size_t combine_global, combine_local;
    cl_kernel append;         /* kv_append: writes k_new/v_new into the cache first */
    size_t append_global;
    size_t gemm_ld[4];        /* its GEMMs' row strides for Q, K, V, O */
    /* The enqueue in progress (a plan is enqueued by one thread at a time): its queue and offsets. */
    cl_command_queue queue;
    fcl_offsets off;
    /* The tensors whose arguments are set on the plan's kernels (bound: 1), from the last enqueue that checked
     * and set them, their buffers retained (a released handle cannot come back as another buffer while it
     * is held; a buffer's size and context never change): an enqueue with the same tensors neither checks
     * nor sets them again (enqueue.c; docs/design/decode_mma.md, decode-mma-13); released by
     * flashcl_plan_release_tensors (and so at destroy). */
    int bound;
    flashcl_tensors bound_tensors;
};

/* Environment values, refused by name when malformed (a status and a message from `who`): a flag
 * (1/on/yes/true, 0/off/no/false; unset or empty: fallback), and a byte count with an optional K, M or G
 * (binary; KiB, MiB, GiB and KB, MB, GB read the same; unset or empty: 0). */
flashcl_status fcl_env_flag(const char *who, const char *name, int fallback, int *out);
flashcl_status fcl_env_bytes(flashcl_context *ctx, const char *who, const char *name, uint64_t *out);

/* Small string helpers. */
char *fcl_strdup(const char *s);
void fcl_strlcpy(char *dst, const char *src, size_t n);

#endif
