/* pb/beam.c - see beam.h. */
#include "pb/beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Koehn's distortion of a phrase starting at `start` after one ending at `pend` (-1: sentence start):
 * |pend + 1 - start|. The final jump is koehn(last_end, n). */
static inline int koehn(int pend, int start) {
    int d = pend + 1 - start;
    return d < 0 ? -d : d;
}

/* Section 4's modified increment for S = [start, end], given g = the leftmost uncovered word before S is
 * translated (S'' = [0, g - 1]) and pend = the end of S' (the last phrase; -1 for none). */
static inline int de_increment(int g, int pend, int start, int end) {
    int len = end - start + 1;
    if (start == g) return 0;                        /* S adjacent to S'' */
    if (end < pend) return 2 * len;                  /* S to the left of S' */
    if (pend < g) return 2 * (start - g + len);      /* S' inside S'': D(S, S'') = start - g */
    return 2 * (start - pend - 1 + len);             /* otherwise: D(S, S') = start - pend - 1 */
}

/* Section 6 / footnote 7: Koehn's distance at most L forward, L + 1 backward; and if a gap is left behind
 * (start != g), the jump from end back to g (backward) must be allowed too. */
static inline int paper_limit_ok(int pend, int g, int start, int end, int limit) {
    if (limit < 0) return 1;
    int d = pend + 1 - start;          /* > 0: S starts left of the previous end (backward) */
    if (d > 0 ? d > limit + 1 : -d > limit) return 0;
    if (start != g && end + 1 - g > limit + 1) return 0;
    return 1;
}

int sb_pb_beam_distortion_totals(int n, const int *start, const int *end, int k, int *pharaoh, int *de) {
    *pharaoh = *de = 0;
    if (n < 0 || n > SB_PB_MAX_WORDS || k < 0 || k > n) return SB_EINVAL;
    uint64_t cov[SB_PB_COVW] = {0};
    int covered = 0, pend = -1, g = 0, p = 0, e = 0;
    for (int i = 0; i < k; i++) {
        if (start[i] < 0 || end[i] < start[i] || end[i] >= n) return SB_EINVAL;
        for (int j = start[i]; j <= end[i]; j++) {
            if (sb_pb_cov_get(cov, j)) return SB_EINVAL;
            sb_pb_cov_set(cov, j);
        }
        p += koehn(pend, start[i]);
        e += de_increment(g, pend, start[i], end[i]);
        covered += end[i] - start[i] + 1;
        while (g < n && sb_pb_cov_get(cov, g)) g++;
        pend = end[i];
    }
    if (covered != n) return SB_EINVAL;
    p += koehn(pend, n);
    *pharaoh = p;
    *de = e;
    return SB_OK;
}

static int valid_threshold(double t) { return !isnan(t) && t >= 0; }

