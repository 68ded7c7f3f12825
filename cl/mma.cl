/* SPDX-License-Identifier: MIT */
/*
 * mma.cl: the warp-level instructions of the matrix-unit kernels (flash_mma.cl, flash_wgmma.cl,
 * flash_decode_mma.cl), as inline PTX or emulated, and the asynchronous copies (cp.async) of the first
 * two. A kernel that includes this part names, in the scope of each use, `lane` (its lane in the warp)
 * and, emulated, `xw` (its warp's exchange area: 32*8 uints of local memory).
 *
 * FCL_PTX=1: the PTX instructions (NVIDIA, compute capability 8.0 and up: mma.sync.m16n8k16 with fp16
 * or bf16 operands and fp32 accumulators, ldmatrix, shfl.sync, cvt to 16-bit pairs). FCL_PTX=0: each
 * instruction emulated with the same fragment layout: a barrier, every lane publishes its registers in
 * its warp's area, a barrier, every lane reads what the instruction would have given it. So PoCL and
 * rusticl test the kernels' indexing and softmax in CI; the emulation is slow and exists only for that.
 * Every emulated instruction is a work-group barrier: the kernels call them with control flow that is
 * uniform across the work-group.
 *
 * Fragments of m16n8k16 (g = lane/4, t = lane%4; a register holds two 16-bit values, the lower index
 * in the low half): A (16x16, row-major) a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..],
 * a3 = A[g+8][2t+8..]; B (16x8, k by n) b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; C (16x8, fp32)
 * c0,c1 = C[g][2t..2t+1], c2,c3 = C[g+8][2t..2t+1].
 */
#ifndef FCL_PTX
#define FCL_PTX 0
#endif

/* The operands' type, MMA_BF16 0 (fp16) or 1 (bf16): K's and V's where they have a type of their own
 * (KV_DTYPE, common.cl), else the storage type. Q in another type (fp32, or the other 16-bit one:
 * Q_CONVERT) is rounded to it, to nearest even, as it is loaded (q_round8 below); O stays in Q's type. */
#ifndef MMA_TF32
#define MMA_TF32 0
#endif
#if MMA_TF32
/* fp32 Q, K and V (flash_mma only, problem.precision): mma.sync m16n8k8 with TF32 operands, 3 products a
 * product (MMA_TF32 3: x = big + small) or 1. Fragments of m16n8k8 (g = lane/4, t = lane%4; a register holds
 * one TF32 value: an fp32 bit pattern whose low 13 bits the instruction ignores): A (16x8, row-major)
 * a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]; B (8x8, k by n) b0 = B[t][g],
 * b1 = B[t+4][g]; C as m16n8k16's. */
#if !defined(FLASHCL_DTYPE_F32) || KV_DTYPE != 0 || (MMA_TF32 != 1 && MMA_TF32 != 3)
#error "mma.cl: MMA_TF32 (1 or 3) takes fp32 Q, K and V"
#endif
#define MMA_BF16 0 /* (unused: no 16-bit operands) */
#define MMA_KV_T float
#elif KV_DTYPE == 3 || (KV_DTYPE == 0 && defined(FLASHCL_DTYPE_BF16))
#define MMA_BF16 1
#elif KV_DTYPE == 2 || (KV_DTYPE == 0 && defined(FLASHCL_DTYPE_F16))
#define MMA_BF16 0
#else
#error "mma.cl: the matrix units take fp16 or bf16 operands (fp32 ones only as TF32: MMA_TF32)"
#endif
/* fp8 Q, K and V (problem.qkv_format, common.cl's Q_FORMAT: flash_wgmma only) are bytes; O in the storage
 * type, whose MMA_BF16 above stays the 16-bit type of O's stores */
#if defined(Q_FORMAT) && Q_FORMAT && !defined(MMA_KV_T)
#define MMA_KV_T uchar
#endif
#ifndef MMA_KV_T
#define MMA_KV_T ushort /* K's and V's type in the kernels' arguments (cl/args.h) */
#endif
#define Q_CONVERT (KV_DTYPE != 0)
#if Q_CONVERT || MMA_TF32
#define MMA_Q_T STORE_T /* Q's type in the kernels' arguments (cl/args.h) */
#elif defined(Q_FORMAT) && Q_FORMAT
#define MMA_Q_T uchar
#else
#define MMA_Q_T ushort
#endif

