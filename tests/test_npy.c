/* SPDX-License-Identifier: MIT */
/*
 * test_npy.c: the .npy reader and writer: round trips of every supported dtype, and a clear refusal
 * of every kind of bad file (magic, version, dtype, byte order, Fortran order, shape, truncation, a header
 * dict looser than NumPy's: keys twice or unknown, fortran_order not exactly False or True, braces missing).
 */
#include "testutil.h"
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_round_trip)
{
    static const char *descrs[] = {"<f4", "<f2", "<u2"};
    const char *descr = descrs[_i];
    const int64_t shape[4] = {2, 3, 5, 8};
    const size_t count = 2 * 3 * 5 * 8, elem = _i == 0 ? 4 : 2;
    unsigned char *data = malloc(count * elem);
    for (size_t i = 0; i < count * elem; ++i)
        data[i] = (unsigned char)(i * 131 + 7);
    char path[128], err[256];
    snprintf(path, sizeof path, "/tmp/flashcl-npy-%ld-%d.npy", (long)getpid(), _i);
    ck_assert_int_eq(npy_write(path, descr, 4, shape, data, err, sizeof err), 0);
    npy_array a;
    ck_assert_msg(npy_read(path, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(a.descr, descr);
    ck_assert_int_eq(a.ndim, 4);
    for (int d = 0; d < 4; ++d)
        ck_assert_int_eq(a.shape[d], shape[d]);
    ck_assert_uint_eq(a.count, count);
    ck_assert_mem_eq(a.data, data, count * elem);
    /* NumPy's layout: the data starts on a 64-byte boundary. */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    ck_assert_int_eq((ftell(f) - (long)(count * elem)) % 64, 0);
    fclose(f);
    npy_free(&a);
    free(data);
    unlink(path);
}
END_TEST

/* A valid file built by hand, then broken in one way per case. */
static size_t make_file(unsigned char *buf, const char *dict, size_t data_bytes, int version)
{
    const size_t pre = version == 1 ? 10 : 12;
    size_t hlen = strlen(dict) + 1;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    if (version != 1)
        buf[10] = buf[11] = 0;
    memcpy(buf + pre, dict, hlen - 1);
    buf[pre + hlen - 1] = '\n';
    memset(buf + pre + hlen, 0x3c, data_bytes);
    return pre + hlen + data_bytes;
}

typedef struct bad_file {
    const char *dict;
    long data_delta; /* bytes more or fewer than the shape needs */
    int version;     /* the format version; 0: 1 */
    const char *message;
} bad_file;

static const bad_file bad_files[] = {
    {.dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", .message = "unsupported dtype"},
    {.dict = "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", .message = "unsupported dtype"},
    {.dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", .message = "Fortran"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", .data_delta = -4,
     .message = "truncated data"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", .data_delta = 4,
     .message = "trailing bytes"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", .message = "bad 'shape'"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, }", .message = "no 'shape'"},
    {.dict = "{'fortran_order': False, 'shape': (2, 3), }", .message = "no 'descr'"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", .version = 9, .message = "version"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", .message = "bad 'shape'"},
    /* Nothing looser than NumPy reads: a key twice (Python's dict keeps the last; the first was once taken), a key
     * NumPy does not write, a fortran_order that is not exactly False or True, the dict's braces missing. */
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (9, 9), 'shape': (2, 3), }",
     .message = "key 'shape' given twice"},
    {.dict = "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
     .message = "key 'descr' given twice"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1, }",
     .message = "unknown key 'extra'"},
    {.dict = "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2, 3), }", .message = "bad 'fortran_order'"},
    {.dict = "{'descr': '<f4', 'fortran_order': Truest, 'shape': (2, 3), }", .message = "bad 'fortran_order'"},
    {.dict = "'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", .message = "not a dict (no '{')"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", .message = "not closed (no '}')"},
    {.dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", .message = "characters after the dict"},
    {.dict = "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}", .message = "expected ',' or '}'"},
};

START_TEST(test_refuses_bad_files)
{
    const bad_file *b = &bad_files[_i];
    unsigned char buf[512];
    const long data = 2 * 3 * (strstr(b->dict, "f8") ? 8 : 4) + b->data_delta;
    size_t len = make_file(buf, b->dict, data > 0 ? (size_t)data : 0, b->version ? b->version : 1);
    npy_array a;
    char err[256] = "";
    ck_assert_int_eq(npy_parse(buf, len, &a, err, sizeof err), -1);
    ck_assert_msg(strstr(err, b->message) != NULL, "case %d: '%s' lacks '%s'", _i, err, b->message);
    ck_assert_ptr_null(a.data);
}
END_TEST

/* NumPy's variants that stay accepted: keys in another order, double quotes, no trailing comma, spaces. */
START_TEST(test_accepts_numpy_variants)
{
    static const char *const dicts[] = {
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3,), }   ",
        "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 ) , }",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof *dicts; ++i) {
        unsigned char buf[512];
        const size_t len = make_file(buf, dicts[i], 2 * 3 * 4, 1);
        npy_array a;
        char err[256] = "";
        ck_assert_msg(npy_parse(buf, len, &a, err, sizeof err) == 0, "%s: %s", dicts[i], err);
        ck_assert_int_eq(a.ndim, 2);
        ck_assert_uint_eq(a.count, 6);
        npy_free(&a);
    }
}
END_TEST

START_TEST(test_refuses_short_and_foreign)
{
    npy_array a;
    char err[256];
    ck_assert_int_eq(npy_parse((const unsigned char *)"", 0, &a, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "magic"));
    ck_assert_int_eq(npy_parse((const unsigned char *)"PK\x03\x04 a zip file, not npy", 26, &a, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "magic"));
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 200, 0, '{', '\''};
    ck_assert_int_eq(npy_parse(head, sizeof head, &a, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "truncated header"));
    ck_assert_int_eq(npy_read("/nonexistent/file.npy", &a, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

/* Found by fuzz_npy: a shape whose last number runs to the end of the header, with the file ending
 * there too, made strtoll read past the buffer. */
START_TEST(test_regression_number_at_header_end)
{
    static const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1234567";
    unsigned char buf[128];
    const size_t hlen = sizeof dict - 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)hlen;
    buf[9] = 0;
    memcpy(buf + 10, dict, hlen); /* no newline, no data: the file ends with the digits */
    npy_array a;
    char err[256];
    ck_assert_int_eq(npy_parse(buf, 10 + hlen, &a, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "shape"));
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_loop_test(tc, test_round_trip, 0, 3);
    tcase_add_loop_test(tc, test_refuses_bad_files, 0, (int)(sizeof bad_files / sizeof *bad_files));
    tcase_add_test(tc, test_accepts_numpy_variants);
    tcase_add_test(tc, test_refuses_short_and_foreign);
    tcase_add_test(tc, test_regression_number_at_header_end);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(make_suite, 0);
}
