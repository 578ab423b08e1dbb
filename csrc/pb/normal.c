/* pb/normal.c - see normal.h. */
#include "pb/normal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sb_pb_decode_normal(const sb_pb_model *m, const char *text, size_t len, const sb_pb_normal_opts *o, sb_pb_ws *ws,
                        sb_pb_result **out, sb_pb_counters *counters) {
    *out = NULL;
    memset(counters, 0, sizeof *counters);
    if (o->stack_size < 1 || o->nbest < 0 || isnan(o->beam_width) || o->beam_width > 0) return SB_EINVAL;
    sb_pb_frame f;
    sb_pb_stack_ctx x0 = {o->stack_size, o->beam_width, o->recombine_forward, NULL, NULL, o->nbest > 0};
    int rc = sb_pb_frame_begin(&f, m, text, len, ws, 1, x0, counters);
    if (rc != SB_OK) return rc;
    const sb_pb_sentence *s = f.s;
    const int n = s->n;
    sb_pb_stack *stacks = f.stacks;
    sb_pb_stack_ctx *x = &f.x;
    rc = sb_pb_stack_add(&stacks[0], f.init, x);
    const int maxlen = SB_PB_MAX_PHRASE;
    const double lm_weight = m->sc.w[SB_PB_F_LM];
    for (int k = 0; k < n && rc == SB_OK; k++) {
        sb_pb_stack *st = &stacks[k];
        rc = sb_pb_stack_cut(st, o->stack_size, x);
        if (rc != SB_OK) break;
        counters->expanded += (uint64_t)st->n;
        int *gaps = malloc((size_t)(st->n ? st->n : 1) * sizeof(int));
        if (!gaps) { rc = SB_ENOMEM; break; }
        for (int hi = 0; hi < st->n; hi++) gaps[hi] = sb_pb_first_gap(s, st->h[hi]->cov);
        for (int a = 0; a < n && rc == SB_OK; a++) {
            uint64_t mask[SB_PB_COVW] = {0};
            for (int b = a; b < n && b - a < maxlen && rc == SB_OK; b++) {
                sb_pb_cov_set(mask, b);
                const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
                if (!sp->n) continue;
                int dest = k + (b - a + 1);
                if (dest > n) break;
                for (int hi = 0; hi < st->n && rc == SB_OK; hi++) {
                    const sb_pb_hyp *h = st->h[hi];
                    uint64_t overlap = 0;
                    for (int w = 0; w < SB_PB_COVW; w++) overlap |= h->cov[w] & mask[w];
                    if (overlap || !sb_pb_distortion_ok(h, a, b, gaps[hi], o->distortion_limit)) continue;
                    uint64_t cov[SB_PB_COVW];
                    for (int w = 0; w < SB_PB_COVW; w++) cov[w] = h->cov[w] | mask[w];
                    double est = sb_pb_estimate(s, cov);
                    sb_pb_stack *ds = &stacks[dest];
                    for (int t = 0; t < sp->n; t++) {
                        /* exact shortcut: when no pruning is pending in the destination stack, a hypothesis
                         * whose upper bound (sb_pb_extend_bound's) is below the stack's worst score would be
                         * discarded on arrival; the bound's base score is the extension's, computed once */
                        const int bounded = ds->n >= o->stack_size && ds->n <= 2 * o->stack_size;
                        double base = 0;
                        if (bounded) {
                            base = sb_pb_extend_base(s, h, &sp->opt[t], a, b);
                            if ((lm_weight < 0 ? INFINITY : base + est) < ds->worst) {
                                counters->created++;
                                counters->beam_discarded++;
                                continue;
                            }
                        }
                        sb_pb_hyp *nh = sb_pb_pool_get(f.pool);
                        if (!nh) { rc = SB_ENOMEM; break; }
                        if (bounded) sb_pb_extend_from(s, h, &sp->opt[t], a, b, est, base, nh, f.ws->phase);
                        else sb_pb_extend(s, h, &sp->opt[t], a, b, est, nh, f.ws->phase);
                        counters->created++;
                        rc = sb_pb_stack_add(&stacks[dest], nh, x);
                        if (rc != SB_OK) break;
                    }
                }
            }
        }
        free(gaps);
    }
    if (rc == SB_OK) rc = sb_pb_frame_result_stack(&f, &stacks[n], o->stack_size, o->nbest, out);
    sb_pb_frame_end(&f);
    return rc;
}
