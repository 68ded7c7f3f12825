/* SPDX-License-Identifier: MIT */
/*
 * test_mfma.c: cl/mfma.cl's 32x32x8 matrix instruction, emulated (FCL_AMD_MMA=0) on the device under test,
 * against float64 products on the host: a GEMM of several k steps, and the two chained products of
 * attention in flash_mfma's transposed form (S^T = K Q^T, its accumulators rounded to 16 bits as the next
 * product's B operand, O^T = V^T P^T), fp16 and bf16. Inputs are small random integers, so every product
 * and sum is exact and the comparison is equality; outputs are poisoned (NaN) before each run. The layout
 * the emulation and these kernels share is the hardware's (AMD's Matrix Instruction Calculator, through
 * the project's vendor-mma probe); the instruction itself builds for gfx90a in tools/vendor_check.sh.
 */
#include "testutil.h"

#include "../src/internal.h"
#include "../src/probe.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The test kernels, after cl/mfma.cl. A: 32 x K, B: K x 32, row-major 16-bit elements; D 32 x 32 fp32. */
static const char *const kernels =
    "#define GET(p, i) ((uint)(p)[i])\n"
    "#define PAIR(lo, hi) ((lo) | ((hi) << 16))\n"
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void mfma_gemm(__global const ushort *A, __global const ushort *B, __global float *D, const int K)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 31, h = lane >> 5;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[MFMA_XW];\n"
    "#endif\n"
    "    float16 d = (float16)(0.0f);\n"
    "    for (int k0 = 0; k0 < K; k0 += 8) {\n"
    "        const int k = k0 + 4 * h;\n"
    "        const uint2 a = (uint2)(PAIR(GET(A, r * K + k), GET(A, r * K + k + 1)),\n"
    "                                PAIR(GET(A, r * K + k + 2), GET(A, r * K + k + 3)));\n"
    "        const uint2 b = (uint2)(PAIR(GET(B, k * 32 + r), GET(B, (k + 1) * 32 + r)),\n"
    "                                PAIR(GET(B, (k + 2) * 32 + r), GET(B, (k + 3) * 32 + r)));\n"
    "        MFMA32(d, a, b);\n"
    "    }\n"
    "    for (int t = 0; t < 16; ++t)\n"
    "        D[(8 * (t >> 2) + 4 * h + (t & 3)) * 32 + r] = ((float *)&d)[t];\n"
    "}\n"
    /* Kt: 32 keys x DK, Q: 32 queries x DK, V: 32 keys x 32 columns, row-major; O^T: 32 columns x 32 queries.
     * P^T's B fragments are S^T's accumulators where they stand, rounded (pack16). */
    "inline uint pack16(float x)\n"
    "{\n"
    "#if MFMA_BF16\n"
    "    return as_uint(x) >> 16;\n"
    "#else\n"
    "    ushort s;\n"
    "    vstore_half_rte(x, 0, (half *)&s);\n"
    "    return s;\n"
    "#endif\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void mfma_chain(__global const ushort *Kt, __global const ushort *Q, __global const ushort *V,\n"
    "                __global float *Ot, const int DK)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 31, h = lane >> 5;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[MFMA_XW];\n"
    "#endif\n"
    "    float16 s = (float16)(0.0f), o = (float16)(0.0f);\n"
    "    for (int k0 = 0; k0 < DK; k0 += 8) { /* S^T = K Q^T: A = K (keys x d), B = Q^T (d x queries) */\n"
    "        const int k = k0 + 4 * h;\n"
    "        const uint2 a = (uint2)(PAIR(GET(Kt, r * DK + k), GET(Kt, r * DK + k + 1)),\n"
    "                                PAIR(GET(Kt, r * DK + k + 2), GET(Kt, r * DK + k + 3)));\n"
    "        const uint2 b = (uint2)(PAIR(GET(Q, r * DK + k), GET(Q, r * DK + k + 1)),\n"
    "                                PAIR(GET(Q, r * DK + k + 2), GET(Q, r * DK + k + 3)));\n"
    "        MFMA32(s, a, b);\n"
    "    }\n"
    "    const float *const sv = (const float *)&s;\n"
    "    for (int kb = 0; kb < 4; ++kb) { /* O^T += V^T P^T over keys 8kb .. 8kb+7 */\n"
    "        const int k = 8 * kb + 4 * h; /* this lane's keys: k .. k+3, S^T's elements 4kb .. 4kb+3 */\n"
    "        const uint2 b = (uint2)(PAIR(pack16(sv[4 * kb]), pack16(sv[4 * kb + 1])),\n"
    "                                PAIR(pack16(sv[4 * kb + 2]), pack16(sv[4 * kb + 3])));\n"
    "        const uint2 a = (uint2)(PAIR(GET(V, k * 32 + r), GET(V, (k + 1) * 32 + r)),\n"
    "                                PAIR(GET(V, (k + 2) * 32 + r), GET(V, (k + 3) * 32 + r)));\n"
    "        MFMA32(o, a, b);\n"
    "    }\n"
    "    for (int t = 0; t < 16; ++t)\n"
    "        Ot[(8 * (t >> 2) + 4 * h + (t & 3)) * 32 + r] = ((float *)&o)[t];\n"
    "}\n"
    /* flash_mfma's plan end to end (docs/design/mfma.md), one wave a block of 32 queries: S^T tiles of 32
     * keys, the online softmax a query a lane (its partner lane ^ 32 the tile's other 16 keys), P^T where
     * S^T's accumulators stand, O^T += V^T P^T over DHEAD / 32 column blocks; keys past Sk removed. Q, K, V
     * (Sq or Sk rows of DHEAD) 16-bit, O fp32. */
    "#ifndef DHEAD\n"
    "#define DHEAD 64\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void mfma_attention(__global const ushort *Q, __global const ushort *K, __global const ushort *V,\n"
    "                    __global float *O, const int Sq, const int Sk, const float scale)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 31, h = lane >> 5;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[MFMA_XW];\n"
    "#endif\n"
    "    const int q = 32 * (int)get_group_id(0) + r, qc = min(q, Sq - 1); /* this lane's query */\n"
    "    float16 o[DHEAD / 32];\n"
    "    for (int e = 0; e < DHEAD / 32; ++e)\n"
    "        o[e] = (float16)(0.0f);\n"
    "    float m = -INFINITY, l = 0.0f;\n"
    "    for (int n0 = 0; n0 < Sk; n0 += 32) {\n"
    "        float16 s = (float16)(0.0f);\n"
    "        const int key = min(n0 + r, Sk - 1);\n"
    "        for (int k0 = 0; k0 < DHEAD; k0 += 8) { /* S^T = K Q^T */\n"
    "            const int k = k0 + 4 * h;\n"
    "            const uint2 a = (uint2)(PAIR(GET(K, key * DHEAD + k), GET(K, key * DHEAD + k + 1)),\n"
    "                                    PAIR(GET(K, key * DHEAD + k + 2), GET(K, key * DHEAD + k + 3)));\n"
    "            const uint2 b = (uint2)(PAIR(GET(Q, qc * DHEAD + k), GET(Q, qc * DHEAD + k + 1)),\n"
    "                                    PAIR(GET(Q, qc * DHEAD + k + 2), GET(Q, qc * DHEAD + k + 3)));\n"
    "            MFMA32(s, a, b);\n"
    "        }\n"
    "        float *const sv = (float *)&s;\n"
    "        float mx = -INFINITY;\n"
    "        for (int t = 0; t < 16; ++t) { /* this lane's keys of the tile: 8 (t / 4) + 4 h + t % 4 */\n"
    "            sv[t] = n0 + 8 * (t >> 2) + 4 * h + (t & 3) < Sk ? sv[t] * scale : -INFINITY;\n"
    "            mx = fmax(mx, sv[t]);\n"
    "        }\n"
    "        mx = fmax(mx, MFMA_SWAP32(mx)); /* the query's maximum: both halves of its column */\n"
    "        const float m_new = fmax(m, mx), alpha = exp(m - m_new);\n"
    "        float psum = 0.0f;\n"
    "        for (int t = 0; t < 16; ++t) {\n"
    "            sv[t] = exp(sv[t] - m_new);\n"
    "            psum += sv[t];\n"
    "        }\n"
    "        psum += MFMA_SWAP32(psum);\n"
    "        l = l * alpha + psum;\n"
    "        m = m_new;\n"
    "        for (int e = 0; e < DHEAD / 32; ++e) /* every accumulator of O^T in a lane is its query's */\n"
    "            o[e] *= alpha;\n"
    "        for (int kb = 0; kb < 4; ++kb) { /* O^T += V^T P^T, keys n0 + 8kb + 4h .. +3 */\n"
    "            const int k = n0 + 8 * kb + 4 * h;\n"
    "            const uint2 b = (uint2)(PAIR(pack16(sv[4 * kb]), pack16(sv[4 * kb + 1])),\n"
    "                                    PAIR(pack16(sv[4 * kb + 2]), pack16(sv[4 * kb + 3])));\n"
    "            for (int e = 0; e < DHEAD / 32; ++e) {\n"
    "                const int c = 32 * e + r;\n"
    "                const uint2 a = (uint2)(PAIR(GET(V, min(k, Sk - 1) * DHEAD + c), GET(V, min(k + 1, Sk - 1) * DHEAD + c)),\n"
    "                                        PAIR(GET(V, min(k + 2, Sk - 1) * DHEAD + c), GET(V, min(k + 3, Sk - 1) * DHEAD + c)));\n"
    "                MFMA32(o[e], a, b);\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    if (q < Sq)\n"
    "        for (int e = 0; e < DHEAD / 32; ++e)\n"
    "            for (int t = 0; t < 16; ++t)\n"
    "                O[q * DHEAD + 32 * e + 8 * (t >> 2) + 4 * h + (t & 3)] = ((float *)&o[e])[t] / l;\n"
    "}\n";