int sb_pb_decode_beam(const sb_pb_model *m, const char *text, size_t len, const sb_pb_beam_opts *o, sb_pb_ws *ws,
                      sb_pb_result **out, sb_pb_counters *counters, sb_pb_beam_stats *stats) {
    *out = NULL;
    sb_pb_beam_stats dummy;
    if (!stats) stats = &dummy;
    memset(counters, 0, sizeof *counters);
    memset(stats, 0, sizeof *stats);
    if (o->variant < SB_PB_BEAM_PHARAOH || o->variant > SB_PB_BEAM_DE_EP) return SB_EINVAL;
    if (o->mode != SB_PB_BEAM_MODE_PAPER && o->mode != SB_PB_BEAM_MODE_MOSES) return SB_EINVAL;
    if (o->beam_limit < 1 || o->ttable_limit < 1 || o->nbest < 0) return SB_EINVAL;
    if (!valid_threshold(o->beam_threshold) || !valid_threshold(o->ttable_threshold) ||
        !valid_threshold(o->ep_threshold))
        return SB_EINVAL;
    const int de = o->variant != SB_PB_BEAM_PHARAOH, ep = o->variant == SB_PB_BEAM_DE_EP;
    const int paper = o->mode == SB_PB_BEAM_MODE_PAPER;
    const double *w = sb_pb_weights(m);
    const double wd = w[SB_PB_F_DIST];
    int ro_weighted = 0;
    for (int i = 0; i < 6; i++) ro_weighted |= w[SB_PB_F_RO + i] != 0;

    sb_pb_frame f;
    sb_pb_stack_ctx x0 = {o->beam_limit, -o->beam_threshold, ro_weighted ? 0 : SB_PB_RECOMB_END_ONLY, NULL, NULL,
                          o->nbest > 0};
    int rc = sb_pb_frame_begin(&f, m, text, len, ws, 1, x0, counters);
    if (rc != SB_OK) return rc;
    const sb_pb_sentence *s = f.s;
    const int n = s->n;
    sb_pb_stack *stacks = f.stacks;
    sb_pb_stack_ctx *x = &f.x;
    int *keep = calloc((size_t)(n ? n : 1) * SB_PB_MAX_PHRASE, sizeof *keep);
    if (!keep) { rc = SB_ENOMEM; goto done; }
    /* t-table pruning: a span's translations within the threshold of its best estimate, at most the limit
     * (options are sorted by estimate, best first; the best is always kept, so future costs are unchanged) */
    for (int a = 0; a < n; a++) {
        for (int l = 0; l < SB_PB_MAX_PHRASE && a + l < n; l++) {
            const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + l];
            if (!sp->n) continue;
            int k = 1;
            const double floor_est = sp->opt[0].estimate - o->ttable_threshold;
            while (k < sp->n && k < o->ttable_limit && sp->opt[k].estimate >= floor_est) k++;
            keep[a * SB_PB_MAX_PHRASE + l] = k;
        }
    }
    rc = sb_pb_stack_add(&stacks[0], f.init, x);
    for (int k = 0; k < n && rc == SB_OK; k++) {
        sb_pb_stack *st = &stacks[k];
        /* prune: the best beam_limit, then those within beam_threshold of the best */
        rc = sb_pb_stack_cut(st, o->beam_limit, x);
        if (rc != SB_OK) break;
        if (st->n > 1) {
            int kept = 1;
            const double floor_total = st->h[0]->total - o->beam_threshold;
            while (kept < st->n && st->h[kept]->total >= floor_total) kept++;
            if (kept < st->n) rc = sb_pb_stack_cut(st, kept, x);
            if (rc != SB_OK) break;
        }
        counters->expanded += (uint64_t)st->n;
        for (int hi = 0; hi < st->n && rc == SB_OK; hi++) {
            const sb_pb_hyp *h = st->h[hi];
            const int g = sb_pb_first_gap(s, h->cov), pend = h->end;
            for (int a = g; a < n && rc == SB_OK; a++) {
                if (sb_pb_cov_get(h->cov, a)) continue;
                /* early pruning over start positions: the least added distortion from here on (a one-word
                 * phrase) never decreases to the right */
                if (ep && wd * de_increment(g, pend, a, a) > o->ep_threshold) {
                    stats->ep_start_stops++;
                    break;
                }
                uint64_t cov[SB_PB_COVW];
                memcpy(cov, h->cov, sizeof cov);
                const int dk = koehn(pend, a);
                for (int b = a; b < n && b - a < SB_PB_MAX_PHRASE && rc == SB_OK; b++) {
                    if (sb_pb_cov_get(h->cov, b)) break;
                    sb_pb_cov_set(cov, b);
                    const int dde = de_increment(g, pend, a, b);
                    /* early pruning over end positions: the added distortion never decreases with the length */
                    if (ep && wd * dde > o->ep_threshold) {
                        stats->ep_end_stops++;
                        break;
                    }
                    const int ne = keep[a * SB_PB_MAX_PHRASE + (b - a)];
                    if (!ne) continue;
                    int ok = paper ? paper_limit_ok(pend, g, a, b, o->distortion_limit)
                                   : sb_pb_distortion_ok(h, a, b, g, o->distortion_limit);
                    if (!ok) {
                        stats->limit_refused++;
                        continue;
                    }
                    const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
                    const int dest = k + (b - a + 1);
                    const double est = sb_pb_estimate(s, cov);
                    /* sb_pb_extend charges -wd * koehn; the variant's distortion replaces it */
                    double adj = de ? wd * (double)(dk - dde) : 0.0;
                    if (!de && paper && dest == n) adj -= wd * (double)koehn(b, n);  /* the final jump */
                    /* the extension's estimated score without the LM context adjustment, minus h's, is
                     * base + the option's stand-alone estimate + its reordering terms */
                    const double base = h->score - wd * (double)dk + adj + est - h->total;
                    const int ori = ro_weighted ? sb_pb_orientation(h->start, pend, a, b) : 0;
                    stats->spans++;
                    stats->options += (uint64_t)ne;
                    sb_pb_stack *ds = &stacks[dest];
                    for (int t = 0; t < ne; t++) {
                        const sb_pb_option *op = &sp->opt[t];
                        if (ep) {
                            double gain = base + op->estimate;
                            if (ro_weighted) {
                                gain += w[SB_PB_F_RO + ori] * op->ro[ori];
                                if (h->opt) gain += w[SB_PB_F_RO + 3 + ori] * h->opt->ro[3 + ori];
                            }
                            if (-gain > o->ep_threshold) {
                                stats->ep_option_stops++;
                                stats->ep_options_cut += (uint64_t)(ne - t);
                                break;
                            }
                        }
                        sb_pb_hyp *nh = sb_pb_pool_get(f.pool);
                        if (!nh) { rc = SB_ENOMEM; break; }
                        sb_pb_extend(s, h, op, a, b, est, nh, f.ws->phase);
                        counters->created++;
                        nh->score += adj;
                        nh->total = nh->score + est;
                        if (nh->total < ds->best - o->beam_threshold) {  /* below the beam already */
                            counters->beam_discarded++;
                            sb_pb_pool_put(f.pool, nh);
                            continue;
                        }
                        rc = sb_pb_stack_add(ds, nh, x);
                        if (rc != SB_OK) break;
                    }
                }
            }
        }
    }
    if (rc == SB_OK) {
        sb_pb_stack *last = &stacks[n];
        rc = sb_pb_stack_cut(last, o->beam_limit, x);
        if (rc == SB_OK) {
            if (last->n == 0) stats->failed++;
            rc = sb_pb_frame_result(&f, last->h, last->n, o->nbest, out);
        }
        if (rc == SB_OK && paper) {  /* the model's Distortion feature charges the final jump in paper mode */
            for (int i = 0; i < sb_pb_result_size(*out); i++)
                sb_pb_result_add_feature(*out, m, i, SB_PB_F_DIST, -(double)koehn(sb_pb_result_last_end(*out, i), n));
        }
    }
done:
    free(keep);
    sb_pb_frame_end(&f);
    if (rc != SB_OK && *out) {
        sb_pb_result_free(*out);
        *out = NULL;
    }
    return rc;
}
