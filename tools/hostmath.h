/* SPDX-License-Identifier: MIT */
/*
 * hostmath.h: host-side helpers shared by the command, the tests and the example: storage-type
 * conversions (fp16, bf16), a seeded normal random generator, and the float64 reference attention.
 */
#ifndef FLASHCL_HOSTMATH_H
#define FLASHCL_HOSTMATH_H

#include "flashcl.h"

#include <stddef.h>
#include <stdint.h>

uint16_t hm_float_to_half(float f);
float hm_half_to_float(uint16_t h);
uint16_t hm_float_to_bf16(float f);
float hm_bf16_to_float(uint16_t h);

/* Stores x as element i of a buffer of the given dtype; reads it back as float. */
void hm_store(void *buf, flashcl_dtype t, size_t i, float x);
float hm_load(const void *buf, flashcl_dtype t, size_t i);

/* xorshift-based generator: deterministic for a seed on every platform. */
typedef struct hm_rng {
    uint64_t s;
} hm_rng;
void hm_rng_seed(hm_rng *r, uint64_t seed);
double hm_rng_uniform(hm_rng *r); /* (0, 1) */
double hm_rng_normal(hm_rng *r);

/* Fills `count` elements of a dtype buffer with N(0, sigma) values (rounded to the dtype). */
/* Uniform on [-sqrt(3), sqrt(3)] (mean 0, variance 1): no log or cos, for tensors of billions. */
void hm_fill_unit_uniform(void *buf, flashcl_dtype t, size_t count, hm_rng *r);
void hm_fill_normal(void *buf, flashcl_dtype t, size_t count, hm_rng *r, double sigma);

/* Decodes `count` dtype elements to floats (exactly: every fp16 and bf16 value is a float). */
void hm_decode(const void *buf, flashcl_dtype t, size_t count, float *out);

/* A quantized KV cache's byte (flashcl_kv_format INT8, FP8_E4M3, FP8_E5M2) as its value before the int8
 * scale; and the byte nearest to x (fp8: to nearest even, saturating; int8: rounded and clamped to
 * +-127). Written from the formats' definitions, apart from the kernels' own conversions. */
double hm_kv_byte(uint8_t b, flashcl_kv_format f);
uint8_t hm_kv_from_float(double x, flashcl_kv_format f);
/* n cache bytes of values about N(0, sigma) (int8: N(0, 1) * 32, for scales near sigma / 32). */
void hm_fill_kv(uint8_t *buf, flashcl_kv_format f, size_t n, hm_rng *r, double sigma);

/*
 * Float64 reference for one output row of a resolved problem (strides and scale set), on decoded
 * inputs. Writes head_dim doubles to out and returns the natural log-sum-exp (-inf: no key).
 * scores must hold seq_kv doubles. row = (batch * heads_q + head) * seq_q + query.
 */
/* The optional inputs of a problem with ALiBi, an additive mask or a key-padding mask (NULL: absent). */
typedef struct hm_extras {
    const float *alibi_slopes;        /* heads_q, or batch * heads_q (problem.alibi 2) */
    const float *mask;                /* laid out by problem.mask_strides (resolved) */
    const unsigned char *key_padding; /* (batch, seq_kv), nonzero: a padding key */
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* problem.varlen: batch + 1 each */
    const int32_t *cache_seqlens;               /* problem.kv_cache: batch (before the append) */
    const int32_t *block_table;                 /* problem.page_size: batch x ceil(seq_kv / page_size) */
    const float *sinks;                         /* problem.sinks: heads_q logits */
    const int32_t *cache_batch_idx;             /* problem.cache_batch_idx: batch */
    const int32_t *cache_leftpad;               /* problem.cache_leftpad: batch */
} hm_extras;
/* hm_reference_row with the biases and masks of `x` (may be NULL). */
double hm_reference_row_ex(const flashcl_problem *p, const float *q, const float *k, const float *v,
                           const hm_extras *x, int64_t row, double *out, double *scores);
double hm_reference_row(const flashcl_problem *p, const float *q, const float *k, const float *v, int64_t row,
                        double *out, double *scores);

/* Offset of element (b, s, h, 0) for a strides triple. */
static inline int64_t hm_offset(const flashcl_strides *st, int64_t b, int64_t s, int64_t h)
{
    return b * st->batch + s * st->seq + h * st->head;
}

#endif