/* The WMMA test kernels, after cl/wmma.cl (WMMA_GFX 11 or 12), one wave of 32: a GEMM (A: 16 x K, B: K x
 * 16, row-major; D 16 x 16) and the chained products (Kt, Q: 16 x DK; V: 16 keys x 16 columns; O^T 16 x
 * 16): gfx12 takes S^T's accumulators as P^T where they stand, in relabelled key order (WMMA12_KEY), V's
 * A fragment in the same order; gfx11 completes each column from the partner lane (WMMA_SWAP16). */
static const char *const wmma_kernels =
    "#define GET(p, i) ((uint)(p)[i])\n"
    "#define PAIR(lo, hi) ((lo) | ((hi) << 16))\n"
    "inline uint pack16(float x)\n"
    "{\n"
    "#if WMMA_BF16\n"
    "    return as_uint(x) >> 16;\n"
    "#else\n"
    "    ushort s;\n"
    "    vstore_half_rte(x, 0, (half *)&s);\n"
    "    return s;\n"
    "#endif\n"
    "}\n"
    "#if WMMA_GFX == 11\n"
    "#define NE 16 /* a lane's elements of A or B */\n"
    "#define KPOS(t) (t)\n"
    "#define DROW(t) (2 * (t) + h)\n"
    "#else\n"
    "#define NE 8\n"
    "#define KPOS(t) WMMA12_K(lane, t)\n"
    "#define DROW(t) (8 * h + (t))\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(32, 1, 1)))\n"
    "void wmma_gemm(__global const ushort *A, __global const ushort *B, __global float *D, const int K)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 15, h = lane >> 4;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[WMMA_XW];\n"
    "#endif\n"
    "    float8 d = (float8)(0.0f);\n"
    "    for (int k0 = 0; k0 < K; k0 += 16) {\n"
    "        uint a[NE / 2], b[NE / 2];\n"
    "        for (int t = 0; t < NE; t += 2) {\n"
    "            a[t / 2] = PAIR(GET(A, r * K + k0 + KPOS(t)), GET(A, r * K + k0 + KPOS(t + 1)));\n"
    "            b[t / 2] = PAIR(GET(B, (k0 + KPOS(t)) * 16 + r), GET(B, (k0 + KPOS(t + 1)) * 16 + r));\n"
    "        }\n"
    "        WMMA16(d, *(WMMA_AB_T *)a, *(WMMA_AB_T *)b);\n"
    "    }\n"
    "    for (int t = 0; t < 8; ++t)\n"
    "        D[DROW(t) * 16 + r] = ((float *)&d)[t];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(32, 1, 1)))\n"
    "void wmma_chain(__global const ushort *Kt, __global const ushort *Q, __global const ushort *V,\n"
    "                __global float *Ot, const int DK)\n"
    "{\n"
    "    const int lane = get_local_id(0), r = lane & 15, h = lane >> 4;\n"
    "#if !FCL_AMD_MMA\n"
    "    __local float xw[WMMA_XW];\n"
    "#endif\n"
    "    float8 s = (float8)(0.0f), o = (float8)(0.0f);\n"
    "    for (int k0 = 0; k0 < DK; k0 += 16) { /* S^T = K Q^T: rows keys, columns queries */\n"
    "        uint a[NE / 2], b[NE / 2];\n"
    "        for (int t = 0; t < NE; t += 2) {\n"
    "            a[t / 2] = PAIR(GET(Kt, r * DK + k0 + KPOS(t)), GET(Kt, r * DK + k0 + KPOS(t + 1)));\n"
    "            b[t / 2] = PAIR(GET(Q, r * DK + k0 + KPOS(t)), GET(Q, r * DK + k0 + KPOS(t + 1)));\n"
    "        }\n"
    "        WMMA16(s, *(WMMA_AB_T *)a, *(WMMA_AB_T *)b);\n"
    "    }\n"
    "    const float *const sv = (const float *)&s;\n"
    "    uint a[NE / 2], b[NE / 2]; /* O^T = V^T P^T */\n"
    "#if WMMA_GFX == 11\n"
    "    float other[8]; /* the column's keys of the other parity, from the partner lane */\n"
    "    for (int t = 0; t < 8; ++t)\n"
    "        other[t] = WMMA_SWAP16(sv[t]);\n"
    "    for (int t = 0; t < 16; t += 2) { /* keys t, t + 1: one even, one odd */\n"
    "        const float even = h ? other[t / 2] : sv[t / 2], odd = h ? sv[t / 2] : other[t / 2];\n"
    "        b[t / 2] = PAIR(pack16(even), pack16(odd));\n"
    "        a[t / 2] = PAIR(GET(V, t * 16 + r), GET(V, (t + 1) * 16 + r));\n"
    "    }\n"
    "#else\n"
    "    for (int t = 0; t < 8; t += 2) { /* position KPOS(t) holds key 8h + t: S^T's element t */\n"
    "        b[t / 2] = PAIR(pack16(sv[t]), pack16(sv[t + 1]));\n"
    "        a[t / 2] = PAIR(GET(V, WMMA12_KEY(KPOS(t)) * 16 + r), GET(V, WMMA12_KEY(KPOS(t + 1)) * 16 + r));\n"
    "    }\n"
    "#endif\n"
    "    WMMA16(o, *(WMMA_AB_T *)a, *(WMMA_AB_T *)b);\n"
    "    for (int t = 0; t < 8; ++t)\n"
    "        Ot[DROW(t) * 16 + r] = ((float *)&o)[t];\n"
    "}\n";

