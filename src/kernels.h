/* SPDX-License-Identifier: MIT */
/*
 * kernels.h: every kernel's calling convention in one table (src/kernels.c): the program's source
 * parts, the entry point, the build options and the arguments by name. Everything that launches a
 * kernel binds its arguments through it, and tests/test_kernels.c checks it against the compiler.
 */
#ifndef FLASHCL_KERNELS_H
#define FLASHCL_KERNELS_H

#include "internal.h"

typedef enum fcl_arg_kind { FCL_ARG_MEM, FCL_ARG_INT, FCL_ARG_LONG, FCL_ARG_FLOAT } fcl_arg_kind;

/* Each kernel's parameters, in the order and with the names of its .cl file. X(name, kind). */
#define FCL_STRIDE_ARGS(X, t) X(t##_sb, LONG) X(t##_ss, LONG) X(t##_sh, LONG)

/* cl/flash_fwd.cl */
#define FCL_FLASH_FWD_ARGS(X)                                                                              \
    X(Q, MEM) X(K, MEM) X(V, MEM) X(O, MEM) X(LSE, MEM) X(seq_q, INT) X(seq_kv, INT) X(heads_q, INT)       \
    X(group, INT) X(scale_log2, FLOAT) X(win_left, INT) X(win_right, INT) X(softcap_log2, FLOAT)             \
    X(write_lse, INT) FCL_STRIDE_ARGS(X, q) FCL_STRIDE_ARGS(X, k) FCL_STRIDE_ARGS(X, v)                    \
    FCL_STRIDE_ARGS(X, o) X(ALIBI, MEM) X(alibi_per_batch, INT) X(MASK, MEM) FCL_STRIDE_ARGS(X, m)         \
    X(KPM, MEM) X(CU_Q, MEM) X(CU_K, MEM) X(total_q, INT) X(total_kv, INT) X(n_splits, INT) X(OP, MEM)     \
    X(LP, MEM) X(rows_total, LONG) X(CACHE_LENS, MEM) X(BT, MEM) X(max_pages, INT) X(num_pages, INT)         \
    X(q_off, LONG) X(k_off, LONG) X(v_off, LONG) X(o_off, LONG) X(lse_off, LONG) X(alibi_off, LONG)         \
    X(mask_off, LONG) X(kpm_off, LONG) X(cu_q_off, LONG) X(cu_k_off, LONG) X(cache_lens_off, LONG)          \
    X(bt_off, LONG) X(SINKS, MEM) X(sinks_off, LONG) X(op_off, LONG) X(lp_off, LONG) X(BATCH_IDX, MEM)         \
    X(LEFT_PAD, MEM) X(cache_batch, INT) X(cache_idx_off, LONG) X(leftpad_off, LONG)

/* cl/flash_mma.cl */
#define FCL_FLASH_MMA_ARGS(X)                                                                              \
    X(Q, MEM) X(K, MEM) X(V, MEM) X(O, MEM) X(LSE, MEM) X(seq_q, INT) X(seq_kv, INT) X(heads_q, INT)       \
    X(group, INT) X(scale_log2, FLOAT) X(win_left, INT) X(win_right, INT) X(write_lse, INT)                 \
    FCL_STRIDE_ARGS(X, q) FCL_STRIDE_ARGS(X, k) FCL_STRIDE_ARGS(X, v) FCL_STRIDE_ARGS(X, o)                 \
    X(q_off, LONG) X(k_off, LONG) X(v_off, LONG) X(o_off, LONG) X(lse_off, LONG) X(SINKS, MEM) X(sinks_off, LONG)

