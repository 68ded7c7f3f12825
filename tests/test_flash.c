/* SPDX-License-Identifier: MIT */
/*
 * test_flash.c: the flash kernel (and the naive kernel beside it) against a float64 CPU reference,
 * over dtypes x head dims x causal x GQA ratios x sequence lengths, on random normal inputs with
 * outputs poisoned (NaN) before each run.
 *
 * Standard attention (CLBlast GEMMs, when built with CLBlast) is checked by the same rule.
 * The rule (FlashAttention's): the flash kernel's error may be at most twice the error of the plain
 * computation in the same storage precision (the naive kernel, which also rounds its output to the
 * dtype), plus a floor of 4 fp32 ulps of the row's scale for rows where the naive result is exact.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One case. The tables below name the fields they set: the shape on a row's first line, then its mask
 * and features; a field left out is 0, which is off or the default (scale 0: 1/sqrt(head_dim)).
 */
typedef struct case_params {
    flashcl_dtype dtype;
    int head_dim, causal, gqa, seq_q, seq_kv, batch, heads_kv;
    int custom_layout; /* Q and O as (batch, heads, seq, dim), K and V with padded rows (2: not 16-byte aligned) */
    float scale;
    int window, window_left, window_right; /* a sliding window when window is nonzero */
    float softcap;
    int alibi;       /* 0, 1 (slopes per head), 2 (per batch and head) */
    int sinks;       /* attention sinks: one logit per query head (head 1's -inf: none for it) */
    int cache_idx;   /* with kv_cache: a cache of batch + 2 sequences, entry b served by (3b + 1) % (batch + 2) */
    int leftpad;     /* with kv_cache: sequence b's keys start at row (5b + 2) % (cache_seqlens[b] + 1) */
    int kv_dtype;    /* K and V in a float type of their own (flashcl_kv_dtype) */
    int attn_mask;   /* 0; 1: a full (B, H, Sq, Sk) mask; 2: one (Sq, Sk) mask broadcast over batch and heads;
                        3: one row of Sk values broadcast over batch, heads and rows (mask_strides_explicit) */
    int key_padding; /* nonzero: a key-padding mask with the last keys of each batch padded */
    int varlen;      /* nonzero: packed sequences of lengths up to seq_q / seq_kv (one of each at the max) */
    int kv_splits;   /* problem.kv_splits: 0 chosen, 1 none, n */
    int kv_cache;    /* nonzero: K/V are a cache of seq_kv rows, partly filled (cache_seqlens) */
    int kv_append;   /* nonzero: seq_q new rows appended first */
    int page_size;   /* nonzero: a paged cache with a shuffled block table */
    int path;        /* 0: the context's default; else a flashcl_path the context is created with */
    int kv_format;   /* a quantized cache (flashcl_kv_format); kv_scale_f16: int8 scales in fp16 */
    int kv_scale_f16;
    int mma_block_m, mma_block_n; /* nonzero: the matrix-unit kernel's tiles set by an override */
    int mma_rows;                 /* with them: a lane's rows (2: one m16 tile a warp, 4: two: m_tiles 2) */
    int mma_stages;               /* and 2: K and V in two stages (kv_stages); 3 (flash_wgmma): three, 4: four (its producer) */
    int wgmma_tiles;              /* with them: flash_wgmma's tiles (an override of kernel WGMMA), not flash_mma's */
    int persistent;               /* and: at most this many work-groups, each running row blocks in turn */
    int mfma_tiles;               /* with them: flash_mfma's tiles (an override of kernel MFMA) */
    int wmma_gfx;                 /* 11: flash_wmma emulated in RDNA3's layout (-DWMMA_GFX=11; else the default, 12) */
    int kv_bulk;                  /* 1: flash_decode_mma's variant fed by bulk copies (-DKV_BULK=1: decode_mma.md's
                                     decode-mma-35), finished for sm_90a on an NVIDIA 9.x GPU, emulated elsewhere */
    int dpas_sg;                  /* with mma_block_m/n: flash_dpas's tiles (an override of kernel DPAS) in sub-groups of
                                     this many (8: Xe-HPG's layout, emulated) */
    int top_left; /* problem.alignment = FLASHCL_ALIGN_TOP_LEFT */
    int mask_dtype; /* with attn_mask: problem.mask_dtype (fp16 values rounded, boolean 0 / -inf) */
    int offsets; /* nonzero: every tensor at an offset (a multiple of this many bytes) inside a larger
                    buffer with margins that must stay unwritten; the flash plan on a second queue */
    int head_dim_v; /* problem.head_dim_v: V's and O's head dim (0: head_dim) */
    int precision;  /* problem.precision: fp32 data's products (flashcl_precision) */
    int qkv_format;  /* fp8 attention: Q, K and V bytes of this format (problem.qkv_format) */
    int fp8_descale; /* and their descale factors (flashcl_descale): drawn from 0.5 .. 2 */
    int fp8_exact;   /* with qkv_format: Q and K of -1, 0 and 1, the scale ln 2 and Q's and K's factors 2^i and
                        2^-i, so that every weight is a power of two that E4M3 holds (scores.cl's units: the
                        softmax's exponents are integers): flash_wgmma's fp8 P is then exact, and its output
                        is held to fp32's tolerance rather than E4M3's */
} case_params;

typedef struct errors {
    double max_err;     /* max |out - ref| over O */
    double max_lse_err; /* max |lse - ref| over finite LSE */
} errors;