/* The DPAS test kernels, after cl/dpas.cl (DPAS_SG 8 or 16), one sub-group a work-group: a GEMM (A: 8 x
 * K, B: K x SG, row-major; C 8 x SG) and the chained products (Q: 8 x DK, Kt: 16 keys x DK, V: 16 keys x
 * SG columns; O 8 x SG): S's results are P's A where they stand on SG 16; on SG 8 the two 8-key results
 * interleave (k position 2n: key n, 2n + 1: key 8 + n) and V's rows are read in that order. */
static const char *const dpas_kernels =
    "#define GET(p, i) ((uint)(p)[i])\n"
    "#define PAIR(lo, hi) ((lo) | ((hi) << 16))\n"
    "inline uint pack16(float x)\n"
    "{\n"
    "#if DPAS_BF16\n"
    "    return as_uint(x) >> 16;\n"
    "#else\n"
    "    ushort s;\n"
    "    vstore_half_rte(x, 0, (half *)&s);\n"
    "    return s;\n"
    "#endif\n"
    "}\n"
    "#if DPAS_SG == 8 /* row m's elements k0 .. k0 + 15 of A (rows `rs` apart) into a */\n"
    "#define A_FRAG(a, A, rs, k0) for (int m = 0; m < 8; ++m) ((int *)&(a))[m] = PAIR(GET(A, m * (rs) + (k0) + 2 * lane), GET(A, m * (rs) + (k0) + 2 * lane + 1))\n"
    "#else\n"
    "#define A_FRAG(a, A, rs, k0) for (int m = 0; m < 8; ++m) ((short *)&(a))[m] = (short)GET(A, m * (rs) + (k0) + lane)\n"
    "#endif\n"
    "__kernel __attribute__((reqd_work_group_size(DPAS_SG, 1, 1)))\n"
    "void dpas_gemm(__global const ushort *A, __global const ushort *B, __global float *C, const int K)\n"
    "{\n"
    "    const int lane = get_local_id(0);\n"
    "#if !FCL_INTEL_MMA\n"
    "    __local float xw[DPAS_XW];\n"
    "#endif\n"
    "    float8 c = (float8)(0.0f);\n"
    "    for (int k0 = 0; k0 < K; k0 += 16) {\n"
    "        DPAS_A a;\n"
    "        int8 b;\n"
    "        A_FRAG(a, A, K, k0);\n"
    "        for (int j = 0; j < 8; ++j)\n"
    "            ((int *)&b)[j] = PAIR(GET(B, (k0 + 2 * j) * DPAS_SG + lane), GET(B, (k0 + 2 * j + 1) * DPAS_SG + lane));\n"
    "        DPAS(c, a, b);\n"
    "    }\n"
    "    for (int m = 0; m < 8; ++m)\n"
    "        C[m * DPAS_SG + lane] = ((float *)&c)[m];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(DPAS_SG, 1, 1)))\n"
    "void dpas_chain(__global const ushort *Q, __global const ushort *Kt, __global const ushort *V,\n"
    "                __global float *O, const int DK)\n"
    "{\n"
    "    const int lane = get_local_id(0);\n"
    "#if !FCL_INTEL_MMA\n"
    "    __local float xw[DPAS_XW];\n"
    "#endif\n"
    "    float8 s[16 / DPAS_SG];\n"
    "    for (int tile = 0; tile < 16 / DPAS_SG; ++tile) { /* S = Q K^T, keys tile * SG + lane */\n"
    "        const int key = tile * DPAS_SG + lane;\n"
    "        s[tile] = (float8)(0.0f);\n"
    "        for (int k0 = 0; k0 < DK; k0 += 16) {\n"
    "            DPAS_A a;\n"
    "            int8 b;\n"
    "            A_FRAG(a, Q, DK, k0);\n"
    "            for (int j = 0; j < 8; ++j)\n"
    "                ((int *)&b)[j] = PAIR(GET(Kt, key * DK + k0 + 2 * j), GET(Kt, key * DK + k0 + 2 * j + 1));\n"
    "            DPAS(s[tile], a, b);\n"
    "        }\n"
    "    }\n"
    "    DPAS_A a; /* P, from S's results */\n"
    "    int8 b;   /* V's rows in P's key order */\n"
    "    for (int m = 0; m < 8; ++m) {\n"
    "#if DPAS_SG == 8\n"
    "        ((int *)&a)[m] = PAIR(pack16(((float *)&s[0])[m]), pack16(((float *)&s[1])[m]));\n"
    "#else\n"
    "        ((short *)&a)[m] = (short)pack16(((float *)&s[0])[m]);\n"
    "#endif\n"
    "    }\n"
    "    for (int j = 0; j < 8; ++j)\n"
    "#if DPAS_SG == 8\n"
    "        ((int *)&b)[j] = PAIR(GET(V, j * DPAS_SG + lane), GET(V, (8 + j) * DPAS_SG + lane));\n"
    "#else\n"
    "        ((int *)&b)[j] = PAIR(GET(V, (2 * j) * DPAS_SG + lane), GET(V, (2 * j + 1) * DPAS_SG + lane));\n"
    "#endif\n"
    "    float8 o = (float8)(0.0f);\n"
    "    DPAS(o, a, b);\n"
    "    for (int m = 0; m < 8; ++m)\n"
    "        O[m * DPAS_SG + lane] = ((float *)&o)[m];\n"
    "}\n";

