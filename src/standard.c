/* SPDX-License-Identifier: MIT */
/*
 * standard.c: standard attention, the baseline flash attention exists to beat: S = scale*Q*K^T as a
 * batched CLBlast SGEMM into an n x n buffer in device memory, a row softmax kernel, then O = P*V as a
 * second batched SGEMM. fp16 and bf16 tensors are converted to fp32 first (CLBlast's half GEMM needs
 * cl_khr_fp16, which NVIDIA's OpenCL lacks). Everything is allocated at plan time and counted.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FLASHCL_HAVE_CLBLAST
#include <clblast_c.h>
#include <pthread.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

/* CLBlast is loaded when a standard plan is first asked for, not linked: an engine that never runs the
 * baseline loads neither CLBlast nor the C++ runtime it brings (tests/check_symbols.py checks the
 * library's needed list). Its one entry point, typed from its own header. */
typedef __typeof__(CLBlastSgemmBatched) sgemm_batched_fn;
static sgemm_batched_fn *sgemm_batched;
static pthread_once_t clblast_once = PTHREAD_ONCE_INIT;
static char clblast_why[200];

static void load_clblast(void)
{
#ifdef _WIN32
    static const char *const names[] = {"clblast.dll", "libclblast.dll"};
#else
    static const char *const names[] = {"libclblast.so.1", "libclblast.so"};
#endif
    for (size_t i = 0; i < sizeof names / sizeof *names && !sgemm_batched; ++i) {
#ifdef _WIN32
        HMODULE lib = LoadLibraryA(names[i]);
        if (lib)
            sgemm_batched = (sgemm_batched_fn *)(void (*)(void))GetProcAddress(lib, "CLBlastSgemmBatched");
#else
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *(void **)&sgemm_batched = dlsym(lib, "CLBlastSgemmBatched"); /* (POSIX's cast of a symbol) */
            if (!sgemm_batched)
                dlclose(lib);
        }
#endif
    }
#ifdef _WIN32
    const char *detail = "not found";
#else
    const char *detail = dlerror();
#endif
    if (!sgemm_batched)
        snprintf(clblast_why, sizeof clblast_why, "standard attention needs CLBlast (%s), which could not be loaded: %s",
                 names[0], detail ? detail : "not found");
}

static int clblast_loaded(void)
{
    pthread_once(&clblast_once, load_clblast);
    return sgemm_batched != NULL;
}

/*
 * CLBlast's kernels take int offsets and index in int, so no GEMM may address more than 2^31 elements
 * of a buffer. The score matrices are therefore cut into chunks of at most 2^28 floats (1 GiB), each
 * its own buffer (sub-buffers at origins past 2 GiB crashed NVIDIA's driver): whole heads when a head's
 * seq_q x seq_kv fits, else blocks of rows.
 */
#define CHUNK_MAX_FLOATS ((size_t)1 << 28)

typedef struct score_chunk {
    cl_mem sub;            /* this chunk's scores */
    int32_t head0, nheads; /* flat (batch * heads_q + head) range */
    int32_t row0, nrows;   /* query rows of each head */
    size_t *off;           /* 6 arrays of nheads offsets: a1 b1 c1 a2 b2 c2 */
} score_chunk;

struct standard_state {
    score_chunk *chunks;
    size_t n_chunks;
    cl_mem q32, k32, v32, o32;      /* fp32 copies for fp16/bf16 storage, else NULL */
    float *alphas, *betas, *ones;
    size_t *shifted; /* one chunk's offset arrays moved by the caller's offsets (fp32: the caller's buffers) */
    cl_kernel softmax, to32, from32;
    size_t softmax_wg;
    uint64_t extra_bytes;
};

int flashcl_algorithm_available(flashcl_algorithm algorithm)
{
    return algorithm == FLASHCL_ALGO_FLASH || algorithm == FLASHCL_ALGO_NAIVE ||
           (algorithm == FLASHCL_ALGO_STANDARD && clblast_loaded());
}

