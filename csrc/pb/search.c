/* pb/search.c - see search.h. */
#include "pb/search.h"

#include <stdlib.h>
#include <string.h>

int sb_pb_ws_new(int pooled, sb_pb_ws **out) {
    *out = calloc(1, sizeof **out);
    if (!*out) return SB_ENOMEM;
    (*out)->pooled = pooled != 0;
    return SB_OK;
}

void sb_pb_ws_free(sb_pb_ws *w) {
    if (!w) return;
    if (w->scratch) w->scratch_free(w->scratch);
    sb_pb_pool_free(w->pool);
    free(w);
}

void sb_pb_ws_counts(const sb_pb_ws *w, uint64_t *c) {
    c[0] = w->lookups; c[1] = w->cache_hits; c[2] = w->ro_lookups;
    c[3] = w->scratch ? w->scratch_bytes(w->scratch) : 0;
}

int sb_pb_frame_begin(sb_pb_frame *f, const sb_pb_model *m, const char *text, size_t len, sb_pb_ws *ws, int cardinality,
                      sb_pb_stack_ctx x, sb_pb_counters *counters) {
    memset(f, 0, sizeof *f);
    memset(counters, 0, sizeof *counters);
    if (!ws) {
        int rc = sb_pb_ws_new(1, &f->own);
        if (rc) return rc;
        ws = f->own;
    }
    f->ws = ws;
    _Atomic int *ph = ws->phase;
    sb_pb_sent_ctx sctx = {ph, 0, 0, 0};
    sb_pb_phase(ph, SB_PB_PH_PT);
    int rc = sb_pb_sentence_new(m, text, len, &sctx, &f->s);
    ws->lookups += sctx.lookups;
    ws->cache_hits += sctx.cache_hits;
    ws->ro_lookups += sctx.ro_lookups;
    sb_pb_phase(ph, SB_PB_PH_MEM);
    if (rc != SB_OK) { sb_pb_frame_end(f); return rc; }
    if (ws->pooled) {
        if (!ws->pool) ws->pool = sb_pb_pool_new_mode(0);
        else sb_pb_pool_reset(ws->pool);
    } else {
        ws->pool = sb_pb_pool_new_mode(1);
    }
    f->pool = ws->pool;
    if (!f->pool) { sb_pb_frame_end(f); return SB_ENOMEM; }
    if (cardinality) {
        int stacks = f->s->n + 1;
        f->stacks = calloc((size_t)stacks, sizeof *f->stacks);
        if (!f->stacks) { sb_pb_frame_end(f); return SB_ENOMEM; }
        f->nstacks = stacks;
        for (int i = 0; i < stacks; i++) sb_pb_stack_reset(&f->stacks[i]);
    }
    x.pool = f->pool;
    x.c = counters;
    f->x = x;
    f->init = sb_pb_pool_get(f->pool);
    if (!f->init) { sb_pb_frame_end(f); return SB_ENOMEM; }
    sb_pb_hyp_init(f->s, f->init);
    sb_pb_phase(ph, SB_PB_PH_SEARCH);
    return SB_OK;
}

int sb_pb_frame_result(sb_pb_frame *f, sb_pb_hyp **finals, int n, int nbest, sb_pb_result **out) {
    sb_pb_phase(f->ws->phase, SB_PB_PH_OTHER);
    return sb_pb_make_result(f->s, finals, n, nbest, out);
}

int sb_pb_frame_result_stack(sb_pb_frame *f, sb_pb_stack *last, int keep, int nbest, sb_pb_result **out) {
    int rc = sb_pb_stack_cut(last, keep, &f->x);
    return rc == SB_OK ? sb_pb_frame_result(f, last->h, last->n, nbest, out) : rc;
}

void sb_pb_frame_end(sb_pb_frame *f) {
    sb_pb_ws *ws = f->ws ? f->ws : f->own;
    if (ws) sb_pb_phase(ws->phase, SB_PB_PH_MEM);
    if (f->stacks) {
        for (int i = 0; i < f->nstacks; i++) sb_pb_stack_free(&f->stacks[i]);
        free(f->stacks);
    }
    if (ws && !ws->pooled) {
        sb_pb_pool_free(ws->pool);
        ws->pool = NULL;
    }
    sb_pb_sentence_free(f->s);
    sb_pb_ws_free(f->own);
    memset(f, 0, sizeof *f);
}
