/* mert.c - upper envelopes for MERT's exact line search (see mert.h). */
#include "mert.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    double m, b;
    uint32_t idx;
} line_t;

static int by_slope(const void *pa, const void *pb) {
    const line_t *a = pa, *b = pb;
    if (a->m != b->m) return a->m < b->m ? -1 : 1;
    if (a->b != b->b) return a->b > b->b ? -1 : 1; /* highest intercept first */
    return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

int sb_mert_envelopes(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                      const uint32_t *order, double *out_x, uint32_t *out_idx, uint32_t *counts) {
    if (!offsets || (ngroups && (!slope || !intercept || !out_x || !out_idx || !counts))) return SB_EINVAL;
    if (offsets[0] != 0) return SB_EINVAL;
    size_t widest = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (offsets[g + 1] < offsets[g] || offsets[g + 1] > UINT32_MAX) return SB_EINVAL;
        size_t n = (size_t)(offsets[g + 1] - offsets[g]);
        if (n > widest) widest = n;
    }
    size_t total = ngroups ? (size_t)offsets[ngroups] : 0;
    for (size_t i = 0; i < total; i++)
        if (!isfinite(slope[i]) || !isfinite(intercept[i])) return SB_EINVAL;
    line_t *ls = malloc((widest ? widest : 1) * sizeof *ls);
    if (!ls) return SB_ENOMEM;
    for (size_t g = 0; g < ngroups; g++) {
        size_t lo = (size_t)offsets[g], n = (size_t)(offsets[g + 1] - offsets[g]);
        counts[g] = 0;
        if (!n) continue;
        if (order) {
            /* presorted by slope: keep one line per slope (highest intercept, then lowest index) */
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t j = order[lo + i];
                if (j < lo || j >= lo + n) { free(ls); return SB_EINVAL; }
                line_t l = {slope[j], intercept[j], j};
                if (k && l.m == ls[k - 1].m) {
                    if (l.b > ls[k - 1].b || (l.b == ls[k - 1].b && l.idx < ls[k - 1].idx)) ls[k - 1] = l;
                    continue;
                }
                if (k && l.m < ls[k - 1].m) { free(ls); return SB_EINVAL; }
                ls[k++] = l;
            }
            n = k;
        } else {
            for (size_t i = 0; i < n; i++) {
                ls[i].m = slope[lo + i];
                ls[i].b = intercept[lo + i];
                ls[i].idx = (uint32_t)(lo + i);
            }
            qsort(ls, n, sizeof *ls, by_slope);
        }
        /* the hull as a stack written straight into out_x / out_idx at lo .. lo + top; its slopes/intercepts in
         * ls[0 .. top] (ls is consumed left to right, so the stack never overtakes the read position) */
        size_t top = 0;
        out_x[lo] = -HUGE_VAL;
        out_idx[lo] = ls[0].idx;
        for (size_t i = 1; i < n; i++) {
            line_t cur = ls[i];
            if (cur.m == ls[top].m) continue; /* same slope, lower (or equal) intercept: never strictly on top */
            double x;
            for (;;) {
                x = (ls[top].b - cur.b) / (cur.m - ls[top].m);
                if (top > 0 && x <= out_x[lo + top]) {
                    top--; /* the top line is on top nowhere any more */
                    continue;
                }
                break;
            }
            top++;
            ls[top] = cur;
            out_x[lo + top] = x;
            out_idx[lo + top] = cur.idx;
        }
        counts[g] = (uint32_t)(top + 1);
    }
    free(ls);
    return SB_OK;
}