/* x rounded to TF32 (10 explicit mantissa bits), to nearest with ties away from zero, as cvt.rna.tf32. */
static float tf32_rna(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static double eps_of(flashcl_dtype t)
{
    return t == FLASHCL_DTYPE_F32 ? ldexp(1.0, -23) : t == FLASHCL_DTYPE_F16 ? ldexp(1.0, -10) : ldexp(1.0, -7);
}

static void set_layout(flashcl_problem *p, int pad)
{
    const int64_t d = p->head_dim, dv = p->head_dim_v ? p->head_dim_v : d;
    /* Q and O: (batch, heads, seq, dim). K and V: default order with `pad` spare elements per row
     * (8: rows stay 16-byte aligned for fp16/bf16; 3: they do not). */
    p->q_strides = (flashcl_strides){(int64_t)p->heads_q * p->seq_q * d, d, (int64_t)p->seq_q * d};
    p->o_strides = (flashcl_strides){(int64_t)p->heads_q * p->seq_q * dv, dv, (int64_t)p->seq_q * dv};
    const int64_t row = (int64_t)p->heads_kv * d + pad, vrow = (int64_t)p->heads_kv * dv + pad;
    p->k_strides = (flashcl_strides){(int64_t)p->seq_kv * row, row, d};
    p->v_strides = (flashcl_strides){(int64_t)p->seq_kv * vrow, vrow, dv};
}

/*
 * A quantized cache after the run: the appended rows read back and checked against the step's inputs
 * (fp8: the nearest value, to even, exactly; int8: the row's scale max|x| * fp32(1/127) in its storage type, and
 * each element within half a step of x / scale), then the float64 reference's K and V (dec[1], dec[2])
 * decoded from the cache's bytes and scales by hostmath's conversions, which are written apart from
 * the kernels'.
 */
static void check_quantized_cache(const case_params *c, const flashcl_problem *p, const int32_t *cache_lens,
                                  const int32_t *cache_idx, const int32_t *block_table, int max_pages, const void *knew, const void *vnew,
                                  cl_mem k, cl_mem v, const cl_mem scale_m[2], size_t n_scales, void *host[3],
                                  void *scales[2], float *dec[3])
{
    const flashcl_kv_format f = (flashcl_kv_format)c->kv_format;
    const size_t ss = flashcl_dtype_size(p->kv_scale_dtype);
    const int nbk = c->page_size ? p->num_pages : p->cache_batch ? p->cache_batch : p->batch;
    const int nk = c->page_size ? c->page_size : p->seq_kv;
    const flashcl_strides *st[2] = {&p->k_strides, &p->v_strides};
    size_t bytes[2];
    for (int m = 0; m < 2; ++m) {
        bytes[m] = (size_t)(hm_offset(st[m], nbk - 1, nk - 1, p->heads_kv - 1) + p->head_dim);
        free(host[m + 1]);
        host[m + 1] = tu_read(m ? v : k, bytes[m]);
        if (f == FLASHCL_KV_INT8) {
            free(scales[m]);
            scales[m] = tu_read(scale_m[m], n_scales * ss);
        }
    }
    for (int m = 0; m < 2 && c->kv_append; ++m) {
        const uint8_t *cache = host[m + 1];
        const void *x = m ? vnew : knew;
        for (int b = 0; b < c->batch; ++b)
            for (int i = 0; i < c->seq_q; ++i) {
                const int j = cache_lens[b] + i;
                if (j >= c->seq_kv)
                    continue;
                const int bb = c->page_size ? block_table[b * max_pages + j / c->page_size] : cache_idx[b];
                const int jj = c->page_size ? j % c->page_size : j;
                for (int hk = 0; hk < p->heads_kv; ++hk) {
                    const int64_t o = hm_offset(st[m], bb, jj, hk);
                    const size_t src = (((size_t)b * c->seq_q + i) * p->heads_kv + hk) * p->head_dim;
                    double amax = 0.0, scale = 1.0;
                    if (f == FLASHCL_KV_INT8) {
                        for (int d = 0; d < p->head_dim; ++d)
                            amax = fmax(amax, fabs(hm_load(x, p->dtype, src + d)));
                        const float want = (float)amax * (1.0f / 127.0f); /* as kvcache.cl computes it */
                        const double want_stored = p->kv_scale_dtype == FLASHCL_DTYPE_F16
                                                       ? hm_half_to_float(hm_float_to_half(want))
                                                       : want;
                        scale = hm_load(scales[m], p->kv_scale_dtype,
                                        ((size_t)bb * nk + jj) * p->heads_kv + hk);
                        ck_assert_msg(scale == want_stored, "%c row %d of batch %d head %d: scale %.9g, want %.9g",
                                      "kv"[m], j, b, hk, scale, want_stored);
                    }
                    for (int d = 0; d < p->head_dim; ++d) {
                        const double xv = hm_load(x, p->dtype, src + d);
                        const uint8_t got = cache[o + d];
                        if (f == FLASHCL_KV_INT8)
                            ck_assert_msg(fabs((double)(int8_t)got - xv / scale) <= 0.5 + 1e-4,
                                          "%c row %d head %d dim %d: int8 %d for %.9g / %.9g", "kv"[m], j, hk, d,
                                          (int)(int8_t)got, xv, scale);
                        else
                            ck_assert_msg(got == hm_kv_from_float(xv, f), "%c row %d head %d dim %d: byte %#x for %.9g, want %#x",
                                          "kv"[m], j, hk, d, got, xv, hm_kv_from_float(xv, f));
                    }
                }
            }
    }
    for (int m = 0; m < 2; ++m) /* the reference's K and V: the cache as it is now */
        for (int bb = 0; bb < nbk; ++bb)
            for (int jj = 0; jj < nk; ++jj)
                for (int hk = 0; hk < p->heads_kv; ++hk) {
                    const int64_t o = hm_offset(st[m], bb, jj, hk);
                    const double scale = f == FLASHCL_KV_INT8 ? hm_load(scales[m], p->kv_scale_dtype,
                                                                        ((size_t)bb * nk + jj) * p->heads_kv + hk)
                                                              : 1.0;
                    for (int d = 0; d < p->head_dim; ++d)
                        dec[m + 1][o + d] = (float)(hm_kv_byte(((const uint8_t *)host[m + 1])[o + d], f) * scale);
                }
}

static void run_case(const case_params *c)
{
    flashcl_context *ctx = NULL;
    int bulk = 0; /* flash_decode_mma built with KV_BULK */
    if (c->path) {
        flashcl_settings s;
        flashcl_settings_default(&s);
        s.disk_cache = 0;
        s.validate = 0;
        s.path = c->path;
        char options[256];
        if (c->wmma_gfx) { /* (after the configuration's own options, which this setting would replace) */
            snprintf(options, sizeof options, "%s -DWMMA_GFX=%d",
                     getenv("FLASHCL_BUILD_OPTIONS") ? getenv("FLASHCL_BUILD_OPTIONS") : "", c->wmma_gfx);
            s.extra_build_options = options;
        }
        if (c->kv_bulk) { /* (the copy engine's instructions need a device that proved sm_90a programs; on
                             another NVIDIA GPU with matrix units the case runs the default program) */
            flashcl_device_profile pr;
            ck_assert_int_eq(flashcl_device_profile_query(tu_device, &pr), FLASHCL_SUCCESS);
            const int nv = pr.vendor == FLASHCL_VENDOR_NVIDIA && pr.matrix_units, sm90a = nv && pr.matrix_units == 2;
            snprintf(options, sizeof options, "%s%s", getenv("FLASHCL_BUILD_OPTIONS") ? getenv("FLASHCL_BUILD_OPTIONS") : "",
                     sm90a ? " -DKV_BULK=1 -DFCL_SM90A=1" : nv ? "" : " -DKV_BULK=1");
            bulk = !nv || sm90a;
            if (!bulk)
                printf("(KV_BULK case: no sm_90a programs on this device: the default program)\n");
            s.extra_build_options = options;
        }
        ck_assert_int_eq(flashcl_context_create(tu_context, tu_device, tu_queue, &s, &ctx), FLASHCL_SUCCESS);
    } else {
        ctx = tu_context_create();
    }
    flashcl_problem p;
    flashcl_problem_default(&p);
    p.batch = c->batch;
    p.heads_kv = c->heads_kv;
    p.heads_q = c->heads_kv * c->gqa;
    p.seq_q = c->seq_q;
    p.seq_kv = c->seq_kv;
    p.head_dim = c->head_dim;
    p.dtype = c->dtype;
    p.causal = c->causal;
    p.scale = c->fp8_exact ? 0.693147180559945309f : c->scale; /* (ln 2) */
    p.window = c->window;
    p.window_left = c->window ? c->window_left : -1;
    p.window_right = c->window ? c->window_right : -1;
    p.softcap = c->softcap;
    p.alibi = c->alibi;
    p.sinks = c->sinks;
    p.attn_mask = c->attn_mask != 0;
    if (c->attn_mask == 2) /* broadcast over batch and heads */
        p.mask_strides = (flashcl_strides){0, c->seq_kv, 0};
    p.mask_strides_explicit = c->attn_mask == 3; /* all-zero strides taken as they are */
    p.key_padding = c->key_padding;
    p.kv_splits = c->kv_splits;
    p.kv_cache = c->kv_cache;
    p.kv_append = c->kv_append;
    p.page_size = c->page_size;
    p.kv_format = c->kv_format;
    p.kv_scale_dtype = c->kv_scale_f16 ? FLASHCL_DTYPE_F16 : FLASHCL_DTYPE_F32;
    p.return_lse = 1;
    p.alignment = c->top_left ? FLASHCL_ALIGN_TOP_LEFT : FLASHCL_ALIGN_BOTTOM_RIGHT;
    p.mask_dtype = c->mask_dtype;
    p.cache_batch_idx = c->cache_idx;
    p.cache_batch = c->cache_idx ? c->batch + 2 : 0;
    p.cache_leftpad = c->leftpad;
    p.kv_dtype = c->kv_dtype;
    p.head_dim_v = c->head_dim_v;
    p.precision = c->precision;
    p.qkv_format = c->qkv_format;
    p.fp8_descale = c->fp8_descale;
    const int dv = c->head_dim_v ? c->head_dim_v : c->head_dim; /* V's and O's columns */
    /* A cache of seq_kv rows per sequence, filled to different lengths; paged: every page of every
     * sequence somewhere in a pool with spare pages, in shuffled order. */
    int32_t *cache_lens = NULL, *block_table = NULL, *cache_idx = NULL, *leftpad = NULL;
    int max_pages = 0;
    if (c->kv_cache) {
        cache_lens = calloc((size_t)c->batch, sizeof *cache_lens);
        cache_idx = calloc((size_t)c->batch, sizeof *cache_idx);
        leftpad = calloc((size_t)c->batch, sizeof *leftpad);
        const int room = c->kv_append ? c->seq_kv - c->seq_q : c->seq_kv;
        for (int b = 0; b < c->batch; ++b) {
            cache_lens[b] = b == 0 ? room : (room / 2 + b * 37) % (room + 1);
            cache_idx[b] = c->cache_idx ? (3 * b + 1) % (c->batch + 2) : b;
            leftpad[b] = c->leftpad ? (5 * b + 2) % (cache_lens[b] + 1) : 0;
        }
        if (c->page_size) {
            max_pages = (c->seq_kv + c->page_size - 1) / c->page_size;
            p.num_pages = c->batch * max_pages + 3;
            block_table = calloc((size_t)c->batch * max_pages, sizeof *block_table);
            for (int e = 0; e < c->batch * max_pages; ++e)
                block_table[e] = (int32_t)((e * 7 + 3) % p.num_pages); /* 7 and num_pages coprime below */
        }
    }
    /* Packed sequences: lengths from a fixed pattern, the first query and the second key sequence
     * at the maximum, one sequence of a single query. */
    int32_t *cu_q = NULL, *cu_k = NULL;
    if (c->varlen) {
        cu_q = calloc((size_t)c->batch + 1, sizeof *cu_q);
        cu_k = calloc((size_t)c->batch + 1, sizeof *cu_k);
        for (int b = 0; b < c->batch; ++b) {
            const int lq = b == 0 ? c->seq_q : b == c->batch - 1 ? 1 : 1 + (b * 37 + 11) % c->seq_q;
            const int lk = b == 1 % c->batch ? c->seq_kv : 1 + (b * 53 + 5) % c->seq_kv;
            cu_q[b + 1] = cu_q[b] + lq;
            cu_k[b + 1] = cu_k[b] + lk;
        }
        p.varlen = 1;
        p.total_q = cu_q[c->batch];
        p.total_kv = c->kv_cache ? 0 : cu_k[c->batch]; /* (over a KV cache: the keys are cache_seqlens') */
    }
    if (c->custom_layout)
        set_layout(&p, c->custom_layout == 2 ? 3 : 8);

    flashcl_plan *flash = NULL, *naive = NULL, *standard = NULL;
    if (c->mma_block_m) {
        flashcl_config o = {0};
        o.kernel = c->wgmma_tiles ? FLASHCL_KERNEL_WGMMA
                   : c->mfma_tiles ? FLASHCL_KERNEL_MFMA
                   : c->dpas_sg    ? FLASHCL_KERNEL_DPAS
                                   : FLASHCL_KERNEL_MMA;
        o.sub_group = c->dpas_sg;
        o.block_m = c->mma_block_m;
        o.block_n = c->mma_block_n;
        o.m_tiles = c->mma_rows == 4 ? 2 : 1;
        o.kv_stages = c->mma_stages >= 2 ? c->mma_stages : 1;
        o.producer = -1; /* (flash_wgmma's: where it fits, as the chooser takes it) */
        o.persistent = c->persistent;
        ck_assert_int_eq(flashcl_context_override_config(ctx, &o), FLASHCL_SUCCESS);
    }
    flashcl_status st = flashcl_plan_create(ctx, &p, &flash);
    if ((c->wgmma_tiles || c->mfma_tiles || c->dpas_sg) && st == FLASHCL_INVALID_ARGUMENT &&
        strstr(flashcl_context_last_error(ctx), "need") && strstr(flashcl_context_last_error(ctx), "the limit is")) {
        /* flash_wgmma's (flash_mfma's) tiles asked for by the override do not fit this device's (or this configuration's)
         * local memory, emulated (rusticl's 32 KiB, the 48 KiB configuration): the refusal is the result */
        ck_assert_msg(flashcl_context_profile(ctx)->local_mem_size < 65536 || getenv("FLASHCL_LOCAL_MEM_LIMIT"),
                      "refused where local memory is not short: %s", flashcl_context_last_error(ctx));
        printf("  (override refused here: %s)\n", flashcl_context_last_error(ctx));
        flashcl_context_destroy(&ctx);
        return;
    }
    if (c->wgmma_tiles && st == FLASHCL_INVALID_ARGUMENT && strstr(flashcl_context_last_error(ctx), "work-items (at most")) {
        /* flash_wgmma's 192-row block needs 384 work-items: refused where the device allows fewer (the GPU-like
         * limits' 256), which the message says */
        ck_assert_msg(c->mma_block_m == 192 && flashcl_context_profile(ctx)->max_work_group_size < 384,
                      "refused where the work-group limit is not short: %s", flashcl_context_last_error(ctx));
        printf("  (override refused here: %s)\n", flashcl_context_last_error(ctx));
        flashcl_context_destroy(&ctx);
        return;
    }
    if (c->wgmma_tiles && c->mma_stages == 4 && st == FLASHCL_INVALID_ARGUMENT) {
        /* four K/V stages are the producer warpgroup's ring: refused where it cannot run (emulated: PoCL,
         * rusticl), which the message says */
        ck_assert_msg(flashcl_context_profile(ctx)->matrix_units < 2 &&
                          strstr(flashcl_context_last_error(ctx), "kv_stages 1 to 3 (4 with the producer)"),
                      "four stages refused where the producer runs: %s", flashcl_context_last_error(ctx));
        printf("  (override refused here: %s)\n", flashcl_context_last_error(ctx));
        flashcl_context_destroy(&ctx);
        return;
    }
    ck_assert_msg(st == FLASHCL_SUCCESS, "flash plan: %s: %s", flashcl_status_string(st),
                  flashcl_context_last_error(ctx));
    if (c->mma_block_m) { /* the naive and standard plans take no override */
        flashcl_context_override_config(ctx, NULL);
        flashcl_config got;
        flashcl_plan_config(flash, &got);
        /* as asked, unless the compiled kernel allowed fewer work-items and the plan shrank it (rusticl) */
        ck_assert_msg(strstr(got.source, "shrunk") ||
                          (got.block_m == c->mma_block_m && got.block_n == c->mma_block_n && !strcmp(got.source, "override") &&
                           got.rows_per_item == (c->dpas_sg ? 8 : c->mfma_tiles ? 1 : c->mma_rows ? c->mma_rows : 2) &&
                           got.v_chunk == (c->mma_stages >= 2 ? c->mma_stages : 1) * c->mma_block_n),
                      "override %dx%d, plan %dx%d from %s", c->mma_block_m, c->mma_block_n, got.block_m, got.block_n,
                      got.source);
        ck_assert(cfg_mma(&got) != 0 || strstr(got.source, "shrunk")); /* (rusticl counts local bytes twice) */
    }
    st = flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_NAIVE, &naive);
    ck_assert_msg(st == FLASHCL_SUCCESS, "naive plan: %s: %s", flashcl_status_string(st),
                  flashcl_context_last_error(ctx));
    const int extras = c->alibi || c->attn_mask || c->key_padding || c->varlen || c->kv_cache || c->sinks ||
                       c->fp8_descale;
    /* (standard attention refuses K and V of another type, and fp8 attention, too) */
    const int mixed = (c->kv_dtype && c->kv_dtype - 1 != (int)c->dtype) || c->qkv_format;
    if (flashcl_algorithm_available(FLASHCL_ALGO_STANDARD)) {
        st = flashcl_plan_create_algo(ctx, &p, FLASHCL_ALGO_STANDARD, &standard);
        if (extras || mixed) { /* standard attention has no biases or masks: refused by name */
            ck_assert_int_eq(st, FLASHCL_UNSUPPORTED);
            ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "standard attention has no"));
            ck_assert_ptr_null(standard);
        } else {
            ck_assert_msg(st == FLASHCL_SUCCESS, "standard plan: %s: %s", flashcl_status_string(st),
                          flashcl_context_last_error(ctx));
        }
    }
    flashcl_plan_problem(flash, &p); /* resolved strides and scale */
    flashcl_config cfg;
    flashcl_plan_config(flash, &cfg);
    if (bulk) { /* (the variant's stages, which the host's formula does not count, are in the compiled kernel) */
        flashcl_kernel_info ki;
        ck_assert_int_eq(flashcl_plan_kernel_info(flash, &ki), FLASHCL_SUCCESS);
        const uint64_t row = 2 * (uint64_t)p.head_dim, stages = (uint64_t)cfg.work_group_size / 32 * 2 * 16 *
                                                                     ((row + 64) + (row + 16));
        ck_assert_msg(ki.local_mem_bytes >= stages + cfg.local_mem_bytes, "KV_BULK: %llu B of local memory, want %llu + %llu",
                      (unsigned long long)ki.local_mem_bytes, (unsigned long long)stages,
                      (unsigned long long)cfg.local_mem_bytes);
    }
    /* the case is there to test a matrix-unit kernel; above d=128 (Q's block in local memory) a device
     * with too little local memory for the emulation's tiles (rusticl, the 48 KiB configuration) runs
     * the portable kernel, and says why */
    const int too_big = c->head_dim > 128 && (strstr(cfg.path_reason, "B of local memory") ||
                                              strstr(cfg.path_reason, "compiled matrix-unit kernel allowed"));
    if (c->path == FLASHCL_PATH_MMA)
        ck_assert_msg(c->seq_q <= 16 ? cfg_decode(&cfg) >= 3 : cfg_mma(&cfg) != 0 || too_big, "expected %s, got %s: %s",
                      c->seq_q <= 16 ? "flash_decode_mma" : "flash_mma", cfg.kernel_name, cfg.path_reason);
    if (c->path == FLASHCL_PATH_WGMMA) { /* the warpgroup kernel, or a fallback that says why not: rows not
                                            16-byte aligned, or a device whose local memory is short of the
                                            emulation's tiles (rusticl's 32 KiB, the 48 KiB configuration) */
        const char *not_wgmma = strstr(cfg.path_reason, "not wgmma");
        const int fp8_shape = c->head_dim == 64 || c->head_dim == 128 || c->head_dim == 256;
        if (c->qkv_format && (!fp8_shape || p.dtype == FLASHCL_DTYPE_F32))
            ck_assert_msg(cfg_mma(&cfg) < 3 && not_wgmma && strstr(not_wgmma, "fp8 Q, K and V"),
                          "expected fp8's named fallback, got %s: %s", cfg.kernel_name, cfg.path_reason);
        else if (c->custom_layout == 2)
            ck_assert_msg(cfg_mma(&cfg) < 3 && not_wgmma && strstr(not_wgmma, "16-byte aligned"),
                          "expected a fallback for unaligned rows, got %s: %s", cfg.kernel_name, cfg.path_reason);
        else
            ck_assert_msg(cfg.kernel == FLASHCL_KERNEL_WGMMA || (not_wgmma && strstr(not_wgmma, "B of local memory")),
                          "expected flash_wgmma, got %s: %s", cfg.kernel_name, cfg.path_reason);
    }
    if (c->persistent) /* (the override's work-groups: fewer than the blocks, the kernel's loop walks them) */
        ck_assert_msg(cfg.persistent == c->persistent && strstr(cfg.reason, "persistent work-groups"),
                      "expected %d persistent work-groups, got %d: %s", c->persistent, (int)cfg.persistent, cfg.reason);
    if (c->path == FLASHCL_PATH_DPAS) /* flash_dpas, or where local memory is short of the emulation's tiles,
                                         the portable kernel, which says why */
        ck_assert_msg(cfg.kernel == FLASHCL_KERNEL_DPAS ||
                          ((flashcl_context_profile(ctx)->local_mem_size < 65536 || getenv("FLASHCL_LOCAL_MEM_LIMIT")) &&
                           (strstr(cfg.path_reason, "B of local memory") || strstr(cfg.path_reason, "compiled DPAS kernel allowed"))),
                      "expected flash_dpas, got %s: %s", cfg.kernel_name, cfg.path_reason);
    if (c->path == FLASHCL_PATH_MFMA || c->path == FLASHCL_PATH_WMMA) {
        /* flash_mfma (flash_wmma), or where local memory is short of the emulation's tiles (rusticl's 32 KiB,
         * which it counts twice; the 48 KiB configuration), or flash_wmma's head dims past its registers,
         * the portable kernel, which says why */
        const int mfma = c->path == FLASHCL_PATH_MFMA;
        const int short_local = flashcl_context_profile(ctx)->local_mem_size < 65536 || getenv("FLASHCL_LOCAL_MEM_LIMIT");
        const int too_wide = !mfma && (c->head_dim > 192 || (c->head_dim_v ? c->head_dim_v : c->head_dim) > 128);
        ck_assert_msg(cfg.kernel == (mfma ? FLASHCL_KERNEL_MFMA : FLASHCL_KERNEL_WMMA) ||
                          (too_wide && cfg.kernel == FLASHCL_KERNEL_PORTABLE && strstr(cfg.path_reason, "would spill")) ||
                          (short_local && (strstr(cfg.path_reason, "B of local memory") ||
                                           strstr(cfg.path_reason, mfma ? "compiled MFMA kernel allowed"
                                                                        : "compiled WMMA kernel allowed"))),
                      "expected %s, got %s: %s", mfma ? "flash_mfma" : "flash_wmma", cfg.kernel_name, cfg.path_reason);
    }
    if (c->path == FLASHCL_PATH_DECODE) /* and this one the decode kernel */
        ck_assert_msg(cfg_decode(&cfg) != 0, "expected flash_decode, got %s: %s", cfg.kernel_name, cfg.path_reason);
    if (c->kv_splits > 0)
        ck_assert_int_eq(cfg.kv_splits, c->kv_splits);
    /* split-KV needs scratch for its partial results, and says how much; nothing is allocated yet */
    ck_assert((cfg.kv_splits > 1) == (flashcl_plan_workspace_bytes(flash) > 0));
    ck_assert_uint_eq(flashcl_plan_extra_device_bytes(flash), 0);

    size_t sz[5];
    flashcl_plan_buffer_sizes(flash, &sz[0], &sz[1], &sz[2], &sz[3], &sz[4]);
    const size_t es = flashcl_dtype_size(p.dtype);
    /* K's and V's own dtype (problem.kv_dtype), else Q's */
    const flashcl_dtype kvt = c->kv_dtype ? (flashcl_dtype)(c->kv_dtype - 1) : p.dtype;
    const size_t eks = flashcl_dtype_size(kvt);
    tu_offsets((size_t)c->offsets); /* (0: buffers as they are) */
    hm_rng rng;
    hm_rng_seed(&rng, (uint64_t)(c->head_dim * 1000003 + c->seq_q * 31 + c->seq_kv * 7 + c->dtype * 3 + c->causal));
    void *host[3];
    float *dec[3];
    for (int i = 0; i < 3; ++i) {
        /* a quantized cache, or fp8 attention's Q, K and V: a byte an element */
        const size_t n = (i && c->kv_format) || c->qkv_format ? sz[i] : sz[i] / (i ? eks : es);
        host[i] = malloc(sz[i]);
        dec[i] = malloc(n * sizeof(float));
        ck_assert(host[i] && dec[i]);
        if (c->qkv_format && c->fp8_exact && i < 2) { /* -1, 0 or 1, each a third */
            static const uint8_t ones[2][3] = {{0xb8, 0x00, 0x38}, {0xbc, 0x00, 0x3c}}; /* (E4M3, E5M2) */
            for (size_t e = 0; e < n; ++e)
                ((uint8_t *)host[i])[e] = ones[c->qkv_format == FLASHCL_KV_FP8_E5M2][(int)(3.0 * hm_rng_uniform(&rng)) % 3];
            for (size_t e = 0; e < n; ++e)
                dec[i][e] = (float)hm_kv_byte(((const uint8_t *)host[i])[e], (flashcl_kv_format)c->qkv_format);
        } else if (c->qkv_format) { /* the reference's values decoded by hostmath (the descale factors below) */
            hm_fill_kv(host[i], (flashcl_kv_format)c->qkv_format, n, &rng, 1.0);
            for (size_t e = 0; e < n; ++e)
                dec[i][e] = (float)hm_kv_byte(((const uint8_t *)host[i])[e], (flashcl_kv_format)c->qkv_format);
        } else if (i && c->kv_format) {
            hm_fill_kv(host[i], (flashcl_kv_format)c->kv_format, n, &rng, 1.0);
        } else {
            hm_fill_normal(host[i], i ? kvt : p.dtype, n, &rng, 1.0);
            hm_decode(host[i], i ? kvt : p.dtype, n, dec[i]);
        }
    }
    /* An int8 cache's scales, one per (cache row, KV head): about 1/32 */
    const size_t n_scales = (size_t)(c->page_size ? p.num_pages : p.batch) * (c->page_size ? p.page_size : p.seq_kv) *
                            (size_t)p.heads_kv;
    void *scales[2] = {NULL, NULL};
    cl_mem scale_m[2] = {NULL, NULL};
    for (int m = 0; m < 2 && c->kv_format == FLASHCL_KV_INT8; ++m) {
        scales[m] = malloc(n_scales * flashcl_dtype_size(p.kv_scale_dtype));
        ck_assert_ptr_nonnull(scales[m]);
        for (size_t i = 0; i < n_scales; ++i)
            hm_store(scales[m], p.kv_scale_dtype, i, (float)((0.75 + 0.5 * hm_rng_uniform(&rng)) / 32.0));
        scale_m[m] = tu_buffer(n_scales * flashcl_dtype_size(p.kv_scale_dtype), scales[m]);
    }
    /* fp8 attention's descale factors, Q's, K's and V's, in (0.5, 2): one each, or one per (batch, KV head),
     * applied to the reference's decoded values (per head only where each element's batch entry is its
     * place in the layout: padded batches without a cache) */
    float *descale = NULL;
    cl_mem descale_m = NULL;
    if (c->fp8_descale) {
        const int per = c->fp8_descale == FLASHCL_DESCALE_HEAD ? p.batch * p.heads_kv : 1;
        ck_assert(per == 1 || (!c->varlen && !c->kv_cache));
        descale = malloc(3 * (size_t)per * sizeof(float));
        ck_assert_ptr_nonnull(descale);
        for (int i = 0; i < 3 * per; ++i)
            descale[i] = (float)(0.5 + 1.5 * hm_rng_uniform(&rng));
        for (int i = 0; i < per && c->fp8_exact; ++i) { /* (Q's and K's products 1: integer scores) */
            descale[i] = (float)ldexp(1.0, i % 3 - 1);
            descale[per + i] = 1.0f / descale[i];
        }
        descale_m = tu_buffer(3 * (size_t)per * sizeof(float), descale);
        const flashcl_strides *st[3] = {&p.q_strides, &p.k_strides, &p.v_strides};
        const int rows[3] = {p.seq_q, p.seq_kv, p.seq_kv}, heads[3] = {p.heads_q, p.heads_kv, p.heads_kv},
                  cols[3] = {p.head_dim, p.head_dim, dv};
        for (int t = 0; t < 3; ++t) {
            if (per == 1) {
                for (size_t e = 0; e < sz[t]; ++e)
                    dec[t][e] *= descale[t];
                continue;
            }
            for (int b = 0; b < p.batch; ++b)
                for (int j = 0; j < rows[t]; ++j)
                    for (int h = 0; h < heads[t]; ++h) {
                        const int hk = t ? h : h / (p.heads_q / p.heads_kv);
                        const float f = descale[((size_t)t * p.batch + b) * p.heads_kv + hk];
                        for (int d = 0; d < cols[t]; ++d)
                            dec[t][hm_offset(st[t], b, j, h) + d] *= f;
                    }
        }
    }
    cl_mem q = tu_buffer(sz[0], host[0]), k = tu_buffer(sz[1], host[1]), v = tu_buffer(sz[2], host[2]);
    cl_mem o_f = tu_buffer(sz[3], NULL), l_f = tu_buffer(sz[4], NULL);
    cl_mem o_n = tu_buffer(sz[3], NULL), l_n = tu_buffer(sz[4], NULL);
    cl_mem o_s = tu_buffer(sz[3], NULL), l_s = tu_buffer(sz[4], NULL);

    /* Biases and masks: random slopes in (0, 1); mask values N(0, 1) with about one pair in eight at
     * -inf; the last seq_kv/5 keys of every other batch padded (and, with a mask, some rows masked
     * whole, to check that they come out as zeros). */
    hm_extras x = {0};
    cl_mem alibi_m = NULL, mask_m = NULL, kpm_m = NULL, cuq_m = NULL, cuk_m = NULL, sinks_m = NULL, ws_m = NULL;
    cl_mem lens_m = NULL, bt_m = NULL, knew_m = NULL, vnew_m = NULL;
    void *knew = NULL, *vnew = NULL;
    cl_mem idx_m = NULL, lp_m = NULL;
    if (c->kv_cache) {
        lens_m = tu_buffer((size_t)c->batch * sizeof(int32_t), cache_lens);
        x.cache_seqlens = cache_lens;
        if (c->cache_idx) {
            idx_m = tu_buffer((size_t)c->batch * sizeof(int32_t), cache_idx);
            x.cache_batch_idx = cache_idx;
        }
        if (c->leftpad) {
            lp_m = tu_buffer((size_t)c->batch * sizeof(int32_t), leftpad);
            x.cache_leftpad = leftpad;
        }
        if (c->page_size) {
            bt_m = tu_buffer((size_t)c->batch * max_pages * sizeof(int32_t), block_table);
            x.block_table = block_table;
        }
        if (c->kv_append && c->kv_format) { /* the new rows; the cache's copy is read back after the run */
            const size_t n = (size_t)c->batch * c->seq_q * p.heads_kv * p.head_dim;
            knew = malloc(n * es);
            vnew = malloc(n * es);
            hm_fill_normal(knew, p.dtype, n, &rng, 1.0);
            hm_fill_normal(vnew, p.dtype, n, &rng, 1.0);
            knew_m = tu_buffer(n * es, knew);
            vnew_m = tu_buffer(n * es, vnew);
        } else if (c->kv_append) { /* the new rows, and the host's copy of the cache updated with them */
            const size_t n = (size_t)c->batch * c->seq_q * p.heads_kv * p.head_dim;
            const size_t nv = (size_t)c->batch * c->seq_q * p.heads_kv * dv;
            knew = malloc(n * es);
            vnew = malloc(nv * es);
            hm_fill_normal(knew, p.dtype, n, &rng, 1.0);
            hm_fill_normal(vnew, p.dtype, nv, &rng, 1.0);
            knew_m = tu_buffer(n * es, knew);
            vnew_m = tu_buffer(nv * es, vnew);
            for (int b = 0; b < c->batch; ++b)
                for (int i = 0; i < c->seq_q; ++i) {
                    const int j = cache_lens[b] + i;
                    if (j >= c->seq_kv)
                        continue;
                    for (int hk = 0; hk < p.heads_kv; ++hk) { /* (the cache's sequence for b: cache_idx) */
                        const int64_t ko = c->page_size ? hm_offset(&p.k_strides, block_table[b * max_pages + j / c->page_size], j % c->page_size, hk)
                                                        : hm_offset(&p.k_strides, cache_idx[b], j, hk);
                        const int64_t vo = c->page_size ? hm_offset(&p.v_strides, block_table[b * max_pages + j / c->page_size], j % c->page_size, hk)
                                                        : hm_offset(&p.v_strides, cache_idx[b], j, hk);
                        const size_t row = ((size_t)b * c->seq_q + i) * p.heads_kv + hk;
                        /* (written into the cache in its own dtype: rounded there) */
                        for (int d = 0; d < p.head_dim; ++d) {
                            unsigned char tmp[4];
                            hm_store(tmp, kvt, 0, hm_load(knew, p.dtype, row * p.head_dim + d));
                            dec[1][ko + d] = hm_load(tmp, kvt, 0);
                        }
                        for (int d = 0; d < dv; ++d) {
                            unsigned char tmp[4];
                            hm_store(tmp, kvt, 0, hm_load(vnew, p.dtype, row * dv + d));
                            dec[2][vo + d] = hm_load(tmp, kvt, 0);
                        }
                    }
                }
        }
    }
    if (c->varlen) {
        cuq_m = tu_buffer(((size_t)c->batch + 1) * sizeof(int32_t), cu_q);
        if (!c->kv_cache)
            cuk_m = tu_buffer(((size_t)c->batch + 1) * sizeof(int32_t), cu_k);
        x.cu_seqlens_q = cu_q;
        x.cu_seqlens_k = cu_k;
    }
    float *slopes = NULL, *mask = NULL, *sinks = NULL;
    unsigned char *kpm = NULL;
    if (c->sinks) { /* logits near a row's log-sum-exp (a few units), so that the sink takes a real share;
                       head 1's -inf is no sink (it must change nothing) */
        sinks = malloc((size_t)p.heads_q * sizeof(float));
        for (int h = 0; h < p.heads_q; ++h)
            sinks[h] = h == 1 ? -INFINITY : (float)(6.0 * hm_rng_uniform(&rng));
        sinks_m = tu_buffer((size_t)p.heads_q * sizeof(float), sinks);
        x.sinks = sinks;
    }
    if (c->alibi) {
        const size_t n = (size_t)(c->alibi == 2 ? p.batch : 1) * p.heads_q;
        slopes = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; ++i)
            slopes[i] = (float)hm_rng_uniform(&rng);
        alibi_m = tu_buffer(n * sizeof(float), slopes);
        x.alibi_slopes = slopes;
    }
    if (c->attn_mask) {
        const size_t n = c->attn_mask == 3   ? (size_t)p.seq_kv
                         : c->attn_mask == 2 ? (size_t)p.seq_q * p.seq_kv
                                           : (size_t)p.batch * p.heads_q * p.seq_q * p.seq_kv;
        mask = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; ++i)
            mask[i] = hm_rng_uniform(&rng) < 0.125 ? -INFINITY : (float)hm_rng_normal(&rng);
        for (size_t i = 0; c->attn_mask != 3 && i < (size_t)p.seq_kv; ++i) /* the third query row of the first
                                                                             head sees nothing */
            mask[2 * (size_t)p.seq_kv + i] = -INFINITY;
        if (c->mask_dtype == FLASHCL_MASK_F32) {
            mask_m = tu_buffer(n * sizeof(float), mask);
        } else { /* the buffer in its type; the reference's values as that type holds them */
            const size_t el = c->mask_dtype == FLASHCL_MASK_F16 ? 2 : 1;
            unsigned char *typed = malloc(n * el);
            ck_assert_ptr_nonnull(typed);
            for (size_t i = 0; i < n; ++i) {
                if (c->mask_dtype == FLASHCL_MASK_F16) {
                    const uint16_t h16 = hm_float_to_half(mask[i]);
                    memcpy(typed + 2 * i, &h16, 2);
                    mask[i] = hm_half_to_float(h16);
                } else {
                    typed[i] = mask[i] != -INFINITY; /* keep */
                    mask[i] = typed[i] ? 0.0f : -INFINITY;
                }
            }
            mask_m = tu_buffer(n * el, typed);
            free(typed);
        }
        x.mask = mask;
    }
    if (c->key_padding) {
        kpm = calloc((size_t)p.batch * p.seq_kv, 1);
        for (int b = 0; b < p.batch; b += 2)
            for (int j = p.seq_kv - p.seq_kv / 5; j < p.seq_kv; ++j)
                kpm[(size_t)b * p.seq_kv + j] = 1;
        kpm_m = tu_buffer((size_t)p.batch * p.seq_kv, kpm);
        x.key_padding = kpm;
    }

    flashcl_tensors tf = {.q = q, .k = k, .v = v, .o = o_f, .lse = l_f, .alibi_slopes = alibi_m, .mask = mask_m,
                          .key_padding = kpm_m, .cu_seqlens_q = cuq_m, .cu_seqlens_k = cuk_m,
                          .cache_seqlens = lens_m, .block_table = bt_m, .k_new = knew_m, .v_new = vnew_m,
                          .k_scale = scale_m[0], .v_scale = scale_m[1], .sinks = sinks_m,
                          .cache_batch_idx = idx_m, .cache_leftpad = lp_m, .descale = descale_m},
                    tn = tf;
    tn.o = o_n;
    tn.lse = l_n;
    flashcl_tensors ts = {.q = q, .k = k, .v = v, .o = o_s, .lse = l_s};
    if (c->offsets) { /* each tensor where tu_buffer placed it */
        const cl_mem in[20] = {q,      k,     v,     o_f,   l_f,    alibi_m, mask_m,     kpm_m,      cuq_m,  cuk_m,
                               lens_m, bt_m, knew_m, vnew_m, scale_m[0], scale_m[1], sinks_m, idx_m, lp_m, descale_m};
        uint64_t *off[20] = {&tf.offsets.q,           &tf.offsets.k,           &tf.offsets.v,
                             &tf.offsets.o,           &tf.offsets.lse,         &tf.offsets.alibi_slopes,
                             &tf.offsets.mask,        &tf.offsets.key_padding, &tf.offsets.cu_seqlens_q,
                             &tf.offsets.cu_seqlens_k, &tf.offsets.cache_seqlens, &tf.offsets.block_table,
                             &tf.offsets.k_new,       &tf.offsets.v_new,       &tf.offsets.k_scale,
                             &tf.offsets.v_scale,     &tf.offsets.sinks,       &tf.offsets.cache_batch_idx,
                             &tf.offsets.cache_leftpad, &tf.offsets.descale};
        for (int i = 0; i < 20; ++i)
            *off[i] = in[i] ? tu_offset_of(in[i]) : 0;
        tn.offsets = tf.offsets;
        tn.offsets.o = tu_offset_of(o_n);
        tn.offsets.lse = tu_offset_of(l_n);
        ts.offsets.q = tf.offsets.q, ts.offsets.k = tf.offsets.k, ts.offsets.v = tf.offsets.v;
        ts.offsets.o = tu_offset_of(o_s);
        ts.offsets.lse = tu_offset_of(l_s);
        ck_assert(tf.offsets.q && tf.offsets.o && tn.offsets.o != tf.offsets.o);
        if (flashcl_plan_workspace_bytes(flash)) { /* split-KV's scratch in the caller's memory, placed too */
            ws_m = tu_buffer((size_t)flashcl_plan_workspace_bytes(flash), NULL);
            tf.workspace = ws_m;
            tf.offsets.workspace = tu_offset_of(ws_m);
        }
    }
    if (extras) /* the plain enqueue refuses a problem that needs more buffers, naming the missing one */
        ck_assert_int_eq(flashcl_plan_enqueue(flash, q, k, v, o_f, l_f, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
    if (c->fp8_descale) { /* fp8 attention's factors are required, by name, and their buffer's size checked */
        flashcl_tensors no_descale = tf;
        no_descale.descale = NULL;
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(flash, &no_descale, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "descale"));
        struct flashcl_offsets bytes;
        ck_assert_int_eq(flashcl_plan_tensor_bytes(flash, &bytes), FLASHCL_SUCCESS);
        ck_assert_uint_eq(bytes.descale, 3 * sizeof(float) *
                                             (c->fp8_descale == FLASHCL_DESCALE_HEAD ? (uint64_t)p.batch * p.heads_kv : 1));
    }
    if (c->kv_format == FLASHCL_KV_INT8) { /* the scales are required, by name */
        flashcl_tensors no_scale = tf;
        no_scale.v_scale = NULL;
        ck_assert_int_eq(flashcl_plan_enqueue_tensors(flash, &no_scale, 0, NULL, NULL), FLASHCL_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(flashcl_context_last_error(ctx), "v_scale"));
    }
    if (c->offsets) { /* the flash plan on a second queue of the context's device, validated there too */
        cl_int qerr;
        cl_command_queue q2 = clCreateCommandQueue(tu_context, tu_device, 0, &qerr);
        ck_assert_msg(q2 != NULL, "clCreateCommandQueue: %d", (int)qerr);
        cl_event done = NULL;
        flashcl_context_set_validation(ctx, !c->kv_append); /* (an append must run once) */
        st = flashcl_plan_enqueue_on(flash, q2, &tf, 0, NULL, &done);
        flashcl_context_set_validation(ctx, 0);
        ck_assert_msg(st == FLASHCL_SUCCESS, "flash enqueue on a second queue: %s", flashcl_context_last_error(ctx));
        if (!c->kv_append) {
            flashcl_validation rep;
            flashcl_plan_last_validation(flash, &rep);
            ck_assert_msg(rep.ran && rep.passed, "validation at offsets: %lld failures", (long long)rep.failures);
        }
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
        clReleaseEvent(done);
        ck_assert_int_eq(clFinish(q2), CL_SUCCESS);
        clReleaseCommandQueue(q2);
    } else {
        st = flashcl_plan_enqueue_tensors(flash, &tf, 0, NULL, NULL);
        ck_assert_msg(st == FLASHCL_SUCCESS, "flash enqueue: %s", flashcl_context_last_error(ctx));
    }
    /* the plan allocated its own scratch only where the caller gave none, and where the matrix-unit decode
     * kernel merges its splits itself (up to 16), a counter (4 bytes) a row block: a split's work-groups */
    {
        flashcl_config fc;
        flashcl_plan_config(flash, &fc);
        const uint64_t pack = fc.gqa_pack > 1 ? (uint64_t)fc.gqa_pack : 1;
        const uint64_t counters = fc.kernel == FLASHCL_KERNEL_DECODE_MMA && fc.kv_splits > 1 && fc.kv_splits <= 16
                                      ? ((uint64_t)p.seq_q * pack + (uint64_t)fc.block_m - 1) / (uint64_t)fc.block_m *
                                            (uint64_t)p.batch * (uint64_t)p.heads_q / pack * 4
                                      : 0;
        ck_assert_uint_eq(flashcl_plan_extra_device_bytes(flash),
                          (tf.workspace ? 0 : flashcl_plan_workspace_bytes(flash)) + counters);
    }
    st = flashcl_plan_enqueue_tensors(naive, &tn, 0, NULL, NULL);
    ck_assert_msg(st == FLASHCL_SUCCESS, "naive enqueue: %s", flashcl_context_last_error(ctx));
    if (standard) {
        st = flashcl_plan_enqueue_tensors(standard, &ts, 0, NULL, NULL);
        ck_assert_msg(st == FLASHCL_SUCCESS, "standard enqueue: %s", flashcl_context_last_error(ctx));
    }
    ck_assert_int_eq(clFinish(tu_queue), CL_SUCCESS);
    if (c->offsets)
        tu_check_margins();
    if (c->kv_format)
        check_quantized_cache(c, &p, cache_lens, cache_idx, block_table, max_pages, knew, vnew, k, v, scale_m, n_scales, host,
                              scales, dec);
    void *of = tu_read(o_f, sz[3]), *on = tu_read(o_n, sz[3]), *os = tu_read(o_s, sz[3]);
    float *lf = tu_read(l_f, sz[4]), *ln = tu_read(l_n, sz[4]), *ls = tu_read(l_s, sz[4]);

    const int64_t rows = p.varlen ? (int64_t)p.heads_q * p.total_q : (int64_t)p.batch * p.heads_q * p.seq_q;
    double *ref = malloc((size_t)rows * dv * sizeof(double));
    double *ref_lse = malloc((size_t)rows * sizeof(double));
    double *scores = malloc((size_t)p.seq_kv * sizeof(double));
    ck_assert(ref && ref_lse && scores);
    for (int64_t r = 0; r < rows; ++r)
        ref_lse[r] = hm_reference_row_ex(&p, dec[0], dec[1], dec[2], &x, r, ref + r * dv, scores);
    /* The matrix-unit kernels' operands are K's type; Q in another is rounded to it as it is loaded
     * (mma.cl's q_round8, to nearest even), so their reference is attention over the rounded Q. */
    const int units = cfg_mma(&cfg) || cfg_decode(&cfg) >= 3;
    double *ref_q = ref, *ref_q_lse = ref_lse;
    if (units && kvt != p.dtype) {
        const size_t nq = sz[0] / es;
        float *qr = malloc(nq * sizeof(float));
        ref_q = malloc((size_t)rows * dv * sizeof(double));
        ref_q_lse = malloc((size_t)rows * sizeof(double));
        ck_assert(qr && ref_q && ref_q_lse);
        for (size_t i = 0; i < nq; ++i) {
            float h[1];
            hm_store(h, kvt, 0, dec[0][i]);
            qr[i] = hm_load(h, kvt, 0);
        }
        for (int64_t r = 0; r < rows; ++r)
            ref_q_lse[r] = hm_reference_row_ex(&p, qr, dec[1], dec[2], &x, r, ref_q + r * dv, scores);
        free(qr);
    } else if (units && p.precision == FLASHCL_PRECISION_TF32) {
        /* TF32 rounds Q and K (to nearest, ties away: cvt.rna) before the scores: the reference is attention
         * over the rounded Q and K; V's and P's roundings are the output tolerance's (p_round below) */
        const size_t nq = sz[0] / es, nk = sz[1] / es;
        float *qr = malloc(nq * sizeof(float)), *kr = malloc(nk * sizeof(float));
        ref_q = malloc((size_t)rows * dv * sizeof(double));
        ref_q_lse = malloc((size_t)rows * sizeof(double));
        ck_assert(qr && kr && ref_q && ref_q_lse);
        for (size_t i = 0; i < nq; ++i)
            qr[i] = tf32_rna(dec[0][i]);
        for (size_t i = 0; i < nk; ++i)
            kr[i] = tf32_rna(dec[1][i]);
        for (int64_t r = 0; r < rows; ++r)
            ref_q_lse[r] = hm_reference_row_ex(&p, qr, kr, dec[2], &x, r, ref_q + r * dv, scores);
        free(qr);
        free(kr);
    }

    /* fp8 on the matrix units (flash_wgmma's fp8 products): Hopper's fp8 wgmma keeps about 14 bits of the
     * fp32 accumulation (DeepSeek-V3's report, section 3.3.2; measured here: docs/design/fp8.md), so a score
     * may be off by up to 2^-12 of its terms' magnitudes, |scale| * sum |q_c k_c|, which moves the LSE by as
     * much: s_mag[r], that magnitude's largest over the row's keys (reference rows over |Q| and |K| with no
     * modifier; the integer scores of fp8_exact cases are exact) */
    double *s_mag = NULL;
    if (units && c->qkv_format && !c->fp8_exact) {
        float *qa = malloc(sz[0] * sizeof(float)), *ka = malloc(sz[1] * sizeof(float));
        double *o_abs = malloc((size_t)dv * sizeof(double));
        s_mag = malloc((size_t)rows * sizeof(double));
        ck_assert(qa && ka && o_abs && s_mag);
        for (size_t e = 0; e < sz[0]; ++e)
            qa[e] = fabsf(dec[0][e]);
        for (size_t e = 0; e < sz[1]; ++e)
            ka[e] = fabsf(dec[1][e]);
        flashcl_problem pa = p;
        pa.scale = fabsf(p.scale);
        pa.softcap = 0.0f;
        pa.alibi = 0;
        pa.attn_mask = 0;
        pa.key_padding = 0;
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < p.seq_kv; ++j)
                scores[j] = 0.0;
            hm_reference_row_ex(&pa, qa, ka, dec[2], &x, r, o_abs, scores);
            s_mag[r] = 0.0;
            for (int64_t j = 0; j < p.seq_kv; ++j)
                s_mag[r] = fmax(s_mag[r], scores[j]);
        }
        free(qa);
        free(ka);
        free(o_abs);
    }

    /* Pass 0: the naive kernel's error, the yardstick. Then the flash kernel and standard attention
     * against it. */
    errors en = {0, 0}, ef = {0, 0}, es_ = {0, 0};
    double worst_rel = 0.0; /* the flash kernel's worst error over its row's scale (printed for fp8) */
    const double eps32 = ldexp(1.0, -23);
    static const char *names[] = {"naive", "flash", "standard"};
    for (int pass = 0; pass < (standard ? 3 : 2); ++pass) {
        const void *out = pass == 2 ? os : pass ? of : on;
        const float *lse = pass == 2 ? ls : pass ? lf : ln;
        errors *e = pass == 2 ? &es_ : pass ? &ef : &en;
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = r % p.seq_q, bh = r / p.seq_q;
            const int64_t base = p.varlen ? hm_offset(&p.o_strides, 0, r % p.total_q, r / p.total_q)
                                          : hm_offset(&p.o_strides, bh / p.heads_q, i, bh % p.heads_q);
            const double *rr = (pass == 1 ? ref_q : ref) + r * dv;
            const double rlse = (pass == 1 ? ref_q_lse : ref_lse)[r];
            double scale = 0;
            for (int d = 0; d < dv; ++d)
                scale = fmax(scale, fabs(rr[d]));
            const int empty = isinf(rlse);
            for (int d = 0; d < dv; ++d) {
                const double x = hm_load(out, p.dtype, (size_t)(base + d));
                const double err = fabs(x - rr[d]);
                if (empty)
                    ck_assert_msg(x == 0.0, "%s: row %lld sees no key but col %d = %g (must be 0)", names[pass],
                                  (long long)r, d, x);
                if (!pass) {
                    /* the yardstick itself against float64: the output's rounding to its storage type
                     * and fp32 sums of seq_kv terms (a semantic error shared by every kernel, in the
                     * parts they build from, fails here) */
                    const double naive_tol = (eps_of(p.dtype) + eps32 * (32.0 + 4.0 * sqrt((double)p.seq_kv))) * scale;
                    ck_assert_msg(isfinite(x), "naive: row %lld col %d = %g", (long long)r, d, x);
                    ck_assert_msg(err <= naive_tol, "naive: row %lld col %d: got %.9g, float64 reference %.9g, "
                                  "error %.3g > %.3g", (long long)r, d, x, rr[d], err, naive_tol);
                    e->max_err = fmax(e->max_err, err);
                } else {
                    /* the matrix-unit kernels round P to the operands' type for P*V (FlashAttention-2
                     * does too): up to that type's unit roundoff of the row's scale more */
                    const double p_round =
                        !(pass == 1 && units)                  ? 0.0
                        : c->qkv_format && !c->fp8_exact       ? ldexp(1.0, -5) /* (P in E4M3: flash_wgmma's fp8) */
                        : c->qkv_format                        ? ldexp(1.0, -11) /* (P exact: weights dropped below 2^-17) */
                        : kvt == FLASHCL_DTYPE_BF16            ? ldexp(1.0, -8)
                        : p.precision == FLASHCL_PRECISION_TF32X3 ? ldexp(1.0, -19) /* (2^-21 a product, summed) */
                        : p.precision == FLASHCL_PRECISION_TF32 ? ldexp(1.0, -10) /* (Q, K and V rounded too) */
                                                               : ldexp(1.0, -11);
                    const double tol = 2.0 * en.max_err + 4.0 * (eps32 + p_round) * scale;
                    ck_assert_msg(err <= tol,
                                  "%s: row %lld col %d: got %.9g, reference %.9g, error %.3g > tolerance "
                                  "%.3g (naive's max error %.3g) [tile %dx%d tpr %d]",
                                  names[pass], (long long)r, d, x, rr[d], err, tol, en.max_err, cfg.block_m,
                                  cfg.block_n, cfg.threads_per_row);
                    e->max_err = fmax(e->max_err, err);
                    if (pass == 1 && scale > 0.0)
                        worst_rel = fmax(worst_rel, err / scale);
                }
            }
            if (empty) {
                ck_assert_msg(isinf(lse[r]) && lse[r] < 0, "%s: row %lld sees no key, lse %g (must be -inf)",
                              names[pass], (long long)r, (double)lse[r]);
                continue;
            }
            const double lerr = fabs(lse[r] - rlse);
            if (!pass) {
                ck_assert_msg(isfinite(lse[r]), "naive: lse of row %lld = %g", (long long)r, (double)lse[r]);
                ck_assert_msg(lerr <= eps32 * (32.0 + 4.0 * sqrt((double)p.seq_kv)) * (1.0 + fabs(ref_lse[r])),
                              "naive: lse of row %lld: got %.9g, float64 reference %.9g", (long long)r,
                              (double)lse[r], ref_lse[r]);
                e->max_lse_err = fmax(e->max_lse_err, lerr);
            } else {
                const double tol = 2.0 * en.max_lse_err + 4.0 * eps32 * (1.0 + fabs(rlse)) +
                                   (pass == 1 && s_mag ? ldexp(s_mag[r], -12) : 0.0);
                ck_assert_msg(lerr <= tol, "%s: lse of row %lld: got %.9g, reference %.9g, error %.3g > %.3g",
                              names[pass], (long long)r, (double)lse[r], rlse, lerr, tol);
                e->max_lse_err = fmax(e->max_lse_err, lerr);
            }
        }
    }
    char extra[160] = "";
    if (dv != p.head_dim)
        snprintf(extra, sizeof extra, " dv=%d", dv);
    if (c->qkv_format)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " fp8 %s%s (worst error / row scale %.2e)",
                 c->qkv_format == FLASHCL_KV_FP8_E4M3 ? "e4m3" : "e5m2", c->fp8_exact ? " exact" : "", worst_rel);
    if (p.window || p.softcap > 0.0f || extras || cfg.kv_splits > 1)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                 " window %d (%d,%d) softcap %g alibi %d mask %d kpm %d varlen %d splits %d", p.window, p.window_left, p.window_right, (double)p.softcap, c->alibi, c->attn_mask, c->key_padding,
                 c->varlen, cfg.kv_splits);
    printf("  %-4s d=%-3d %s%s gqa=%d B=%d Hq=%d Sq=%-4d Sk=%-4d %s %s %dx%d/%d: max err flash %.2e naive %.2e "
           "standard %.2e (eps %.1e), lse %.2e/%.2e\n",
           flashcl_dtype_name(p.dtype), p.head_dim, p.causal ? "causal" : "full  ", extra, c->gqa, p.batch, p.heads_q,
           p.seq_q, p.seq_kv, c->custom_layout ? "strided" : "bshd", cfg_mma(&cfg) >= 9 ? (c->dpas_sg == 8 ? "dpas8" : "dpas") : cfg_mma(&cfg) >= 7 ? (c->wmma_gfx == 11 ? "wmma11" : "wmma") : cfg_mma(&cfg) >= 5 ? "mfma" : cfg_mma(&cfg) >= 3 ? "wgmma" : cfg_mma(&cfg) ? (cfg.rows_per_item == 4 ? "mma2" : "mma") : cfg_decode(&cfg) ? "decode" : "tile", cfg.block_m, cfg.block_n,
           cfg.threads_per_row,
           ef.max_err, en.max_err, es_.max_err, eps_of(p.dtype), ef.max_lse_err, en.max_lse_err);
    fflush(stdout);

    if (ref_q != ref) {
        free(ref_q);
        free(ref_q_lse);
    }
    free(ref);
    free(ref_lse);
    free(scores);
    free(s_mag);
    free(of);
    free(on);
    free(os);
    free(lf);
    free(ln);
    free(ls);
    for (int i = 0; i < 3; ++i) {
        free(host[i]);
        free(dec[i]);
    }
    cl_mem all[25] = {q, k, v, o_f, l_f, o_n, l_n, o_s, l_s, alibi_m, mask_m, kpm_m, cuq_m, cuk_m,
                      lens_m, bt_m, knew_m, vnew_m, scale_m[0], scale_m[1], sinks_m, ws_m, idx_m, lp_m, descale_m};
    free(scales[0]);
    free(scales[1]);
    free(descale);
    for (int i = 0; i < 25; ++i)
        if (all[i])
            clReleaseMemObject(all[i]);
    free(slopes);
    free(sinks);
    free(mask);
    free(kpm);
    free(cu_q);
    free(cu_k);
    free(cache_lens);
    free(cache_idx);
    free(leftpad);
    free(block_table);
    free(knew);
    free(vnew);
    flashcl_plan_destroy(&standard);
    flashcl_plan_destroy(&flash);
    flashcl_plan_destroy(&naive);
    flashcl_context_destroy(&ctx);
    tu_offsets(0);
}