/* The 16-bit pattern of x, a value both types hold exactly (the tests' small integers and eighths): bf16
 * the top half of the float, fp16 its exponent rebased. */
static uint16_t bits16(float x, int bf16)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if (bf16)
        return (uint16_t)(u >> 16);
    if (x == 0.0f)
        return 0;
    return (uint16_t)(((u >> 16) & 0x8000u) | ((((u >> 23) & 0xffu) - 112u) << 10) | ((u >> 13) & 0x3ffu));
}

/* The program of source `part` (embedded) and `kernels_`, for bf16 or fp16, with `extra` options */
static cl_program build_of(const char *part, const char *kernels_, int bf16, const char *extra)
{
    /* (after common.cl, as in the library's programs: its fp16 conversions) */
    const char *texts[3] = {flashcl_source_text("common.cl"), flashcl_source_text(part), kernels_};
    ck_assert_ptr_nonnull(texts[0]);
    ck_assert_ptr_nonnull(texts[1]);
    cl_int err;
    cl_program prog = clCreateProgramWithSource(tu_context, 3, texts, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    char options[128];
    snprintf(options, sizeof options, "-cl-std=CL1.2 -DFLASHCL_DTYPE_%s %s", bf16 ? "BF16" : "F16", extra);
    err = clBuildProgram(prog, 1, &tu_device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        static char log[8192];
        clGetProgramBuildInfo(prog, tu_device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        ck_abort_msg("%s (%s): build failed (%d):\n%.4000s", part, options, (int)err, log);
    }
    return prog;
}

static cl_program build(int bf16)
{
    return build_of("mfma.cl", kernels, bf16, "");
}

/* n random integers in [-range, range], not all zero, as values and as 16-bit patterns */
static void random_ints(int *v, uint16_t *bits, int n, int range, int bf16, uint64_t *state)
{
    int any = 0;
    for (int i = 0; i < n; ++i) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (int)((*state >> 33) % (uint64_t)(2 * range + 1)) - range;
        any |= v[i] != 0;
        bits[i] = bits16((float)v[i], bf16);
    }
    ck_assert(any);
}

static size_t wave = 64; /* the work-group run() launches: one wave */

static void run(cl_program prog, const char *name, cl_mem *args, int nargs, int extra)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    for (int i = 0; i < nargs; ++i)
        ck_assert_int_eq(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, (cl_uint)nargs, sizeof(int), &extra), CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(tu_queue, k, 1, NULL, &wave, &wave, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    clReleaseKernel(k);
}

static cl_mem poisoned(size_t n)
{
    float *nan = malloc(n * sizeof *nan);
    for (size_t i = 0; i < n; ++i)
        nan[i] = NAN;
    cl_mem m = tu_buffer(n * sizeof *nan, nan);
    free(nan);
    return m;
}

/* C = A B through `kernel` (A: M x K, B: K x N, row-major, small random integers; C: M x N), one
 * work-group of `wave`, for each K in ks (nk of them): equal to float64 */
static void check_gemm(cl_program prog, const char *kernel, const char *label, int M, int N, const int *ks, int nk,
                       int bf16, uint64_t *state)
{
    for (int c = 0; c < nk; ++c) {
        const int K = ks[c];
        int *a = malloc(sizeof(int) * M * K), *b = malloc(sizeof(int) * K * N);
        uint16_t *abits = malloc(2 * (size_t)M * K), *bbits = malloc(2 * (size_t)K * N);
        random_ints(a, abits, M * K, 3, bf16, state);
        random_ints(b, bbits, K * N, 3, bf16, state);
        cl_mem args[3] = {tu_buffer(2 * (size_t)M * K, abits), tu_buffer(2 * (size_t)K * N, bbits), poisoned((size_t)M * N)};
        run(prog, kernel, args, 3, K);
        float *d = tu_read(args[2], sizeof(float) * M * N);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double ref = 0.0;
                for (int k = 0; k < K; ++k)
                    ref += (double)a[i * K + k] * b[k * N + j];
                ck_assert_msg(d[i * N + j] == ref, "%s %s K=%d: C[%d][%d] = %g, reference %g", label, bf16 ? "bf16" : "fp16",
                              K, i, j, d[i * N + j], ref);
            }
        free(d);
        free(a);
        free(b);
        free(abits);
        free(bbits);
        for (int i = 0; i < 3; ++i)
            clReleaseMemObject(args[i]);
    }
}