void fcl_standard_free(standard_state *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->n_chunks; ++i) {
        if (st->chunks[i].sub)
            clReleaseMemObject(st->chunks[i].sub);
        free(st->chunks[i].off);
    }
    free(st->chunks);
    free(st->shifted);
    cl_mem mems[4] = {st->q32, st->k32, st->v32, st->o32};
    for (int i = 0; i < 4; ++i)
        if (mems[i])
            clReleaseMemObject(mems[i]);
    cl_kernel ks[3] = {st->softmax, st->to32, st->from32};
    for (int i = 0; i < 3; ++i)
        if (ks[i])
            clReleaseKernel(ks[i]);
    free(st->alphas);
    free(st->betas);
    free(st->ones);
    free(st);
}

/* Allocates a buffer and touches its last byte, so that a driver that allocates lazily fails here,
 * at plan time, rather than in the middle of an enqueue. */
static cl_mem alloc_touched(flashcl_context *ctx, uint64_t bytes, const char *what, flashcl_status *status)
{
    *status = FLASHCL_SUCCESS;
    if (bytes > ctx->profile.max_alloc_size || bytes > ctx->profile.global_mem_size) {
        *status = fcl_fail(ctx, FLASHCL_OUT_OF_DEVICE_MEMORY,
                           "standard attention needs %llu bytes for %s; %s allows %llu per buffer and has %llu",
                           (unsigned long long)bytes, what, ctx->profile.name,
                           (unsigned long long)ctx->profile.max_alloc_size,
                           (unsigned long long)ctx->profile.global_mem_size);
        return NULL;
    }
    cl_int err;
    cl_mem m = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &err);
    if (m) {
        const unsigned char zero = 0;
        err = clEnqueueFillBuffer(ctx->queue, m, &zero, 1, (size_t)bytes - 1, 1, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clFinish(ctx->queue);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(m);
            m = NULL;
        }
    }
    if (!m)
        *status = fcl_fail(ctx, FLASHCL_OUT_OF_DEVICE_MEMORY, "standard attention: allocating %llu bytes for %s failed: %s",
                           (unsigned long long)bytes, what, fcl_cl_error_name(err));
    return m;
}

/* The score matrices' chunks: whole heads (*heads_per_chunk_out of them) when a head's seq_q x seq_kv fits
 * in one, else blocks of rows (FLASHCL_STANDARD_CHUNK_FLOATS: smaller ones, for tests); each chunk's
 * buffer allocated and touched. */
static flashcl_status alloc_score_chunks(flashcl_context *ctx, const flashcl_problem *p, standard_state *st,
                                         size_t *heads_per_chunk_out)
{
    const size_t heads = (size_t)p->batch * p->heads_q;
    const size_t slice = (size_t)p->seq_q * (size_t)p->seq_kv; /* floats per head */
    size_t chunk_max = CHUNK_MAX_FLOATS;
    uint64_t env_chunk; /* smaller chunks, for tests */
    flashcl_status env_st = fcl_env_bytes(ctx, "standard attention", "FLASHCL_STANDARD_CHUNK_FLOATS", &env_chunk);
    if (env_st != FLASHCL_SUCCESS)
        return env_st;
    if (env_chunk > 0 && env_chunk < chunk_max)
        chunk_max = (size_t)env_chunk;
    size_t heads_per_chunk = 1, rows_per_chunk = (size_t)p->seq_q;
    if (slice <= chunk_max)
        heads_per_chunk = chunk_max / slice < heads ? chunk_max / slice : heads;
    else
        rows_per_chunk = chunk_max / (size_t)p->seq_kv;
    *heads_per_chunk_out = heads_per_chunk;
    flashcl_status status;
    const uint64_t need = (uint64_t)heads * slice * sizeof(float);
    validate_or_return(ctx, need <= ctx->profile.max_alloc_size && need <= ctx->profile.global_mem_size,
                       FLASHCL_OUT_OF_DEVICE_MEMORY,
                       "standard attention needs %llu bytes for the seq_q x seq_kv score matrices; %s allows %llu per "
                       "buffer and has %llu",
                       (unsigned long long)need, ctx->profile.name, (unsigned long long)ctx->profile.max_alloc_size,
                       (unsigned long long)ctx->profile.global_mem_size);
    validate_or_return(ctx, rows_per_chunk >= 1, FLASHCL_UNSUPPORTED,
                       "standard attention: seq_kv = %d is too long for one GEMM row through CLBlast", (int)p->seq_kv);
    const size_t head_groups = (heads + heads_per_chunk - 1) / heads_per_chunk;
    const size_t row_blocks = ((size_t)p->seq_q + rows_per_chunk - 1) / rows_per_chunk;
    st->n_chunks = head_groups * row_blocks;
    st->chunks = calloc(st->n_chunks, sizeof *st->chunks);
    if (!st->chunks)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "standard attention: out of host memory");
    for (size_t g = 0, c = 0; g < head_groups; ++g)
        for (size_t r = 0; r < row_blocks; ++r, ++c) {
            score_chunk *ch = &st->chunks[c];
            ch->head0 = (int32_t)(g * heads_per_chunk);
            ch->nheads = (int32_t)(heads - g * heads_per_chunk < heads_per_chunk ? heads - g * heads_per_chunk
                                                                                 : heads_per_chunk);
            ch->row0 = (int32_t)(r * rows_per_chunk);
            ch->nrows = (int32_t)((size_t)p->seq_q - r * rows_per_chunk < rows_per_chunk ? (size_t)p->seq_q - r * rows_per_chunk
                                                                                         : rows_per_chunk);
            const uint64_t bytes = (uint64_t)ch->nheads * ch->nrows * (uint64_t)p->seq_kv * sizeof(float);
            if (!(ch->sub = alloc_touched(ctx, bytes, "the seq_q x seq_kv score matrices", &status)))
                return status;
            st->extra_bytes += bytes;
        }
    return FLASHCL_SUCCESS;
}

