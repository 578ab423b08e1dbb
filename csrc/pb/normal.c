/* pb/normal.c - see normal.h. */
#include "pb/normal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sb_pb_decode_normal(const sb_pb_model *m, const char *text, size_t len, const sb_pb_normal_opts *o,
                        sb_pb_result **out, sb_pb_counters *counters) {
    *out = NULL;
    memset(counters, 0, sizeof *counters);
    if (o->stack_size < 1 || o->nbest < 0 || isnan(o->beam_width) || o->beam_width > 0) return SB_EINVAL;
    sb_pb_sentence *s;
    int rc = sb_pb_sentence_new(m, text, len, &s);
    if (rc != SB_OK) return rc;
    const int n = s->n;
    sb_pb_pool *pool = sb_pb_pool_new();
    sb_pb_stack *stacks = calloc((size_t)n + 1, sizeof *stacks);
    if (!pool || !stacks) { rc = SB_ENOMEM; goto done; }
    for (int i = 0; i <= n; i++) sb_pb_stack_reset(&stacks[i]);
    sb_pb_stack_ctx x = {o->stack_size, o->beam_width, o->recombine_forward, pool, counters, o->nbest > 0};
    sb_pb_hyp *init = sb_pb_pool_get(pool);
    if (!init) { rc = SB_ENOMEM; goto done; }
    sb_pb_hyp_init(s, init);
    rc = sb_pb_stack_add(&stacks[0], init, &x);
    const int maxlen = SB_PB_MAX_PHRASE;
    for (int k = 0; k < n && rc == SB_OK; k++) {
        sb_pb_stack *st = &stacks[k];
        rc = sb_pb_stack_cut(st, o->stack_size, &x);
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
                         * whose upper bound is below the stack's worst score would be discarded on arrival */
                        if (ds->n >= o->stack_size && ds->n <= 2 * o->stack_size &&
                            sb_pb_extend_bound(s, h, &sp->opt[t], a, b, est) < ds->worst) {
                            counters->created++;
                            counters->beam_discarded++;
                            continue;
                        }
                        sb_pb_hyp *nh = sb_pb_pool_get(pool);
                        if (!nh) { rc = SB_ENOMEM; break; }
                        sb_pb_extend(s, h, &sp->opt[t], a, b, est, nh);
                        counters->created++;
                        rc = sb_pb_stack_add(&stacks[dest], nh, &x);
                        if (rc != SB_OK) break;
                    }
                }
            }
        }
        free(gaps);
    }
    if (rc == SB_OK) {
        sb_pb_stack *last = &stacks[n];
        rc = sb_pb_stack_cut(last, o->stack_size, &x);
        if (rc == SB_OK) rc = sb_pb_make_result(s, last->h, last->n, o->nbest, out);
    }
done:
    if (stacks) {
        for (int i = 0; i <= n; i++) sb_pb_stack_free(&stacks[i]);
        free(stacks);
    }
    sb_pb_pool_free(pool);
    sb_pb_sentence_free(s);
    return rc;
}