/* D = A B over K = 8, 24 and 64 (one, three and eight k steps) */
START_TEST(test_gemm)
{
    const int bf16 = _i;
    cl_program prog = build(bf16);
    uint64_t state = 0x9e3779b97f4a7c15ull + (uint64_t)bf16;
    static const int ks[] = {8, 24, 64};
    check_gemm(prog, "mfma_gemm", "MFMA", 32, 32, ks, 3, bf16, &state);
    clReleaseProgram(prog);
}
END_TEST

/* S^T = K Q^T (d = 16: two k steps), P^T = S^T rounded to 16 bits in place, O^T = V^T P^T (32 keys) */
START_TEST(test_chain)
{
    const int bf16 = _i, DK = 16;
    cl_program prog = build(bf16);
    uint64_t state = 0x2545f4914f6cdd1dull + (uint64_t)bf16;
    int kt[32 * 16], q[32 * 16], v[32 * 32];
    uint16_t ktb[32 * 16], qb[32 * 16], vb[32 * 32];
    random_ints(kt, ktb, 32 * DK, 2, bf16, &state); /* |S| <= 64: exact in bf16's 8 bits too */
    random_ints(q, qb, 32 * DK, 2, bf16, &state);
    random_ints(v, vb, 32 * 32, 2, bf16, &state);
    cl_mem args[4] = {tu_buffer(sizeof ktb, ktb), tu_buffer(sizeof qb, qb), tu_buffer(sizeof vb, vb), poisoned(32 * 32)};
    run(prog, "mfma_chain", args, 4, DK);
    float *ot = tu_read(args[3], 32 * 32 * sizeof(float));
    for (int c = 0; c < 32; ++c)     /* V's column */
        for (int j = 0; j < 32; ++j) { /* query */
            double ref = 0.0;
            for (int key = 0; key < 32; ++key) {
                double s = 0.0;
                for (int k = 0; k < DK; ++k)
                    s += (double)kt[key * DK + k] * q[j * DK + k];
                ref += (double)v[key * 32 + c] * s;
            }
            ck_assert_msg(ot[c * 32 + j] == ref, "%s: O^T[%d][%d] = %g, reference %g", bf16 ? "bf16" : "fp16", c, j,
                          ot[c * 32 + j], ref);
        }
    free(ot);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(args[i]);
    clReleaseProgram(prog);
}
END_TEST

/* Attention over Sq = 70 queries (three blocks, the last partial) and Sk = 100 keys (a partial last tile),
 * d = 64, inputs multiples of 1/8 in [-1, 1] (exact in both types), against float64 softmax attention:
 * within 4 units of P's rounding (P is rounded to the operands' type, as in every flash kernel here). */