/* fp16 and bf16 storage: the contiguous fp32 copies of Q, K, V and O the GEMMs work on. */
static flashcl_status alloc_fp32_copies(flashcl_context *ctx, const flashcl_problem *p, standard_state *st)
{
    flashcl_status status;
    const uint64_t rq = (uint64_t)p->batch * p->seq_q * p->heads_q, rk = (uint64_t)p->batch * p->seq_kv * p->heads_kv;
    const uint64_t qn = rq * p->head_dim * sizeof(float), kn = rk * p->head_dim * sizeof(float);
    const uint64_t vn = rk * fcl_head_dim_v(p) * sizeof(float), on = rq * fcl_head_dim_v(p) * sizeof(float);
    if (!(st->q32 = alloc_touched(ctx, qn, "fp32 Q", &status)) || !(st->k32 = alloc_touched(ctx, kn, "fp32 K", &status)) ||
        !(st->v32 = alloc_touched(ctx, vn, "fp32 V", &status)) || !(st->o32 = alloc_touched(ctx, on, "fp32 O", &status)))
        return status;
    st->extra_bytes += qn + kn + vn + on;
    return FLASHCL_SUCCESS;
}

/* The softmax kernel, compiled for exactly WG work-items (a power of two): the device's limit, then
 * what the compiled kernel allows; with convert, the conversion kernels at the same size. The plan's
 * work_group_size becomes WG. */
static flashcl_status create_kernels(flashcl_plan *pl, standard_state *st, int convert)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    flashcl_status status;
    flashcl_config kc = pl->config;
    kc.work_group_size = 256;
    while ((size_t)kc.work_group_size > ctx->profile.max_work_group_size)
        kc.work_group_size /= 2;
    for (;;) {
        if ((status = fcl_kernel_create(ctx, FCL_K_SOFTMAX_ROWS, p, &kc, &st->softmax, pl->options,
                                        sizeof pl->options)) != FLASHCL_SUCCESS)
            return status;
        size_t kwg = 0;
        cl_int err = clGetKernelWorkGroupInfo(st->softmax, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL);
        if (err != CL_SUCCESS)
            return fcl_fail_cl(ctx, err, "standard attention: clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
        if (kwg >= (size_t)kc.work_group_size || kc.work_group_size == 1)
            break;
        clReleaseKernel(st->softmax);
        st->softmax = NULL;
        while ((size_t)kc.work_group_size > kwg && kc.work_group_size > 1)
            kc.work_group_size /= 2;
    }
    if (convert && ((status = fcl_kernel_create(ctx, FCL_K_TO_F32, p, &kc, &st->to32, NULL, 0)) != FLASHCL_SUCCESS ||
                    (status = fcl_kernel_create(ctx, FCL_K_FROM_F32, p, &kc, &st->from32, NULL, 0)) != FLASHCL_SUCCESS))
        return status;
    const size_t wg = (size_t)kc.work_group_size;
    st->softmax_wg = wg;
    pl->config.work_group_size = (int32_t)wg;
    return FLASHCL_SUCCESS;
}