/* cl/flash_decode.cl */
#define FCL_FLASH_DECODE_ARGS(X)                                                                           \
    X(Q, MEM) X(K, MEM) X(V, MEM) X(O, MEM) X(LSE, MEM) X(seq_q, INT) X(seq_kv, INT) X(heads_q, INT)       \
    X(group, INT) X(scale_log2, FLOAT) X(win_left, INT) X(win_right, INT) X(softcap_log2, FLOAT)             \
    X(write_lse, INT) FCL_STRIDE_ARGS(X, q) FCL_STRIDE_ARGS(X, k) FCL_STRIDE_ARGS(X, v)                    \
    FCL_STRIDE_ARGS(X, o) X(ALIBI, MEM) X(alibi_per_batch, INT) X(KPM, MEM) X(n_splits, INT) X(OP, MEM)    \
    X(LP, MEM) X(rows_total, LONG) X(CACHE_LENS, MEM) X(BT, MEM) X(max_pages, INT) X(num_pages, INT)         \
    X(K_SCALE, MEM) X(V_SCALE, MEM) X(q_off, LONG) X(k_off, LONG) X(v_off, LONG) X(o_off, LONG)             \
    X(lse_off, LONG) X(alibi_off, LONG) X(kpm_off, LONG) X(cache_lens_off, LONG) X(bt_off, LONG)            \
    X(k_scale_off, LONG) X(v_scale_off, LONG) X(SINKS, MEM) X(sinks_off, LONG) X(op_off, LONG) X(lp_off, LONG) \
    X(BATCH_IDX, MEM) X(LEFT_PAD, MEM) X(cache_batch, INT) X(cache_idx_off, LONG) X(leftpad_off, LONG)

/* cl/flash_combine.cl */
#define FCL_FLASH_COMBINE_ARGS(X)                                                                          \
    X(OP, MEM) X(LP, MEM) X(n_splits, INT) X(rows_total, LONG) X(O, MEM) X(LSE, MEM) X(write_lse, INT)     \
    X(group_rows, INT) X(heads_q, INT) FCL_STRIDE_ARGS(X, o) X(varlen, INT) X(o_off, LONG) X(lse_off, LONG) \
    X(SINKS, MEM) X(sinks_off, LONG) X(op_off, LONG) X(lp_off, LONG)

/* cl/naive.cl: the problem's part of naive_fwd's and naive_ref_rows's parameters (ATTN_PARAMS) */
#define FCL_NAIVE_PROBLEM_ARGS(X)                                                                          \
    X(seq_q, INT) X(seq_kv, INT) X(heads_q, INT) X(group, INT) X(scale, FLOAT) X(win_left, INT)            \
    X(win_right, INT) X(softcap, FLOAT) FCL_STRIDE_ARGS(X, q) FCL_STRIDE_ARGS(X, k) FCL_STRIDE_ARGS(X, v)  \
    X(alibi, MEM) X(alibi_per_batch, INT) X(mask, MEM) FCL_STRIDE_ARGS(X, m) X(kpm, MEM) X(cu_q, MEM)      \
    X(cu_k, MEM) X(total_q, INT) X(total_kv, INT) X(batch, INT) X(cache_lens, MEM) X(bt, MEM)              \
    X(max_pages, INT) X(num_pages, INT) X(k_scale, MEM) X(v_scale, MEM) X(sinks, MEM) X(cache_idx, MEM)      \
    X(leftpad, MEM) X(cache_batch, INT)
/* (cl/naive.cl's INPUT_OFFSET_PARAMS) */
#define FCL_INPUT_OFFSET_ARGS(X)                                                                           \
    X(q_off, LONG) X(k_off, LONG) X(v_off, LONG) X(alibi_off, LONG) X(mask_off, LONG) X(kpm_off, LONG)      \
    X(cu_q_off, LONG) X(cu_k_off, LONG) X(cache_lens_off, LONG) X(bt_off, LONG) X(k_scale_off, LONG)       \
    X(v_scale_off, LONG) X(sinks_off, LONG) X(cache_idx_off, LONG) X(leftpad_off, LONG)
#define FCL_NAIVE_FWD_ARGS(X)                                                                              \
    X(Q, MEM) X(K, MEM) X(V, MEM) FCL_NAIVE_PROBLEM_ARGS(X) X(O, MEM) X(LSE, MEM) X(write_lse, INT)        \
    X(total_rows, LONG) FCL_STRIDE_ARGS(X, o) FCL_INPUT_OFFSET_ARGS(X) X(o_off, LONG) X(lse_off, LONG)
#define FCL_NAIVE_REF_ROWS_ARGS(X)                                                                         \
    X(Q, MEM) X(K, MEM) X(V, MEM) FCL_NAIVE_PROBLEM_ARGS(X) X(rows, MEM) X(n_rows, LONG) X(ref, MEM)       \
    X(ref_lse, MEM) FCL_INPUT_OFFSET_ARGS(X)
