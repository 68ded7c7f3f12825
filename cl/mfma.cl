/* SPDX-License-Identifier: MIT */
/*
 * mfma.cl: AMD CDNA's 32x32x8 matrix instruction (wave64: gfx90a, gfx942, gfx950) for the
 * flash_mfma kernel (docs/design/mfma.md). MFMA32(d, a, b): D (32 x 32, fp32) += A (32 x 8) * B (8 x 32),
 * through clang's amdgcn built-in where FCL_AMD_MMA is 1, emulated through local memory where it is 0
 * (PoCL and rusticl in CI), in the same lane layout. Operands are uint2, four 16-bit elements (fp16, or
 * bf16 with MFMA_BF16; the lower index in the low half), t = 0..3, lane l = 0..63:
 *   a: A[l % 32][4 (l / 32) + t]        b: B[4 (l / 32) + t][l % 32]
 *   d (float16): D[8 (t / 4) + 4 (l / 32) + t % 4][l % 32], t = 0..15
 * So a product's accumulators, taken four at a time (t / 4 = kb) and rounded to 16 bits, are the B
 * operand of a product over eight of D's rows (kb's): the transposed products S^T = K Q^T and
 * O^T += V^T P^T keep P in registers. Emulated, each use names `lane` (0..63) and `xw` (the wave's
 * MFMA_XW floats of local memory) in its scope and is a work-group barrier: call it in control flow
 * uniform across the work-group.
 */
#ifndef FCL_AMD_MMA
#define FCL_AMD_MMA 0
#endif
#ifdef FCL_AMD_MMA_FORCE_BUILTIN /* (tests: the built-in asked for where the device has none, a build that fails) */
#undef FCL_AMD_MMA
#define FCL_AMD_MMA 1
#endif
#ifndef MFMA_BF16
#if defined(MMA_BF16) /* (flash_mfma: the operands' type, mma.cl's: K's) */
#define MFMA_BF16 MMA_BF16
#elif defined(FLASHCL_DTYPE_BF16)
#define MFMA_BF16 1
#else
#define MFMA_BF16 0
#endif
#endif
#define MFMA_XW 512 /* the emulation's exchange area, floats a wave: A's 32 x 8 and B's 8 x 32 */

/* Element t (0..3) of a uint2 operand: its 16 bits */
#define MFMA_ELEM(v, t) ((((t) < 2 ? (v).x : (v).y) >> (16 * ((t)&1))) & 0xffffu)

/* MFMA_SWAP32(x): lane l's float x from lane l ^ 32, its partner holding the other half of a D column
 * (the same query, the other 16 of a tile's keys): ds_bpermute on the hardware; emulated through xw
 * (its first 64 floats; a work-group barrier, as MFMA32). */
#if FCL_AMD_MMA
#define MFMA_SWAP32(x) as_float(__builtin_amdgcn_ds_bpermute(4 * (lane ^ 32), as_int(x)))
#else
inline float mfma_swap32_emu(const float x, __local float *xw, const int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xw[lane] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float y = xw[lane ^ 32];
    barrier(CLK_LOCAL_MEM_FENCE);
    return y;
}
#define MFMA_SWAP32(x) mfma_swap32_emu((x), xw, lane)
#endif

#if FCL_AMD_MMA
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#if MFMA_BF16
#define MFMA32(d, a, b) ((d) = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(as_short4(a), as_short4(b), (d), 0, 0, 0))
#else
#define MFMA32(d, a, b) ((d) = __builtin_amdgcn_mfma_f32_32x32x8f16(as_half4(a), as_half4(b), (d), 0, 0, 0))
#endif
#else
/* A 16-bit element's value */
inline float mfma_value(const uint h)
{
#if MFMA_BF16
    return as_float(h << 16);
#else
    return half_bits_to_float(h & 0xffffu);
#endif
}
/* The emulated instruction: each lane writes its elements of A and B where the layout puts them, a
 * barrier, each lane sums its sixteen accumulators' dot products in fp32 (the order of the hardware's
 * sums is not specified; the results are exact for the tests' small integers), a barrier. */
inline void mfma32_emu(float *d, const uint2 a, const uint2 b, __local float *xw, const int lane)
{
    __local float *const sa = xw, *const sb = xw + 256; /* A[i][k] at 8i + k, B[k][j] at 32k + j */
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < 4; ++t) {
        const int k = 4 * (lane >> 5) + t, ij = lane & 31;
        sa[8 * ij + k] = mfma_value(MFMA_ELEM(a, t));
        sb[32 * k + ij] = mfma_value(MFMA_ELEM(b, t));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < 16; ++t) {
        const int i = 8 * (t >> 2) + 4 * (lane >> 5) + (t & 3), j = lane & 31;
        float s = d[t];
        for (int k = 0; k < 8; ++k)
            s = fma(sa[8 * i + k], sb[32 * k + j], s);
        d[t] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#define MFMA32(d, a, b)                                                                                        \
    do {                                                                                                       \
        float16 d_ = (d);                                                                                      \
        mfma32_emu((float *)&d_, (a), (b), xw, lane);                                                          \
        (d) = d_;                                                                                              \
    } while (0)
#endif

/* What cl/flash_amd.cl reads of the instruction (flash_mfma): the wave, the product's shape, a lane's
 * accumulators, and where a lane's operand elements are. An operand is AMX_PIECES pieces of four 16-bit
 * elements (uint2 each); piece i of a row-order operand (K's and Q's rows: k positions in order) starts at
 * element AMX_LANE_OFF(hf) + AMX_STEP i of the row's k step, and of V^T's operand (its k positions in the
 * order P's keys stand in the accumulators) at AMX_VLANE_OFF(hf) + AMX_VSTEP i; hf is the lane's half of
 * the wave. */
#define AMX_ENTRY flash_mfma
#define AMX_WAVE 64
#define AMX_M 32   /* D's rows: the keys of an S^T part, V's columns of an O^T block */
#define AMX_Q 32   /* D's columns: the queries of a wave */
#define AMX_KD 8   /* the head-dim elements of one S^T product */
#define AMX_KV 8   /* the keys of one O^T product */
#define AMX_NS 16  /* a lane's accumulators */
#define AMX_ACC float16
#define AMX_PIECES 1
#define AMX_LANE_OFF(hf) (4 * (hf))
#define AMX_VLANE_OFF(hf) (4 * (hf))
#define AMX_STEP 0
#define AMX_VSTEP 0
#define AMX_ROW(t, hf) (8 * ((t) >> 2) + 4 * (hf) + ((t)&3)) /* the D row of accumulator t */
#define AMX_PAD 4       /* elements a local row of K or V^T is padded by */
#define AMX_ROW_T uint2 /* and the type that aligns those rows */
#define AMX_XW MFMA_XW
#define AMX_MMA(d, a, b) MFMA32(d, a, b)
#define AMX_SWAP(x) MFMA_SWAP32(x)
/* P^T's B operand for the product over the part's keys AMX_KV kb .. + 7: the lane's accumulators 4 kb ..
 * 4 kb + 3 (keys 8 kb + 4 hf + 0..3), rounded where they stand (PACK2: two floats to two 16-bit values) */
#define AMX_PFRAG(dst, acc, kb, PACK2)                                                                         \
    ((dst) = (uint2)(PACK2((acc)[4 * (kb)], (acc)[4 * (kb) + 1]), PACK2((acc)[4 * (kb) + 2], (acc)[4 * (kb) + 3])))