/* The GEMMs' per-head scalars: alpha = scale and beta = 0 for S = Q K^T, one for O = P V, and room
 * for one chunk's shifted offsets. */
static flashcl_status alloc_gemm_scalars(flashcl_context *ctx, const flashcl_problem *p, standard_state *st,
                                         size_t heads_per_chunk)
{
    st->alphas = malloc(heads_per_chunk * sizeof(float));
    st->betas = calloc(heads_per_chunk, sizeof(float));
    st->ones = malloc(heads_per_chunk * sizeof(float));
    st->shifted = malloc(6 * heads_per_chunk * sizeof(size_t));
    if (!st->alphas || !st->betas || !st->ones || !st->shifted)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "standard attention: out of host memory");
    for (size_t i = 0; i < heads_per_chunk; ++i) {
        st->alphas[i] = p->scale;
        st->ones[i] = 1.0f;
    }
    return FLASHCL_SUCCESS;
}

/* Each chunk's GEMM offsets (elements) and the leading dimensions, at the caller's strides or, with
 * convert, the fp32 copies'; the caller's tensors within CLBlast's int offsets. */
static flashcl_status gemm_offsets(flashcl_plan *pl, standard_state *st, int convert)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    const resolved_layout *L = &pl->layout;
    flashcl_strides q = L->q, k = L->k, v = L->v, o = L->o;
    if (convert) { /* the GEMMs read and write the contiguous fp32 copies */
        const int64_t dv = fcl_head_dim_v(p);
        q.head = k.head = p->head_dim;
        o.head = v.head = dv;
        q.seq = (int64_t)p->heads_q * p->head_dim;
        o.seq = (int64_t)p->heads_q * dv;
        k.seq = (int64_t)p->heads_kv * p->head_dim;
        v.seq = (int64_t)p->heads_kv * dv;
        q.batch = q.seq * p->seq_q;
        o.batch = o.seq * p->seq_q;
        k.batch = k.seq * p->seq_kv;
        v.batch = v.seq * p->seq_kv;
    }
    /* CLBlast's int offsets: the caller's tensors must stay within 2^31 elements too. */
    validate_or_return(ctx,
                       L->q_bytes / flashcl_dtype_size(p->dtype) < ((uint64_t)1 << 31) &&
                           L->k_bytes / flashcl_dtype_size(p->dtype) < ((uint64_t)1 << 31) &&
                           L->v_bytes / flashcl_dtype_size(p->dtype) < ((uint64_t)1 << 31) &&
                           L->o_bytes / flashcl_dtype_size(p->dtype) < ((uint64_t)1 << 31),
                       FLASHCL_UNSUPPORTED,
                       "standard attention: a tensor of more than 2^31 elements is beyond CLBlast's int offsets");
    const int group = p->heads_q / p->heads_kv;
    for (size_t c = 0; c < st->n_chunks; ++c) {
        score_chunk *ch = &st->chunks[c];
        const size_t n = (size_t)ch->nheads;
        ch->off = malloc(6 * n * sizeof *ch->off);
        if (!ch->off)
            return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "standard attention: out of host memory");
        size_t *a1 = ch->off, *b1 = a1 + n, *c1 = b1 + n, *a2 = c1 + n, *b2 = a2 + n, *c2 = b2 + n;
        for (size_t i = 0; i < n; ++i) {
            const int64_t flat = ch->head0 + (int64_t)i;
            const int64_t b = flat / p->heads_q, h = flat % p->heads_q, hk = h / group;
            a1[i] = (size_t)(b * q.batch + ch->row0 * q.seq + h * q.head);
            b1[i] = (size_t)(b * k.batch + hk * k.head);
            c1[i] = i * (size_t)ch->nrows * (size_t)p->seq_kv;
            a2[i] = c1[i];
            b2[i] = (size_t)(b * v.batch + hk * v.head);
            c2[i] = (size_t)(b * o.batch + ch->row0 * o.seq + h * o.head);
        }
    }
    pl->gemm_ld[0] = (size_t)q.seq;
    pl->gemm_ld[1] = (size_t)k.seq;
    pl->gemm_ld[2] = (size_t)v.seq;
    pl->gemm_ld[3] = (size_t)o.seq;
    return FLASHCL_SUCCESS;
}

