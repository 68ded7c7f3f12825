/* SPDX-License-Identifier: MIT */
/*
 * kvtile.cl: the key and value tiles of the kernels that keep V transposed in local memory (flash_amd.cl,
 * flash_dpas.cl): a K or V row's 16-byte piece from global memory (zeros past the keys), a row piece stored
 * row-major, and one stored down a column of the transposed tile.
 */
#if ROWS_ALIGNED
#define LOAD8(src) (*(__global const uint4 *)(src))
#else
#define LOAD8(src) as_uint4(vload8(0, (src)))
#endif

/* Elements c .. c + 7 of key row `key` of X (from `base`; rows rs and, paged, pages ps apart: geometry.cl's
 * kv_row), or zeros at or past the sequence's skv keys */
inline uint4 kv_piece(__global const ushort *X, const long base, const int b, const int key, const int skv, const int c,
                      const long rs, const long ps, __global const int *bt, const int max_pages, const int num_pages)
{
    return key < skv ? LOAD8(X + base + kv_row(b, key, rs, ps, bt, max_pages, num_pages) + c) : (uint4)(0);
}

/* Eight 16-bit elements at dst (8-byte aligned), as two 8-byte stores */
inline void store_row8(__local ushort *dst, const uint4 x)
{
    ((__local uint2 *)dst)[0] = x.xy;
    ((__local uint2 *)dst)[1] = x.zw;
}

/* Eight 16-bit elements down a column of a transposed tile, rows ld apart */
inline void store_column8(__local ushort *dst, const int ld, const uint4 x)
{
    dst[0 * ld] = (ushort)x.x;
    dst[1 * ld] = (ushort)(x.x >> 16);
    dst[2 * ld] = (ushort)x.y;
    dst[3 * ld] = (ushort)(x.y >> 16);
    dst[4 * ld] = (ushort)x.z;
    dst[5 * ld] = (ushort)(x.z >> 16);
    dst[6 * ld] = (ushort)x.w;
    dst[7 * ld] = (ushort)(x.w >> 16);
}