static const int grid_dims[] = {8, 40, 64, 72, 80, 96, 128, 256};
static const int grid_seqs[][2] = {{1, 1}, {1, 1000}, {113, 1000}, {1000, 113}, {113, 113}, {1000, 1000}, {37, 1}, {64, 200}};
static const int grid_gqa[] = {1, 4, 8};
#define GRID_CASES (8 * 6)

/* Case i covers head dim i/6 with its three dtypes x causal, rotating the GQA ratio and the
 * sequence-length pair so that every pair meets every dtype and both masks across the grid. */
static case_params grid_case(int i)
{
    case_params c = {0};
    c.head_dim = grid_dims[i / 6];
    c.dtype = (flashcl_dtype)(i % 3);
    c.causal = (i / 3) % 2;
    const int s = (i + i / 6) % 8;
    c.seq_q = grid_seqs[s][0];
    c.seq_kv = grid_seqs[s][1];
    c.gqa = grid_gqa[(i + i / 8) % 3];
    c.heads_kv = c.gqa == 8 ? 1 : 2;
    c.batch = (int64_t)c.seq_q * c.seq_kv < 20000 ? 2 : 1;
    return c;
}

START_TEST(test_grid)
{
    case_params c = grid_case(_i);
    run_case(&c);
}
END_TEST

