/* Probe of NVIDIA's OpenCL compiler: inline PTX mma.sync m16n8k16, ldmatrix from local memory and the
 * f32 -> f16x2 / bf16x2 conversions, checked against the host. One warp. */
#define MMA_F16(c, a, b0, b1) \
    __asm__ volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
#define MMA_BF16(c, a, b0, b1) \
    __asm__ volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

#ifdef ADDR64
#define SH(p) ((ulong)(p))
#define ACON "l"
#else
#define SH(p) ((uint)(size_t)(p))
#define ACON "r"
#endif

static inline uint pk(__global const ushort *p, int i) { return (uint)p[i] | ((uint)p[i + 1] << 16); }

static inline void store_c(__global float *C, float *c, int g, int t)
{
    C[g * 8 + t * 2] = c[0];
    C[g * 8 + t * 2 + 1] = c[1];
    C[(g + 8) * 8 + t * 2] = c[2];
    C[(g + 8) * 8 + t * 2 + 1] = c[3];
}

__kernel void probe(__global const ushort *A, __global const ushort *Bt, __global const ushort *Br,
                    __global float *C1, __global float *C2, __global float *C3, __global uint *misc, int bf)
{
    __local ushort lA[256], lBt[128], lBr[128];
    const int lane = get_local_id(0), g = lane >> 2, t = lane & 3;
    for (int i = lane; i < 256; i += 32) lA[i] = A[i];
    for (int i = lane; i < 128; i += 32) { lBt[i] = Bt[i]; lBr[i] = Br[i]; }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint a[4] = {pk(A, g * 16 + t * 2), pk(A, (g + 8) * 16 + t * 2), pk(A, g * 16 + 8 + t * 2),
                 pk(A, (g + 8) * 16 + 8 + t * 2)};
    uint b0 = pk(Bt, g * 16 + t * 2), b1 = pk(Bt, g * 16 + 8 + t * 2);
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    if (bf) MMA_BF16(c, a, b0, b1); else MMA_F16(c, a, b0, b1);
    store_c(C1, c, g, t);

    const int m = lane >> 3, r = lane & 7;
    uint la[4], lb[2], lv[2];
    __asm__ volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(la[0]), "=r"(la[1]), "=r"(la[2]), "=r"(la[3])
                     : ACON(SH(&lA[(r + (m & 1) * 8) * 16 + (m >> 1) * 8])));
    __asm__ volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                     : "=r"(lb[0]), "=r"(lb[1]) : ACON(SH(&lBt[r * 16 + (m & 1) * 8])));
    __asm__ volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                     : "=r"(lv[0]), "=r"(lv[1]) : ACON(SH(&lBr[(r + (m & 1) * 8) * 8])));
    float c2[4] = {0.f, 0.f, 0.f, 0.f}, c3[4] = {0.f, 0.f, 0.f, 0.f};
    if (bf) { MMA_BF16(c2, la, lb[0], lb[1]); MMA_BF16(c3, la, lv[0], lv[1]); }
    else { MMA_F16(c2, la, lb[0], lb[1]); MMA_F16(c3, la, lv[0], lv[1]); }
    store_c(C2, c2, g, t);
    store_c(C3, c3, g, t);

    uint h, bh;
    const float x0 = (float)lane + 0.5f, x1 = -(float)lane * 0.25f;
    __asm__("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(x1), "f"(x0));
    __asm__("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(bh) : "f"(x1), "f"(x0));
    misc[lane] = h;
    misc[32 + lane] = bh;
    misc[64 + lane] = (uint)(size_t)&lA[lane];
}