START_TEST(test_attention)
{
    const int bf16 = _i, Sq = 70, Sk = 100, D = 64;
    cl_program prog = build(bf16);
    uint64_t state = 0x853c49e6748fea9bull + (uint64_t)bf16;
    static int qi[70 * 64], ki[100 * 64], vi[100 * 64];
    static uint16_t qb[70 * 64], kb[100 * 64], vb[100 * 64];
    /* integers in [-8, 8], taken as eighths: their patterns rewritten */
    random_ints(qi, qb, Sq * D, 8, bf16, &state);
    random_ints(ki, kb, Sk * D, 8, bf16, &state);
    random_ints(vi, vb, Sk * D, 8, bf16, &state);
    for (int i = 0; i < Sq * D; ++i)
        qb[i] = bits16(qi[i] / 8.0f, bf16);
    for (int i = 0; i < Sk * D; ++i) {
        kb[i] = bits16(ki[i] / 8.0f, bf16);
        vb[i] = bits16(vi[i] / 8.0f, bf16);
    }
    const float scale = 0.125f;
    cl_mem args[4] = {tu_buffer(sizeof(uint16_t) * Sq * D, qb), tu_buffer(sizeof(uint16_t) * Sk * D, kb),
                      tu_buffer(sizeof(uint16_t) * Sk * D, vb), poisoned((size_t)Sq * D)};
    cl_int err;
    cl_kernel k = clCreateKernel(prog, "mfma_attention", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    for (int i = 0; i < 4; ++i)
        ck_assert_int_eq(clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i]), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 4, sizeof(int), &Sq), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 5, sizeof(int), &Sk), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 6, sizeof(float), &scale), CL_SUCCESS);
    const size_t global = 64 * 3, local = 64;
    ck_assert_int_eq(clEnqueueNDRangeKernel(tu_queue, k, 1, NULL, &global, &local, 0, NULL, NULL), CL_SUCCESS);
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    float *o = tu_read(args[3], sizeof(float) * Sq * D);
    const double tol = 4.0 * (bf16 ? 1.0 / 256 : 1.0 / 2048);
    double worst = 0.0;
    for (int i = 0; i < Sq; ++i) {
        double s[100], mx = -INFINITY, sum = 0.0;
        for (int j = 0; j < Sk; ++j) {
            double dot = 0.0;
            for (int c = 0; c < D; ++c)
                dot += (qi[i * D + c] / 8.0) * (ki[j * D + c] / 8.0);
            s[j] = dot * scale;
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int j = 0; j < Sk; ++j)
            sum += (s[j] = exp(s[j] - mx));
        for (int c = 0; c < D; ++c) {
            double ref = 0.0;
            for (int j = 0; j < Sk; ++j)
                ref += s[j] / sum * (vi[j * D + c] / 8.0);
            const double err_ = fabs(o[i * D + c] - ref);
            ck_assert_msg(err_ <= tol, "%s: O[%d][%d] = %g, reference %g", bf16 ? "bf16" : "fp16", i, c, o[i * D + c], ref);
            worst = err_ > worst ? err_ : worst;
        }
    }
    ck_assert(worst > 0.0 || !bf16); /* (bf16's rounding of P shows: the comparison is not vacuous) */
    free(o);
    clReleaseKernel(k);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(args[i]);
    clReleaseProgram(prog);
}
END_TEST

/* cl/wmma.cl: gfx11 and gfx12 (loop index / 2), fp16 and bf16 (% 2): a GEMM over K = 16 and 48, and the
 * chained products (DK = 32), equal to float64 on small integers */
START_TEST(test_wmma)
{
    const int gfx = _i / 2 ? 12 : 11, bf16 = _i % 2;
    char extra[32];
    snprintf(extra, sizeof extra, "-DWMMA_GFX=%d -DWMMA_AB_T=%s", gfx, gfx == 11 ? "uint8" : "uint4");
    cl_program prog = build_of("wmma.cl", wmma_kernels, bf16, extra);
    wave = 32;
    uint64_t state = 0x5851f42d4c957f2dull + (uint64_t)_i;
    static const int ks[] = {16, 48};
    char label[16];
    snprintf(label, sizeof label, "gfx%d", gfx);
    check_gemm(prog, "wmma_gemm", label, 16, 16, ks, 2, bf16, &state);
    const int DK = 32;
    int kt[16 * 32], q[16 * 32], v[16 * 16];
    uint16_t ktb[16 * 32], qb[16 * 32], vb[16 * 16];
    random_ints(kt, ktb, 16 * DK, 1, bf16, &state); /* |S| <= 32 */
    random_ints(q, qb, 16 * DK, 1, bf16, &state);
    random_ints(v, vb, 16 * 16, 2, bf16, &state);
    cl_mem args[4] = {tu_buffer(sizeof ktb, ktb), tu_buffer(sizeof qb, qb), tu_buffer(sizeof vb, vb), poisoned(16 * 16)};
    run(prog, "wmma_chain", args, 4, DK);
    float *ot = tu_read(args[3], 16 * 16 * sizeof(float));
    for (int c = 0; c < 16; ++c)
        for (int j = 0; j < 16; ++j) {
            double ref = 0.0;
            for (int key = 0; key < 16; ++key) {
                double s_ = 0.0;
                for (int k = 0; k < DK; ++k)
                    s_ += (double)kt[key * DK + k] * q[j * DK + k];
                ref += (double)v[key * 16 + c] * s_;
            }
            ck_assert_msg(ot[c * 16 + j] == ref, "gfx%d %s: O^T[%d][%d] = %g, reference %g", gfx, bf16 ? "bf16" : "fp16", c,
                          j, ot[c * 16 + j], ref);
        }
    free(ot);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(args[i]);
    wave = 64;
    clReleaseProgram(prog);
}
END_TEST

