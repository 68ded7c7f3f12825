/* SPDX-License-Identifier: MIT */
/*
 * args.h: every kernel's parameters, written once, read by OpenCL C (the first part of every program:
 * FCL_SIGNATURE gives each kernel's parameter list) and by C (src/kernels.h: the host's argument indices
 * and kinds; tests/test_kernels.c checks them against the compiler's -cl-kernel-arg-info).
 *
 * The attention kernels take the problem's constants as one struct by value (fcl_params, bound once at
 * plan time) and the caller's offsets as another (fcl_kernel_offsets, bound at each enqueue); their
 * bodies read the fields as const locals of the same names (FCL_UNPACK). Both structs hold 8-byte fields
 * first and then an even number of 4-byte ones, so that neither has padding: rusticl (Mesa 22.3, on
 * llvmpipe) takes a struct argument's size without its tail padding and refuses the size C gives
 * (CL_INVALID_ARG_SIZE for a 32-byte struct it counts as 28: a probe of 2026-12-02, docs/design/
 * portable.md, "Kernel arguments"). The host asserts the sizes (src/kernels.c).
 */
#ifndef FCL_ARGS_H
#define FCL_ARGS_H

#ifdef __OPENCL_C_VERSION__
#define FCL_LONG_T long
#define FCL_INT_T int
#define FCL_FLOAT_T float
#else
#define FCL_LONG_T cl_long
#define FCL_INT_T cl_int
#define FCL_FLOAT_T cl_float
#endif

/* The problem's constants: strides (elements) of Q, K, V, O and the mask; the rows of the output; sizes;
 * the window's bounds; the scale and the cap, as given and in base 2 (exp2 in the flash kernels). */
#define FCL_PARAM_FIELDS(L, I, F)                                                                          \
    L(q_sb) L(q_ss) L(q_sh) L(k_sb) L(k_ss) L(k_sh) L(v_sb) L(v_ss) L(v_sh) L(o_sb) L(o_ss) L(o_sh) L(m_sb) \
    L(m_ss) L(m_sh) L(rows_total) I(seq_q) I(seq_kv) I(heads_q) I(group) I(win_left) I(win_right)         \
    I(write_lse) I(alibi_per_batch) I(total_q) I(total_kv) I(n_splits) I(max_pages) I(num_pages)          \
    I(cache_batch) I(batch) I(params_pad_) F(scale) F(scale_log2) F(softcap) F(softcap_log2)
/* The caller's offsets into its buffers, in elements of each (flashcl_offsets over the element sizes),
 * and split-KV's scratch: the partial outputs (op_off) and their log-sum-exps (lp_off). */
#define FCL_OFFSET_FIELDS(L)                                                                               \
    L(q_off) L(k_off) L(v_off) L(o_off) L(lse_off) L(alibi_off) L(mask_off) L(kpm_off) L(cu_q_off)         \
    L(cu_k_off) L(cache_lens_off) L(bt_off) L(k_new_off) L(v_new_off) L(k_scale_off) L(v_scale_off)       \
    L(sinks_off) L(op_off) L(lp_off) L(cache_idx_off) L(leftpad_off) L(descale_off)

#define FCL_FIELD_L_(n) FCL_LONG_T n;
#define FCL_FIELD_I_(n) FCL_INT_T n;
#define FCL_FIELD_F_(n) FCL_FLOAT_T n;
typedef struct fcl_params {
    FCL_PARAM_FIELDS(FCL_FIELD_L_, FCL_FIELD_I_, FCL_FIELD_F_)
} fcl_params;
typedef struct fcl_kernel_offsets {
    FCL_OFFSET_FIELDS(FCL_FIELD_L_)
} fcl_kernel_offsets;