/* Strided layouts (Q and O head-major, K and V with padded rows), an explicit scale, every dtype. */
START_TEST(test_strided)
{
    case_params c = {.dtype = (flashcl_dtype)(_i % 3), .head_dim = _i < 3 ? 64 : 128,
                     .gqa = 2, .seq_q = 77, .seq_kv = 150, .batch = 2, .heads_kv = 2,
                     .causal = _i % 2, .custom_layout = 1, .scale = 0.3f};
    run_case(&c);
}
END_TEST

/* More queries than keys under the causal mask: the first rows see no key and must be exactly 0. */
START_TEST(test_empty_rows)
{
    case_params c = {.dtype = (flashcl_dtype)_i, .head_dim = 32, .gqa = 1, .seq_q = 200, .seq_kv = 50, .batch = 1,
                     .heads_kv = 1, .causal = 1};
    run_case(&c);
}
END_TEST

/* Sliding windows (one-sided, two-sided, the diagonal alone, with causal, windows that leave rows
 * without a key) and the softcap, alone and with a window; every dtype. */
static const case_params window_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 300, .seq_kv = 300, .batch = 1, .heads_kv = 2,
     .window = 1, .window_left = 32, .window_right = 0},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 40, .gqa = 1, .seq_q = 200, .seq_kv = 260, .batch = 2, .heads_kv = 1,
     .window = 1, .window_left = 16, .window_right = 16},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 160, .seq_kv = 160, .batch = 1, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 50, .window_right = -1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 100, .seq_kv = 100, .batch = 2, .heads_kv = 2,
     .window = 1, .window_left = 0, .window_right = 0},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .gqa = 1, .seq_q = 200, .seq_kv = 50, .batch = 1, .heads_kv = 2,
     .window = 1, .window_left = 3, .window_right = 3},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 150, .seq_kv = 170, .batch = 1, .heads_kv = 2,
     .scale = 1.0f, .softcap = 5.0f},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 96, .gqa = 2, .seq_q = 129, .seq_kv = 200, .batch = 1, .heads_kv = 1,
     .causal = 1, .custom_layout = 1, .window = 1, .window_left = 40, .window_right = 7, .softcap = 2.0f},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 80, .gqa = 1, .seq_q = 70, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .window = 1, .window_left = -1, .window_right = 5, .softcap = 30.0f},
    /* sides far wider than the sequences (near INT32_MAX): the host clamps them to the sequences'
     * lengths so that the kernels' positions fit 32 bits; the keys seen must not change */
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 90, .seq_kv = 60, .batch = 1, .heads_kv = 2,
     .window = 1, .window_left = 2147483000, .window_right = 2147483647},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 50, .seq_kv = 120, .batch = 1, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 2147483647, .window_right = -1},
};
#define N_WINDOW_CASES ((int)(sizeof window_cases / sizeof *window_cases))