/* The fragment loops are unrolled on the GPU (the fragments must live in registers); emulated they
 * are not (PoCL compiled the unrolled emulation for a minute a configuration). */
#if FCL_PTX
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("nounroll")
#endif

/* ---- Asynchronous copies, global -> local memory (cp.async, compute capability 8.0 and up) -------- */
/* CP_ASYNC16_CG(dst, src, ok) and CP_ASYNC16_CA: 16 bytes (both addresses 16-byte aligned) through L2
 * only (.cg) or through L1 as well (.ca); ok 0 (a row past the keys) fills the 16 bytes with zeros and
 * reads nothing (src_size 0). CP_ASYNC_COMMIT(): the copies this work-item issued since its last commit
 * become a group; CP_ASYNC_WAIT(n): its groups have landed, all but the n committed last;
 * CP_ASYNC_WAIT_ALL(): all of them. PTX only: each kernel names its copies over these, with synchronous
 * ones where it is emulated or its rows are not 16-byte aligned. */
#if FCL_PTX
#define CP_ASYNC16_(op, dst, src, ok)                                                                          \
    __asm__ volatile(op " [%0], [%1], 16, %2;" ::"r"((uint)(size_t)(dst)), "l"((ulong)(size_t)(src)),          \
                     "r"((ok) ? 16 : 0)                                                                        \
                     : "memory")
#define CP_ASYNC16_CG(dst, src, ok) CP_ASYNC16_("cp.async.cg.shared.global", dst, src, ok)
#define CP_ASYNC16_CA(dst, src, ok) CP_ASYNC16_("cp.async.ca.shared.global", dst, src, ok)
#define CP_ASYNC_COMMIT() __asm__ volatile("cp.async.commit_group;" ::: "memory")
#define CP_ASYNC_WAIT_(n) __asm__ volatile("cp.async.wait_group " #n ";" ::: "memory")
#define CP_ASYNC_WAIT(n) CP_ASYNC_WAIT_(n)
#define CP_ASYNC_WAIT_ALL() __asm__ volatile("cp.async.wait_all;" ::: "memory")
#endif

/* ---- The four warp-level instructions, as PTX or emulated ---------------------------------------- */
#if FCL_PTX

#if !MMA_BF16
#define MMA_TYPE "f16"
#else
#define MMA_TYPE "bf16"
#endif
#define WARP_ARGS(xw, lane)
#define MMA(c, a0, a1, a2, a3, b0, b1)                                                                         \
    __asm__ volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE "." MMA_TYPE ".f32 {%0,%1,%2,%3}, "    \
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                                  \
                     : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3])                                   \
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
/* m16n8k8 with TF32 operands (a0..a3, b0, b1: TF32 bit patterns), fp32 accumulators. */
#define MMA_TF32_OP(c, a0, a1, a2, a3, b0, b1)                                                                 \
    __asm__ volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "       \
                     "{%8,%9}, {%0,%1,%2,%3};"                                                                 \
                     : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3])                                   \
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
/* x rounded to TF32: to nearest, ties away from zero (cvt.rna.tf32.f32, compute capability 8.0+). */
inline uint tf32_round(float x)
{
    uint r;
    __asm__("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
/* ldmatrix .x4: lane l gives the address of row l%8 of matrix l/8 (local memory, 16 bytes a row). */
#define LDSM_X4(r, base, off)                                                                                  \
    __asm__ volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"                          \
                     : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                                  \
                     : "r"((uint)(size_t)((base) + (off))))
#define LDSM_X4_T(r, base, off)                                                                                \
    __asm__ volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"                    \
                     : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                                  \
                     : "r"((uint)(size_t)((base) + (off))))
inline float shfl_xor(float v, int m)
{
    float r;
    __asm__ volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(m));
    return r;
}
/* The value of lane src. */
inline float shfl_idx(float v, int src)
{
    float r;
    __asm__ volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(src));
    return r;
}
#define SHFL_XOR(v, m) shfl_xor((v), (m))
#define SHFL_IDX(v, src) shfl_idx((v), (src))
/* mbarriers in local memory (flash_wgmma's producer, flash_decode_mma's bulk copies), written as PTX of sm_90
 * and marked: a program that uses them is finished for sm_90a (src/ptx.c); unfinished it is only compiled. */
