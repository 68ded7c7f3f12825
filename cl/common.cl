/*
 * common.cl: storage types shared by every flashcl kernel, prepended to each program's source.
 * Arithmetic is always fp32; Q, K, V and O are stored as fp32, fp16 or bf16 (one -D picks which).
 * fp16 goes through vload_half/vstore_half, which OpenCL 1.2 has without cl_khr_fp16. LOAD4 reads four
 * consecutive elements (element alignment is enough for vloadn) as a float4.
 */
#if defined(FLASHCL_DTYPE_F16)
#define STORE_T half
#define LOAD(p, i) vload_half((i), (p))
#define LOAD4(p, i) vload_half4(0, (p) + (i))
#define STORE(p, i, x) vstore_half_rte((x), (i), (p))
#elif defined(FLASHCL_DTYPE_BF16)
#define STORE_T ushort
inline float bf16_to_float(ushort x)
{
    return as_float((uint)x << 16);
}
/* Round to nearest even; a NaN stays a (quiet) NaN instead of rounding into inf. */
inline ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
#define LOAD(p, i) bf16_to_float((p)[(i)])
#define LOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define STORE(p, i, x) ((p)[(i)] = float_to_bf16(x))
#else
#define STORE_T float
#define LOAD(p, i) ((p)[(i)])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE(p, i, x) ((p)[(i)] = (x))
#endif

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f


/* max that keeps NaN (fmax drops it): a NaN score must poison its row, not vanish from the maximum. */
inline float max_nan(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

/* The problem's optional features, each compiled in only when a plan's build options ask for it
 * (src/plan.c fcl_build_options): ALiBi, an additive mask, a key-padding mask, packed sequences, a
 * KV cache, appending to it, and a paged cache's page size. */
#ifndef HAS_ALIBI
#define HAS_ALIBI 0
#endif
#ifndef HAS_MASK
#define HAS_MASK 0
#endif
#ifndef HAS_KPM
#define HAS_KPM 0
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
#ifndef GQA_PACK /* query heads per KV head packed into one work-group's rows (decode); 1: none */
#define GQA_PACK 1
#endif
