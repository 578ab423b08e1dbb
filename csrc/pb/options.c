/* pb/options.c - see options.h: an option's stand-alone scores, the order of a phrase's options, and the options
 * of a span read from a binarized table. */
#include "pb/options.h"

#include <stdlib.h>
#include <string.h>

/* stand-alone scores of an option whose target ids are `words` */
void sb_pb_option_scores(const sb_pb_scorer *sc, sb_pb_option *o, const uint32_t *words) {
    const double *w = sc->w;
    double fixed = w[SB_PB_F_WP] * -(double)o->tgt_len + w[SB_PB_F_PP] * 1.0;
    if (o->unknown) fixed += w[SB_PB_F_UNK] * -100.0;
    for (int k = 0; k < 4; k++) fixed += w[SB_PB_F_TM + k] * o->tm[k];
    o->fixed = (float)fixed;
    sb_lm_state st[2];
    memset(st, 0, sizeof st);  /* null context */
    int cur = 0, nlen;
    double est = 0, ngram = 0;
    for (int k = 0; k < o->tgt_len; k++) {
        float p = sb_lm_score(sc->lm, &st[cur], sb_pb_lm_id(sc, words[k]), &st[cur ^ 1], &nlen);
        cur ^= 1;
        if (k < sc->order - 1) est += p; else ngram += p;
    }
    o->lm_est = (float)est;
    o->lm_ngram = (float)ngram;
    o->end = st[cur];
    o->estimate = (float)(fixed + w[SB_PB_F_LM] * SB_PB_LN10 * (est + ngram));
}

int sb_pb_cmp_raw(const void *a, const void *b) {
    const sb_pb_rawopt *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->o.estimate != y->o.estimate) return x->o.estimate > y->o.estimate ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

int sb_pb_bin_span(const sb_pb_scorer *sc, const sb_pb_bin *bin, const uint32_t *tmap, const uint32_t *ids, int n,
                   sb_pb_local *L, sb_pb_sent_ctx *ctx, uint64_t *first, int *count) {
    const uint8_t *p;
    *count = 0;
    uint32_t nt;
    int rc = sb_pb_bin_phrase(bin, ids, n, &p, &nt);
    if (rc || !nt) return rc;
    if (nt > L->captmp) {
        sb_pb_rawopt *t = realloc(L->tmp, (size_t)nt * sizeof *t);
        if (!t) return SB_ENOMEM;
        L->tmp = t;
        L->captmp = nt;
    }
    const int separate = sb_pb_bin_ro_mode(bin) == SB_PB_BIN_RO_SEPARATE;
    sb_pb_bin_target t;
    for (uint32_t k = 0; k < nt; k++) {
        if ((rc = sb_pb_bin_target_next(bin, &p, &t))) return rc;
        if (L->nw + (uint64_t)t.len > L->capw) {
            uint64_t c = L->capw ? L->capw * 2 : 4096;
            while (c < L->nw + (uint64_t)t.len) c *= 2;
            uint32_t *w = realloc(L->words, c * sizeof *w);
            if (!w) return SB_ENOMEM;
            L->words = w;
            L->capw = c;
        }
        sb_pb_rawopt *r = &L->tmp[k];
        memset(r, 0, sizeof *r);
        r->seq = k;
        r->o.tgt_off = (uint32_t)L->nw;
        r->o.tgt_len = (uint16_t)t.len;
        for (int i = 0; i < t.len; i++) L->words[L->nw + (uint64_t)i] = tmap[t.ids[i]];
        memcpy(r->o.tm, t.tm, sizeof t.tm);
        if (separate) {
            if (ctx) { sb_pb_phase(ctx->phase, SB_PB_PH_RO); ctx->ro_lookups++; }
            t.has_ro = sb_pb_bin_reordering(bin, ids, n, t.ids, t.len, t.ro);
            if (t.has_ro < 0) return SB_EFORMAT;
            if (ctx) sb_pb_phase(ctx->phase, SB_PB_PH_PT);
        }
        if (t.has_ro) { memcpy(r->o.ro, t.ro, sizeof t.ro); r->o.has_ro = 1; }
        sb_pb_option_scores(sc, &r->o, L->words + L->nw);
        L->nw += (uint64_t)t.len;
    }
    qsort(L->tmp, nt, sizeof *L->tmp, sb_pb_cmp_raw);
    uint32_t keep = sc->table_limit && nt > (uint32_t)sc->table_limit ? (uint32_t)sc->table_limit : nt;
    if (L->n + keep > L->cap) {
        uint64_t c = L->cap ? L->cap * 2 : 256;
        while (c < L->n + keep) c *= 2;
        sb_pb_option *o = realloc(L->opt, c * sizeof *o);
        if (!o) return SB_ENOMEM;
        L->opt = o;
        L->cap = c;
    }
    *first = L->n;
    for (uint32_t k = 0; k < keep; k++) L->opt[L->n++] = L->tmp[k].o;
    *count = (int)keep;
    return SB_OK;
}

