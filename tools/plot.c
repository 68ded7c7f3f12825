/* SPDX-License-Identifier: MIT */
/*
 * plot.c: the SVG writer (see plot.h). Panels are laid out in rows: each row is one panel name, the
 * left chart time, the right chart memory; axes are log10 with a tick at every power of ten.
 */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHART_W 420
#define CHART_H 260
#define MARGIN_L 70
#define MARGIN_T 50
#define ROW_H (CHART_H + 90)
#define COL_W (CHART_W + 110)

static const char *colours[] = {"#d62728", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd"};

typedef struct range {
    double lo, hi; /* log10 */
} range;

static void widen(range *r, double v)
{
    if (!(v > 0) || !isfinite(v))
        return;
    const double l = log10(v);
    if (l < r->lo)
        r->lo = l;
    if (l > r->hi)
        r->hi = l;
}

static void settle(range *r)
{
    if (r->lo > r->hi) {
        r->lo = 0;
        r->hi = 1;
    }
    r->lo = floor(r->lo);
    r->hi = ceil(r->hi);
    if (r->hi <= r->lo)
        r->hi = r->lo + 1;
}

static double px(range r, double v, double size)
{
    return (log10(v) - r.lo) / (r.hi - r.lo) * size;
}

static void axis_label(char *buf, size_t n, double p, int bytes)
{
    static const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    if (bytes) {
        int u = 0;
        double v = pow(10.0, p);
        while (v >= 1000 && u < 4) {
            v /= 1000;
            ++u;
        }
        snprintf(buf, n, "%g %s", v, units[u]);
    } else {
        snprintf(buf, n, "%g", pow(10.0, p));
    }
}

static void chart(FILE *f, double ox, double oy, const char *ylabel, int bytes, const plot_series *s, int ns,
                  const char *panel, int which, range xr)
{
    range yr = {1e9, -1e9};
    for (int i = 0; i < ns; ++i)
        if (!strcmp(s[i].panel, panel))
            for (int k = 0; k < s[i].n; ++k)
                widen(&yr, which ? s[i].mem_bytes[k] : s[i].time_ms[k]);
    settle(&yr);
    fprintf(f, "<g transform=\"translate(%.0f,%.0f)\">\n", ox, oy);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", CHART_W, CHART_H);
    char lab[32];
    for (double p = yr.lo; p <= yr.hi + 1e-9; p += 1) {
        const double y = CHART_H - px(yr, pow(10.0, p), CHART_H);
        axis_label(lab, sizeof lab, p, bytes);
        fprintf(f, "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>", y, CHART_W, y);
        fprintf(f, "<text x=\"-6\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", y + 4, lab);
    }
    /* x ticks at the powers of two inside the range: sequence lengths people use */
    for (int k = (int)ceil(xr.lo / log10(2.0)); k <= (int)floor(xr.hi / log10(2.0)); ++k) {
        const double x = px(xr, ldexp(1.0, k), CHART_W);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>", x, CHART_H, x, CHART_H + 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%.0f</text>\n", x, CHART_H + 16,
                ldexp(1.0, k));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">sequence length N</text>\n",
            CHART_W / 2, CHART_H + 34);
    fprintf(f, "<text x=\"0\" y=\"-8\" font-size=\"12\">%s</text>\n", ylabel);
    /* Drawn last to first, so that the first series (flash) lies on top where lines meet. */
    for (int i = ns - 1; i >= 0; --i) {
        if (strcmp(s[i].panel, panel))
            continue;
        const char *c = colours[s[i].style % 5];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        for (int k = 0; k < s[i].n; ++k) {
            const double v = which ? s[i].mem_bytes[k] : s[i].time_ms[k];
            if (v > 0 && isfinite(v))
                fprintf(f, "%.1f,%.1f ", px(xr, s[i].x[k], CHART_W), CHART_H - px(yr, v, CHART_H));
        }
        fprintf(f, "\"/>\n");
        for (int k = 0; k < s[i].n; ++k) {
            const double v = which ? s[i].mem_bytes[k] : s[i].time_ms[k];
            if (v > 0 && isfinite(v))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", px(xr, s[i].x[k], CHART_W),
                        CHART_H - px(yr, v, CHART_H), c);
            else
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"%s\" text-anchor=\"middle\">x</text>",
                        px(xr, s[i].x[k], CHART_W), 12 + 12 * s[i].style, c);
        }
        fprintf(f, "\n<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"%s\">%s</text>\n", CHART_W + 8,
                16 + 16 * s[i].style, c, s[i].name);
    }
    fprintf(f, "</g>\n");
}

int plot_svg(const char *path, const char *title, const plot_series *s, int ns)
{
    const char *panels[32];
    int np = 0;
    range xr = {1e9, -1e9};
    for (int i = 0; i < ns; ++i) {
        int seen = 0;
        for (int k = 0; k < np; ++k)
            seen |= !strcmp(panels[k], s[i].panel);
        if (!seen && np < 32)
            panels[np++] = s[i].panel;
        for (int k = 0; k < s[i].n; ++k)
            widen(&xr, s[i].x[k]);
    }
    if (xr.lo > xr.hi)
        xr.lo = xr.hi = 3;
    xr.lo -= 0.1;
    xr.hi += 0.1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const int width = MARGIN_L + 2 * COL_W, height = MARGIN_T + np * ROW_H + 10;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
            width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">", MARGIN_L);
    for (const char *c = title; *c; ++c)
        fputs(*c == '<' ? "&lt;" : *c == '&' ? "&amp;" : (char[2]){*c, 0}, f);
    fprintf(f, "</text>\n");
    for (int r = 0; r < np; ++r) {
        const double oy = MARGIN_T + r * ROW_H + 20;
        char label[96];
        snprintf(label, sizeof label, "time per forward, ms (%s)", panels[r]);
        chart(f, MARGIN_L, oy, label, 0, s, ns, panels[r], 0, xr);
        snprintf(label, sizeof label, "device memory: inputs, outputs, extra (%s)", panels[r]);
        chart(f, MARGIN_L + COL_W, oy, label, 1, s, ns, panels[r], 1, xr);
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
