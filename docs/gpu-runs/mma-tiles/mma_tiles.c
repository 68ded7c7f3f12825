/* flash_mma under tiles set by an override (flashcl_context_override_config with mma = 1): 4 or 8
 * warps of 16 rows or 4 warps of 32 (rows_per_item 4) x 32/64/128-key tiles, fp16, B*N = 16384 tokens, hidden 2048, N = 4096,
 * non-causal (MMA_DTYPE=bf16: bf16); each validated once against the naive kernel, then the median of 10 runs from
 * profiling events. One line per configuration. Usage: [MMA_TILES=RxK/I[/S],...] [MMA_N=n] mma_tiles [head_dim ...]
 * (S: K/V stages, 2 or 3 ask for v_chunk = S * block_n, 3 for flash_wgmma only; a 'p' after S: flash_wgmma with
 * its producer warpgroup, 'n': without, neither: the chooser's choice; MMA_N: the sequence length, default 4096) */
#include <flashcl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    flashcl_context *ctx = NULL;
    if (flashcl_context_create_default(getenv("MMA_DEVICE") ? getenv("MMA_DEVICE") : "NVIDIA", NULL, &ctx) != FLASHCL_SUCCESS) {
        fprintf(stderr, "no context: %s\n", flashcl_context_last_error(NULL));
        return 1;
    }
    cl_context clctx;
    cl_device_id dev;
    cl_command_queue q;
    flashcl_context_cl_objects(ctx, &clctx, &dev, &q);
    /* rows x keys x rows_per_item (2: one m16 tile a warp; 4: two, FlashAttention-2's 32 rows a warp) */
    int tiles[16][5] = {{0, 0, 0, 1},     {64, 64, 2, 1},  {64, 32, 2, 1},  {64, 128, 2, 1}, {128, 32, 2, 1},
                        {128, 64, 2, 1},  {128, 128, 2, 1}, {128, 64, 4, 1}, {128, 32, 4, 1}, {64, 64, 4, 1}};
    size_t n_tiles = 10;
    for (int i = 0; i < 16; ++i)
        tiles[i][4] = -1; /* (the producer warpgroup as the chooser would take it) */
    /* MMA_TILES="64x64/2,128x32/4": these instead (0x0/0: the chooser's) */
    const char *env = getenv("MMA_TILES");
    if (env && *env) {
        n_tiles = 0;
        for (const char *c = env; *c && n_tiles < 16;) {
            tiles[n_tiles][3] = 1;
            char pc = 0;
            if (sscanf(c, "%dx%d/%d/%d%c", &tiles[n_tiles][0], &tiles[n_tiles][1], &tiles[n_tiles][2], &tiles[n_tiles][3],
                       &pc) >= 3) {
                tiles[n_tiles][4] = pc == 'p' ? 1 : pc == 'n' ? 0 : -1;
                ++n_tiles;
            }
            c = strchr(c, ',');
            if (!c)
                break;
            ++c;
        }
    }
    for (int a = 1; a < (argc > 1 ? argc : 2); ++a) {
        const int d = argc > 1 ? atoi(argv[a]) : 128, n = getenv("MMA_N") ? atoi(getenv("MMA_N")) : 4096;
        flashcl_problem p;
        flashcl_problem_default(&p);
        p.batch = 16384 / n;
        p.heads_q = p.heads_kv = 2048 / d;
        p.seq_q = p.seq_kv = n;
        p.head_dim = d;
        const char *dt = getenv("MMA_DTYPE") ? getenv("MMA_DTYPE") : "f16";
        p.dtype = !strcmp(dt, "bf16") ? FLASHCL_DTYPE_BF16 : !strcmp(dt, "f32") ? FLASHCL_DTYPE_F32 : FLASHCL_DTYPE_F16;
        /* MMA_DTYPE=f32: the portable kernel, tiles "RxK/rows_per_item/threads_per_row" (Q resident, V in
         * one chunk), normal data */
        const int f32 = p.dtype == FLASHCL_DTYPE_F32;
        p.causal = getenv("MMA_CAUSAL") && atoi(getenv("MMA_CAUSAL"));
        const size_t bytes = (size_t)p.batch * p.heads_q * n * d * (f32 ? 4 : 2);
        /* MMA_DATA=normal: Q, K and V apart, standard normal values (as flashcl bench); otherwise one array
         * of values 0.5 to 1 either sign for all three */
        const int normal = f32 || (getenv("MMA_DATA") && !strcmp(getenv("MMA_DATA"), "normal"));
        unsigned short *h[3];
        for (int a = 0; a < 3; ++a) {
            h[a] = malloc(bytes);
            for (size_t i = 0; f32 && i < bytes / 4; ++i) {
                const double u1 = (rand() + 1.0) / (RAND_MAX + 2.0), u2 = rand() / (RAND_MAX + 1.0);
                ((float *)h[a])[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
            }
            for (size_t i = 0; !f32 && i < bytes / 2; ++i) {
                if (!normal) {
                    h[a][i] = a ? h[0][i]
                          : p.dtype == FLASHCL_DTYPE_F16 ? (unsigned short)(((rand() & 1) << 15) | (0x3800 + (rand() & 0x3ff)))
                                                         : (unsigned short)(((rand() & 1) << 15) | (0x3f00 + (rand() & 0x7f)));
                    continue;
                }
                const double u1 = (rand() + 1.0) / (RAND_MAX + 2.0), u2 = rand() / (RAND_MAX + 1.0);
                const float x = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
                unsigned int b;
                memcpy(&b, &x, 4);
                if (p.dtype == FLASHCL_DTYPE_BF16) {
                    h[a][i] = (unsigned short)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
                } else { /* normal values well inside fp16's range: exponent rebias, mantissa truncated */
                    const int e = (int)((b >> 23) & 0xff) - 127 + 15;
                    h[a][i] = (unsigned short)(((b >> 16) & 0x8000) | (e <= 0 ? 0 : (e << 10) | ((b >> 13) & 0x3ff)));
                }
            }
        }
        cl_int err;
        cl_mem bq = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h[0], &err);
        cl_mem bk = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h[1], &err);
        cl_mem bv = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h[2], &err);
        cl_mem bo = clCreateBuffer(clctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
        const double flops = 4.0 * p.batch * p.heads_q * (double)n * n * d / (p.causal ? 2 : 1);
        for (size_t t = 0; t < n_tiles; ++t) {
            flashcl_config o = {0};
            /* MMA_WGMMA=1: flash_wgmma's tiles (block_m 64 or 128, block_n 64 or 128, S stages) */
            o.mma = f32 ? 0 : getenv("MMA_WGMMA") && atoi(getenv("MMA_WGMMA")) ? 3 : 1;
            o.block_m = tiles[t][0];
            o.block_n = tiles[t][1];
            o.rows_per_item = tiles[t][2];
            o.v_chunk = tiles[t][3] >= 2 ? tiles[t][3] * tiles[t][1] : 0; /* (3: flash_wgmma's only) */
            if (o.mma == 3 && tiles[t][4] >= 0) /* (flash_wgmma's producer warpgroup: 128 more work-items) */
                o.work_group_size = 2 * o.block_m + 128 * tiles[t][4];
            if (f32 && tiles[t][0]) {
                o.threads_per_row = tiles[t][3];
                o.d_chunk = d;
                o.v_chunk = tiles[t][1];
                o.work_group_size = o.block_m / o.rows_per_item * o.threads_per_row;
                o.local_mem_bytes = flashcl_flash_local_mem_bytes(d, &o);
            }
            flashcl_context_override_config(ctx, tiles[t][0] ? &o : NULL);
            flashcl_plan *plan = NULL;
            if (flashcl_plan_create(ctx, &p, &plan) != FLASHCL_SUCCESS) {
                printf("d=%d %dx%d/%d: %s\n", d, tiles[t][0], tiles[t][1], tiles[t][2], flashcl_context_last_error(ctx));
                continue;
            }
            flashcl_config c;
            flashcl_plan_config(plan, &c);
            flashcl_kernel_info ki;
            flashcl_plan_kernel_info(plan, &ki);
            flashcl_context_set_validation(ctx, 1);
            const flashcl_status vs = flashcl_plan_enqueue(plan, bq, bk, bv, bo, NULL, 0, NULL, NULL);
            flashcl_validation rep;
            flashcl_plan_last_validation(plan, &rep);
            flashcl_context_set_validation(ctx, 0);
            double ms[10];
            for (int i = -2; i < 10; ++i) {
                cl_event ev;
                flashcl_plan_enqueue(plan, bq, bk, bv, bo, NULL, 0, NULL, &ev);
                clWaitForEvents(1, &ev);
                cl_ulong t0, t1;
                clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
                clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
                clReleaseEvent(ev);
                if (i >= 0)
                    ms[i] = (t1 - t0) * 1e-6;
            }
            qsort(ms, 10, sizeof ms[0], cmp);
            const double med = (ms[4] + ms[5]) / 2;
            printf("%s d=%d N=%d %s %dx%d rows/item %d tpr %d stages %d wg %d (%s, %llu B local, private %llu B): median %.3f ms (%.3f-%.3f), %.1f TFLOP/s, "
                   "validation %s (%.2e)\n",
                   dt, d, n, c.kernel, c.block_m, c.block_n, c.rows_per_item, c.threads_per_row,
                   c.v_chunk == 3 * c.block_n ? 3 : c.v_chunk == 2 * c.block_n ? 2 : 1, c.work_group_size, c.source, (unsigned long long)c.local_mem_bytes,
                   (unsigned long long)ki.private_mem_bytes, med, ms[0], ms[9], flops / med * 1e-9,
                   vs == FLASHCL_SUCCESS && rep.passed ? "pass" : "FAIL", rep.max_rel_error);
            fflush(stdout);
            flashcl_plan_destroy(&plan);
        }
        clReleaseMemObject(bq);
        clReleaseMemObject(bk);
        clReleaseMemObject(bv);
        clReleaseMemObject(bo);
        for (int a = 0; a < 3; ++a)
            free(h[a]);
    }
    flashcl_context_destroy(&ctx);
    return 0;
}
