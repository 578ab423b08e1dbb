/* pb/options.c - see options.h: an option's stand-alone scores and the order of a phrase's options. */
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