#define LADDR(p) ((uint)(size_t)(p))
inline void mbar_init(__local ulong *b, uint count)
{
    __asm__ volatile("//SM90A mbarrier.init.shared.b64 [%0], %1;" ::"r"(LADDR(b)), "r"(count) : "memory");
}
/* Until the phase of parity `parity` has completed (a fresh barrier is in phase 0; parity 1 then passes) */
inline void mbar_wait(__local ulong *b, uint parity)
{
    uint done;
    do {
        __asm__ volatile("{\n//SM90A .reg .pred p;\n//SM90A mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                         "//SM90A selp.u32 %0, 1, 0, p;\n}"
                         : "=r"(done)
                         : "r"(LADDR(b)), "r"(parity)
                         : "memory");
    } while (!done);
}
/* The online softmax's two per-score operations in one instruction each: the NaN-propagating maximum
 * (max.NaN, compute capability 8.0+: common.cl's max_nan is a compare, a max and a select) and the
 * hardware's exp2 with denormal results flushed to zero (a weight below 2^-126: the row's sum holds
 * its largest key's weight, 1, so such a weight is far below the sum's last bit). */
inline float mma_max_nan(float a, float b)
{
    float r;
    __asm__("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
inline float mma_exp2(float x)
{
    float r;
    __asm__("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
/* Whether any lane of the warp has c nonzero (vote.sync.any). */
inline int warp_any(int c)
{
    int r;
    __asm__ volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.any.pred q, p, 0xffffffff;\n\t"
                     "selp.s32 %0, 1, 0, q;\n\t}"
                     : "=r"(r)
                     : "r"(c));
    return r;
}
/* Two floats to one register of two 16-bit values, lo in the low half; round to nearest even. */
inline uint pack2(float lo, float hi)
{
    uint r;
#if !MMA_BF16
    __asm__("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    __asm__("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

#else /* emulated */

inline float bits_to_float(uint h)
{
#if !MMA_BF16
    return half_bits_to_float(h & 0xffffu);
#else
    return as_float((h & 0xffffu) << 16);
#endif
}
inline uint pack2(float lo, float hi)
{
#if !MMA_BF16
    return (uint)float_to_half_bits(lo) | ((uint)float_to_half_bits(hi) << 16);
#else
    return (uint)float_to_bf16(lo) | ((uint)float_to_bf16(hi) << 16);
#endif
}
/* Every emulated instruction: barrier, each lane publishes its registers in its warp's area xw,
 * barrier, each lane reads what the instruction would have given it. An MMA's operands: A's four
 * registers, then B's two, at xw[lane * 8 ..]. */
inline void mma_emu_publish(uint a0, uint a1, uint a2, uint a3, uint b0, uint b1, __local uint *xw, int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xw[lane * 8 + 0] = a0;
    xw[lane * 8 + 1] = a1;
    xw[lane * 8 + 2] = a2;
    xw[lane * 8 + 3] = a3;
    xw[lane * 8 + 4] = b0;
    xw[lane * 8 + 5] = b1;
    barrier(CLK_LOCAL_MEM_FENCE);
}
inline void mma_emu(float *c, uint a0, uint a1, uint a2, uint a3, uint b0, uint b1, __local uint *xw, int lane)
{
    mma_emu_publish(a0, a1, a2, a3, b0, b1, xw, lane);
    const int g = lane >> 2, t = lane & 3;
    for (int o = 0; o < 4; ++o) {
        const int row = g + (o >> 1) * 8, col = 2 * t + (o & 1);
        float sum = 0.0f;
        for (int k = 0; k < 16; ++k) {
            /* A(row, k): lane (row%8)*4 + (k%8)/2, register (row/8) + 2*(k/8), half k%2 */
            const uint ar = xw[((row & 7) * 4 + ((k & 7) >> 1)) * 8 + (row >> 3) + 2 * (k >> 3)];
            /* B(k, col): lane col*4 + (k%8)/2, register 4 + k/8, half k%2 */
            const uint br = xw[(col * 4 + ((k & 7) >> 1)) * 8 + 4 + (k >> 3)];
            sum = fma(bits_to_float(ar >> (16 * (k & 1))), bits_to_float(br >> (16 * (k & 1))), sum);
        }
        c[o] += sum;
    }
}
/* m16n8k8 with TF32 operands, emulated: each operand's low 13 bits dropped, as the matrix unit reads them
 * (tf32_round's and TF32X3's parts have none), so their products are exact in fp32. */
inline void mma_tf32_emu(float *c, uint a0, uint a1, uint a2, uint a3, uint b0, uint b1, __local uint *xw, int lane)
{
    mma_emu_publish(a0, a1, a2, a3, b0, b1, xw, lane);
    const int g = lane >> 2, t = lane & 3;
    for (int o = 0; o < 4; ++o) {
        const int row = g + (o >> 1) * 8, col = 2 * t + (o & 1);
        float sum = 0.0f;
        for (int k = 0; k < 8; ++k) {
            /* A(row, k): lane (row%8)*4 + k%4, register row/8 + 2*(k/4); B(k, col): lane col*4 + k%4, register 4 + k/4 */
            const uint ar = xw[((row & 7) * 4 + (k & 3)) * 8 + (row >> 3) + 2 * (k >> 2)];
            const uint br = xw[(col * 4 + (k & 3)) * 8 + 4 + (k >> 2)];
            sum = fma(as_float(ar & 0xffffe000u), as_float(br & 0xffffe000u), sum);
        }
        c[o] += sum;
    }
}
/* cvt.rna.tf32.f32: 10 explicit mantissa bits, to nearest, ties away from zero; NaN and infinities kept. */
inline uint tf32_round(float x)
{
    const uint u = as_uint(x);
    return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & 0xffffe000u;
}
inline void ldsm_emu(uint *r, __local const ushort *base, int off, int trans, __local uint *xw, int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xw[lane] = (uint)off;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; ++i) {
        uint lo, hi;
        if (trans) { /* element (2*(lane%4) + e, lane/4) of matrix i */
            lo = base[xw[i * 8 + 2 * (lane & 3)] + (lane >> 2)];
            hi = base[xw[i * 8 + 2 * (lane & 3) + 1] + (lane >> 2)];
        } else { /* element (lane/4, 2*(lane%4) + e) of matrix i */
            lo = base[xw[i * 8 + (lane >> 2)] + 2 * (lane & 3)];
            hi = base[xw[i * 8 + (lane >> 2)] + 2 * (lane & 3) + 1];
        }
        r[i] = lo | (hi << 16);
    }
}
inline float shfl_emu(float v, int src, __local uint *xw, int lane)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xw[lane] = as_uint(v);
    barrier(CLK_LOCAL_MEM_FENCE);
    return as_float(xw[src & 31]);
}
#define MMA(c, a0, a1, a2, a3, b0, b1) mma_emu((c), (a0), (a1), (a2), (a3), (b0), (b1), xw, lane)
#define MMA_TF32_OP(c, a0, a1, a2, a3, b0, b1) mma_tf32_emu((c), (a0), (a1), (a2), (a3), (b0), (b1), xw, lane)
#define LDSM_X4(r, base, off) ldsm_emu((r), (base), (off), 0, xw, lane)
#define LDSM_X4_T(r, base, off) ldsm_emu((r), (base), (off), 1, xw, lane)
#define SHFL_XOR(v, m) shfl_emu((v), lane ^ (m), xw, lane)
#define SHFL_IDX(v, src) shfl_emu((v), (src), xw, lane)
#define mma_max_nan(a, b) max_nan((a), (b))
#define mma_exp2(x) exp2(x)
#define warp_any(c) 1 /* (every warp takes the branch: the same results, no vote needed) */
#endif

#if Q_CONVERT
/* Eight of Q's elements (p: any element alignment) rounded to the operand type, as four pairs: what a
 * 16-byte chunk of Q's tile holds. */
inline uint4 q_round8(__global const STORE_T *p)
{
    const float8 f = LOAD8_F(p, 0);
    return (uint4)(pack2(f.s0, f.s1), pack2(f.s2, f.s3), pack2(f.s4, f.s5), pack2(f.s6, f.s7));
}
#endif
