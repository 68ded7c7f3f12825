/* SPDX-License-Identifier: MIT */
/*
 * wmma.cl: AMD RDNA's 16x16x16 matrix instructions (wave32: gfx11 and gfx12) for the flash_wmma kernel
 * (cl/flash_amd.cl, docs/design/mfma.md). WMMA16(d, a, b): D (16 x 16, fp32, float8) += A (16 x 16) *
 * B (16 x 16), through clang's amdgcn built-ins where FCL_AMD_MMA is 1, emulated through local memory where
 * it is 0, in the layout of the target WMMA_GFX (11 or 12). 16-bit elements (fp16, or bf16 with WMMA_BF16),
 * two a uint, the lower index in the low half; lane l = 0..31, element t:
 *   gfx11: a (uint8, t < 16): A[l % 16][t], b: B[t][l % 16]; lanes 16..31 hold copies of lanes 0..15;
 *          d (t < 8): D[2t + l / 16][l % 16]
 *   gfx12: a (uint4, t < 8): A[l % 16][K(l, t)], b: B[K(l, t)][l % 16], K(l, t) = 8 (t / 4) + 4 (l / 16) + t % 4;
 *          d (t < 8): D[8 (l / 16) + t][l % 16]
 * On gfx12 a D column's eight values in a lane (rows 8 (l / 16) + t) can be the next product's B where
 * its k positions are relabelled: the same permutation of k in A and B leaves the product unchanged
 * (WMMA12_KEY below), so P stays in registers. On gfx11 B needs all 16 of a column's rows in every lane:
 * the partner lane's eight come by an exchange. Emulated, each use names `lane` and `xw` (the wave's
 * WMMA_XW floats of local memory) in scope and is a work-group barrier.
 */
#ifndef FCL_AMD_MMA
#define FCL_AMD_MMA 0
#endif
#ifdef FCL_AMD_MMA_FORCE_BUILTIN /* (tests: the built-in asked for where the device has none, a build that fails) */
#undef FCL_AMD_MMA
#define FCL_AMD_MMA 1
#endif
/* The layout: the compiler's target where it names one (AMD's clang defines __gfxNNNN__), else 12 unless
 * the build says (-DWMMA_GFX=11: the emulation of RDNA3's layout) */
#ifndef WMMA_GFX
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__)
#define WMMA_GFX 11
#else
#define WMMA_GFX 12
#endif
#endif
#ifndef WMMA_BF16
#if defined(MMA_BF16) /* (flash_wmma: the operands' type, mma.cl's: K's) */
#define WMMA_BF16 MMA_BF16
#elif defined(FLASHCL_DTYPE_BF16)
#define WMMA_BF16 1
#else
#define WMMA_BF16 0
#endif
#endif
#define WMMA_XW 512 /* the emulation's exchange area, floats a wave: A's and B's 16 x 16 */

/* gfx12: the k position of lane l's element t, and the key a D row index stands for when a D column is
 * taken as B in key order (the inverse of K: element t of lane half h holds key 8h + t) */
#define WMMA12_K(l, t) (8 * ((t) >> 2) + 4 * ((l) >> 4) + ((t)&3))
#define WMMA12_KEY(k) (8 * (((k)&7) >> 2) + 4 * ((k) >> 3) + ((k)&3))

/* WMMA_SWAP16(x): lane l's float x from lane l ^ 16 (the other half of a D column on gfx11: the keys of
 * the other parity): ds_bpermute on the hardware, emulated through xw's first 32 floats. */
#if FCL_AMD_MMA
#define WMMA_SWAP16(x) as_float(__builtin_amdgcn_ds_bpermute(4 * (lane ^ 16), as_int(x)))
#else
inline float wmma_swap16_emu(const float x, __local float *xw, const int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xw[lane] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float y = xw[lane ^ 16];
    barrier(CLK_LOCAL_MEM_FENCE);
    return y;
}
#define WMMA_SWAP16(x) wmma_swap16_emu((x), xw, lane)
#endif

#if FCL_AMD_MMA
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#if WMMA_GFX == 11
#if WMMA_BF16
#define WMMA16(d, a, b) ((d) = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(as_short16(a), as_short16(b), (d)))
#else
#define WMMA16(d, a, b) ((d) = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(as_half16(a), as_half16(b), (d)))
#endif
#else
#if WMMA_BF16
#define WMMA16(d, a, b) ((d) = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(as_short8(a), as_short8(b), (d)))
#else
#define WMMA16(d, a, b) ((d) = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(as_half8(a), as_half8(b), (d)))
#endif
#endif
#else
inline float wmma_value(const uint h)
{
#if WMMA_BF16
    return as_float(h << 16);
#else
    return half_bits_to_float(h & 0xffffu);
#endif
}
/* The emulated instruction (n: the operands' uints, 8 on gfx11, 4 on gfx12): each lane writes its
 * elements where the layout puts them (gfx11: lanes 0..15; the others must hold the same values, and a
 * lane that does not poisons its row with NaN), a barrier, each lane its eight accumulators, a barrier. */
