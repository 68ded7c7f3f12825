/*
 * kvcache.cl: appends a step's new keys and values to a KV cache before the attention reads it
 * (FlashAttention's flash_attn_with_kvcache with k and v given). One work-item per element of
 * K_NEW/V_NEW ((batch, seq_new, heads_kv, HEAD_DIM), contiguous): row i of sequence b goes to cache
 * row cache_lens[b] + i, contiguous or through the block table (PAGE_SIZE); rows past the capacity
 * (seq_kv) are dropped. Specialised by HEAD_DIM, PAGE_SIZE and FLASHCL_DTYPE_*.
 */
__kernel void kv_append(__global STORE_T *K, __global STORE_T *V, __global const STORE_T *K_NEW,
                        __global const STORE_T *V_NEW, __global const int *cache_lens, __global const int *bt,
                        const int seq_new, const int heads_kv, const int seq_kv, const int max_pages,
                        const int num_pages, const long k_sb, const long k_ss, const long k_sh, const long v_sb,
                        const long v_ss, const long v_sh, const long total)
{
    /* No early return: Mesa's llvmpipe mis-compiles kernel-argument loads after one (tests/rusticl). */
    const long gid = get_global_id(0);
    const long e = gid < total ? gid : 0;
    const int d = (int)(e % HEAD_DIM);
    const long r = e / HEAD_DIM;
    const int hk = (int)(r % heads_kv);
    const long bi = r / heads_kv;
    const int i = (int)(bi % seq_new);
    const long b = bi / seq_new;
    const int j = cache_lens[b] + i;
    if (gid < total && j >= 0 && j < seq_kv) {
#if PAGE_SIZE
        const long page = clamp(bt[b * max_pages + j / PAGE_SIZE], 0, num_pages - 1);
        const long ko = page * k_sb + (long)(j % PAGE_SIZE) * k_ss + hk * k_sh + d;
        const long vo = page * v_sb + (long)(j % PAGE_SIZE) * v_ss + hk * v_sh + d;
#else
        const long ko = b * k_sb + (long)j * k_ss + hk * k_sh + d;
        const long vo = b * v_sb + (long)j * v_ss + hk * v_sh + d;
#endif
        STORE(K, ko, LOAD(K_NEW, e));
        STORE(V, vo, LOAD(V_NEW, e));
    }
}