/* Windows with a side longer than the sequences, under both alignments, with more queries than keys
 * and fewer, prefill and decode (Sq 16 and 8: the decode kernel). A side wider than what any row can
 * reach is clamped by the host (fcl_visible_window) and must change no row's keys: under top-left a row
 * past seq_kv stands past the last key, so its left side needs up to seq_q keys, not seq_kv (issue 30's
 * Sq=74, Skv=60, window (64, 0): row 61 lost key 0). fp32, d=64 throughout: one program per kernel. */
static const case_params wide_window_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 74, .seq_kv = 60, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 64, .window_right = 0, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 74, .seq_kv = 60, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 100, .window_right = 100, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 60, .seq_kv = 74, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 80, .window_right = 0, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 60, .seq_kv = 74, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 100, .window_right = 100, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 16, .seq_kv = 8, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 10, .window_right = 0, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 8, .seq_kv = 16, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 20, .window_right = 20, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 74, .seq_kv = 60, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 64, .window_right = 0},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 74, .seq_kv = 60, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 100, .window_right = 100},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 60, .seq_kv = 74, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 80, .window_right = 0},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 60, .seq_kv = 74, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 100, .window_right = 100},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 16, .seq_kv = 8, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 10, .window_right = 0},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 8, .seq_kv = 16, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 20, .window_right = 20},
};
#define N_WIDE_WINDOW_CASES ((int)(sizeof wide_window_cases / sizeof *wide_window_cases))

/* ALiBi (per head, per batch and head), additive masks (full, broadcast), key padding, alone and
 * together with GQA, causal, a window and a softcap; every dtype. */
static const case_params bias_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 120, .seq_kv = 150, .batch = 2, .heads_kv = 2,
     .alibi = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 100, .seq_kv = 100, .batch = 2, .heads_kv = 2,
     .causal = 1, .alibi = 2},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .gqa = 1, .seq_q = 90, .seq_kv = 130, .batch = 2, .heads_kv = 2,
     .attn_mask = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 64, .seq_kv = 200, .batch = 1, .heads_kv = 1,
     .causal = 1, .custom_layout = 1, .attn_mask = 2},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 40, .gqa = 1, .seq_q = 77, .seq_kv = 140, .batch = 3, .heads_kv = 2,
     .key_padding = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 80, .gqa = 2, .seq_q = 70, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 64, .window_right = -1, .softcap = 20.0f, .alibi = 2, .attn_mask = 1,
     .key_padding = 1},
};
#define N_BIAS_CASES ((int)(sizeof bias_cases / sizeof *bias_cases))

/* Packed sequences of different lengths: with GQA, causal (each sequence aligned on its own
 * lengths), a window, ALiBi, strided rows; every dtype. */
static const case_params varlen_cases[] = {
    /* packed queries over a KV cache (chunked prefill): paged and causal; contiguous with
     * cache_batch_idx, leftpad, a window and ALiBi */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 40, .seq_kv = 200, .batch = 3, .heads_kv = 1,
     .causal = 1, .varlen = 1, .kv_cache = 1, .page_size = 16},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 30, .seq_kv = 100, .batch = 3, .heads_kv = 2,
     .varlen = 1, .kv_cache = 1, .cache_idx = 1, .leftpad = 1, .window = 1, .window_left = 20, .window_right = 0,
     .alibi = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 4, .heads_kv = 2,
     .varlen = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 90, .seq_kv = 70, .batch = 5, .heads_kv = 2,
     .causal = 1, .varlen = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 70, .seq_kv = 120, .batch = 3, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 20, .window_right = -1, .alibi = 1, .varlen = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 40, .gqa = 1, .seq_q = 66, .seq_kv = 66, .batch = 3, .heads_kv = 2,
     .window = 1, .window_left = 8, .window_right = 8, .softcap = 15.0f, .alibi = 2, .varlen = 1},
};
#define N_VARLEN_CASES ((int)(sizeof varlen_cases / sizeof *varlen_cases))
/* (packed queries over a KV cache, chunked prefill: in the varlen list above, and in the matrix-unit
 * kernels' feature lists) */

/* Split-KV (decode shapes): forced and chosen splits, with GQA, causal decode with several queries,
 * a window that leaves some splits without a key, packed sequences, more splits than key tiles. */
static const case_params split_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 1000, .batch = 2, .heads_kv = 2,
     .kv_splits = 5},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 4, .seq_kv = 700, .batch = 1, .heads_kv = 2,
     .causal = 1, .kv_splits = 3},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 2, .seq_q = 16, .seq_kv = 500, .batch = 1, .heads_kv = 1,
     .custom_layout = 1, .window = 1, .window_left = 100, .window_right = -1, .alibi = 1, .kv_splits = 7},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 12, .seq_kv = 300, .batch = 3, .heads_kv = 1,
     .causal = 1, .varlen = 1, .kv_splits = 4},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 40, .gqa = 1, .seq_q = 1, .seq_kv = 900, .batch = 1, .heads_kv = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 2, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .kv_splits = 16},
};
#define N_SPLIT_CASES ((int)(sizeof split_cases / sizeof *split_cases))

/* KV caches: contiguous and paged (page sizes 16 and 48: not a power of two), filled to different
 * lengths, with and without appending the step's rows; decode and prefill-into-cache shapes, causal,
 * GQA, a window, split-KV. */
static const case_params cache_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 3, .heads_kv = 2,
     .kv_cache = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 2, .seq_q = 4, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 1, .seq_kv = 250, .batch = 3, .heads_kv = 2,
     .causal = 1, .kv_splits = 3, .kv_cache = 1, .kv_append = 1, .page_size = 16},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 2, .seq_q = 8, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 40, .window_right = -1, .kv_cache = 1, .kv_append = 1, .page_size = 48},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 40, .gqa = 1, .seq_q = 20, .seq_kv = 96, .batch = 2, .heads_kv = 2,
     .alibi = 1, .kv_cache = 1, .page_size = 16},
};
#define N_CACHE_CASES ((int)(sizeof cache_cases / sizeof *cache_cases))

/* The matrix-unit kernel, forced (FLASHCL_PATH_MMA: emulated where the device has no matrix units):
 * fp16 and bf16, head dims 32 to 128, GQA, causal with rows that see no key, a window, an explicit
 * scale, boundary lengths (a 65th query row, exactly one key tile), strided rows that are 16-byte
 * aligned (cp.async on the GPU) and rows that are not (synchronous copies). */
static const case_params mma_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 2, .heads_kv = 2,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 200, .seq_kv = 77, .batch = 1, .heads_kv = 2,
     .causal = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 96, .gqa = 4, .seq_q = 100, .seq_kv = 300, .batch = 1, .heads_kv = 1,
     .causal = 1, .custom_layout = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 150, .seq_kv = 150, .batch = 1, .heads_kv = 2,
     .custom_layout = 2, .window = 1, .window_left = 20, .window_right = 5, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 1, .seq_q = 65, .seq_kv = 64, .batch = 1, .heads_kv = 1,
     .scale = 0.5f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 90, .seq_kv = 130, .batch = 2, .heads_kv = 1,
     .causal = 1, .custom_layout = 2, .path = FLASHCL_PATH_MMA},
    /* tiles from an override: 8 warps (128 rows) with 32- and 128-key tiles, one warp with 16-key tiles
     * (within rusticl's 32 KiB, the emulation's exchange area included) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 300, .seq_kv = 250, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_MMA, .mma_block_m = 128, .mma_block_n = 32},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 140, .seq_kv = 270, .batch = 1, .heads_kv = 2,
     .custom_layout = 2, .path = FLASHCL_PATH_MMA, .mma_block_m = 128, .mma_block_n = 128},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 50, .seq_kv = 70, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 9, .window_right = 3, .path = FLASHCL_PATH_MMA, .mma_block_m = 16, .mma_block_n = 16},
    /* two m16 tiles a warp (FlashAttention-2's 32 rows a warp), Q's block in local memory */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 300, .seq_kv = 250, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_MMA, .mma_block_m = 128, .mma_block_n = 32, .mma_rows = 4},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 170, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .custom_layout = 2, .window = 1, .window_left = 40, .window_right = 0, .path = FLASHCL_PATH_MMA,
     .mma_block_m = 64, .mma_block_n = 64, .mma_rows = 4},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 96, .gqa = 1, .seq_q = 33, .seq_kv = 47, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_MMA, .mma_block_m = 32, .mma_block_n = 16, .mma_rows = 4},
    /* head dims above 128: Q's block in local memory */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 192, .gqa = 2, .seq_q = 80, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 1, .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1,
     .custom_layout = 2, .path = FLASHCL_PATH_MMA},
    /* a negative scale (the kernel takes the softmax's maximum of unscaled scores and negates Q instead),
     * with Q's fragments in registers and with Q's block in local memory */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 90, .seq_kv = 110, .batch = 1, .heads_kv = 1,
     .causal = 1, .scale = -0.3f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 60, .batch = 1, .heads_kv = 1,
     .scale = -0.2f, .path = FLASHCL_PATH_MMA, .mma_block_m = 64, .mma_block_n = 32, .mma_rows = 4},
    /* K and V in two stages: Q's block copied with the first K tile (and its sign flipped there for a
     * negative scale), Q through the K buffers into registers, one key tile and a partial one */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 150, .seq_kv = 170, .batch = 1, .heads_kv = 1,
     .causal = 1, .scale = -0.25f, .path = FLASHCL_PATH_MMA, .mma_block_m = 64, .mma_block_n = 32, .mma_rows = 4,
     .mma_stages = 2},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .window = 1, .window_left = 30, .window_right = 4, .path = FLASHCL_PATH_MMA, .mma_block_m = 16,
     .mma_block_n = 16, .mma_stages = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 40, .seq_kv = 33, .batch = 1, .heads_kv = 2,
     .custom_layout = 2, .path = FLASHCL_PATH_MMA, .mma_block_m = 32, .mma_block_n = 16, .mma_stages = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 20, .seq_kv = 16, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_MMA, .mma_block_m = 32, .mma_block_n = 16, .mma_rows = 4, .mma_stages = 2},
};
#define N_MMA_CASES ((int)(sizeof mma_cases / sizeof *mma_cases))

/* What engines send, on the matrix-unit kernel (forced; emulated where the device has no matrix units):
 * each score modifier alone (softcap, ALiBi per head and per batch, fp32/fp16/bool masks in their three
 * broadcasts, key padding), packed sequences, a KV cache contiguous and paged (pages of 16 and 48, the
 * append, cache_batch_idx and leftpad: chunked prefill), sinks, top-left causal, and the combinations
 * engines use (softcap with a window, a mask with GQA, a paged cache with a window and softcap). */
static const case_params mma_feature_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 100, .seq_kv = 130, .batch = 2, .heads_kv = 1,
     .softcap = 30.0f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 90, .seq_kv = 90, .batch = 2, .heads_kv = 2,
     .causal = 1, .alibi = 2, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 2, .seq_q = 40, .seq_kv = 70, .batch = 1, .heads_kv = 1,
     .alibi = 1, .scale = -0.3f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 150, .batch = 1, .heads_kv = 1,
     .attn_mask = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 50, .seq_kv = 120, .batch = 2, .heads_kv = 1,
     .causal = 1, .attn_mask = 2, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 4, .seq_q = 40, .seq_kv = 70, .batch = 2, .heads_kv = 1,
     .attn_mask = 3, .mask_dtype = FLASHCL_MASK_F16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 77, .seq_kv = 140, .batch = 3, .heads_kv = 1,
     .key_padding = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 90, .seq_kv = 110, .batch = 1, .heads_kv = 2,
     .window = 1, .window_left = 40, .window_right = 0, .softcap = 20.0f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 4, .heads_kv = 1,
     .varlen = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 90, .seq_kv = 70, .batch = 5, .heads_kv = 2,
     .causal = 1, .alibi = 1, .varlen = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 40, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 2, .seq_q = 33, .seq_kv = 250, .batch = 3, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 40, .seq_kv = 150, .batch = 3, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .leftpad = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 2, .seq_q = 24, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 40, .window_right = -1, .softcap = 10.0f, .kv_cache = 1,
     .page_size = 48, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1,
     .sinks = 1, .alibi = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 60, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .top_left = 1, .alibi = 1, .path = FLASHCL_PATH_MMA},
    /* head dims of an odd number of k16 steps (80, 112; 80 over V's 48), one with a paged cache */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 80, .gqa = 2, .seq_q = 90, .seq_kv = 110, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 112, .gqa = 1, .seq_q = 40, .seq_kv = 130, .batch = 2, .heads_kv = 1,
     .softcap = 20.0f, .kv_cache = 1, .page_size = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 80, .head_dim_v = 48, .gqa = 1, .seq_q = 50, .seq_kv = 70, .batch = 1,
     .heads_kv = 2, .path = FLASHCL_PATH_MMA},
    /* packed queries over a paged cache, causal (chunked prefill as engines send it) */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 50, .seq_kv = 180, .batch = 3, .heads_kv = 1,
     .causal = 1, .varlen = 1, .kv_cache = 1, .page_size = 16, .path = FLASHCL_PATH_MMA},
    /* boolean masks and key padding on 16-byte aligned rows (key counts of a multiple of 16): full tiles
     * read by the row's quad (scores.cl's KEEP_BITS_QUAD), the last one by bytes (the programs of the
     * two cases above with the same features: the quads are the run's choice) */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 50, .seq_kv = 208, .batch = 2, .heads_kv = 1,
     .causal = 1, .attn_mask = 2, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 77, .seq_kv = 160, .batch = 3, .heads_kv = 1,
     .key_padding = 1, .path = FLASHCL_PATH_MMA},
};
#define N_MMA_FEATURE_CASES ((int)(sizeof mma_feature_cases / sizeof *mma_feature_cases))

/* The same features on the warpgroup kernel (forced; emulated without sm_90a programs), head dims 64 and
 * 128: each score modifier, packed sequences, a KV cache contiguous and paged (pages of 16: chunked
 * prefill), cache_batch_idx and leftpad, sinks, top-left causal, softcap with a window, a mask with GQA. */
static const case_params wgmma_feature_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 100, .seq_kv = 130, .batch = 1, .heads_kv = 1,
     .softcap = 30.0f, .window = 1, .window_left = 50, .window_right = 0, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 90, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .causal = 1, .alibi = 2, .scale = -0.3f, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 70, .seq_kv = 150, .batch = 1, .heads_kv = 1,
     .attn_mask = 2, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 50, .seq_kv = 120, .batch = 2, .heads_kv = 1,
     .causal = 1, .attn_mask = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 4, .heads_kv = 1,
     .causal = 1, .varlen = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 33, .seq_kv = 250, .batch = 3, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 40, .seq_kv = 150, .batch = 3, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .leftpad = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1,
     .sinks = 1, .causal = 1, .top_left = 1, .path = FLASHCL_PATH_WGMMA},
    /* packed queries over a paged cache, causal, softcap */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .softcap = 30.0f, .varlen = 1, .kv_cache = 1, .page_size = 16, .path = FLASHCL_PATH_WGMMA},
    /* FlashAttention-3's other head dims (80 and 96 unswizzled, 80's copies in 16-column groups) and V's
     * of their own (192 over 128, 128 over 64: swizzled), with features engines send with them */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 80, .gqa = 2, .seq_q = 70, .seq_kv = 150, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 96, .gqa = 1, .seq_q = 70, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .softcap = 30.0f, .kv_cache = 1, .page_size = 16, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 192, .head_dim_v = 128, .gqa = 1, .seq_q = 70, .seq_kv = 140,
     .batch = 1, .heads_kv = 1, .causal = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .head_dim_v = 64, .gqa = 2, .seq_q = 60, .seq_kv = 130,
     .batch = 2, .heads_kv = 1, .varlen = 1, .window = 1, .window_left = 50, .window_right = 0,
     .path = FLASHCL_PATH_WGMMA},
    /* boolean masks and key padding on 16-byte aligned rows: full tiles read by the quads, the last by bytes */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 80, .seq_kv = 288, .batch = 2, .heads_kv = 1,
     .attn_mask = 1, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 50, .seq_kv = 272, .batch = 3, .heads_kv = 1,
     .key_padding = 1, .path = FLASHCL_PATH_WGMMA},
};
#define N_WGMMA_FEATURE_CASES ((int)(sizeof wgmma_feature_cases / sizeof *wgmma_feature_cases))

/* The warpgroup kernel, forced (FLASHCL_PATH_WGMMA: flash_wgmma, emulated without sm_90a programs): fp16
 * and bf16, head dims 64 and 128 (256 needs more local memory than the CPU budget gives the emulation:
 * the fallback, and its reason), one and two warpgroups, GQA, causal with rows that see no key, a window,
 * explicit and negative scales, one exact key tile and a 65th row, strided aligned rows; and rows that are
 * not 16-byte aligned, which it does not take (the fallback names why). */