#ifdef __OPENCL_C_VERSION__
/* The structs' fields as const locals of the same names, at the top of a kernel's body. */
#define FCL_UNPACK_L_(n) const long n = prm.n;
#define FCL_UNPACK_I_(n) const int n = prm.n;
#define FCL_UNPACK_F_(n) float n = prm.n; /* (not const: fault injection scales one, FLASHCL_DEBUG_SCALE) */
#define FCL_UNPACK_O_(n) const long n = offs.n;
#define FCL_UNPACK()                                                                                       \
    FCL_PARAM_FIELDS(FCL_UNPACK_L_, FCL_UNPACK_I_, FCL_UNPACK_F_)                                          \
    FCL_OFFSET_FIELDS(FCL_UNPACK_O_)                                                                       \
    (void)params_pad_;                                                                                     \
    (void)(scale + scale_log2 + softcap + softcap_log2 + seq_q + seq_kv + heads_q + group + win_left + win_right + \
           write_lse + alibi_per_batch + total_q + total_kv + n_splits + max_pages + num_pages + cache_batch + batch)
/* A kernel's parameter list from its list below: X(name, kind, declaration) gives "declaration name". */
#define FCL_PARAM_FIRST_(name, kind, decl) decl name
#define FCL_PARAM_NEXT_(name, kind, decl) , decl name
#define FCL_SIGNATURE(LIST) LIST(FCL_PARAM_FIRST_, FCL_PARAM_NEXT_)
#endif

/*
 * Each kernel's parameters, in order: LIST(F, X) with F for the first and X for the others, each
 * (name, kind, OpenCL C declaration). Kinds: MEM (a buffer), INT, LONG, FLOAT, PARAMS (fcl_params),
 * OFFSETS (fcl_kernel_offsets).
 */
#define FCL_PRM_ARGS_(X) X(prm, PARAMS, const fcl_params) X(offs, OFFSETS, const fcl_kernel_offsets)

/* cl/flash_fwd.cl */
#define FCL_FLASH_FWD_ARGS(F, X)                                                                           \
    F(Q, MEM, __global const Q_T *restrict) X(K, MEM, __global const KV_T *restrict)                   \
    X(V, MEM, __global const KV_T *restrict) X(O, MEM, __global STORE_T *restrict)                         \
    X(LSE, MEM, __global float *restrict) X(ALIBI, MEM, __global const float *restrict)                    \
    X(MASK, MEM, __global const MASK_T *restrict) X(KPM, MEM, __global const uchar *restrict)              \
    X(CU_Q, MEM, __global const int *restrict) X(CU_K, MEM, __global const int *restrict)                  \
    X(OP, MEM, __global float *restrict) X(LP, MEM, __global float *restrict)                              \
    X(CACHE_LENS, MEM, __global const int *restrict) X(BT, MEM, __global const int *restrict)              \
    X(SINKS, MEM, __global const float *restrict) X(BATCH_IDX, MEM, __global const int *restrict)         \
    X(LEFT_PAD, MEM, __global const int *restrict) X(DESCALE, MEM, __global const float *restrict)         \
    FCL_PRM_ARGS_(X)

/* cl/flash_mma.cl and cl/flash_wgmma.cl: flash_fwd's, 16-bit K and V (Q in its own type: mma.cl's MMA_Q_T;
 * flash_wgmma's fp8: bytes, with their descale factors), no split-KV scratch */
#define FCL_FLASH_MMA_ARGS(F, X)                                                                           \
    F(Q, MEM, __global const MMA_Q_T *restrict) X(K, MEM, __global const MMA_KV_T *restrict)               \
    X(V, MEM, __global const MMA_KV_T *restrict) X(O, MEM, __global STORE_T *restrict)                     \
    X(LSE, MEM, __global float *restrict) X(ALIBI, MEM, __global const float *restrict)                    \
    X(MASK, MEM, __global const MASK_T *restrict) X(KPM, MEM, __global const uchar *restrict)              \
    X(CU_Q, MEM, __global const int *restrict) X(CU_K, MEM, __global const int *restrict)                  \
    X(CACHE_LENS, MEM, __global const int *restrict) X(BT, MEM, __global const int *restrict)              \
    X(SINKS, MEM, __global const float *restrict) X(BATCH_IDX, MEM, __global const int *restrict)         \
    X(LEFT_PAD, MEM, __global const int *restrict) X(DESCALE, MEM, __global const float *restrict)         \
    FCL_PRM_ARGS_(X)

