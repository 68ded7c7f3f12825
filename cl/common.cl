/*
 * common.cl: storage types and feature switches shared by every flashcl kernel, the first part of
 * each program's source (src/kernels.c lists each program's parts).
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

/*
 * The problem's optional features, each a -D of the program's build options (src/kernels.c writes
 * them from the problem; left out, a feature is off). The rule: whatever costs inside a kernel's key
 * loop is compiled in only when a problem uses it (a constant here, so the off case is no code at all);
 * values read once per work-group or per row (sizes, strides, the window's bounds, the cap, the
 * number of splits) are runtime arguments, so that problems differing only in them share a program.
 *   HAS_WINDOW   causal or a sliding window: keys bounded per row (win_left, win_right)
 *   HAS_SOFTCAP  scores capped (softcap_log2 / softcap)
 *   HAS_ALIBI, HAS_MASK, HAS_KPM   ALiBi slopes, an fp32 additive mask, a uint8 key-padding mask
 *   VARLEN       packed sequences (cu_seqlens)
 *   KV_CACHE, KV_APPEND, PAGE_SIZE a KV cache, the step's keys appended first, a paged cache's page
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