#define FCL_COMPARE_ROWS_ARGS(X)                                                                           \
    X(O, MEM) X(LSE, MEM) X(has_lse, INT) X(seq_q, INT) X(heads_q, INT) FCL_STRIDE_ARGS(X, o) X(rows, MEM) \
    X(n_rows, LONG) X(ref, MEM) X(ref_lse, MEM) X(atol, FLOAT) X(rtol, FLOAT) X(stats, MEM) X(info, MEM)   \
    X(o_off, LONG) X(lse_off, LONG)

/* cl/kvcache.cl */
#define FCL_KV_APPEND_ARGS(X)                                                                              \
    X(K, MEM) X(V, MEM) X(K_NEW, MEM) X(V_NEW, MEM) X(cache_lens, MEM) X(bt, MEM) X(seq_new, INT)          \
    X(heads_kv, INT) X(seq_kv, INT) X(max_pages, INT) X(num_pages, INT) FCL_STRIDE_ARGS(X, k)              \
    FCL_STRIDE_ARGS(X, v) X(total, LONG) X(K_SCALE, MEM) X(V_SCALE, MEM) X(k_off, LONG) X(v_off, LONG)    \
    X(k_new_off, LONG) X(v_new_off, LONG) X(cache_lens_off, LONG) X(bt_off, LONG) X(k_scale_off, LONG)     \
    X(v_scale_off, LONG) X(cache_idx, MEM) X(cache_batch, INT) X(cache_idx_off, LONG)

/* cl/standard.cl */
#define FCL_SOFTMAX_ROWS_ARGS(X)                                                                           \
    X(S, MEM) X(rows, INT) X(row0, INT) X(head0, INT) X(seq_q, INT) X(seq_kv, INT) X(win_left, INT)        \
    X(win_right, INT) X(softcap, FLOAT) X(LSE, MEM) X(write_lse, INT) X(lse_off, LONG)
#define FCL_CONVERT_ARGS(X)                                                                                \
    X(src, MEM) X(dst, MEM) X(seq, INT) X(heads, INT) X(head_dim, INT) X(sb, LONG) X(ss, LONG) X(sh, LONG) \
    X(total, LONG) X(off, LONG)

/* Argument indices: FA_seq_q is flash_fwd's seq_q, and so on (one prefix per kernel). */
#define FCL_E_FA(name, kind) FA_##name,
#define FCL_E_MA(name, kind) MA_##name,
#define FCL_E_FC(name, kind) FC_##name,
#define FCL_E_DE(name, kind) DE_##name,
#define FCL_E_NF(name, kind) NF_##name,
#define FCL_E_NR(name, kind) NR_##name,
#define FCL_E_CR(name, kind) CR_##name,
#define FCL_E_KA(name, kind) KA_##name,
#define FCL_E_SR(name, kind) SR_##name,
#define FCL_E_CV(name, kind) CV_##name,
enum { FCL_FLASH_FWD_ARGS(FCL_E_FA) FA_COUNT_ };
enum { FCL_FLASH_MMA_ARGS(FCL_E_MA) MA_COUNT_ };
enum { FCL_FLASH_COMBINE_ARGS(FCL_E_FC) FC_COUNT_ };
enum { FCL_FLASH_DECODE_ARGS(FCL_E_DE) DE_COUNT_ };
enum { FCL_NAIVE_FWD_ARGS(FCL_E_NF) NF_COUNT_ };
enum { FCL_NAIVE_REF_ROWS_ARGS(FCL_E_NR) NR_COUNT_ };
enum { FCL_COMPARE_ROWS_ARGS(FCL_E_CR) CR_COUNT_ };
enum { FCL_KV_APPEND_ARGS(FCL_E_KA) KA_COUNT_ };
enum { FCL_SOFTMAX_ROWS_ARGS(FCL_E_SR) SR_COUNT_ };
enum { FCL_CONVERT_ARGS(FCL_E_CV) CV_COUNT_ };