/* cl/flash_decode.cl (K_T: KV_T) and cl/flash_decode_mma.cl (K_T: KV_P, its packed view of the cache) */
#define FCL_FLASH_DECODE_ARGS(F, X)                                                                        \
    F(Q, MEM, __global const DECODE_Q_T *restrict) X(K, MEM, __global const DECODE_KV_T *restrict)         \
    X(V, MEM, __global const DECODE_KV_T *restrict) X(O, MEM, __global STORE_T *restrict)                  \
    X(LSE, MEM, __global float *restrict) X(ALIBI, MEM, __global const float *restrict)                    \
    X(KPM, MEM, __global const uchar *restrict) X(OP, MEM, __global float *restrict)                       \
    X(LP, MEM, __global float *restrict) X(CACHE_LENS, MEM, __global const int *restrict)                  \
    X(BT, MEM, __global const int *restrict) X(K_SCALE, MEM, __global const SCALE_T *restrict)             \
    X(V_SCALE, MEM, __global const SCALE_T *restrict) X(SINKS, MEM, __global const float *restrict)        \
    X(BATCH_IDX, MEM, __global const int *restrict) X(LEFT_PAD, MEM, __global const int *restrict)         \
    X(CNT, MEM, __global int *restrict) FCL_PRM_ARGS_(X)

/* cl/naive.cl: the inputs naive_fwd and naive_ref_rows share, at the same positions */
#define FCL_NAIVE_INPUT_ARGS_(F, X)                                                                        \
    F(Q, MEM, __global const Q_T *) X(K, MEM, __global const KV_T *) X(V, MEM, __global const KV_T *)      \
    X(alibi, MEM, __global const float *) X(mask, MEM, __global const MASK_T *)                            \
    X(kpm, MEM, __global const uchar *) X(cu_q, MEM, __global const int *) X(cu_k, MEM, __global const int *) \
    X(cache_lens, MEM, __global const int *) X(bt, MEM, __global const int *)                              \
    X(k_scale, MEM, __global const SCALE_T *) X(v_scale, MEM, __global const SCALE_T *)                    \
    X(sinks, MEM, __global const float *) X(cache_idx, MEM, __global const int *)                          \
    X(leftpad, MEM, __global const int *) X(descale, MEM, __global const float *) FCL_PRM_ARGS_(X)
#define FCL_NAIVE_FWD_ARGS(F, X)                                                                           \
    FCL_NAIVE_INPUT_ARGS_(F, X) X(O, MEM, __global STORE_T *) X(LSE, MEM, __global float *)
#define FCL_NAIVE_REF_ROWS_ARGS(F, X)                                                                      \
    FCL_NAIVE_INPUT_ARGS_(F, X) X(rows, MEM, __global const long *) X(n_rows, LONG, const long)            \
    X(ref, MEM, __global float *) X(ref_lse, MEM, __global float *)
#define FCL_COMPARE_ROWS_ARGS(F, X)                                                                        \
    F(O, MEM, __global const STORE_T *) X(LSE, MEM, __global const float *) X(has_lse, INT, const int)     \
    X(seq_q, INT, const int) X(heads_q, INT, const int) X(o_sb, LONG, const long)                          \
    X(o_ss, LONG, const long) X(o_sh, LONG, const long) X(rows, MEM, __global const long *)                \
    X(n_rows, LONG, const long) X(ref, MEM, __global const float *) X(ref_lse, MEM, __global const float *) \
    X(atol, FLOAT, const float) X(rtol, FLOAT, const float) X(stats, MEM, __global float *)                \
    X(info, MEM, __global int *) X(o_off, LONG, const long) X(lse_off, LONG, const long)