/* cl/dpas.cl: sub-groups of 8 and 16 (loop index / 2), fp16 and bf16 (% 2): a GEMM over K = 16 and 48,
 * and the chained products (DK = 32, 16 keys), equal to float64 on small integers */
START_TEST(test_dpas)
{
    const int sg = _i / 2 ? 16 : 8, bf16 = _i % 2;
    char extra[32];
    snprintf(extra, sizeof extra, "-DDPAS_SG=%d", sg);
    cl_program prog = build_of("dpas.cl", dpas_kernels, bf16, extra);
    wave = (size_t)sg;
    uint64_t state = 0x14057b7ef767814full + (uint64_t)_i;
    static const int ks[] = {16, 48};
    char label[16];
    snprintf(label, sizeof label, "SG %d", sg);
    check_gemm(prog, "dpas_gemm", label, 8, sg, ks, 2, bf16, &state);
    const int DK = 32;
    int q[8 * 32], kt[16 * 32], v[16 * 16];
    uint16_t qb[8 * 32], ktb[16 * 32], vb[16 * 16];
    random_ints(q, qb, 8 * DK, 1, bf16, &state); /* |S| <= 32 */
    random_ints(kt, ktb, 16 * DK, 1, bf16, &state);
    random_ints(v, vb, 16 * sg, 2, bf16, &state);
    cl_mem args[4] = {tu_buffer(sizeof qb, qb), tu_buffer(sizeof ktb, ktb), tu_buffer(16 * (size_t)sg * 2, vb),
                      poisoned(8 * (size_t)sg)};
    run(prog, "dpas_chain", args, 4, DK);
    float *o = tu_read(args[3], 8 * (size_t)sg * sizeof(float));
    for (int i = 0; i < 8; ++i)
        for (int c = 0; c < sg; ++c) {
            double ref = 0.0;
            for (int key = 0; key < 16; ++key) {
                double s_ = 0.0;
                for (int k = 0; k < DK; ++k)
                    s_ += (double)q[i * DK + k] * kt[key * DK + k];
                ref += s_ * v[key * sg + c];
            }
            ck_assert_msg(o[i * sg + c] == ref, "SG %d %s: O[%d][%d] = %g, reference %g", sg, bf16 ? "bf16" : "fp16", i, c,
                          o[i * sg + c], ref);
        }
    free(o);
    for (int i = 0; i < 4; ++i)
        clReleaseMemObject(args[i]);
    wave = 64;
    clReleaseProgram(prog);
}
END_TEST

/* The matrix probes (src/probe.c) as the profile query runs them on AMD CDNA and RDNA3/4, here emulated
 * (MFMA; WMMA in gfx11's and gfx12's layouts): built, run on two work-groups and right on every lane; built
 * with the built-in where the device has no such instruction (every device here), they fail, and the
 * profile query's probe says why. */
START_TEST(test_probe)
{
    ck_assert_int_eq(fcl_probe_amd_program(tu_context, tu_device, FLASHCL_KERNEL_MFMA, "-DFCL_AMD_MMA=0"), 1);
    ck_assert_int_eq(fcl_probe_amd_program(tu_context, tu_device, FLASHCL_KERNEL_WMMA, "-DFCL_AMD_MMA=0 -DWMMA_GFX=11"), 1);
    ck_assert_int_eq(fcl_probe_amd_program(tu_context, tu_device, FLASHCL_KERNEL_WMMA, "-DFCL_AMD_MMA=0 -DWMMA_GFX=12"), 1);
    ck_assert_int_eq(fcl_probe_amd_program(tu_context, tu_device, FLASHCL_KERNEL_MFMA, "-DFCL_AMD_MMA=1"), 0);
    ck_assert_int_eq(fcl_probe_amd_program(tu_context, tu_device, FLASHCL_KERNEL_WMMA, "-DFCL_AMD_MMA=1"), 0);
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    ck_assert_int_eq(fcl_amd_matrix_kind(&pr), 0); /* (no AMD GPU here; an NVIDIA one has its own matrix_units) */
    const char *why = NULL;
    ck_assert_int_eq(fcl_probe_amd(tu_context, tu_device, &pr, &why), 0);
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_nonnull(strstr(why, "not an AMD GPU"));
}
END_TEST

/* The DPAS probe (src/probe.c) as the profile query runs it on an Intel GPU that lists the extension, here
 * emulated in both layouts (sub-groups of 8 and 16): built, run and right; with the built-ins where the
 * device has none, it fails; only built (Intel's AUB mode) it passes where it builds. The query's probe on
 * this device says why not. */
START_TEST(test_dpas_probe)
{
    ck_assert_int_eq(fcl_probe_dpas_program(tu_context, tu_device, 8, "-DFCL_INTEL_MMA=0", 1), 1);
    ck_assert_int_eq(fcl_probe_dpas_program(tu_context, tu_device, 16, "-DFCL_INTEL_MMA=0", 1), 1);
    ck_assert_int_eq(fcl_probe_dpas_program(tu_context, tu_device, 16, "-DFCL_INTEL_MMA=0", 0), 1);
    ck_assert_int_eq(fcl_probe_dpas_program(tu_context, tu_device, 16, "-DFCL_INTEL_MMA=1", 1), 0);
    flashcl_device_profile pr;
    ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
    const char *why = NULL;
    ck_assert_int_eq(fcl_probe_dpas(tu_context, tu_device, &pr, &why), 0);
    ck_assert_ptr_nonnull(why);
    /* the layout of an Intel GPU with the extension: 16 where it has 128 KiB of local memory, else 8 */
    pr.vendor = FLASHCL_VENDOR_INTEL;
    pr.is_cpu = 0;
    pr.has_intel_subgroup_matrix = 1;
    pr.local_mem_size = 65536;
    ck_assert_int_eq(fcl_intel_dpas_sg(&pr), 8);
    pr.local_mem_size = 131072;
    ck_assert_int_eq(fcl_intel_dpas_sg(&pr), 16);
    pr.has_intel_subgroup_matrix = 0;
    ck_assert_int_eq(fcl_intel_dpas_sg(&pr), 0);
}
END_TEST