flashcl_status fcl_standard_setup(flashcl_plan *pl)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    if (!clblast_loaded())
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED, "%s", clblast_why);
    if (p->alibi || p->attn_mask || p->key_padding || p->varlen || p->kv_cache || p->sinks || fcl_kv_mixed(p) ||
        p->qkv_format)
        return fcl_fail(ctx, FLASHCL_UNSUPPORTED, "standard attention has no %s: use flash or naive",
                        p->qkv_format  ? "fp8 Q, K and V (problem.qkv_format)"
                        : p->alibi     ? "ALiBi (problem.alibi)"
                        : fcl_kv_mixed(p) ? "K and V in another dtype than Q (problem.kv_dtype)"
                        : p->sinks     ? "attention sinks (problem.sinks)"
                        : p->attn_mask ? "additive mask (problem.attn_mask)"
                        : p->varlen    ? "packed sequences (problem.varlen)"
                        : p->kv_cache  ? "KV cache (problem.kv_cache)"
                                       : "key-padding mask (problem.key_padding)");
    standard_state *st = calloc(1, sizeof *st);
    if (!st)
        return fcl_fail(ctx, FLASHCL_OUT_OF_HOST_MEMORY, "standard attention: out of host memory");
    pl->standard = st;
    const int convert = p->dtype != FLASHCL_DTYPE_F32;
    size_t heads_per_chunk = 1;
    flashcl_status status;
    if ((status = alloc_score_chunks(ctx, p, st, &heads_per_chunk)) != FLASHCL_SUCCESS ||
        (convert && (status = alloc_fp32_copies(ctx, p, st)) != FLASHCL_SUCCESS) ||
        (status = create_kernels(pl, st, convert)) != FLASHCL_SUCCESS ||
        (status = alloc_gemm_scalars(ctx, p, st, heads_per_chunk)) != FLASHCL_SUCCESS)
        return status;
    return gemm_offsets(pl, st, convert);
}

/* One conversion kernel (to_f32 or from_f32) over a whole tensor: (batch, seq, heads, head_dim) at the
 * given strides. */
static flashcl_status convert(const flashcl_plan *pl, cl_kernel kern, fcl_kernel_id id, cl_mem src, cl_mem dst,
                              int32_t batch, int32_t seq, int32_t heads, int32_t d, const flashcl_strides *s,
                              cl_long caller_off, cl_event *ev)
{
    flashcl_context *ctx = pl->ctx;
    const cl_long total = (cl_long)batch * seq * heads * d;
    fcl_args a = fcl_args_of(kern, id);
    fcl_arg_mem(&a, CV_src, src);
    fcl_arg_mem(&a, CV_dst, dst);
    fcl_arg_int(&a, CV_seq, seq);
    fcl_arg_int(&a, CV_heads, heads);
    fcl_arg_int(&a, CV_head_dim, d);
    fcl_arg_long(&a, CV_sb, s->batch);
    fcl_arg_long(&a, CV_ss, s->seq);
    fcl_arg_long(&a, CV_sh, s->head);
    fcl_arg_long(&a, CV_total, total);
    fcl_arg_long(&a, CV_off, caller_off); /* the caller's tensor: src of to_f32, dst of from_f32 */
    flashcl_status st = fcl_args_check(ctx, &a, "standard attention");
    if (st != FLASHCL_SUCCESS)
        return st;
    const size_t local = 256 <= ctx->profile.max_work_group_size ? 256 : ctx->profile.max_work_group_size;
    const size_t global = ((size_t)total + local - 1) / local * local;
    const cl_int err = clEnqueueNDRangeKernel(pl->queue, kern, 1, NULL, &global, &local, 0, NULL, ev);
    return err == CL_SUCCESS ? FLASHCL_SUCCESS
                             : fcl_fail_cl(ctx, err, "standard attention: clEnqueueNDRangeKernel(to_f32/from_f32)");
}

