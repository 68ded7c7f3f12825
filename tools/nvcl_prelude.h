/* SPDX-License-Identifier: MIT */
/* nvcl_prelude.h: OpenCL built-ins that clang's nvptx64-nvidia-nvcl target leaves unresolved, mapped to NVVM
 * intrinsics and clang built-ins, put before a program by tools/ptx_check.sh (PTX for ptxas) and
 * tools/nv_check.sh (the front end over the GPU branches: NVCL_FRONT_END, the half conversions alone, which
 * clang's header leaves undeclared for this target; the scalar macros would reject vector arguments). Not
 * NVIDIA's OpenCL library: enough for these kernels to compile with clang. */
#ifndef NVCL_FRONT_END
#define get_local_id(x) ((size_t)__nvvm_read_ptx_sreg_tid_x())
#define get_group_id(x) ((size_t)((x) == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : __nvvm_read_ptx_sreg_ctaid_y()))
#define get_num_groups(x) ((size_t)__nvvm_read_ptx_sreg_nctaid_x())
#define barrier(x) __nvvm_bar_sync(0)
#define native_exp2(x) __nvvm_ex2_approx_f(x)
#define native_divide(a, b) __nvvm_div_approx_f((a), (b))
#define copysign(a, b) __builtin_copysignf((a), (b))
#define exp2(x) __nvvm_ex2_approx_f(x)
#define tanh(x) (1.0f - 2.0f / (__nvvm_ex2_approx_f(2.8853900817779268f * (x)) + 1.0f))
#define log2(x) __nvvm_lg2_approx_f(x)
#define isnan(x) __builtin_isnan(x)
#define fmax(a, b) __builtin_fmaxf(a, b)
#define fabs(x) __builtin_fabsf(x)
#define fma(a, b, c) __builtin_fmaf(a, b, c)
#define clamp(x, a, b) ((x) < (a) ? (a) : (x) > (b) ? (b) : (x))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define mem_fence(x) __nvvm_membar_gl()
#define exp(x) __nvvm_ex2_approx_f(1.4426950408889634f * (x)) /* (the merge's weights: its count, not its bits) */
#define log(x) (0.6931471805599453f * __nvvm_lg2_approx_f(x))
#endif
#ifndef NVCL_FRONT_END /* (the fused merge's count, a global int's) */
static inline int nvcl_atom(volatile __global int *p, int v, int xchg)
{
    int r;
    if (xchg)
        __asm__ volatile("atom.global.exch.b32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory");
    else
        __asm__ volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory");
    return r;
}
static inline float4 __attribute__((overloadable)) vload4(size_t i, const __global float *p)
{
    return (float4)(p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]);
}
#define atomic_inc(p) nvcl_atom((p), 1, 0)
#define atomic_xchg(p, v) nvcl_atom((p), (v), 1)
#endif
#define vstore_half_rte(x, i, p) __builtin_store_halff((x), (p) + (i))
#define vload_half(i, p) __builtin_load_halff((p) + (i))
#define vload_half4(i, p) ((float4)(vload_half(4 * (i), p), vload_half(4 * (i) + 1, p), vload_half(4 * (i) + 2, p), \
  vload_half(4 * (i) + 3, p)))
#define vload_half8(i, p) ((float8)(vload_half(8 * (i), p), vload_half(8 * (i) + 1, p), vload_half(8 * (i) + 2, p), \
  vload_half(8 * (i) + 3, p), vload_half(8 * (i) + 4, p), vload_half(8 * (i) + 5, p), vload_half(8 * (i) + 6, p), \
  vload_half(8 * (i) + 7, p)))
