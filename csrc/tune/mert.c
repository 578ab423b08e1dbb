/* mert.c - upper envelopes for MERT's exact line search (see mert.h). */
#include "tune/mert.h"

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

static int check_input(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                       size_t *widest) {
    if (!offsets || (ngroups && (!slope || !intercept))) return SB_EINVAL;
    if (offsets[0] != 0) return SB_EINVAL;
    *widest = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (offsets[g + 1] < offsets[g] || offsets[g + 1] > UINT32_MAX) return SB_EINVAL;
        size_t n = (size_t)(offsets[g + 1] - offsets[g]);
        if (n > *widest) *widest = n;
    }
    size_t total = ngroups ? (size_t)offsets[ngroups] : 0;
    for (size_t i = 0; i < total; i++)
        if (!isfinite(slope[i]) || !isfinite(intercept[i])) return SB_EINVAL;
    return SB_OK;
}

/* One group's envelope: ls (scratch, n lines) -> hull in ls[0..k) with its start x in xs[0..k) (xs[0] = -inf).
 * Returns k, or 0 on a bad order. */
static size_t group_envelope(size_t lo, size_t n, const double *slope, const double *intercept,
                             const uint32_t *order, line_t *ls, double *xs) {
    if (order) {
        size_t k = 0; /* presorted by slope: keep one line per slope (highest intercept, then lowest index) */
        for (size_t i = 0; i < n; i++) {
            uint32_t j = order[lo + i];
            if (j < lo || j >= lo + n) return 0;
            line_t l = {slope[j], intercept[j], j};
            if (k && l.m == ls[k - 1].m) {
                if (l.b > ls[k - 1].b || (l.b == ls[k - 1].b && l.idx < ls[k - 1].idx)) ls[k - 1] = l;
                continue;
            }
            if (k && l.m < ls[k - 1].m) return 0;
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
    /* the hull as a stack in ls[0 .. top] (ls is read left to right: the stack never overtakes the read position) */
    size_t top = 0;
    xs[0] = -HUGE_VAL;
    for (size_t i = 1; i < n; i++) {
        line_t cur = ls[i];
        if (cur.m == ls[top].m) continue; /* same slope, lower (or equal) intercept: never strictly on top */
        double x;
        for (;;) {
            x = (ls[top].b - cur.b) / (cur.m - ls[top].m);
            if (top > 0 && x <= xs[top]) {
                top--; /* the top line is on top nowhere any more */
                continue;
            }
            break;
        }
        top++;
        ls[top] = cur;
        xs[top] = x;
    }
    return top + 1;
}

int sb_mert_envelopes(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                      const uint32_t *order, double *out_x, uint32_t *out_idx, uint32_t *counts) {
    size_t widest;
    int rc = check_input(ngroups, offsets, slope, intercept, &widest);
    if (rc != SB_OK) return rc;
    if (ngroups && (!out_x || !out_idx || !counts)) return SB_EINVAL;
    line_t *ls = malloc((widest ? widest : 1) * sizeof *ls);
    if (!ls) return SB_ENOMEM;
    for (size_t g = 0; g < ngroups; g++) {
        size_t lo = (size_t)offsets[g], n = (size_t)(offsets[g + 1] - offsets[g]);
        counts[g] = 0;
        if (!n) continue;
        size_t k = group_envelope(lo, n, slope, intercept, order, ls, out_x + lo);
        if (!k) { free(ls); return SB_EINVAL; }
        for (size_t j = 0; j < k; j++) out_idx[lo + j] = ls[j].idx;
        counts[g] = (uint32_t)k;
    }
    free(ls);
    return SB_OK;
}

int sb_mert_events(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                   const uint32_t *order, uint32_t *first, double *ev_x, uint32_t *ev_new, uint32_t *ev_old,
                   uint64_t *nevents) {
    size_t widest;
    int rc = check_input(ngroups, offsets, slope, intercept, &widest);
    if (rc != SB_OK) return rc;
    if (!nevents || (ngroups && (!first || !ev_x || !ev_new || !ev_old))) return SB_EINVAL;
    line_t *ls = malloc((widest ? widest : 1) * sizeof *ls);
    double *xs = malloc((widest ? widest : 1) * sizeof *xs);
    if (!ls || !xs) { free(ls); free(xs); return SB_ENOMEM; }
    size_t e = 0;
    for (size_t g = 0; g < ngroups; g++) {
        size_t lo = (size_t)offsets[g], n = (size_t)(offsets[g + 1] - offsets[g]);
        if (!n) { free(ls); free(xs); return SB_EINVAL; } /* every sentence needs a hypothesis */
        size_t k = group_envelope(lo, n, slope, intercept, order, ls, xs);
        if (!k) { free(ls); free(xs); return SB_EINVAL; }
        first[g] = ls[0].idx;
        for (size_t j = 1; j < k; j++, e++) {
            ev_x[e] = xs[j];
            ev_new[e] = ls[j].idx;
            ev_old[e] = ls[j - 1].idx;
        }
    }
    *nevents = e;
    free(ls);
    free(xs);
    return SB_OK;
}
