/* SPDX-License-Identifier: MIT */
/*
 * flash_combine.cl: merges the splits of split-KV (flash-decoding). For each row, O = sum_s w_s O_s /
 * sum_s w_s with w_s = exp(LSE_s - m), m = max_s LSE_s, and LSE = m + log(sum_s w_s). Splits that saw
 * no key (LSE -inf) weigh 0; a row no split saw is zeros with LSE -inf; a NaN partial keeps its row
 * NaN. One work-item per (row, column); rows are numbered as the LSE is: (b * heads_q + h) * seq_q + i
 * for padded batches, h * total_q + token for packed sequences (varlen). Specialised by HEAD_DIM
 * (HEAD_DIM_V: the output's columns) and FLASHCL_DTYPE_*.
 */
#ifndef HEAD_DIM
#error "flash_combine.cl needs HEAD_DIM"
#endif

__kernel void flash_combine(FCL_SIGNATURE(FCL_FLASH_COMBINE_ARGS))
{
    O += o_off; /* the caller's offsets, in elements */
    LSE += lse_off;
    SINKS += sinks_off;
    OP += op_off; /* split-KV's scratch: the caller's workspace or the plan's */
    LP += lp_off;
    const long gid = get_global_id(0);
    if (gid >= rows_total * HEAD_DIM_V)
        return;
    const long row = gid / HEAD_DIM_V;
    const int d = (int)(gid - row * HEAD_DIM_V);
    const long g = row / group_rows, i = row - g * group_rows;
#if HAS_SINKS /* the sink joins the denominator once, here (natural log) */
    const float sink = SINKS[varlen ? g : g % heads_q];
#else
    const float sink = -INFINITY;
#endif
    float lse;
    const float out = split_merge(OP, LP, rows_total, n_splits, row, d, HEAD_DIM_V, sink, &lse);
    /* padded: g = b * heads_q + h, i the query; packed: g = h, i the token (batch stride unused) */
    const long o = varlen ? i * o_ss + g * o_sh : (g / heads_q) * o_sb + i * o_ss + (g % heads_q) * o_sh;
    STORE(O, o + d, out);
    if (write_lse && d == 0)
        LSE[row] = lse;
}
