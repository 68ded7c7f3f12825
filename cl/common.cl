/* SPDX-License-Identifier: MIT */
/*
 * common.cl: storage types and feature switches shared by every flashcl kernel, the first part of
 * each program's source (src/kernels.c lists each program's parts).
 * Arithmetic is always fp32; Q, K, V and O are stored as fp32, fp16 or bf16 (one -D picks which).
 * fp16 goes through vload_half/vstore_half, which OpenCL 1.2 has without cl_khr_fp16 (on CPU devices through
 * integer conversions of ushort bits instead: FCL_HALF_BITS below). LOAD4 reads four
 * consecutive elements (element alignment is enough for vloadn) as a float4, LOAD8_F eight as a float8.
 */
/* V's and O's head dim (problem.head_dim_v): HEAD_DIM unless the host sets it (the portable, combine,
 * append and naive kernels take it; the others are never built with it). */
#if defined(HEAD_DIM) && !defined(HEAD_DIM_V)
#define HEAD_DIM_V HEAD_DIM
#endif
inline float bf16_to_float(ushort x)
{
    return as_float((uint)x << 16);
}
/* Round to nearest even; a NaN stays a (quiet) NaN instead of rounding into inf. (A select, not a branch: see
 * float_to_half_bits.) */
inline ushort float_to_bf16(float f)
{
    const uint u = as_uint(f);
    return (ushort)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
/* fp16 bits to and from float, exact (to nearest even), for values held in registers: by the device's
 * conversions in AMD's and Intel's matrix-unit programs (their GPUs have cl_khr_fp16 and convert in one
 * instruction) and in NVIDIA's PTX programs (cvt), elsewhere in integer arithmetic (PoCL 5.0 reports
 * cl_khr_fp16 but its library lacks convert_half_rte for the CPU). Not vload_half/vstore_half through a
 * half pointer to a ushort variable: that reads and writes the variable through another type, which an
 * optimizer may take for no access at all (PoCL 5.0 and 6.0 over LLVM 16 read zeros where the values
 * were; docs/TESTING.md, "PoCL 5 and 6"). */
#if defined(cl_khr_fp16) && ((defined(FCL_AMD_MMA) && FCL_AMD_MMA) || (defined(FCL_INTEL_MMA) && FCL_INTEL_MMA))
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define FCL_FP16_CVT 1
#else
#define FCL_FP16_CVT 0
#endif
inline float half_bits_to_float(uint h)
{
#if FCL_FP16_CVT
    return (float)as_half((ushort)h);
#elif defined(FCL_PTX) && FCL_PTX
    float r;
    __asm__("{\n.reg .b16 x;\ncvt.u16.u32 x, %1;\ncvt.f32.f16 %0, x;\n}" : "=f"(r) : "r"(h));
    return r;
#else
    /* (selects, no branches: zero and subnormals m * 2^-24, exact; infinities and NaNs all exponent bits) */
    const uint em = h & 0x7fffu;
    const uint big = em >= 0x7c00u ? (em << 13) | 0x7f800000u : (em << 13) + 0x38000000u;
    return as_float((em < 0x400u ? as_uint((float)em * 0x1p-24f) : big) | ((h & 0x8000u) << 16));
#endif
}
inline ushort float_to_half_bits(float f)
{
#if FCL_FP16_CVT
    return as_ushort(convert_half_rte(f));
#elif defined(FCL_PTX) && FCL_PTX
    ushort r;
    __asm__("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
    return r;
#else
    /* Selects, no branches (a branch a value made PoCL's compile of an fp16 program 2.6 times as long). Under
     * 2^-14, the subnormal units of 2^-24: the float adder rounds |f| + 0.5 to nearest even at that unit. From
     * 65520 (halfway to 65536) up, the normal form's carry gives infinity; NaN stays a (quiet) NaN. */
    const uint u = as_uint(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    const uint nan_inf = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
    const uint sub = as_uint(as_float(a) + 0.5f) - 0x3f000000u;
    const uint normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
    return (ushort)(sign | (a >= 0x47800000u ? nan_inf : a < 0x38800000u ? sub : normal));
#endif
}
/* Four and eight fp16 values' bits to floats, as half_bits_to_float's integer form (FCL_HALF_BITS' loads). */
inline float4 half4_bits_to_float4(ushort4 h)
{
    const uint4 x = convert_uint4(h), em = x & 0x7fffu;
    const uint4 big = select((em << 13) + 0x38000000u, (em << 13) | 0x7f800000u, em >= 0x7c00u);
    return as_float4(select(big, as_uint4(convert_float4(em) * 0x1p-24f), em < 0x400u) | ((x & 0x8000u) << 16));
}
inline float8 half8_bits_to_float8(ushort8 h)
{
    const uint8 x = convert_uint8(h), em = x & 0x7fffu;
    const uint8 big = select((em << 13) + 0x38000000u, (em << 13) | 0x7f800000u, em >= 0x7c00u);
    return as_float8(select(big, as_uint8(convert_float8(em) * 0x1p-24f), em < 0x400u) | ((x & 0x8000u) << 16));
}
/* FCL_CPU (the host's for a CPU device, src/program.c): fp16 tensors are ushort bits in the kernels'
 * arguments, read and written through the integer conversions above, not vload_half and vstore_half_rte.
 * Those come from the OpenCL library as long sequences with branches, one copy a value in the unrolled
 * loops; PoCL's compile of the portable fp16 program at d=128 took 6.9 s with them, 2.6 s with these (bf16:
 * 2.2 s, docs/design/portable.md). The results are the same, bit for bit (test_kernels' test_fp16_bits). */
#if defined(FCL_CPU) && FCL_CPU
#define FCL_HALF_BITS 1
#else
#define FCL_HALF_BITS 0
#endif
#if defined(FLASHCL_DTYPE_F16) && FCL_HALF_BITS
#define STORE_T ushort
#define LOAD(p, i) half_bits_to_float((p)[(i)])
#define LOAD4(p, i) half4_bits_to_float4(vload4(0, (p) + (i)))
#define LOAD8_F(p, i) half8_bits_to_float8(vload8(0, (p) + (i)))
#define STORE(p, i, x) ((p)[(i)] = float_to_half_bits(x))
#elif defined(FLASHCL_DTYPE_F16)
#define STORE_T half
#define LOAD(p, i) vload_half((i), (p))
#define LOAD4(p, i) vload_half4(0, (p) + (i))
#define LOAD8_F(p, i) vload_half8(0, (p) + (i))
#define STORE(p, i, x) vstore_half_rte((x), (i), (p))
#elif defined(FLASHCL_DTYPE_BF16)
#define STORE_T ushort
#define LOAD(p, i) bf16_to_float((p)[(i)])
#define LOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define LOAD8_F(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#define STORE(p, i, x) ((p)[(i)] = float_to_bf16(x))
#else
#define STORE_T float
#define LOAD(p, i) ((p)[(i)])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define LOAD8_F(p, i) vload8(0, (p) + (i))
#define STORE(p, i, x) ((p)[(i)] = (x))
#endif

/* Loops over a work-item's register block (arrays indexed by the loop counters): fully unrolled, so that
 * the arrays stay in registers. A compiler that gives up unrolling a loop whose body is large keeps the
 * arrays in scratch memory (clang 19 for gfx1100/gfx1200/gfx942 with libclc: the fp16 output loop, whose
 * vstore_half_rte is a long inline sequence, put the accumulators in 144-272 bytes of scratch a lane). */
#define REG_UNROLL _Pragma("unroll")

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f


/* FCL_SUB_GROUP: the sub-group size a register-blocked kernel asks for (the host sets it for Intel GPUs,
 * whose compiler otherwise may pick 32 lanes and too few registers a lane). */
#ifdef FCL_SUB_GROUP
#define SUB_GROUP_ATTR __attribute__((intel_reqd_sub_group_size(FCL_SUB_GROUP)))
#else
#define SUB_GROUP_ATTR
#endif

/* max that keeps NaN (fmax drops it): a NaN score must poison its row, not vanish from the maximum. */
inline float max_nan(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

/* Split-KV's merge of one element (flash_combine.cl, and flash_decode_mma's own merge past what its local
 * memory stages): element d of `row` over the n_splits partial results at LP[s rows_total + row] (natural
 * log-sum-exps) and OP[(s rows_total + row) dv + d], each weighing exp(LSE_s - m); a split that saw no key
 * (-inf) weighs 0; the sink (natural log; -inf: none) joins the denominator once; a row no split saw is 0
 * with LSE -inf; a NaN partial keeps its row NaN. Writes the row's LSE to *lse. */
inline float split_merge(__global const float *OP, __global const float *LP, const long rows_total, const int n_splits,
                         const long row, const int d, const int dv, const float sink, float *lse)
{
    float m = -INFINITY;
    for (int s = 0; s < n_splits; ++s)
        m = max_nan(m, LP[s * rows_total + row]);
    if (sink != -INFINITY && !isnan(m))
        m = fmax(m, sink);
    float num = 0.0f, den = 0.0f;
    if (m != -INFINITY) {
        for (int s = 0; s < n_splits; ++s) {
            const float l = LP[s * rows_total + row];
            const float w = l == -INFINITY ? 0.0f : exp(l - m);
            num += w * OP[(s * rows_total + row) * dv + d];
            den += w;
        }
        if (sink != -INFINITY)
            den += exp(sink - m);
    }
    *lse = m == -INFINITY ? -INFINITY : m + log(den);
    return m == -INFINITY ? 0.0f : num / den;
}

/*
 * The problem's optional features, each a -D of the program's build options (src/kernels.c writes
 * them from the problem; left out, a feature is off). The rule: whatever costs inside a kernel's key
 * loop is compiled in only when a problem uses it (a constant here, so the off case is no code at all);
 * values read once per work-group or per row (sizes, strides, the window's bounds, the cap, the
 * number of splits) are runtime arguments, so that problems differing only in them share a program.
 *   HAS_WINDOW   causal or a sliding window: keys bounded per row (win_left, win_right)
 *   HAS_SOFTCAP  scores capped (softcap_log2 / softcap)
 *   HAS_ALIBI, HAS_MASK, HAS_KPM   ALiBi slopes, an fp32 additive mask, a uint8 key-padding mask
 *   HAS_SINKS    attention sinks (applied where a row is finished: never inside a split of split-KV)
 *   VARLEN       packed sequences (cu_seqlens)
 *   KV_CACHE, KV_APPEND, PAGE_SIZE a KV cache, the step's keys appended first, a paged cache's page
 *   CACHE_IDX, LEFTPAD the cache's sequence for each batch entry, where each sequence's keys start
 *   SPLIT_KV     the keys split across work-groups (flash-decoding), merged by flash_combine
 *   GQA_PACK     query heads per KV head packed into one work-group's rows (decode); 1: none
 */
#ifndef HAS_WINDOW
#define HAS_WINDOW 0
#endif
#ifndef HAS_SOFTCAP
#define HAS_SOFTCAP 0
#endif
#ifndef HAS_ALIBI
#define HAS_ALIBI 0
#endif
#ifndef HAS_MASK
#define HAS_MASK 0
#endif
#ifndef HAS_KPM
#define HAS_KPM 0
#endif
#ifndef CACHE_IDX /* a KV cache whose sequence for batch entry b is cache_idx[b] (flash_attn_with_kvcache) */
#define CACHE_IDX 0
#endif
#ifndef LEFTPAD /* a KV cache whose sequence b's keys start at row leftpad[b] */
#define LEFTPAD 0
#endif
#ifndef HAS_SINKS /* attention sinks: one logit per query head in each row's denominator (SINKS) */
#define HAS_SINKS 0
#endif
#ifndef VARLEN
#define VARLEN 0
#endif
#ifndef KV_CACHE
#define KV_CACHE 0
#endif
#ifndef KV_APPEND
#define KV_APPEND 0
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE 0
#endif
#ifndef SPLIT_KV
#define SPLIT_KV 0
#endif
#ifndef GQA_PACK
#define GQA_PACK 1
#endif

/*
 * A quantized KV cache (KV_FORMAT, flashcl.h's flashcl_kv_format: 0 plain, 1 int8 times a scale per
 * (row, KV head), 2 fp8 E4M3, 3 fp8 E5M2): K and V are bytes (KV_T), read as floats by kv_byte; the int8
 * scales are fp32 or fp16 (KV_SCALE_F16). The cache's writer (kvcache.cl) quantizes with the inverse
 * functions below.
 */
#ifndef KV_FORMAT
#define KV_FORMAT 0
#endif
#ifndef KV_SCALE_F16
#define KV_SCALE_F16 0
#endif
/* K and V in a float type of their own (KV_DTYPE, flashcl.h's flashcl_kv_dtype: 1 fp32, 2 fp16, 3 bf16;
 * 0 the problem's dtype): read through KV_LOAD/KV_LOAD4/KV_LOAD8, written by KV_STORE. */
#ifndef KV_DTYPE
#define KV_DTYPE 0
#endif
#if KV_DTYPE && KV_FORMAT
#error "KV_DTYPE is for K and V in a float type, KV_FORMAT for a quantized cache: not both"
#endif
#if KV_FORMAT
#define KV_T uchar
#elif KV_DTYPE == 1
#define KV_T float
#define KV_LOAD4(p, i) vload4(0, (p) + (i))
#define KV_LOAD8_F(p, i) vload8(0, (p) + (i))
#define KV_STORE(p, i, x) ((p)[(i)] = (x))
#elif KV_DTYPE == 2 && FCL_HALF_BITS
#define KV_T ushort
#define KV_LOAD4(p, i) half4_bits_to_float4(vload4(0, (p) + (i)))
#define KV_LOAD8_F(p, i) half8_bits_to_float8(vload8(0, (p) + (i)))
#define KV_STORE(p, i, x) ((p)[(i)] = float_to_half_bits(x))
#elif KV_DTYPE == 2
#define KV_T half
#define KV_LOAD4(p, i) vload_half4(0, (p) + (i))
#define KV_LOAD8_F(p, i) vload_half8(0, (p) + (i))
#define KV_STORE(p, i, x) vstore_half_rte((x), (i), (p))
#elif KV_DTYPE == 3
#define KV_T ushort
#define KV_LOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define KV_LOAD8_F(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#define KV_STORE(p, i, x) ((p)[(i)] = float_to_bf16(x))
#else
#define KV_T STORE_T
#define KV_LOAD4(p, i) LOAD4(p, i)
#define KV_STORE(p, i, x) STORE(p, i, x)
#endif
#if KV_SCALE_F16 && FCL_HALF_BITS
#define SCALE_T ushort
#define LOAD_SCALE(p, i) half_bits_to_float((p)[(i)])
#define STORE_SCALE(p, i, x) ((p)[(i)] = float_to_half_bits(x))
#elif KV_SCALE_F16
#define SCALE_T half
#define LOAD_SCALE(p, i) vload_half((i), (p))
#define STORE_SCALE(p, i, x) vstore_half_rte((x), (i), (p))
#else
#define SCALE_T float
#define LOAD_SCALE(p, i) ((p)[(i)])
#define STORE_SCALE(p, i, x) ((p)[(i)] = (x))
#endif

/* fp8 E4M3: bias 7, 3 mantissa bits, subnormals m * 2^-9, S.1111.111 NaN, no infinities. */
inline float e4m3_to_float(const uint b)
{
    const uint e = (b >> 3) & 15u, m = b & 7u;
    const float mag = (b & 0x7fu) == 0x7fu ? NAN : e ? as_float(((e + 120u) << 23) | (m << 20)) : (float)m * 0x1p-9f;
    return (b & 0x80u) ? -mag : mag;
}

/* fp8 E5M2: bias 15, 2 mantissa bits, subnormals m * 2^-16, exponent 31 infinity or NaN. */
inline float e5m2_to_float(const uint b)
{
    const uint e = (b >> 2) & 31u, m = b & 3u;
    const float mag = e == 31u ? (m ? NAN : INFINITY) : e ? as_float(((e + 112u) << 23) | (m << 21)) : (float)m * 0x1p-16f;
    return (b & 0x80u) ? -mag : mag;
}

/* A cache byte's value before the int8 scale. */
inline float kv_byte(const uint b)
{
#if KV_FORMAT == 1
    return (float)as_char((uchar)b);
#elif KV_FORMAT == 2
    return e4m3_to_float(b);
#else
    return e5m2_to_float(b);
#endif
}
inline float4 kv_byte4(const uchar4 b)
{
    return (float4)(kv_byte(b.x), kv_byte(b.y), kv_byte(b.z), kv_byte(b.w));
}

/*
 * fp8 attention (flashcl.h's problem.qkv_format; Q_FORMAT 2 E4M3, 3 E5M2, and K and V in the same format
 * through KV_FORMAT): Q's bytes read as floats by LOAD_Q / LOAD_Q4; each tensor's descale factor
 * (FP8_DESCALE 1: one each, 2: per (batch, KV head), from the descale buffer: Q's, K's, V's) by
 * fp8_descale.
 */
#ifndef Q_FORMAT
#define Q_FORMAT 0
#endif
#ifndef FP8_DESCALE
#define FP8_DESCALE 0
#endif
#if Q_FORMAT
#define Q_T uchar
inline float q_byte(const uint b)
{
#if Q_FORMAT == 2
    return e4m3_to_float(b);
#else
    return e5m2_to_float(b);
#endif
}
#define LOAD_Q(p, i) q_byte((p)[(i)])
#define LOAD_Q4(p, i) q_byte4(vload4(0, (p) + (i)))
inline float4 q_byte4(const uchar4 b)
{
    return (float4)(q_byte(b.x), q_byte(b.y), q_byte(b.z), q_byte(b.w));
}
#else
#define Q_T STORE_T
#define LOAD_Q(p, i) LOAD(p, i)
#define LOAD_Q4(p, i) LOAD4(p, i)
#endif
/* tensor t's (0 Q, 1 K, 2 V) factor for batch entry b and KV head hk */
inline float fp8_descale(__global const float *descale, const int t, const int b, const int hk, const int batch,
                         const int heads_kv)
{
#if FP8_DESCALE == 1
    return descale[t];
#elif FP8_DESCALE == 2
    return descale[((long)t * batch + b) * heads_kv + hk];
#else
    (void)descale, (void)t, (void)b, (void)hk, (void)batch, (void)heads_kv;
    return 1.0f;
#endif
}

#if KV_FORMAT
#define KV_LOAD(p, i) kv_byte((p)[(i)])
/* (four bytes: fp8 attention's K and V in the portable kernel; an int8 cache's scales are the decode kernels') */
#define KV_LOAD4(p, i) kv_byte4(vload4(0, (p) + (i)))
#elif KV_DTYPE == 1
#define KV_LOAD(p, i) ((p)[(i)])
#elif KV_DTYPE == 2 && FCL_HALF_BITS
#define KV_LOAD(p, i) half_bits_to_float((p)[(i)])
#elif KV_DTYPE == 2
#define KV_LOAD(p, i) vload_half((i), (p))
#elif KV_DTYPE == 3
#define KV_LOAD(p, i) bf16_to_float((p)[(i)])
#else
#define KV_LOAD(p, i) LOAD(p, i)
#endif

/* Rounding to nearest even, saturating to the largest finite value; NaN stays NaN. */
inline uint float_to_e4m3(const float x)
{
    const uint sign = (as_uint(x) >> 24) & 0x80u;
    const float a = fabs(x);
    if (isnan(x))
        return sign | 0x7fu;
    if (a >= 448.0f)
        return sign | 0x7eu;
    if (a < 0x1p-6f)
        return sign | (uint)rint(a * 0x1p9f); /* subnormal (8 rounds up to the smallest normal) */
    uint u = as_uint(a);
    u = (u + 0x7ffffu + ((u >> 20) & 1u)) & 0xfff00000u; /* the mantissa to 3 bits, to nearest even */
    return sign | (((u >> 23) - 120u) << 3) | ((u >> 20) & 7u);
}

inline uint float_to_e5m2(const float x)
{
    const uint sign = (as_uint(x) >> 24) & 0x80u;
    const float a = fabs(x);
    if (isnan(x))
        return sign | 0x7fu;
    if (a >= 57344.0f)
        return sign | 0x7bu;
    if (a < 0x1p-14f)
        return sign | (uint)rint(a * 0x1p16f);
    uint u = as_uint(a);
    u = (u + 0xfffffu + ((u >> 21) & 1u)) & 0xffe00000u; /* the mantissa to 2 bits, to nearest even */
    return sign | (((u >> 23) - 112u) << 2) | ((u >> 21) & 3u);
}

/* The caller's offsets into its buffers (flashcl_tensors.offsets, in elements; each kernel's *_off
 * arguments), added to the pointers once at a kernel's start: Q, K, V, O and LSE, which every attention
 * kernel takes under these names. */
#define APPLY_QKVO_OFFSETS() (Q += q_off, K += k_off, V += v_off, O += o_off, LSE += lse_off)
/* ... and the optional inputs of the prefill kernels (flash_fwd, flash_mma, flash_wgmma) */
#define APPLY_PREFILL_OFFSETS()                                                                             \
    (ALIBI += alibi_off, MASK += mask_off, KPM += kpm_off, CU_Q += cu_q_off, CU_K += cu_k_off,               \
     CACHE_LENS += cache_lens_off, BT += bt_off, SINKS += sinks_off, BATCH_IDX += cache_idx_off,             \
     LEFT_PAD += leftpad_off)
