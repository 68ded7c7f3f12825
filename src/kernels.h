/* SPDX-License-Identifier: MIT */
/*
 * kernels.h: every kernel's calling convention in one table (src/kernels.c): the program's source
 * parts, the entry point, the build options and the arguments by name. Everything that launches a
 * kernel binds its arguments through it, and tests/test_kernels.c checks it against the compiler.
 */
#ifndef FLASHCL_KERNELS_H
#define FLASHCL_KERNELS_H

#include "internal.h"

typedef enum fcl_arg_kind {
    FCL_ARG_MEM,
    FCL_ARG_INT,
    FCL_ARG_LONG,
    FCL_ARG_FLOAT,
    FCL_ARG_PARAMS, /* fcl_params by value (cl/args.h) */
    FCL_ARG_OFFSETS /* fcl_kernel_offsets by value */
} fcl_arg_kind;

/* Each kernel's parameters, in the order and with the names of its signature: cl/args.h, which the
 * kernels' OpenCL C reads too. */
#include "../cl/args.h"

/* Argument indices: FA_Q is flash_fwd's Q, and so on (one prefix per kernel). */
#define FCL_E_FA(name, kind, decl) FA_##name,
#define FCL_E_MA(name, kind, decl) MA_##name,
#define FCL_E_FC(name, kind, decl) FC_##name,
#define FCL_E_DE(name, kind, decl) DE_##name,
#define FCL_E_NF(name, kind, decl) NF_##name,
#define FCL_E_NR(name, kind, decl) NR_##name,
#define FCL_E_CR(name, kind, decl) CR_##name,
#define FCL_E_KA(name, kind, decl) KA_##name,
#define FCL_E_SR(name, kind, decl) SR_##name,
#define FCL_E_CV(name, kind, decl) CV_##name,
enum { FCL_FLASH_FWD_ARGS(FCL_E_FA, FCL_E_FA) FA_COUNT_ };
enum { FCL_FLASH_MMA_ARGS(FCL_E_MA, FCL_E_MA) MA_COUNT_ };
enum { FCL_FLASH_COMBINE_ARGS(FCL_E_FC, FCL_E_FC) FC_COUNT_ };
enum { FCL_FLASH_DECODE_ARGS(FCL_E_DE, FCL_E_DE) DE_COUNT_ };
enum { FCL_NAIVE_FWD_ARGS(FCL_E_NF, FCL_E_NF) NF_COUNT_ };
enum { FCL_NAIVE_REF_ROWS_ARGS(FCL_E_NR, FCL_E_NR) NR_COUNT_ };
enum { FCL_COMPARE_ROWS_ARGS(FCL_E_CR, FCL_E_CR) CR_COUNT_ };
enum { FCL_KV_APPEND_ARGS(FCL_E_KA, FCL_E_KA) KA_COUNT_ };
enum { FCL_SOFTMAX_ROWS_ARGS(FCL_E_SR, FCL_E_SR) SR_COUNT_ };
enum { FCL_TO_F32_ARGS(FCL_E_CV, FCL_E_CV) CV_COUNT_ }; /* (from_f32's at the same positions) */

typedef enum fcl_kernel_id {
    FCL_K_FLASH_FWD,
    FCL_K_FLASH_MMA,
    FCL_K_FLASH_WGMMA, /* flash_mma's arguments (MA_*) */
    FCL_K_FLASH_MFMA,  /* flash_mma's arguments (MA_*) */
    FCL_K_FLASH_WMMA,  /* flash_mma's arguments (MA_*) */
    FCL_K_FLASH_DPAS,  /* flash_mma's arguments (MA_*) */
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
void fcl_arg_params(fcl_args *a, int index, const fcl_params *value);
void fcl_arg_offsets(fcl_args *a, int index, const fcl_kernel_offsets *value);
/* The three strides of tensor t of a kernel that takes them one by one (CR_o and so on: the prefix of its
 * _sb, _ss, _sh arguments). */
#define FCL_ARG_STRIDES(a, t, s)                                                                           \
    (fcl_arg_long((a), t##_sb, (s).batch), fcl_arg_long((a), t##_ss, (s).seq), fcl_arg_long((a), t##_sh, (s).head))
/* The problem's constants for a plan's attention kernel (cl/args.h's fcl_params), and an enqueue's
 * offsets with split-KV's scratch at op_off and lp_off (elements of the scratch buffer). */
void fcl_params_of(const flashcl_plan *pl, fcl_params *prm);
void fcl_kernel_offsets_of(const fcl_offsets *off, cl_long op_off, cl_long lp_off, fcl_kernel_offsets *out);
/* FLASHCL_SUCCESS, or the first failure as the context's error: "clSetKernelArg(flash_fwd, seq_q)
 * failed: CL_INVALID_ARG_SIZE (-51)" with `what` in front. */
flashcl_status fcl_args_check(flashcl_context *ctx, const fcl_args *a, const char *what);

/* Whether a flash_wgmma config has the producer warpgroup (cl/flash_wgmma.cl's WG_PRODUCER): a work-group
 * of 2 x block_m + 128 work-items (the chooser's, src/tiles.c). */
int fcl_wgmma_producer(const flashcl_config *c);
/* Whether flash_wgmma writes O through local memory in 16-byte chunks (cl/flash_wgmma.cl's WG_O_STAGED):
 * where O's rows are 16-byte aligned, O has the operands' 16-bit type and V's head dim is at most Q's; the
 * enqueue then needs O's start 16-byte aligned too. */
int fcl_wgmma_o_staged(const flashcl_problem *p);
/* Whether flash_wgmma is written for head dim d (FlashAttention-3's: 64, 80, 96, 128, 192, 256) */
int fcl_wgmma_dim(int32_t d);
/* Whether every Q, K and V row starts at a multiple of 8 elements: the matrix-unit kernels are then
 * built for 16-byte row copies (-DROWS_ALIGNED=1), and the caller's offsets must keep that. */
int fcl_rows_aligned(const flashcl_problem *p);
/* Whether every O row starts at a multiple of 8 elements: cl/flash_mma.cl stores whole 16-byte chunks
 * (O_ALIGNED), and the enqueue then asks a 16-byte aligned O offset. */
int fcl_out_aligned(const flashcl_problem *p);

/* The arguments naive_fwd and naive_ref_rows share (src/kernels/naive.c): the problem's constants (at plan
 * time) and its input buffers and offsets (at enqueue; absent optional inputs get q, never read). */
void fcl_bind_naive_problem(fcl_args *a, const flashcl_plan *pl);
void fcl_bind_naive_inputs(fcl_args *a, const flashcl_tensors *t, const fcl_offsets *off);

#endif