/* Which AMD GPUs have a matrix-core kernel: the CDNA names ROCm gives (with their feature suffixes) and
 * wave64 (flash_mfma), gfx11 and gfx12 with wave32 (flash_wmma); neither elsewhere. */
START_TEST(test_amd_names)
{
    static const struct {
        const char *arch;
        flashcl_vendor vendor;
        size_t wave;
        int kind;
    } names[] = {
        {"gfx90a:sramecc+:xnack-", FLASHCL_VENDOR_AMD, 64, FLASHCL_KERNEL_MFMA},
        {"gfx942:sramecc+:xnack-", FLASHCL_VENDOR_AMD, 64, FLASHCL_KERNEL_MFMA},
        {"gfx940", FLASHCL_VENDOR_AMD, 64, FLASHCL_KERNEL_MFMA},
        {"gfx950", FLASHCL_VENDOR_AMD, 64, FLASHCL_KERNEL_MFMA},
        {"gfx1100", FLASHCL_VENDOR_AMD, 32, FLASHCL_KERNEL_WMMA},
        {"gfx1151", FLASHCL_VENDOR_AMD, 32, FLASHCL_KERNEL_WMMA},
        {"gfx1201", FLASHCL_VENDOR_AMD, 32, FLASHCL_KERNEL_WMMA},
        {"gfx908:sramecc+:xnack-", FLASHCL_VENDOR_AMD, 64, 0}, /* (CDNA1: no bf16 _1k instruction) */
        {"gfx1030", FLASHCL_VENDOR_AMD, 32, 0},                /* (RDNA2: no WMMA) */
        {"gfx1100", FLASHCL_VENDOR_AMD, 64, 0},                /* (wave64 on RDNA: not the layout) */
        {"gfx90a", FLASHCL_VENDOR_AMD, 32, 0},
        {"gfx942", FLASHCL_VENDOR_NVIDIA, 64, 0},
        {"", FLASHCL_VENDOR_AMD, 64, 0},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
        flashcl_device_profile pr;
        memset(&pr, 0, sizeof pr);
        snprintf(pr.arch, sizeof pr.arch, "%s", names[i].arch);
        pr.vendor = names[i].vendor;
        pr.wg_multiple = names[i].wave;
        ck_assert_msg(fcl_amd_matrix_kind(&pr) == names[i].kind, "%s, wave %zu", names[i].arch, names[i].wave);
    }
}
END_TEST

/* A flash_mfma, flash_wmma or flash_dpas that does not build (the built-ins asked for where the device has
 * none) gives way to the portable kernel, and the plan says why: what a failed build on a GPU does. */
START_TEST(test_fallback)
{
    flashcl_settings s;
    flashcl_settings_default(&s);
    s.disk_cache = 0;
    s.validate = 0;
    static const flashcl_path paths[3] = {FLASHCL_PATH_MFMA, FLASHCL_PATH_WMMA, FLASHCL_PATH_DPAS};
    static const flashcl_kernel kernels[3] = {FLASHCL_KERNEL_MFMA, FLASHCL_KERNEL_WMMA, FLASHCL_KERNEL_DPAS};
    s.path = paths[_i];
    s.extra_build_options = "-DFCL_AMD_MMA_FORCE_BUILTIN=1 -DFCL_INTEL_MMA_FORCE_BUILTIN=1";
    flashcl_context *ctx = NULL;
    ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.heads_q = p.heads_kv = 2;
    p.seq_q = p.seq_kv = 100;
    p.head_dim = 64;
    p.dtype = FLASHCL_DTYPE_F16;
    flashcl_config chosen, got;
    ck_assert_int_eq(flashcl_context_choose_config(ctx, &p, FLASHCL_ALGO_FLASH, &chosen), FLASHCL_SUCCESS);
    ck_assert_int_eq(chosen.kernel, kernels[_i]);
    flashcl_plan *plan = NULL;
    ck_assert_int_eq(flashcl_plan_create(ctx, &p, &plan), FLASHCL_SUCCESS);
    flashcl_plan_config(plan, &got);
    ck_assert_int_eq(got.kernel, FLASHCL_KERNEL_PORTABLE);
    ck_assert_msg(strstr(got.path_reason, "did not build"), "%s", got.path_reason);
    flashcl_plan_destroy(&plan);
    flashcl_context_destroy(&ctx);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("mfma");
    TCase *tc = tcase_create("emulated");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_gemm, 0, 2);
    tcase_add_loop_test(tc, test_chain, 0, 2);
    tcase_add_loop_test(tc, test_attention, 0, 2);
    tcase_add_loop_test(tc, test_wmma, 0, 4);
    tcase_add_loop_test(tc, test_dpas, 0, 4);
    tcase_add_test(tc, test_probe);
    tcase_add_test(tc, test_amd_names);
    tcase_add_test(tc, test_dpas_probe);
    tcase_add_loop_test(tc, test_fallback, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
