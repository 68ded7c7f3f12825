/* SPDX-License-Identifier: MIT */
/*
 * dpas.cl: Intel's sub-group matrix multiply-accumulate (DPAS: cl_intel_subgroup_matrix_multiply_accumulate)
 * for the flash_dpas kernel (cl/flash_dpas.cl, docs/design/mfma.md). DPAS(c, a, b): C (8 x SG, fp32, float8) += A (8 x 16) *
 * B (16 x SG), SG = DPAS_SG work-items a sub-group (8: Xe-HPG/DG2, 16: Xe-HPC/PVC and Xe2), through the
 * extension's built-ins where FCL_INTEL_MMA is 1 and emulated where it is 0, as the extension's text
 * defines the operands (work-item n of the sub-group, 16-bit elements, fp16 or bf16 with DPAS_BF16):
 *   a, SG 8 (int8):   a.sM = A[M][2n] | A[M][2n + 1] << 16;   SG 16 (short8): a.sM = A[M][n]
 *   b (int8):         b.sJ = B[2J][n] | B[2J + 1][n] << 16 ("packed"), J < 8
 *   c (float8):       c.sM = C[M][n]
 * A product's result c (work-item n: column n of C) is the next product's A on SG 16 where it stands
 * (16 columns: a's k); on SG 8 two results of 8 columns each make one A when k position 2n holds column
 * n of the first and 2n + 1 column n of the second, and B's rows are read in the same order (the same
 * permutation of k in A and B leaves the product unchanged). Emulated, a sub-group is DPAS_SG consecutive
 * work-items of dimension 0, each use names `lane` (its index in the sub-group) and `xw` (the sub-group's
 * DPAS_XW floats of local memory) in scope and is a work-group barrier. The built-ins must only be built
 * for a device that lists the extension: IGC builds them for one without it (Tiger Lake) into a kernel
 * that computes nothing, with a warning (docs/design/mfma.md).
 */
#ifndef FCL_INTEL_MMA
#define FCL_INTEL_MMA 0
#endif
#ifndef DPAS_SG
#define DPAS_SG 16
#endif
#ifdef FCL_INTEL_MMA_FORCE_BUILTIN /* (tests: the built-in asked for where the device has none, a build that fails) */
#undef FCL_INTEL_MMA
#define FCL_INTEL_MMA 1
#endif
#ifndef DPAS_BF16
#if defined(MMA_BF16) /* (flash_dpas: the operands' type, mma.cl's: K's) */
#define DPAS_BF16 MMA_BF16
#elif defined(FLASHCL_DTYPE_BF16)
#define DPAS_BF16 1
#else
#define DPAS_BF16 0
#endif
#endif
#if DPAS_SG == 8
#define DPAS_A int8
#else
#define DPAS_A short8
#endif
#define DPAS_XW 512 /* the emulation's exchange area, floats a sub-group: A's 8 x 16 and B's 16 x 16 */

#if FCL_INTEL_MMA
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#if DPAS_BF16
#define DPAS(c, a, b) ((c) = intel_sub_group_bf16_bf16_matrix_mad_k16((a), (b), (c)))
#else
#define DPAS(c, a, b) ((c) = intel_sub_group_f16_f16_matrix_mad_k16((a), (b), (c)))
#endif
#else
inline float dpas_value(const uint h)
{
#if DPAS_BF16
    return as_float(h << 16);
#else
    return half_bits_to_float(h & 0xffffu);
#endif
}
/* The emulated instruction: each work-item writes its elements of A (8 rows) and its column of B where
 * the operands' definition puts them, a barrier, each work-item its column of the eight results. */
inline void dpas_emu(float *c, const uint *a, const uint *b, __local float *xw, const int lane)
{
    __local float *const sa = xw, *const sb = xw + 128; /* A[m][k] at 16m + k, B[k][n] at DPAS_SG k + n */
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < 8; ++m) {
#if DPAS_SG == 8
        sa[16 * m + 2 * lane] = dpas_value(a[m] & 0xffffu);
        sa[16 * m + 2 * lane + 1] = dpas_value(a[m] >> 16);
#else
        sa[16 * m + lane] = dpas_value(((const ushort *)a)[m]);
#endif
    }
    for (int j = 0; j < 8; ++j) {
        sb[DPAS_SG * (2 * j) + lane] = dpas_value(b[j] & 0xffffu);
        sb[DPAS_SG * (2 * j + 1) + lane] = dpas_value(b[j] >> 16);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < 8; ++m) {
        float s = c[m];
        for (int k = 0; k < 16; ++k)
            s = fma(sa[16 * m + k], sb[DPAS_SG * k + lane], s);
        c[m] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#define DPAS(c, a, b)                                                                                          \
    do {                                                                                                       \
        float8 c_ = (c);                                                                                       \
        const DPAS_A a_ = (a);                                                                                 \
        const int8 b_ = (b);                                                                                   \
        dpas_emu((float *)&c_, (const uint *)&a_, (const uint *)&b_, xw, lane);                                \
        (c) = c_;                                                                                              \
    } while (0)
#endif