inline void wmma16_emu(float *d, const uint *a, const uint *b, __local float *xw, const int lane)
{
    __local float *const sa = xw, *const sb = xw + 256; /* A[i][k] at 16i + k, B[k][j] at 16k + j */
    const int ij = lane & 15;
    barrier(CLK_LOCAL_MEM_FENCE);
#if WMMA_GFX == 11
    if (lane < 16)
        for (int t = 0; t < 16; ++t) {
            sa[16 * ij + t] = wmma_value((a[t >> 1] >> (16 * (t & 1))) & 0xffffu);
            sb[16 * t + ij] = wmma_value((b[t >> 1] >> (16 * (t & 1))) & 0xffffu);
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane >= 16)
        for (int t = 0; t < 16; ++t) {
            if (sa[16 * ij + t] != wmma_value((a[t >> 1] >> (16 * (t & 1))) & 0xffffu))
                sa[16 * ij + t] = NAN;
            if (sb[16 * t + ij] != wmma_value((b[t >> 1] >> (16 * (t & 1))) & 0xffffu))
                sb[16 * t + ij] = NAN;
        }
#else
    for (int t = 0; t < 8; ++t) {
        const int k = WMMA12_K(lane, t);
        sa[16 * ij + k] = wmma_value((a[t >> 1] >> (16 * (t & 1))) & 0xffffu);
        sb[16 * k + ij] = wmma_value((b[t >> 1] >> (16 * (t & 1))) & 0xffffu);
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < 8; ++t) {
        const int i = WMMA_GFX == 11 ? 2 * t + (lane >> 4) : 8 * (lane >> 4) + t;
        float s = d[t];
        for (int k = 0; k < 16; ++k)
            s = fma(sa[16 * i + k], sb[16 * k + ij], s);
        d[t] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#if WMMA_GFX == 11
#define WMMA_AB uint8
#else
#define WMMA_AB uint4
#endif
#define WMMA16(d, a, b)                                                                                        \
    do {                                                                                                       \
        float8 d_ = (d);                                                                                       \
        const WMMA_AB a_ = (a), b_ = (b);                                                                      \
        wmma16_emu((float *)&d_, (const uint *)&a_, (const uint *)&b_, xw, lane);                              \
        (d) = d_;                                                                                              \
    } while (0)
#endif

/* What cl/flash_amd.cl reads of the instruction (flash_wmma), as cl/mfma.cl says: gfx12's operands are two
 * pieces (k positions 4 hf .. + 3 and 8 + 4 hf .. + 3; V^T's in P's key order: keys 8 hf .. + 7), gfx11's
 * four (all 16 k positions in every lane). */
#define AMX_ENTRY flash_wmma
#define AMX_WAVE 32
#define AMX_M 16
#define AMX_Q 16
#define AMX_KD 16
#define AMX_KV 16
#define AMX_NS 8
#define AMX_ACC float8
#define AMX_XW WMMA_XW
#define AMX_MMA(d, a, b) WMMA16(d, a, b)
#define AMX_PAD 8       /* (16-byte aligned rows: the operands' 16-byte pieces, gfx11's and gfx12's V^T) */
#define AMX_ROW_T uint4
#define AMX_SWAP(x) WMMA_SWAP16(x)
#if WMMA_GFX == 11
#define AMX_PIECES 4
#define AMX_LANE_OFF(hf) 0
#define AMX_VLANE_OFF(hf) 0
#define AMX_STEP 4
#define AMX_VSTEP 4
#define AMX_ROW(t, hf) (2 * (t) + (hf))
/* P^T's B: all sixteen keys of the column, the other parity's from the partner lane (an exchange each,
 * made by every lane: uniform); keys 2t and 2t + 1 are element pair t */
#define AMX_PFRAG(dst, acc, kb, PACK2)                                                                         \
    do {                                                                                                       \
        uint p_[8];                                                                                            \
        UNROLL                                                                                                 \
        for (int t_ = 0; t_ < 8; ++t_) {                                                                       \
            const float mine_ = (acc)[t_], other_ = AMX_SWAP(mine_);                                            \
            p_[t_] = hf ? PACK2(other_, mine_) : PACK2(mine_, other_);                                         \
        }                                                                                                      \
        (dst) = (uint8)(p_[0], p_[1], p_[2], p_[3], p_[4], p_[5], p_[6], p_[7]);                               \
    } while (0)
#else
#define AMX_PIECES 2
#define AMX_LANE_OFF(hf) (4 * (hf))
#define AMX_VLANE_OFF(hf) (8 * (hf))
#define AMX_STEP 8
#define AMX_VSTEP 4
#define AMX_ROW(t, hf) (8 * (hf) + (t))
/* P^T's B: the lane's eight accumulators where they stand (position WMMA12_K(l, t) holds key 8 hf + t) */
#define AMX_PFRAG(dst, acc, kb, PACK2)                                                                         \
    ((dst) = (uint4)(PACK2((acc)[0], (acc)[1]), PACK2((acc)[2], (acc)[3]), PACK2((acc)[4], (acc)[5]),          \
                     PACK2((acc)[6], (acc)[7])))
#endif
