/* mert.h - the upper envelopes of MERT's line search (Och 2003): for every sentence of an n-best list, the
 * hypotheses' model scores along a line w + x*d are lines y = slope*x + intercept (slope = d.f, intercept = w.f);
 * the 1-best at x is the line on top, and the top of all lines (the upper envelope) changes hands at finitely many
 * x. This kernel finds those change points exactly (sort by slope, convex hull); the BLEU of every interval is
 * summed from sufficient statistics in pylib/smtbench/tune/mert.py. */
#ifndef SMTBENCH_MERT_H
#define SMTBENCH_MERT_H

#include "util/common.h"

/* CFFI-BEGIN */
/* Lines of group g are [offsets[g], offsets[g+1]) (offsets has ngroups + 1 entries, offsets[0] = 0). For each
 * group, counts[g] = k segments are written at out_x / out_idx [offsets[g], offsets[g] + k): out_idx[offsets[g]] is
 * the best line as x -> -inf (out_x there is -HUGE_VAL), and for j >= 1 line out_idx[offsets[g] + j] (an index into
 * the whole array) is on top from x = out_x[offsets[g] + j] on, strictly increasing. Ties: among lines of equal
 * slope the highest intercept, then the lowest index; a line on top at a single point only is left out.
 * order: NULL, or every group's line indices (global) sorted by ascending slope, at the group's offsets (the same
 * for every line search along one coordinate: sorted once, each search is then linear).
 * SB_EINVAL for non-finite input, bad offsets or an order that is not sorted by slope within its group,
 * SB_ENOMEM when the scratch cannot be allocated. */
int sb_mert_envelopes(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                      const uint32_t *order, double *out_x, uint32_t *out_idx, uint32_t *counts);
/* The same envelopes as change events for the line search: first[g] = group g's best line at x -> -inf; then for
 * every change, in group order and increasing x within a group: at ev_x the best line of its group becomes ev_new
 * (it was ev_old). The event arrays need room for offsets[ngroups] entries; *nevents = how many were written.
 * SB_EINVAL also for an empty group. */
int sb_mert_events(size_t ngroups, const uint64_t *offsets, const double *slope, const double *intercept,
                   const uint32_t *order, uint32_t *first, double *ev_x, uint32_t *ev_new, uint32_t *ev_old,
                   uint64_t *nevents);
/* CFFI-END */

#endif