typedef enum fcl_kernel_id {
    FCL_K_FLASH_FWD,
    FCL_K_FLASH_MMA,
    FCL_K_FLASH_WGMMA, /* flash_mma's arguments (MA_*) */
    FCL_K_FLASH_DECODE,
    FCL_K_FLASH_DECODE_MMA, /* flash_decode's arguments (DE_*) */
    FCL_K_FLASH_COMBINE,
    FCL_K_NAIVE_FWD,
    FCL_K_NAIVE_REF_ROWS,
    FCL_K_COMPARE_ROWS,
    FCL_K_KV_APPEND,
    FCL_K_SOFTMAX_ROWS,
    FCL_K_TO_F32,
    FCL_K_FROM_F32,
    FCL_KERNEL_COUNT
} fcl_kernel_id;

typedef struct fcl_kernel_def {
    const char *entry;   /* the __kernel function */
    const char *sources; /* the embedded cl/ parts of its program, in order, separated by spaces */
    const char *const *arg_names;
    const fcl_arg_kind *arg_kinds;
    int n_args;
} fcl_kernel_def;

const fcl_kernel_def *fcl_kernel_def_of(fcl_kernel_id id);

/* (src/kernels/table.c) The flash or naive kernel a configuration runs (its algorithm and kernel fields:
 * one fact, one kernel), and a kernel's build options for (problem, config), its module's. */
fcl_kernel_id fcl_config_kernel(const flashcl_config *c);
void fcl_kernel_options(fcl_kernel_id id, const flashcl_problem *p, const flashcl_config *c, char *buf, size_t n);
/* Gets the program of kernel `id` for (problem, config) (caches, or a compile) and creates the kernel.
 * options (may be NULL) receives the build options. */
flashcl_status fcl_kernel_create(flashcl_context *ctx, fcl_kernel_id id, const flashcl_problem *p,
                                 const flashcl_config *c, cl_kernel *out, char *options, size_t options_len);

/* Sets a kernel's arguments by index, keeping the first failure and the argument it happened on; a
 * value of the wrong kind for the table is a failure too (CL_INVALID_ARG_SIZE). */
typedef struct fcl_args {
    cl_kernel kernel;
    fcl_kernel_id id;
    cl_int err;
    int failed; /* the argument of the first failure */
} fcl_args;

fcl_args fcl_args_of(cl_kernel kernel, fcl_kernel_id id);
void fcl_arg_mem(fcl_args *a, int index, cl_mem value);
void fcl_arg_int(fcl_args *a, int index, cl_int value);
void fcl_arg_long(fcl_args *a, int index, cl_long value);
void fcl_arg_float(fcl_args *a, int index, cl_float value);
/* The three strides of tensor t (FA_q and so on: the prefix of its _sb, _ss, _sh arguments). */
#define FCL_ARG_STRIDES(a, t, s)                                                                           \
    (fcl_arg_long((a), t##_sb, (s).batch), fcl_arg_long((a), t##_ss, (s).seq), fcl_arg_long((a), t##_sh, (s).head))
/* FLASHCL_SUCCESS, or the first failure as the context's error: "clSetKernelArg(flash_fwd, seq_q)
 * failed: CL_INVALID_ARG_SIZE (-51)" with `what` in front. */
flashcl_status fcl_args_check(flashcl_context *ctx, const fcl_args *a, const char *what);

/* Whether a flash_wgmma config has the producer warpgroup (cl/flash_wgmma.cl's WG_PRODUCER): a work-group
 * of 2 x block_m + 128 work-items (the chooser's, src/tiles.c). */
int fcl_wgmma_producer(const flashcl_config *c);
/* Whether every Q, K and V row starts at a multiple of 8 elements: the matrix-unit kernels are then
 * built for 16-byte row copies (-DROWS_ALIGNED=1), and the caller's offsets must keep that. */
int fcl_rows_aligned(const flashcl_problem *p);
/* Whether every O row starts at a multiple of 8 elements: cl/flash_mma.cl stores whole 16-byte chunks
 * (O_ALIGNED), and the enqueue then asks a 16-byte aligned O offset. */
int fcl_out_aligned(const flashcl_problem *p);

/* The arguments naive_fwd and naive_ref_rows share: the problem's (at plan time) and its buffers (at
 * enqueue; absent optional inputs get q, never read). */
void fcl_bind_naive_problem(fcl_args *a, const flashcl_problem *p, const resolved_layout *L);
void fcl_bind_naive_inputs(fcl_args *a, const flashcl_tensors *t, int q_off_index, const fcl_offsets *off);

#endif
