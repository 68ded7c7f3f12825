#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes wgmma.cl: the warpgroup MMA instructions of cl/flash_wgmma.cl as inline PTX, each written
inside a PTX comment marked "//SM90A " (src/ptx.c finishes the program for sm_90a). Their operand
lists are long (one register per accumulator: up to 128), hence a generator. The build runs it (meson.build:
a custom target in the build directory, embedded with cl/'s sources); the file is not kept in git.
Usage: python3 tools/gen_wgmma_cl.py [OUT] (without OUT: to stdout)"""
import sys

NS = (64, 80, 96, 128, 192, 256)  # (BLOCK_N for S; V's head dim for O)
NS8 = (64, 128, 256)  # (fp8: BLOCK_N for S; V's head dim for O)


def operands(n):
    return ",".join(f"%{i}" for i in range(n // 2))


def accs(n):
    return ", ".join(f'"+f"((d)[{i}])' for i in range(n // 2))


def wrap(constraints, width=100):
    """The constraint list split into lines of a macro body."""
    out, line = [], "                     : "
    for c in constraints.split(", "):
        if len(line) + len(c) + 2 > width:
            out.append(line.rstrip() + " \\")
            line = "                       "
        line += c + ", "
    out.append(line.rstrip(", "))
    return "\n".join(out)


if len(sys.argv) > 1:
    sys.stdout = open(sys.argv[1], "w", encoding="utf-8", newline="\n")
print("""/* SPDX-License-Identifier: MIT */
/*
 * wgmma.cl: Hopper's warpgroup matrix instructions (wgmma, compute capability 9.0a) as inline PTX for
 * cl/flash_wgmma.cl. Generated at build time by tools/gen_wgmma_cl.py.
 *
 * NVIDIA's OpenCL compiler targets sm_90, where ptxas refuses these instructions, so each is written
 * inside a PTX comment marked "//SM90A ": the compiler still substitutes its operands, and the program
 * builder removes the marks and sets .target sm_90a before building the program's PTX again
 * (src/ptx.c, fcl_ptx_finish_sm90a; the host asks for it with -DFCL_SM90A=1). Every instruction is
 * warpgroup-wide (128 work-items, .sync.aligned): the kernel reaches each with all of them.
 *
 * WGMMA_SS_n(d, da, db, acc): d (n/2 fp32 accumulators a work-item) = A * B^T (+ d when acc != 0), A a
 *   64 x 16 tile and B an n x 16 tile (both K-major: the 16 reduced elements of a row contiguous in core
 *   matrices) read from local memory through descriptors da, db.
 * WGMMA_RS_n(d, a, db, acc): d = A * B (+ d), A 64 x 16 from registers (a[0..3]: mma.sync's A fragment
 *   layout, warp w of the warpgroup holding rows 16w .. 16w+15), B 16 x n from local memory stored
 *   N-major (a row's n elements contiguous), read transposed.
 * WGMMA_SS8_n, WGMMA_RS8_n: the same with 8-bit float operands (FP8_TYPE, P's E4M3 in the RS form) and 32
 *   reduced elements a product, both operands K-major (B's rows: its n rows of 32 bytes); the RS form's
 *   a[0..3]: rows 16w + l/4 (a[0], a[2]) and +8 (a[1], a[3]), bytes k = 4(l%4) .. +3 (a[0], a[1]) and
 *   16 + 4(l%4) .. +3 (a[2], a[3]), the lowest k in the low byte.
 * The accumulators' layout: warp w, lane l: rows 16w + l/4 (registers 4j, 4j+1) and +8 (4j+2, 4j+3),
 * columns 8j + 2(l%4) and +1.
 */
#if FCL_PTX
#define WGMMA_FENCE() __asm__ volatile("//SM90A wgmma.fence.sync.aligned;" ::: "memory")
#define WGMMA_COMMIT() __asm__ volatile("//SM90A wgmma.commit_group.sync.aligned;" ::: "memory")
#define WGMMA_WAIT0() __asm__ volatile("//SM90A wgmma.wait_group.sync.aligned 0;" ::: "memory")
/* every batch but the one committed last done */
#define WGMMA_WAIT1() __asm__ volatile("//SM90A wgmma.wait_group.sync.aligned 1;" ::: "memory")
/* local memory written by the work-items' own stores (or cp.async), made visible to wgmma's reads */
#define FENCE_PROXY_ASYNC() __asm__ volatile("//SM90A fence.proxy.async.shared::cta;" ::: "memory")
/* A local-memory matrix descriptor, no swizzle: the start, the byte step between core matrices along
 * the reduced dimension (lbo) and along the other (sbo), each in 16-byte units. */
inline ulong wg_desc(__local const void *p, uint lbo, uint sbo)
{
    return (ulong)(((uint)(size_t)p & 0x3ffffu) >> 4) | ((ulong)(lbo >> 4) << 16) | ((ulong)(sbo >> 4) << 32);
}""")
for n in NS:
    r = n // 2
    print(f"""#define WGMMA_SS_{n}(d, da, db, acc) \\
    __asm__ volatile("{{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %{r + 2}, 0;\\n" \\
                     "//SM90A wgmma.mma_async.sync.aligned.m64n{n}k16.f32." MMA_TYPE "." MMA_TYPE " \\
{{{operands(n)}}}, %{r}, %{r + 1}, p, 1, 1, 0, 0;\\n}}" \\
{wrap(accs(n))} \\
                     : "l"(da), "l"(db), "r"(acc) \\
                     : "memory")""")
    print(f"""#define WGMMA_RS_{n}(d, a, db, acc) \\
    __asm__ volatile("{{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %{r + 5}, 0;\\n" \\
                     "//SM90A wgmma.mma_async.sync.aligned.m64n{n}k16.f32." MMA_TYPE "." MMA_TYPE " \\
{{{operands(n)}}}, {{%{r},%{r + 1},%{r + 2},%{r + 3}}}, %{r + 4}, p, 1, 1, 1;\\n}}" \\
{wrap(accs(n))} \\
                     : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(acc) \\
                     : "memory")""")
# fp8 operands (flash_wgmma's WG_FP8): k32 steps, both operands K-major (no transpose operands: wgmma takes
# none for 8-bit types); FP8_TYPE ("e4m3" or "e5m2") is Q's, K's and V's format, P is always E4M3.
for n in NS8:
    r = n // 2
    print(f"""#define WGMMA_SS8_{n}(d, da, db, acc) \\
    __asm__ volatile("{{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %{r + 2}, 0;\\n" \\
                     "//SM90A wgmma.mma_async.sync.aligned.m64n{n}k32.f32." FP8_TYPE "." FP8_TYPE " \\
{{{operands(n)}}}, %{r}, %{r + 1}, p, 1, 1;\\n}}" \\
{wrap(accs(n))} \\
                     : "l"(da), "l"(db), "r"(acc) \\
                     : "memory")""")
    print(f"""#define WGMMA_RS8_{n}(d, a, db, acc) \\
    __asm__ volatile("{{\\n//SM90A .reg .pred p;\\n//SM90A setp.ne.b32 p, %{r + 5}, 0;\\n" \\
                     "//SM90A wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3." FP8_TYPE " \\
{{{operands(n)}}}, {{%{r},%{r + 1},%{r + 2},%{r + 3}}}, %{r + 4}, p, 1, 1;\\n}}" \\
{wrap(accs(n))} \\
                     : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "l"(db), "r"(acc) \\
                     : "memory")""")
print("#endif")
