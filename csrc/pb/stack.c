/* pb/stack.c - see stack.h. */
#include "pb/stack.h"

#include <math.h>
#include <stdlib.h>

void sb_pb_stack_free(sb_pb_stack *s) {
    free(s->h);
    free(s->slot);
    sb_index_free(&s->ix);
}

void sb_pb_stack_reset(sb_pb_stack *s) {
    sb_index_clear(&s->ix, s->slot, (uint64_t)s->n);   /* in place, the occupied slots only */
    s->n = 0;
    s->best = -INFINITY;
    s->worst = INFINITY;
}

/* Re-index h[0 .. n) in `slots` slots; the index is empty already when slots is its size (sb_pb_stack_cut
 * leaves it empty), else it is re-allocated. */
static int stack_rehash(sb_pb_stack *s, uint64_t slots, int forward) {
    if (!slots) return SB_OK;   /* nothing added yet */
    if (slots != sb_index_slots(&s->ix)) {
        int rc = sb_index_reset(&s->ix, slots);
        if (rc != SB_OK) return rc;
    }
    for (int i = 0; i < s->n; i++)
        s->slot[i] = (uint32_t)sb_index_add(&s->ix, sb_pb_hyp_hash(s->h[i], forward), (uint32_t)i);
    return SB_OK;
}

static int by_total(const void *a, const void *b) {
    const sb_pb_hyp *x = *(sb_pb_hyp *const *)a, *y = *(sb_pb_hyp *const *)b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

/* sort best first and keep `keep` (Moses2 SortHypos + the cut); the index is emptied and rebuilt only if the
 * stack is added to again (a finished stack, the common case, is only read from now on) */
int sb_pb_stack_cut(sb_pb_stack *s, int keep, sb_pb_stack_ctx *x) {
    sb_index_clear(&s->ix, s->slot, (uint64_t)s->n);   /* slot[] holds the occupied slots in any order */
    if (s->n > 1) qsort(s->h, (size_t)s->n, sizeof *s->h, by_total);
    if (s->n > keep) {
        for (int i = keep; i < s->n; i++) sb_pb_pool_put(x->pool, s->h[i]);
        x->c->pruned += (uint64_t)(s->n - keep);
        s->n = keep;
    }
    return SB_OK;
}

int sb_pb_stack_add(sb_pb_stack *s, sb_pb_hyp *h, sb_pb_stack_ctx *x) {
    const int max = x->stack_size;
    int fw = x->recombine_forward;
    if (s->n > 2 * max) {
        qsort(s->h, (size_t)s->n, sizeof *s->h, by_total);
        s->worst = s->h[max - 1]->total;
        int rc = sb_pb_stack_cut(s, max, x);
        if (rc != SB_OK) return rc;
    }
    if ((uint64_t)s->n != s->ix.n) {   /* cut since the last add: re-index the kept hypotheses */
        int rc = stack_rehash(s, sb_index_slots(&s->ix), fw);
        if (rc != SB_OK) return rc;
    }
    double fut = h->total;
    if (s->n >= max && fut < s->worst) {
        x->c->beam_discarded++;
        sb_pb_pool_put(x->pool, h);
        return SB_OK;
    }
    if (sb_index_crowded(&s->ix, 50)) {
        int rc = stack_rehash(s, sb_index_slots(&s->ix) ? sb_index_slots(&s->ix) * 2 : 1024, fw);
        if (rc != SB_OK) return rc;
    }
    uint64_t b = sb_index_start(&s->ix, sb_pb_hyp_hash(h, fw));
    int added;
    for (;; b = sb_index_step(&s->ix, b)) {
        uint32_t k = sb_index_at(&s->ix, b);
        if (k == UINT32_MAX) {
            if (s->n == s->cap) {
                int cap = s->cap ? s->cap * 2 : 256;
                sb_pb_hyp **p = realloc(s->h, (size_t)cap * sizeof *p);
                if (!p) return SB_ENOMEM;
                s->h = p;
                uint32_t *q = realloc(s->slot, (size_t)cap * sizeof *q);
                if (!q) return SB_ENOMEM;
                s->slot = q;
                s->cap = cap;
            }
            sb_index_put(&s->ix, b, (uint32_t)s->n);
            s->slot[s->n] = (uint32_t)b;
            s->h[s->n++] = h;
            added = 1;
            break;
        }
        sb_pb_hyp *old = s->h[k];
        if (sb_pb_hyp_equal(old, h, fw)) {
            x->c->recombined++;
            if (fut > old->total) {
                s->h[k] = h;
                if (x->nbest) {   /* the loser and its arcs become arcs of the winner */
                    h->arcs = old->arcs;
                    old->arcs = NULL;
                    old->next_arc = h->arcs;
                    h->arcs = old;
                } else {
                    sb_pb_pool_put(x->pool, old);
                }
                added = 1;
            } else {
                if (x->nbest) {
                    h->next_arc = old->arcs;
                    old->arcs = h;
                } else {
                    sb_pb_pool_put(x->pool, h);
                }
                added = 0;
            }
            break;
        }
    }
    if (added) {
        if (fut > s->best) {
            s->best = fut;
            if (s->best + x->beam_width > s->worst) s->worst = s->best + x->beam_width;
        } else if (s->n <= max && fut < s->worst) {
            s->worst = fut;
        }
    }
    return SB_OK;
}