static const case_params wgmma_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 2, .heads_kv = 2,
     .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 1, .seq_q = 200, .seq_kv = 77, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 150, .seq_kv = 150, .batch = 1, .heads_kv = 2,
     .custom_layout = 1, .window = 1, .window_left = 20, .window_right = 5, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 1, .seq_q = 65, .seq_kv = 64, .batch = 1, .heads_kv = 1,
     .scale = 0.5f, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 90, .seq_kv = 110, .batch = 1, .heads_kv = 1,
     .causal = 1, .scale = -0.3f, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 40, .seq_kv = 300, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1,
     .custom_layout = 2, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 1, .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_WGMMA},
    /* causal with four queries a key: whole 128-row blocks see no key, their O staged over Q's copies (a
     * race on the H100 before 2026-12-05: Q's values where zeros belong) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 400, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA},
    /* tiles from an override: K and V in two stages (each a tile ahead; one key tile, a partial one, and a
     * range longer than three tiles), 128-key tiles with one warpgroup */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 150, .seq_kv = 300, .batch = 1, .heads_kv = 1,
     .causal = 1, .scale = -0.25f, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 64,
     .mma_stages = 2, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 90, .seq_kv = 64, .batch = 2, .heads_kv = 1,
     .window = 1, .window_left = 30, .window_right = 4, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64,
     .mma_block_n = 64, .mma_stages = 2, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 100, .seq_kv = 270, .batch = 1, .heads_kv = 2,
     .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 128, .wgmma_tiles = 1},
    /* the GPU's own shapes (the chooser's on the H200), emulated where a CPU's local memory allows them:
     * d=128 with two warpgroups and 128-key tiles, d=256 with 64-key tiles, two stages at d=128 */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 2, .seq_q = 200, .seq_kv = 300, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 128, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 1, .seq_q = 140, .seq_kv = 150, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 64, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 130, .seq_kv = 400, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 150, .window_right = 10, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128,
     .mma_block_n = 128, .mma_stages = 2, .wgmma_tiles = 1},
    /* three stages (two steps' copies in flight): seven 64-key tiles, the last partial, causal; and the
     * H200's d=128 shape (128 x 128, 224 KiB) over three tiles and a half */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 100, .seq_kv = 420, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 64, .mma_stages = 3,
     .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 140, .seq_kv = 450, .batch = 1, .heads_kv = 1,
     .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 128, .mma_stages = 3, .wgmma_tiles = 1},
    /* 192-key tiles (an override's, not the chooser's: docs/design/wgmma.md, wgmma-192): d=128 over two tiles
     * and a partial third, causal GQA with a negative scale, in two stages; d=80 (two swizzled blocks, the
     * second partial) with softcap over a paged cache under a window, one stage */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 200, .seq_kv = 500, .batch = 1, .heads_kv = 1,
     .causal = 1, .scale = -0.3f, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 192,
     .mma_stages = 2, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 80, .gqa = 1, .seq_q = 100, .seq_kv = 450, .batch = 2, .heads_kv = 2,
     .softcap = 30.0f, .kv_cache = 1, .page_size = 16, .window = 1, .window_left = 200, .window_right = 30,
     .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 192, .wgmma_tiles = 1},
    /* 80-key tiles (an override's, not the chooser's: docs/design/wgmma.md, wgmma-80): d=256 causal GQA over
     * three tiles and a partial fourth in two stages; d=192 with key padding, one stage, a negative scale */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 2, .seq_q = 150, .seq_kv = 270, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 80, .mma_stages = 2,
     .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 192, .gqa = 1, .seq_q = 90, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .key_padding = 1, .scale = -0.25f, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 80,
     .wgmma_tiles = 1},
    /* three warpgroups, a 192-row block (d=64's override: docs/design/wgmma.md, wgmma-d64): causal GQA over
     * two blocks, the second partial, in two stages; a window with a negative scale in one */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 250, .seq_kv = 330, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 2,
     .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 200, .seq_kv = 140, .batch = 2, .heads_kv = 1,
     .window = 1, .window_left = 60, .window_right = 8, .scale = -0.2f, .path = FLASHCL_PATH_WGMMA,
     .mma_block_m = 192, .mma_block_n = 64, .wgmma_tiles = 1},
    /* d=64 as auto takes it on Hopper (192 rows): causal with six queries a key, whole blocks keyless (the
     * race above, with three consumer warpgroups) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 600, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 2,
     .wgmma_tiles = 1},
    /* four K/V stages (the producer's ring; refused where it cannot run): 192 rows over six and a half key
     * tiles, causal with GQA, the ring round more than once */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 300, .seq_kv = 800, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 4,
     .wgmma_tiles = 1},
};
#define N_WGMMA_CASES ((int)(sizeof wgmma_cases / sizeof *wgmma_cases))

/* flash_wgmma's persistent work-groups (config.persistent: docs/design/wgmma.md, wgmma-persist), forced by an
 * override, fewer than the row blocks, each running several in turn (with the producer on sm_90a: K/V's
 * stages and phases counted on across blocks, the next block's Q copied during one at d=128 and at 192
 * rows): a negative scale over GQA and two batches with causal's heavy blocks first; packed sequences
 * under a window; 192 rows with whole blocks keyless; d=128 over blocks of unequal tiles, one work-group
 * (every block in one). */
static const case_params wgmma_persist_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 300, .seq_kv = 260, .batch = 2, .heads_kv = 2,
     .causal = 1, .scale = -0.3f, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 64,
     .mma_stages = 2, .wgmma_tiles = 1, .persistent = 3},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 1, .seq_q = 200, .seq_kv = 330, .batch = 3, .heads_kv = 2,
     .varlen = 1, .window = 1, .window_left = 90, .window_right = 20, .path = FLASHCL_PATH_WGMMA,
     .mma_block_m = 128, .mma_block_n = 128, .mma_stages = 2, .wgmma_tiles = 1, .persistent = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 600, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 2,
     .wgmma_tiles = 1, .persistent = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 270, .seq_kv = 290, .batch = 2, .heads_kv = 1,
     .causal = 1, .top_left = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 128,
     .mma_stages = 2, .wgmma_tiles = 1, .persistent = 1},
    /* one warpgroup (no producer anywhere: on sm_90a the copies and products of the loop without it) */
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 200, .seq_kv = 300, .batch = 2, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 64, .mma_stages = 2,
     .wgmma_tiles = 1, .persistent = 2},
    /* 192-key tiles (wgmma-192) over blocks of unequal tiles, causal, the stages counted on across blocks */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 330, .seq_kv = 600, .batch = 1, .heads_kv = 2,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 192, .mma_stages = 2,
     .wgmma_tiles = 1, .persistent = 2},
    /* six blocks over four work-groups: a last round they do not all have a block in (WG_SNAKE's odd round,
     * reversed, where the work-groups past the blocks are the first ones) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 1, .seq_q = 300, .seq_kv = 300, .batch = 1, .heads_kv = 2,
     .causal = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 128, .mma_stages = 2,
     .wgmma_tiles = 1, .persistent = 4},
    /* the per-score features and the others a serving engine sends, which the chooser does not give
     * persistent work-groups until measured with them (wgmma-feat): softcap, ALiBi per batch and head and
     * sinks over GQA; a boolean mask broadcast over batch and heads with key padding at d=64's 192 rows;
     * chunked prefill into a paged cache, causal, the step's keys appended first */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 300, .seq_kv = 300, .batch = 2, .heads_kv = 2,
     .softcap = 20.0f, .alibi = 2, .sinks = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128, .mma_block_n = 128,
     .mma_stages = 2, .wgmma_tiles = 1, .persistent = 3},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 1, .seq_q = 450, .seq_kv = 380, .batch = 2, .heads_kv = 2,
     .attn_mask = 2, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .path = FLASHCL_PATH_WGMMA,
     .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 2, .wgmma_tiles = 1, .persistent = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 200, .seq_kv = 520, .batch = 2, .heads_kv = 2,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128,
     .mma_block_n = 128, .mma_stages = 2, .wgmma_tiles = 1, .persistent = 3},
    /* and in four stages (the producer's; refused where it cannot run): the ring's phases over blocks of
     * three tiles */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 500, .seq_kv = 330, .batch = 2, .heads_kv = 2,
     .path = FLASHCL_PATH_WGMMA, .mma_block_m = 192, .mma_block_n = 128, .mma_stages = 4, .wgmma_tiles = 1,
     .persistent = 3},
};
#define N_WGMMA_PERSIST_CASES ((int)(sizeof wgmma_persist_cases / sizeof *wgmma_persist_cases))

/* The decode kernel, forced (FLASHCL_PATH_DECODE; auto takes it only where it was measured faster):
 * every dtype, head dims 40 to 256 (teams of 8, 16 and 32 lanes, 96 with idle lanes), MHA, GQA and
 * MQA with up to 16 rows per KV head (two row chunks), several queries with causal, a window, softcap,
 * ALiBi, key padding, forced and chosen splits, strided and padded rows, KV caches contiguous and paged
 * (pages of 16 and 48) with appending, LSE. */
static const case_params decode_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 1000, .batch = 2, .heads_kv = 2,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 8, .seq_q = 2, .seq_kv = 700, .batch = 1, .heads_kv = 2,
     .causal = 1, .kv_splits = 3, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 96, .gqa = 1, .seq_q = 5, .seq_kv = 333, .batch = 2, .heads_kv = 3,
     .custom_layout = 2, .window = 1, .window_left = 50, .window_right = 2, .softcap = 10.0f,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 256, .gqa = 2, .seq_q = 1, .seq_kv = 600, .batch = 1, .heads_kv = 1,
     .alibi = 2, .key_padding = 1, .kv_splits = 1, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 40, .gqa = 16, .seq_q = 1, .seq_kv = 257, .batch = 2, .heads_kv = 1,
     .custom_layout = 1, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 3, .heads_kv = 2,
     .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 2, .seq_q = 8, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 40, .window_right = -1, .kv_cache = 1, .kv_append = 1, .page_size = 48,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 3, .seq_kv = 90, .batch = 2, .heads_kv = 2,
     .causal = 1, .kv_cache = 1, .alibi = 1, .kv_splits = 16, .path = FLASHCL_PATH_DECODE},
};
#define N_DECODE_CASES ((int)(sizeof decode_cases / sizeof *decode_cases))

/* The matrix-unit decode kernel, forced (FLASHCL_PATH_MMA on decode steps: emulated where the device
 * has no matrix units): fp16 and bf16, head dims 64 to 256 (one and two 16-key tiles a warp), GQA up
 * to 16 rows per KV head (two row chunks), MQA, several queries with causal, a window, softcap, ALiBi,
 * key padding, forced splits (more than the keys have steps), strided rows 16-byte aligned and not,
 * KV caches contiguous and paged (pages of 16 and 48) with appending, fewer keys than a step. */
static const case_params decode_mma_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 2, .heads_kv = 2,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 8, .seq_q = 2, .seq_kv = 500, .batch = 1, .heads_kv = 1,
     .causal = 1, .kv_splits = 3, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 2, .seq_q = 3, .seq_kv = 200, .batch = 1, .heads_kv = 2,
     .custom_layout = 2, .window = 1, .window_left = 30, .window_right = 2, .softcap = 10.0f,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 192, .gqa = 3, .seq_q = 1, .seq_kv = 250, .batch = 2, .heads_kv = 1,
     .custom_layout = 1, .alibi = 2, .key_padding = 1, .kv_splits = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 3, .heads_kv = 2,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 4, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .window = 1, .window_left = 40, .window_right = -1, .kv_cache = 1, .kv_append = 1, .page_size = 48,
     .kv_splits = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 1, .seq_kv = 33, .batch = 2, .heads_kv = 3,
     .alibi = 1, .path = FLASHCL_PATH_MMA},
    /* up to 16 splits the kernel's last work-group of a row block merges them, past them the merge kernel
     * (flash_combine): with sinks, both */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 8, .seq_q = 2, .seq_kv = 400, .batch = 1, .heads_kv = 2,
     .sinks = 1, .causal = 1, .kv_splits = 5, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 700, .batch = 2, .heads_kv = 2,
     .sinks = 1, .kv_splits = 20, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 2100, .batch = 1, .heads_kv = 1,
     .sinks = 1, .kv_splits = 70, .path = FLASHCL_PATH_MMA},
    /* every split with keys, past the first batch of 8: 16 (the most the kernel merges itself, two batches
     * of loads) and 64 (flash_combine's) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 2500, .batch = 1, .heads_kv = 1,
     .kv_splits = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 1, .seq_kv = 8192, .batch = 1, .heads_kv = 1,
     .sinks = 1, .kv_splits = 64, .path = FLASHCL_PATH_MMA}, /* (sinks: standard attention refuses it by name, as
                                                                 it would 8192 keys under the GPU-like limits) */
    /* the merge's second batch of splits part-filled (11: 8 + 3), and splits that see no key (before the
     * window, past the keys' end), whose partials the merge reads and drops */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 1500, .batch = 2, .heads_kv = 2,
     .window = 1, .window_left = 600, .window_right = -1, .kv_splits = 11, .path = FLASHCL_PATH_MMA},
    /* KV_BULK (one tile a warp, the rows through local memory two steps ahead): fewer keys than the split's
     * last step, the kernel's merge and flash_combine's, a paged cache with appending, a window, bf16, and
     * one split of many steps */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 1000, .batch = 2, .heads_kv = 2,
     .kv_splits = 3, .kv_bulk = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 8, .seq_q = 2, .seq_kv = 700, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .kv_splits = 20, .kv_bulk = 1,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 2, .seq_q = 1, .seq_kv = 300, .batch = 1, .heads_kv = 2,
     .window = 1, .window_left = 100, .window_right = -1, .softcap = 20.0f, .kv_bulk = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 1500, .batch = 1, .heads_kv = 1,
     .kv_splits = 1, .kv_bulk = 1, .path = FLASHCL_PATH_MMA}, /* (12 steps a warp: each stage's barrier past its
                                                                 second phase, the last step part-filled) */
};
#define N_DECODE_MMA_CASES ((int)(sizeof decode_mma_cases / sizeof *decode_mma_cases))

/* Quantized KV caches (int8 with fp32 and fp16 scales, fp8 E4M3 and E5M2) on both decode kernels (the
 * matrix-unit one emulated where the device has none; with fp16 and bf16 queries) and as the chooser
 * takes them: appended rows
 * checked against their inputs, the reference computed on the cache's bytes as hostmath decodes them;
 * contiguous and paged (16, 48), GQA, several queries, causal, a window, softcap, ALiBi, key padding,
 * forced splits, strided rows. */
static const case_params quant_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 150, .batch = 2, .heads_kv = 2,
     .kv_cache = 1, .kv_append = 1, .kv_format = FLASHCL_KV_INT8, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 3, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .kv_format = FLASHCL_KV_INT8, .kv_scale_f16 = 1,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 96, .gqa = 1, .seq_q = 1, .seq_kv = 200, .batch = 2, .heads_kv = 2,
     .window = 1, .window_left = 60, .window_right = -1, .softcap = 8.0f, .kv_cache = 1,
     .kv_format = FLASHCL_KV_FP8_E4M3, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 8, .seq_q = 2, .seq_kv = 250, .batch = 2, .heads_kv = 1,
     .kv_cache = 1, .kv_append = 1, .page_size = 48, .kv_splits = 3, .kv_format = FLASHCL_KV_FP8_E5M2,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 256, .gqa = 2, .seq_q = 1, .seq_kv = 80, .batch = 2, .heads_kv = 1,
     .alibi = 1, .key_padding = 1, .kv_cache = 1, .kv_append = 1, .kv_format = FLASHCL_KV_FP8_E4M3},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 150, .batch = 1, .heads_kv = 2,
     .custom_layout = 1, .kv_cache = 1, .kv_format = FLASHCL_KV_INT8, .kv_scale_f16 = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 4, .seq_kv = 120, .batch = 2, .heads_kv = 2,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .kv_format = FLASHCL_KV_FP8_E4M3,
     .path = FLASHCL_PATH_MMA},
    /* int8 with fp16 scales over pages on the matrix-unit decode kernel: a last step whose warps' tiles
     * lie past the keys (their scales read at the tile's page, then dropped); pages of 16, so a warp's
     * two tiles of a step lie on two pages */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 173, .batch = 2, .heads_kv = 2,
     .kv_cache = 1, .kv_append = 1, .page_size = 16, .kv_format = FLASHCL_KV_INT8, .kv_scale_f16 = 1,
     .path = FLASHCL_PATH_MMA},
    /* ... with fp32 scales over pages of 48: a step's tiles on one page or across two */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 301, .batch = 1, .heads_kv = 2,
     .kv_cache = 1, .page_size = 48, .kv_format = FLASHCL_KV_INT8, .path = FLASHCL_PATH_MMA},
    /* int8 with fp32 scales past 16 splits of 1024 keys or more: the chooser's three tiles a warp with
     * flash_combine (decode-mma-24), eight warps (decode-mma-31); splits of 1152 keys (rounded to four warps'
     * 192 keys, SPLIT_ROUND), so the 16th holds 165 and the 17th none */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 17445, .batch = 1, .heads_kv = 1,
     .kv_cache = 1, .kv_splits = 17, .kv_format = FLASHCL_KV_INT8, .path = FLASHCL_PATH_MMA},
};
#define N_QUANT_CASES ((int)(sizeof quant_cases / sizeof *quant_cases))

/* Every tensor at an offset inside a larger buffer (margins checked unwritten), the flash plan on a
 * second queue and validated there: each kernel and each optional input once, offsets that are not
 * multiples of 16 bytes where the kernel allows it. */
