/* SPDX-License-Identifier: MIT */
/*
 * plot.h: a small SVG writer for benchmark results: for each panel (a head dim and mask), time and
 * device memory against sequence length, log-log, one line per algorithm. Missing points (an
 * algorithm that could not run) are NAN and leave a gap.
 */
#ifndef FLASHCL_PLOT_H
#define FLASHCL_PLOT_H

#define PLOT_MAX_POINTS 32

typedef struct plot_series {
    char panel[48];
    char name[24];
    int style; /* colour and marker index */
    int n;
    double x[PLOT_MAX_POINTS];
    double time_ms[PLOT_MAX_POINTS];
    double mem_bytes[PLOT_MAX_POINTS];
} plot_series;

/* Writes the SVG; returns 0, or -1 when the file cannot be written. */
int plot_svg(const char *path, const char *title, const plot_series *series, int n_series);

#endif