static flashcl_status clblast_fail(flashcl_context *ctx, CLBlastStatusCode code, const char *what)
{
    if (code > -1024) /* an OpenCL error code passed through */
        return fcl_fail_cl(ctx, (cl_int)code, what);
    return fcl_fail(ctx, FLASHCL_OPENCL_ERROR, "%s failed: CLBlast status %d", what, (int)code);
}

/* Enqueues the whole computation on the enqueue's queue (pl->queue; in order, or the commands are
 * ordered by CLBlast's and our events); *event is the last command's. */
flashcl_status fcl_standard_enqueue(flashcl_plan *pl, cl_mem q, cl_mem k, cl_mem v, cl_mem o, cl_mem lse,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    flashcl_context *ctx = pl->ctx;
    const flashcl_problem *p = &pl->problem;
    standard_state *st = pl->standard;
    cl_int err = CL_SUCCESS;
    if (num_events && (err = clEnqueueMarkerWithWaitList(pl->queue, num_events, wait_list, NULL)) != CL_SUCCESS)
        return fcl_fail_cl(ctx, err, "standard attention: clEnqueueMarkerWithWaitList");
    cl_mem qa = q, ka = k, va = v, oa = o;
    if (st->q32) {
        const resolved_layout *L = &pl->layout;
        flashcl_status cs = convert(pl, st->to32, FCL_K_TO_F32, q, st->q32, p->batch, p->seq_q, p->heads_q,
                                    p->head_dim, &L->q, pl->off.q, NULL);
        if (cs == FLASHCL_SUCCESS)
            cs = convert(pl, st->to32, FCL_K_TO_F32, k, st->k32, p->batch, p->seq_kv, p->heads_kv, p->head_dim,
                         &L->k, pl->off.k, NULL);
        if (cs == FLASHCL_SUCCESS)
            cs = convert(pl, st->to32, FCL_K_TO_F32, v, st->v32, p->batch, p->seq_kv, p->heads_kv, fcl_head_dim_v(p),
                         &L->v, pl->off.v, NULL);
        if (cs != FLASHCL_SUCCESS)
            return cs;
        qa = st->q32;
        ka = st->k32;
        va = st->v32;
        oa = st->o32;
    }
    cl_command_queue queue = pl->queue;
    /* fp32: the GEMMs read and write the caller's buffers, at its offsets (elements) */
    const int direct = !st->q32 && (pl->off.q || pl->off.k || pl->off.v || pl->off.o);
    cl_event done = NULL;
    const cl_int sq = p->seq_q, sk = p->seq_kv, write_lse = lse != NULL;
    cl_int win_left, win_right;
    fcl_visible_window(p, &win_left, &win_right);
    const cl_float softcap = p->softcap;
    cl_mem lse_arg = lse ? lse : st->chunks[0].sub;
    for (size_t c = 0; c < st->n_chunks; ++c) {
        const score_chunk *ch = &st->chunks[c];
        const size_t n = (size_t)ch->nheads;
        const size_t *a1 = ch->off, *b1 = a1 + n, *c1 = b1 + n, *a2 = c1 + n, *b2 = a2 + n, *c2 = b2 + n;
        if (direct) {
            size_t *m = st->shifted;
            for (size_t i = 0; i < n; ++i) {
                m[i] = a1[i] + (size_t)pl->off.q;
                m[n + i] = b1[i] + (size_t)pl->off.k;
                m[2 * n + i] = c1[i];
                m[3 * n + i] = a2[i];
                m[4 * n + i] = b2[i] + (size_t)pl->off.v;
                m[5 * n + i] = c2[i] + (size_t)pl->off.o;
            }
            a1 = m, b1 = m + n, c1 = m + 2 * n, a2 = m + 3 * n, b2 = m + 4 * n, c2 = m + 5 * n;
        }
        CLBlastStatusCode code = sgemm_batched(
            CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeYes, (size_t)ch->nrows, (size_t)p->seq_kv,
            (size_t)p->head_dim, st->alphas, qa, a1, pl->gemm_ld[0], ka, b1, pl->gemm_ld[1], st->betas, ch->sub, c1,
            (size_t)p->seq_kv, n, &queue, NULL);
        if (code != CLBlastSuccess)
            return clblast_fail(ctx, code, "standard attention: S = Q K^T (CLBlastSgemmBatched)");
        const cl_int rows = ch->nrows, row0 = ch->row0, head0 = ch->head0;
        fcl_args a = fcl_args_of(st->softmax, FCL_K_SOFTMAX_ROWS);
        fcl_arg_mem(&a, SR_S, ch->sub);
        fcl_arg_int(&a, SR_rows, rows);
        fcl_arg_int(&a, SR_row0, row0);
        fcl_arg_int(&a, SR_head0, head0);
        fcl_arg_int(&a, SR_seq_q, sq);
        fcl_arg_int(&a, SR_seq_kv, sk);
        fcl_arg_int(&a, SR_win_left, win_left);
        fcl_arg_int(&a, SR_win_right, win_right);
        fcl_arg_float(&a, SR_softcap, softcap);
        fcl_arg_mem(&a, SR_LSE, lse_arg);
        fcl_arg_int(&a, SR_write_lse, write_lse);
        fcl_arg_long(&a, SR_lse_off, lse ? pl->off.lse : 0);
        flashcl_status as = fcl_args_check(ctx, &a, "standard attention");
        if (as != FLASHCL_SUCCESS)
            return as;
        const size_t local = st->softmax_wg, global = n * (size_t)ch->nrows * local;
        err = clEnqueueNDRangeKernel(queue, st->softmax, 1, NULL, &global, &local, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            return fcl_fail_cl(ctx, err, "standard attention: softmax");
        const int last = c + 1 == st->n_chunks && !st->q32;
        code = sgemm_batched(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, (size_t)ch->nrows,
                             (size_t)fcl_head_dim_v(p), (size_t)p->seq_kv, st->ones, ch->sub, a2, (size_t)p->seq_kv, va,
                             b2, pl->gemm_ld[2], st->betas, oa, c2, pl->gemm_ld[3], n, &queue, last ? &done : NULL);
        if (code != CLBlastSuccess)
            return clblast_fail(ctx, code, "standard attention: O = P V (CLBlastSgemmBatched)");
    }
    if (st->q32) {
        flashcl_status cs = convert(pl, st->from32, FCL_K_FROM_F32, st->o32, o, p->batch, p->seq_q, p->heads_q,
                                    fcl_head_dim_v(p), &pl->layout.o, pl->off.o, &done);
        if (cs != FLASHCL_SUCCESS)
            return cs;
    }
    if (event)
        *event = done;
    else if (done)
        clReleaseEvent(done);
    return FLASHCL_SUCCESS;
}

uint64_t fcl_standard_extra_bytes(const standard_state *st)
{
    return st ? st->extra_bytes : 0;
}

#else /* built without CLBlast */

int flashcl_algorithm_available(flashcl_algorithm algorithm)
{
    return algorithm == FLASHCL_ALGO_FLASH || algorithm == FLASHCL_ALGO_NAIVE;
}

void fcl_standard_free(standard_state *st)
{
    (void)st;
}

flashcl_status fcl_standard_setup(flashcl_plan *pl)
{
    return fcl_fail(pl->ctx, FLASHCL_UNSUPPORTED, "standard attention needs CLBlast, and this flashcl was built without it");
}

flashcl_status fcl_standard_enqueue(flashcl_plan *pl, cl_mem q, cl_mem k, cl_mem v, cl_mem o, cl_mem lse,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    (void)q, (void)k, (void)v, (void)o, (void)lse, (void)num_events, (void)wait_list, (void)event;
    return fcl_fail(pl->ctx, FLASHCL_UNSUPPORTED, "standard attention needs CLBlast");
}

uint64_t fcl_standard_extra_bytes(const standard_state *st)
{
    (void)st;
    return 0;
}
#endif