static const case_params offset_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .causal = 1, .alibi = 2, .attn_mask = 1, .key_padding = 1, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 60, .seq_kv = 80, .batch = 3, .heads_kv = 2,
     .varlen = 1, .offsets = 16}, /* (16: flash_mma takes packed sequences, and copies rows in 16-byte pieces) */
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .gqa = 2, .seq_q = 40, .seq_kv = 300, .batch = 1, .heads_kv = 2,
     .kv_splits = 3, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 2, .seq_kv = 160, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .path = FLASHCL_PATH_DECODE, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 1, .seq_kv = 120, .batch = 2, .heads_kv = 1,
     .kv_cache = 1, .kv_format = FLASHCL_KV_INT8, .kv_scale_f16 = 1, .path = FLASHCL_PATH_DECODE, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 90, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .causal = 1, .path = FLASHCL_PATH_MMA, .offsets = 16},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .kv_cache = 1, .kv_append = 1, .path = FLASHCL_PATH_MMA, .offsets = 16},
};
#define N_OFFSET_CASES ((int)(sizeof offset_cases / sizeof *offset_cases))

/* Top-left alignment (query i at key i: PyTorch's is_causal) for the causal mask, windows and ALiBi, on
 * every kernel: fewer queries than keys and more, packed sequences, a KV cache's decode steps. */
static const case_params align_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 90, .seq_kv = 130, .batch = 2, .heads_kv = 1,
     .causal = 1, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 130, .seq_kv = 90, .batch = 1, .heads_kv = 2,
     .causal = 1, .top_left = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 2, .seq_q = 70, .seq_kv = 110, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 20, .window_right = 5, .alibi = 1, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 60, .seq_kv = 80, .batch = 3, .heads_kv = 2,
     .causal = 1, .varlen = 1, .top_left = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 3, .seq_kv = 150, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .alibi = 2, .top_left = 1, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 2, .seq_kv = 120, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .top_left = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .gqa = 1, .seq_q = 50, .seq_kv = 300, .batch = 1, .heads_kv = 2,
     .causal = 1, .kv_splits = 3, .top_left = 1},
};
#define N_ALIGN_CASES ((int)(sizeof align_cases / sizeof *align_cases))

/* Masks as engines hold them: fp16 additive (ggml) and boolean (PyTorch), full and broadcast, with the
 * other inputs, on the portable kernel (the matrix-unit kernels take no mask). */
static const case_params mask_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 2, .heads_kv = 1,
     .attn_mask = 1, .mask_dtype = FLASHCL_MASK_F16},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 50, .seq_kv = 120, .batch = 1, .heads_kv = 2,
     .causal = 1, .attn_mask = 2, .mask_dtype = FLASHCL_MASK_BOOL},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 48, .gqa = 2, .seq_q = 40, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .attn_mask = 1, .mask_dtype = FLASHCL_MASK_BOOL, .key_padding = 1, .alibi = 1, .kv_splits = 3},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 3, .seq_kv = 150, .batch = 2, .heads_kv = 2,
     .attn_mask = 1, .mask_dtype = FLASHCL_MASK_F16, .top_left = 1, .causal = 1, .offsets = 4},
    /* a (1, 1, 1, Sk) key mask, every row of every head of every batch reading the same Sk values */
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 2, .seq_q = 40, .seq_kv = 70, .batch = 2, .heads_kv = 1,
     .attn_mask = 3},
};
#define N_MASK_CASES ((int)(sizeof mask_cases / sizeof *mask_cases))

/* Attention sinks on every kernel: the portable one (with a window, GQA), the matrix-unit one, the
 * decode kernels, split-KV (the sink added once, by flash_combine: padded and packed rows), rows that
 * see no key (bottom-right causal with more queries than keys: zeros, LSE = the sink), offsets. */
static const case_params sink_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 80, .seq_kv = 130, .batch = 2, .heads_kv = 2,
     .causal = 1, .window = 1, .window_left = 40, .window_right = -1, .sinks = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 1, .heads_kv = 2,
     .causal = 1, .sinks = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 2, .heads_kv = 1,
     .kv_cache = 1, .sinks = 1, .kv_splits = 1, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 2, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .sinks = 1, .kv_splits = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 1, .seq_kv = 500, .batch = 2, .heads_kv = 3,
     .sinks = 1, .kv_splits = 5, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .gqa = 2, .seq_q = 60, .seq_kv = 200, .batch = 1, .heads_kv = 1,
     .sinks = 1, .kv_splits = 3},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 32, .gqa = 1, .seq_q = 70, .seq_kv = 90, .batch = 3, .heads_kv = 2,
     .causal = 1, .varlen = 1, .sinks = 1, .kv_splits = 2},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 40, .seq_kv = 20, .batch = 1, .heads_kv = 2,
     .causal = 1, .sinks = 1, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 2, .seq_q = 40, .seq_kv = 20, .batch = 1, .heads_kv = 1,
     .causal = 1, .sinks = 1, .path = FLASHCL_PATH_MMA},
};
#define N_SINK_CASES ((int)(sizeof sink_cases / sizeof *sink_cases))

/* flash_attn_with_kvcache's cache_batch_idx and cache_leftpad: a cache with more sequences than the
 * batch, served out of order, keys starting past left padding; prefill over the cache (the portable
 * kernel), the decode kernels (split, GQA, the matrix-unit one emulated or real), with the append
 * (written into the indexed sequence), a window, an fp8 cache, offsets. */
static const case_params kvopt_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 40, .seq_kv = 150, .batch = 3, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .leftpad = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .gqa = 4, .seq_q = 1, .seq_kv = 300, .batch = 3, .heads_kv = 2,
     .kv_cache = 1, .cache_idx = 1, .leftpad = 1, .kv_splits = 3, .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .gqa = 4, .seq_q = 2, .seq_kv = 200, .batch = 2, .heads_kv = 1,
     .causal = 1, .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 32, .gqa = 1, .seq_q = 3, .seq_kv = 120, .batch = 4, .heads_kv = 2,
     .causal = 1, .window = 1, .window_left = 30, .window_right = -1, .kv_cache = 1, .leftpad = 1,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 1, .seq_kv = 180, .batch = 2, .heads_kv = 2,
     .kv_cache = 1, .kv_append = 1, .kv_format = FLASHCL_KV_FP8_E4M3, .cache_idx = 1, .leftpad = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .gqa = 2, .seq_q = 1, .seq_kv = 100, .batch = 3, .heads_kv = 1,
     .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .leftpad = 1, .path = FLASHCL_PATH_DECODE, .offsets = 4},
};
#define N_KVOPT_CASES ((int)(sizeof kvopt_cases / sizeof *kvopt_cases))

/* K and V in a float type of their own (problem.kv_dtype): fp32 queries over fp16 and bf16 keys and
 * values and the reverse, prefill (the portable kernel) and decode (the decode kernel; the matrix
 * units refused, the portable path taking it), a cache with the step's rows appended in the cache's
 * type, split-KV, GQA; the same dtype named explicitly (no mixing). */
static const case_params mixed_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70,
     .seq_kv = 130, .batch = 2, .heads_kv = 1, .causal = 1},
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_BF16, .head_dim = 128, .gqa = 4, .seq_q = 1,
     .seq_kv = 300, .batch = 2, .heads_kv = 2, .kv_cache = 1, .kv_append = 1, .kv_splits = 3},
    {.dtype = FLASHCL_DTYPE_F16, .kv_dtype = FLASHCL_KV_DTYPE_F32, .head_dim = 64, .gqa = 1, .seq_q = 90,
     .seq_kv = 90, .batch = 1, .heads_kv = 2, .window = 1, .window_left = 20, .window_right = 5},
    {.dtype = FLASHCL_DTYPE_BF16, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 4, .seq_q = 3,
     .seq_kv = 150, .batch = 2, .heads_kv = 1, .causal = 1, .kv_cache = 1, .kv_append = 1,
     .path = FLASHCL_PATH_DECODE},
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 48, .gqa = 2, .seq_q = 40,
     .seq_kv = 100, .batch = 1, .heads_kv = 1, .kv_splits = 2, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_F16, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 50,
     .seq_kv = 60, .batch = 1, .heads_kv = 1},
};
#define N_MIXED_CASES ((int)(sizeof mixed_cases / sizeof *mixed_cases))

/* Q in its own type over fp16 or bf16 K/V on the matrix-unit kernels (forced; emulated without matrix
 * units): fp32 and the other 16-bit type, rounded to K's as Q is loaded, O in Q's type. Causal GQA at
 * an offset, packed sequences with ALiBi, a paged cache with the append and softcap at d=80, a mask over
 * rows not 16-byte aligned; on the warpgroup kernel causal and a window with ALiBi. */
static const case_params mma_mixed_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70,
     .seq_kv = 130, .batch = 2, .heads_kv = 1, .causal = 1, .offsets = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 60,
     .seq_kv = 80, .batch = 3, .heads_kv = 2, .varlen = 1, .alibi = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 80, .gqa = 2, .seq_q = 33,
     .seq_kv = 120, .batch = 2, .heads_kv = 1, .causal = 1, .softcap = 20.0f, .kv_cache = 1, .kv_append = 1,
     .page_size = 16, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F16, .kv_dtype = FLASHCL_KV_DTYPE_BF16, .head_dim = 32, .gqa = 2, .seq_q = 40,
     .seq_kv = 70, .batch = 1, .heads_kv = 1, .attn_mask = 1, .custom_layout = 2, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 70,
     .seq_kv = 100, .batch = 1, .heads_kv = 1, .causal = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 64, .gqa = 1, .seq_q = 80,
     .seq_kv = 90, .batch = 1, .heads_kv = 2, .window = 1, .window_left = 30, .window_right = 10, .alibi = 1,
     .path = FLASHCL_PATH_WGMMA},
};
#define N_MMA_MIXED_CASES ((int)(sizeof mma_mixed_cases / sizeof *mma_mixed_cases))

/* fp32 data under a TF32 precision (problem.precision) on flash_mma, forced (emulated where the device has no
 * matrix units): three TF32 products a product, held to about fp32's error against float64, and one,
 * held to fp16's. At d=64: causal GQA, packed sequences with a window and softcap, unaligned strided rows
 * with a negative scale, an override of one K/V stage. */
static const case_params tf32_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 64, .gqa = 2, .seq_q = 100,
     .seq_kv = 100, .batch = 2, .heads_kv = 1, .causal = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32, .head_dim = 64, .gqa = 2, .seq_q = 60,
     .seq_kv = 90, .batch = 3, .heads_kv = 1, .varlen = 1, .window = 1, .window_left = 25, .window_right = 5,
     .softcap = 15.0f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 64, .gqa = 1, .seq_q = 50,
     .seq_kv = 70, .batch = 1, .heads_kv = 2, .custom_layout = 2, .scale = -0.2f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32, .head_dim = 64, .gqa = 2, .seq_q = 45,
     .seq_kv = 100, .batch = 1, .heads_kv = 1, .causal = 1, .path = FLASHCL_PATH_MMA, .mma_block_m = 32,
     .mma_block_n = 16, .mma_rows = 2, .mma_stages = 1},
};
#define N_TF32_CASES ((int)(sizeof tf32_cases / sizeof *tf32_cases))
/* and wider heads: d=128 with one TF32 product, d=80 packed with a window and softcap, d=96 over a paged
 * cache with an append under ALiBi, 128 over V's 64 with a mask and key padding; Q's block split once (Q_SPLIT)
 * with a negative scale, over unaligned strided rows at d=112, copied synchronously at d=192 and at d=128 in two
 * stages (where the other K/V copies are asynchronous; split in place, Q's chunks were overwritten before
 * other work-items read them: NVIDIA, 2026-12-05) (not on rusticl: llvmpipe
 * lets the emulated kernel have 32 work-items from d=80 up, where it needs 128) */
static const case_params tf32_wide_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32, .head_dim = 128, .gqa = 1, .seq_q = 70,
     .seq_kv = 150, .batch = 1, .heads_kv = 2, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 80, .gqa = 2, .seq_q = 60,
     .seq_kv = 90, .batch = 3, .heads_kv = 1, .varlen = 1, .window = 1, .window_left = 25, .window_right = 5,
     .softcap = 15.0f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 96, .gqa = 2, .seq_q = 20,
     .seq_kv = 120, .batch = 2, .heads_kv = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .alibi = 1,
     .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 128, .head_dim_v = 64, .gqa = 1,
     .seq_q = 40, .seq_kv = 75, .batch = 2, .heads_kv = 1, .attn_mask = 1, .key_padding = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 112, .gqa = 1, .seq_q = 33,
     .seq_kv = 61, .batch = 1, .heads_kv = 2, .custom_layout = 2, .scale = -0.1f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 192, .gqa = 2, .seq_q = 30,
     .seq_kv = 50, .batch = 1, .heads_kv = 1, .causal = 1, .scale = -0.15f, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_F32, .precision = FLASHCL_PRECISION_TF32X3, .head_dim = 128, .gqa = 1, .seq_q = 40,
     .seq_kv = 70, .batch = 1, .heads_kv = 2, .scale = -0.1f, .path = FLASHCL_PATH_MMA, .mma_block_m = 32,
     .mma_block_n = 16, .mma_rows = 2, .mma_stages = 2},
};
#define N_TF32_WIDE_CASES ((int)(sizeof tf32_wide_cases / sizeof *tf32_wide_cases))

/* fp8 attention (problem.qkv_format): Q, K and V bytes of E4M3 or E5M2 times their descale factors, O in
 * fp16, bf16 or fp32, on the kernel auto takes (the portable one, or flash_wgmma on sm_90a), held against
 * float64 over the decoded bytes: causal GQA with factors per (batch, KV head), a window with softcap over
 * E5M2, packed sequences with sinks, a decode step over a paged cache with ALiBi, a mask and key padding
 * over strided rows without factors, the tensors at offsets of 4 bytes (the portable kernel's: flash_wgmma
 * copies 16-byte pieces and refuses them, test_plan's test_enqueue_fp8_offsets). */
static const case_params fp8_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_HEAD,
     .head_dim = 64, .gqa = 2, .seq_q = 70, .seq_kv = 90, .batch = 2, .heads_kv = 2, .causal = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .qkv_format = FLASHCL_KV_FP8_E5M2, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .head_dim = 128, .gqa = 1, .seq_q = 40, .seq_kv = 120, .batch = 1, .heads_kv = 2, .window = 1,
     .window_left = 30, .window_right = 5, .softcap = 20.0f},
    {.dtype = FLASHCL_DTYPE_F32, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .head_dim = 32, .gqa = 2, .seq_q = 30, .seq_kv = 50, .batch = 3, .heads_kv = 1, .varlen = 1, .sinks = 1},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .head_dim = 64, .gqa = 4, .seq_q = 1, .seq_kv = 200, .batch = 2, .heads_kv = 2, .kv_cache = 1,
     .page_size = 16, .alibi = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .qkv_format = FLASHCL_KV_FP8_E4M3, .head_dim = 96, .gqa = 1, .seq_q = 33,
     .seq_kv = 45, .batch = 2, .heads_kv = 1, .attn_mask = 1, .key_padding = 1, .custom_layout = 1},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_HEAD,
     .head_dim = 64, .gqa = 1, .seq_q = 20, .seq_kv = 40, .batch = 2, .heads_kv = 2, .offsets = 4,
     .path = FLASHCL_PATH_PORTABLE},
};
#define N_FP8_CASES ((int)(sizeof fp8_cases / sizeof *fp8_cases))

/* fp8 attention on the warpgroup kernel (forced: flash_wgmma, emulated without sm_90a programs): E4M3 and
 * E5M2 operands, P rounded to E4M3 at its fragments' places, V's tiles transposed in the order P takes the
 * keys. fp8_exact cases (integer scores: every weight a power of two E4M3 holds) are held to fp32's
 * tolerance, so that a key or a column in the wrong place fails them: head dims 64, 128 and 256, one and two
 * warpgroups, 64- and 128-key tiles in one to three stages, causal GQA with per-head factors, a window,
 * packed sequences with sinks, a paged cache, a bool mask with key padding, tensors at offsets. One case of
 * N(0, 1) bytes with softcap and ALiBi measures P's E4M3 rounding (its tolerance is E4M3's); head dim 96 and
 * fp32 O are refused by name. */