/* cl/flash_combine.cl */
#define FCL_FLASH_COMBINE_ARGS(F, X)                                                                       \
    F(OP, MEM, __global const float *restrict) X(LP, MEM, __global const float *restrict)                  \
    X(n_splits, INT, const int) X(rows_total, LONG, const long) X(O, MEM, __global STORE_T *restrict)      \
    X(LSE, MEM, __global float *restrict) X(write_lse, INT, const int) X(group_rows, INT, const int)       \
    X(heads_q, INT, const int) X(o_sb, LONG, const long) X(o_ss, LONG, const long) X(o_sh, LONG, const long) \
    X(varlen, INT, const int) X(o_off, LONG, const long) X(lse_off, LONG, const long)                      \
    X(SINKS, MEM, __global const float *restrict) X(sinks_off, LONG, const long)                           \
    X(op_off, LONG, const long) X(lp_off, LONG, const long)

/* cl/kvcache.cl */
#define FCL_KV_APPEND_ARGS(F, X)                                                                           \
    F(K, MEM, __global KV_T *) X(V, MEM, __global KV_T *) X(K_NEW, MEM, __global const STORE_T *)          \
    X(V_NEW, MEM, __global const STORE_T *) X(cache_lens, MEM, __global const int *)                       \
    X(bt, MEM, __global const int *) X(seq_new, INT, const int) X(heads_kv, INT, const int)                \
    X(seq_kv, INT, const int) X(max_pages, INT, const int) X(num_pages, INT, const int)                    \
    X(k_sb, LONG, const long) X(k_ss, LONG, const long) X(k_sh, LONG, const long) X(v_sb, LONG, const long) \
    X(v_ss, LONG, const long) X(v_sh, LONG, const long) X(total, LONG, const long)                         \
    X(K_SCALE, MEM, __global SCALE_T *) X(V_SCALE, MEM, __global SCALE_T *) X(k_off, LONG, const long)     \
    X(v_off, LONG, const long) X(k_new_off, LONG, const long) X(v_new_off, LONG, const long)               \
    X(cache_lens_off, LONG, const long) X(bt_off, LONG, const long) X(k_scale_off, LONG, const long)       \
    X(v_scale_off, LONG, const long) X(cache_idx, MEM, __global const int *) X(cache_batch, INT, const int) \
    X(cache_idx_off, LONG, const long)

/* cl/standard.cl */
#define FCL_SOFTMAX_ROWS_ARGS(F, X)                                                                        \
    F(S, MEM, __global float *) X(rows, INT, const int) X(row0, INT, const int) X(head0, INT, const int)   \
    X(seq_q, INT, const int) X(seq_kv, INT, const int) X(win_left, INT, const int)                         \
    X(win_right, INT, const int) X(softcap, FLOAT, const float) X(LSE, MEM, __global float *)              \
    X(write_lse, INT, const int) X(lse_off, LONG, const long)
#define FCL_TO_F32_ARGS(F, X)                                                                              \
    F(src, MEM, __global const STORE_T *) X(dst, MEM, __global float *) X(seq, INT, const int)             \
    X(heads, INT, const int) X(head_dim, INT, const int) X(sb, LONG, const long) X(ss, LONG, const long)   \
    X(sh, LONG, const long) X(total, LONG, const long) X(off, LONG, const long)
#define FCL_FROM_F32_ARGS(F, X)                                                                            \
    F(src, MEM, __global const float *) X(dst, MEM, __global STORE_T *) X(seq, INT, const int)             \
    X(heads, INT, const int) X(head_dim, INT, const int) X(sb, LONG, const long) X(ss, LONG, const long)   \
    X(sh, LONG, const long) X(total, LONG, const long) X(off, LONG, const long)

#endif
