/* SPDX-License-Identifier: MIT */
/*
 * layout.h: the local memory of the portable and decode kernels, one definition that both the kernels'
 * __local arrays (OpenCL C) and the host's formulas (src/kernels/portable.c, decode.c, decode_mma.c)
 * read, so that the chooser's byte counts are the arrays' own. Arguments are the kernel's shape; counts in
 * floats (or uints), the host evaluating them in 64 bits.
 */
#ifndef FCL_LAYOUT_H
#define FCL_LAYOUT_H

#define FCL_MAX_(a, b) ((a) > (b) ? (a) : (b))

/* flash_fwd (cl/flash_fwd.cl): rows of Q's and K's chunks padded by four floats (LDC), P's rows likewise
 * (LDP); Q's whole block resident where the chunk is the head dim; one shared region for K's chunk (and
 * Q's when not resident), then V's chunk, then the rows' reduction (block_m x threads_per_row), rounded to
 * whole float4s; and P's block. */
#define FCL_FWD_LDC(dc) ((dc) + 4)
#define FCL_FWD_LDP(bn) ((bn) + 4)
#define FCL_FWD_QRES_FLOATS(d, bm, dc) ((dc) == (d) ? (bm) * FCL_FWD_LDC(dc) : 0)
#define FCL_FWD_SHARED_FLOATS(d, dv, bm, bn, tpr, dc, vc)                                                  \
    FCL_MAX_(FCL_MAX_((bn) * FCL_FWD_LDC(dc) + ((dc) == (d) ? 0 : (bm) * FCL_FWD_LDC(dc)), (vc) * (dv)),    \
             (bm) * (tpr))
#define FCL_FWD_P_FLOATS(bm, bn) ((bm) * FCL_FWD_LDP(bn))
#define FCL_FWD_FLOATS(d, dv, bm, bn, tpr, dc, vc)                                                         \
    (FCL_FWD_QRES_FLOATS(d, bm, dc) + (FCL_FWD_SHARED_FLOATS(d, dv, bm, bn, tpr, dc, vc) + 3) / 4 * 4 +    \
     FCL_FWD_P_FLOATS(bm, bn))

/* flash_decode (cl/flash_decode.cl): the teams' merge area (each team's rows: max, sum and head_dim
 * outputs), and where the device has no shuffles the team sums' reduction, in one region. */
#define FCL_DECODE_FLOATS(d, rows, team, kt, wg, shuffles)                                                 \
    FCL_MAX_((wg) / (team) * (rows) * ((d) + 2), (shuffles) ? 0 : (wg) * (rows) * (kt))

/* flash_decode_mma (cl/flash_decode_mma.cl): the warps' merge area in floats; emulated, the exchange area
 * of 8 uints a lane. */
#define FCL_DECODE_MMA_MERGE_FLOATS(d, rows, warps) ((warps) * (rows) * ((d) + 2))
#define FCL_DECODE_MMA_XCHG_UINTS(warps) ((warps) * 32 * 8)

#endif