static const case_params wgmma_fp8_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_HEAD,
     .fp8_exact = 1, .head_dim = 64, .gqa = 2, .seq_q = 130, .seq_kv = 150, .batch = 2, .heads_kv = 2, .causal = 1,
     .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_BF16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .fp8_exact = 1, .head_dim = 128, .gqa = 1, .seq_q = 140, .seq_kv = 300, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 100, .window_right = 20, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 128,
     .mma_block_n = 128, .mma_stages = 2, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E5M2, .fp8_exact = 1, .head_dim = 128, .gqa = 2,
     .seq_q = 70, .seq_kv = 200, .batch = 2, .heads_kv = 1, .causal = 1, .kv_cache = 1, .page_size = 16,
     .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .fp8_exact = 1, .head_dim = 64, .gqa = 2, .seq_q = 60, .seq_kv = 90, .batch = 3, .heads_kv = 1, .varlen = 1,
     .sinks = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 64, .mma_stages = 3,
     .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_exact = 1, .head_dim = 64, .gqa = 1,
     .seq_q = 80, .seq_kv = 272, .batch = 2, .heads_kv = 1, .attn_mask = 1, .mask_dtype = FLASHCL_MASK_BOOL,
     .key_padding = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64, .mma_block_n = 128, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_HEAD,
     .fp8_exact = 1, .head_dim = 64, .gqa = 1, .seq_q = 70, .seq_kv = 100, .batch = 2, .heads_kv = 2, .offsets = 16,
     .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_exact = 1, .head_dim = 256, .gqa = 1,
     .seq_q = 70, .seq_kv = 90, .batch = 1, .heads_kv = 1, .path = FLASHCL_PATH_WGMMA, .mma_block_m = 64,
     .mma_block_n = 64, .wgmma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .fp8_descale = FLASHCL_DESCALE_TENSOR,
     .head_dim = 128, .gqa = 2, .seq_q = 100, .seq_kv = 260, .batch = 1, .heads_kv = 1, .softcap = 30.0f,
     .alibi = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F16, .qkv_format = FLASHCL_KV_FP8_E4M3, .head_dim = 96, .gqa = 1, .seq_q = 40,
     .seq_kv = 50, .batch = 1, .heads_kv = 1, .path = FLASHCL_PATH_WGMMA},
    {.dtype = FLASHCL_DTYPE_F32, .qkv_format = FLASHCL_KV_FP8_E4M3, .head_dim = 64, .gqa = 1, .seq_q = 40,
     .seq_kv = 50, .batch = 1, .heads_kv = 1, .path = FLASHCL_PATH_WGMMA},
};
#define N_WGMMA_FP8_CASES ((int)(sizeof wgmma_fp8_cases / sizeof *wgmma_fp8_cases))

/* V's and O's own head dim (problem.head_dim_v), narrower and wider than Q's and K's: the portable kernel
 * (auto takes it for every one: the matrix-unit and decode kernels refuse it) in prefill, as a packed
 * GQA decode step with split-KV and the caller's workspace at an offset, over a paged cache with an
 * append, with packed sequences, sinks, ALiBi, windows, strided layouts and K/V in their own dtype. */
static const case_params dimv_cases[] = {
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 64, .head_dim_v = 32, .gqa = 2, .seq_q = 70, .seq_kv = 150,
     .batch = 2, .heads_kv = 1, .causal = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 192, .head_dim_v = 128, .gqa = 1, .seq_q = 100, .seq_kv = 130,
     .batch = 2, .heads_kv = 2},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .head_dim_v = 96, .gqa = 2, .seq_q = 90, .seq_kv = 120,
     .batch = 1, .heads_kv = 1, .window = 1, .window_left = 40, .window_right = 8, .custom_layout = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 128, .head_dim_v = 64, .gqa = 4, .seq_q = 1, .seq_kv = 500,
     .batch = 2, .heads_kv = 2, .kv_splits = 3, .offsets = 4},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .head_dim_v = 128, .gqa = 2, .seq_q = 4, .seq_kv = 200,
     .batch = 2, .heads_kv = 1, .kv_cache = 1, .kv_append = 1, .page_size = 16, .causal = 1},
    {.dtype = FLASHCL_DTYPE_F32, .head_dim = 48, .head_dim_v = 24, .gqa = 1, .seq_q = 60, .seq_kv = 80,
     .batch = 3, .heads_kv = 2, .varlen = 1, .sinks = 1, .alibi = 1},
    {.dtype = FLASHCL_DTYPE_F32, .kv_dtype = FLASHCL_KV_DTYPE_F16, .head_dim = 256, .head_dim_v = 64, .gqa = 2,
     .seq_q = 40, .seq_kv = 100, .batch = 1, .heads_kv = 1, .custom_layout = 2},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 96, .head_dim_v = 64, .gqa = 1, .seq_q = 3, .seq_kv = 90,
     .batch = 2, .heads_kv = 2, .kv_cache = 1, .kv_append = 1, .cache_idx = 1, .leftpad = 1, .offsets = 4},
    /* the matrix-unit kernel (forced: emulated without matrix units): MLA's 192 over 128 causal, V wider
     * than K in two K/V stages with sinks (32 rows a warp, tiles set by an override), narrower over
     * unaligned rows */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 192, .head_dim_v = 128, .gqa = 2, .seq_q = 150, .seq_kv = 170,
     .batch = 1, .heads_kv = 1, .causal = 1, .path = FLASHCL_PATH_MMA},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 64, .head_dim_v = 128, .gqa = 1, .seq_q = 140, .seq_kv = 200,
     .batch = 2, .heads_kv = 1, .sinks = 1, .path = FLASHCL_PATH_MMA, .mma_block_m = 64, .mma_block_n = 16,
     .mma_rows = 4, .mma_stages = 2}, /* (24 KiB emulated: within rusticl's 32) */
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 128, .head_dim_v = 32, .gqa = 1, .seq_q = 40, .seq_kv = 77,
     .batch = 1, .heads_kv = 2, .custom_layout = 2, .path = FLASHCL_PATH_MMA},
};
#define N_DIMV_CASES ((int)(sizeof dimv_cases / sizeof *dimv_cases))

/* flash_mfma's own tiles, set by an override (forced; emulated without AMD's matrix cores): one wave with
 * 32-key tiles, two waves with 128-key tiles over a partial last one, three waves (192 work-items). The
 * shapes and features otherwise are flash_mma's lists, run again on flash_mfma ("mfma", "mfma_features",
 * "mfma_mixed" below: the same cases with the path MFMA and no flash_mma tiles). */
static const case_params mfma_tile_cases[] = {
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 64, .gqa = 2, .seq_q = 50, .seq_kv = 70, .batch = 1, .heads_kv = 1,
     .window = 1, .window_left = 9, .window_right = 3, .path = FLASHCL_PATH_MFMA, .mma_block_m = 32,
     .mma_block_n = 32, .mfma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_BF16, .head_dim = 32, .gqa = 1, .seq_q = 140, .seq_kv = 270, .batch = 1, .heads_kv = 2,
     .causal = 1, .custom_layout = 2, .path = FLASHCL_PATH_MFMA, .mma_block_m = 64, .mma_block_n = 128, .mfma_tiles = 1},
    {.dtype = FLASHCL_DTYPE_F16, .head_dim = 48, .gqa = 1, .seq_q = 300, .seq_kv = 100, .batch = 1, .heads_kv = 1,
     .scale = -0.4f, .path = FLASHCL_PATH_MFMA, .mma_block_m = 96, .mma_block_n = 32, .mfma_tiles = 1},
};
#define N_MFMA_TILE_CASES ((int)(sizeof mfma_tile_cases / sizeof *mfma_tile_cases))

/* The feature cases, one numbering over all the lists above; a list with a path runs its cases on that
 * path (their own tiles, set for another kernel, left out): flash_mma's lists again on flash_mfma, on
 * flash_wmma in gfx12's layout and in gfx11's, and on flash_dpas in sub-groups of 16 and of 8. */
static const struct {
    const char *name;
    const case_params *cases;
    int n;
    int path;    /* nonzero: the cases on this path, their tiles for another kernel left out */
    int variant; /* and the layout: flash_wmma's gfx (11: RDNA3's), flash_dpas's sub-group (8: Xe-HPG's, through an
                    override of 64 x 32 tiles), emulated */
} feature_lists[] = {
    {"window", window_cases, N_WINDOW_CASES, 0, 0}, {"wide_window", wide_window_cases, N_WIDE_WINDOW_CASES, 0, 0},
    {"bias", bias_cases, N_BIAS_CASES, 0, 0},
    {"varlen", varlen_cases, N_VARLEN_CASES, 0, 0}, {"split", split_cases, N_SPLIT_CASES, 0, 0},
    {"cache", cache_cases, N_CACHE_CASES, 0, 0},    {"mma", mma_cases, N_MMA_CASES, 0, 0},
    {"decode", decode_cases, N_DECODE_CASES, 0, 0}, {"decode_mma", decode_mma_cases, N_DECODE_MMA_CASES, 0, 0},
    {"quant", quant_cases, N_QUANT_CASES, 0, 0},    {"offsets", offset_cases, N_OFFSET_CASES, 0, 0},
    {"align", align_cases, N_ALIGN_CASES, 0, 0},    {"masks", mask_cases, N_MASK_CASES, 0, 0},
    {"sinks", sink_cases, N_SINK_CASES, 0, 0},      {"kvopts", kvopt_cases, N_KVOPT_CASES, 0, 0},
    {"mixed", mixed_cases, N_MIXED_CASES, 0, 0},    {"dimv", dimv_cases, N_DIMV_CASES, 0, 0},
    {"wgmma", wgmma_cases, N_WGMMA_CASES, 0, 0},    {"mma_features", mma_feature_cases, N_MMA_FEATURE_CASES, 0, 0},
    {"wgmma_persist", wgmma_persist_cases, N_WGMMA_PERSIST_CASES, 0, 0},
    {"wgmma_features", wgmma_feature_cases, N_WGMMA_FEATURE_CASES, 0, 0},
    {"mma_mixed", mma_mixed_cases, N_MMA_MIXED_CASES, 0, 0},
    {"tf32", tf32_cases, N_TF32_CASES, 0, 0},       {"tf32_wide", tf32_wide_cases, N_TF32_WIDE_CASES, 0, 0},
    {"fp8", fp8_cases, N_FP8_CASES, 0, 0},
    {"wgmma_fp8", wgmma_fp8_cases, N_WGMMA_FP8_CASES, 0, 0},
    {"mfma", mma_cases, N_MMA_CASES, FLASHCL_PATH_MFMA, 0},
    {"mfma_features", mma_feature_cases, N_MMA_FEATURE_CASES, FLASHCL_PATH_MFMA, 0},
    {"mfma_mixed", mma_mixed_cases, N_MMA_MIXED_CASES, FLASHCL_PATH_MFMA, 0},
    {"mfma_tiles", mfma_tile_cases, N_MFMA_TILE_CASES, 0, 0},
    {"wmma", mma_cases, N_MMA_CASES, FLASHCL_PATH_WMMA, 0},
    {"wmma_features", mma_feature_cases, N_MMA_FEATURE_CASES, FLASHCL_PATH_WMMA, 0},
    {"wmma_mixed", mma_mixed_cases, N_MMA_MIXED_CASES, FLASHCL_PATH_WMMA, 0},
    {"wmma11", mma_cases, N_MMA_CASES, FLASHCL_PATH_WMMA, 11},
    {"wmma11_features", mma_feature_cases, N_MMA_FEATURE_CASES, FLASHCL_PATH_WMMA, 11},
    {"dpas", mma_cases, N_MMA_CASES, FLASHCL_PATH_DPAS, 0},
    {"dpas_features", mma_feature_cases, N_MMA_FEATURE_CASES, FLASHCL_PATH_DPAS, 0},
    {"dpas_mixed", mma_mixed_cases, N_MMA_MIXED_CASES, FLASHCL_PATH_DPAS, 0},
    {"dpas8", mma_cases, N_MMA_CASES, FLASHCL_PATH_DPAS, 8},
    {"dpas8_features", mma_feature_cases, N_MMA_FEATURE_CASES, FLASHCL_PATH_DPAS, 8},
};

/* Whether `name` is one of the comma-separated names in `list`. */
static int name_listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *c = list; (c = strstr(c, name)); c += n)
        if ((c == list || c[-1] == ',') && (c[n] == ',' || c[n] == '\0'))
            return 1;
    return 0;
}

/* Whether feature case i belongs to a list named in $FLASHCL_TEST_SKIP_FEATURES ("offsets,align"): a
 * device configuration that tests something else (the GPU limits on PoCL) leaves those lists to the
 * configurations that run them. */
static int feature_skipped(int i)
{
    const char *skip = getenv("FLASHCL_TEST_SKIP_FEATURES");
    if (!skip || !*skip)
        return 0;
    for (size_t l = 0; l < sizeof feature_lists / sizeof *feature_lists; ++l) {
        if (i < feature_lists[l].n)
            return name_listed(skip, feature_lists[l].name);
        i -= feature_lists[l].n;
    }
    return 0;
}

/* Feature case i into *c: 1, or 0 past the last. */
static int feature_case(int i, case_params *c)
{
    for (size_t l = 0; l < sizeof feature_lists / sizeof *feature_lists; ++l) {
        if (i < feature_lists[l].n) {
            *c = feature_lists[l].cases[i];
            if (feature_lists[l].path) {
                c->path = feature_lists[l].path;
                c->mma_block_m = c->mma_block_n = c->mma_rows = c->mma_stages = 0;
                if (c->path == FLASHCL_PATH_WMMA)
                    c->wmma_gfx = feature_lists[l].variant;
                if (c->path == FLASHCL_PATH_DPAS && feature_lists[l].variant) {
                    c->dpas_sg = feature_lists[l].variant;
                    c->mma_block_m = 64;
                    c->mma_block_n = 32;
                }
            }
            return 1;
        }
        i -= feature_lists[l].n;
    }
    return 0;
}

START_TEST(test_features)
{
    case_params c;
    ck_assert(feature_case(_i, &c));
    run_case(&c);
}
END_TEST

/* Bug llvmpipe-loop-limit (tests/rusticl/README.md): on rusticl, loops stop after 65535 iterations
 * per work-item, so cases whose naive kernel loops longer are not registered there. */
static int loop_limited(const case_params *c)
{
    return strstr(tu_device_label, "rusticl") && 3L * c->seq_kv * c->head_dim + c->seq_kv > 65535;
}

/* $FLASHCL_TEST_SHARD=k/n: this process runs every n-th case from the k-th (0 <= k < n) of what it would
 * register, so that a configuration's cases run as n tests side by side (tests/meson.build: one
 * PoCL compile uses one core). */
static int shard_k, shard_n = 1, shard_seen;

static void add_case(TCase *tc, const TTest *test, int i)
{
    if (shard_seen++ % shard_n == shard_k)
        tcase_add_loop_test(tc, test, i, i + 1);
}

static Suite *make_suite(void)
{
    Suite *s = suite_create("flash");
    const char *shard = getenv("FLASHCL_TEST_SHARD");
    shard_seen = 0;
    if (shard && *shard && (sscanf(shard, "%d/%d", &shard_k, &shard_n) != 2 || shard_n < 1 || shard_k < 0 ||
                            shard_k >= shard_n)) {
        fprintf(stderr, "FLASHCL_TEST_SHARD=%s: k/n with 0 <= k < n\n", shard);
        exit(1);
    }
    TCase *tc = tcase_create("grid");
    tcase_set_timeout(tc, 600);
    const char *only = getenv("FLASHCL_TEST_CASE");
    /* FLASHCL_TEST_FEATURES=LISTS (say "quant" or "decode_mma,quant"): only those lists of feature cases, no grid;
     * "grid": the grid, the strided and the empty-row cases, no feature list */
    const char *features = getenv("FLASHCL_TEST_FEATURES");
    const int grid_only = features && !strcmp(features, "grid");
    if (grid_only)
        features = NULL;
    int first = 0, last = GRID_CASES, left_out = 0, skipped = 0;
    case_params c;
    if (only && *only) {
        first = atoi(only);
        last = first + 1;
    }
    if (features && *features) {
        int base = 0;
        for (size_t l = 0; l < sizeof feature_lists / sizeof *feature_lists; ++l) {
            if (name_listed(features, feature_lists[l].name))
                for (int i = base; i < base + feature_lists[l].n; ++i)
                    if (feature_case(i, &c) && !loop_limited(&c))
                        add_case(tc, test_features, i);
            base += feature_lists[l].n;
        }
        suite_add_tcase(s, tc);
        return s;
    }
    for (int i = first; i < last; ++i) {
        c = grid_case(i);
        if (loop_limited(&c))
            ++left_out;
        else
            add_case(tc, test_grid, i);
    }
    if (!(only && *only)) {
        for (int i = 0; i < 6; ++i) {
            if (i < 3 || !strstr(tu_device_label, "rusticl")) /* (i < 3: seq_kv 150, head_dim 64: within the limit) */
                add_case(tc, test_strided, i);
            else
                ++left_out;
        }
        for (int i = 0; i < 3; ++i)
            add_case(tc, test_empty_rows, i);
        for (int i = 0; !grid_only && feature_case(i, &c); ++i) {
            if (feature_skipped(i))
                ++skipped;
            else if (loop_limited(&c))
                ++left_out;
            else
                add_case(tc, test_features, i);
        }
    }
    if (left_out)
        printf("left out on this device: %d cases, driver bug llvmpipe-loop-limit (tests/rusticl/README.md)\n",
               left_out);
    if (skipped)
        printf("not run in this configuration: %d feature cases of the lists in FLASHCL_TEST_SKIP_FEATURES=%s "
               "(run by the other device configurations)\n",
               skipped, getenv("FLASHCL_TEST_SKIP_FEATURES"));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 1);
}
