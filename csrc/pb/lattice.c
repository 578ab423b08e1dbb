/* pb/lattice.c - see lattice.h. */
#include "pb/lattice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_WORD SB_PB_NO_WORD
#define OOV_BIT 0x80000000u  /* a target id of a pass-through word absent from the target vocabulary: its token */

const char *sb_pb_word(const sb_pb_sentence *s, uint32_t w) {
    if (w & OOV_BIT) return s->text + s->tok_off[w & ~OOV_BIT];
    return sb_pb_vocab_str(&s->model->tgt_vocab, w);
}

const uint32_t *sb_pb_option_words(const sb_pb_sentence *s, const sb_pb_option *o) {
    if (o->unknown) return s->pass_words + o->tgt_off;
    if (SB_UNLIKELY(s->lopt != NULL) && (uintptr_t)o - (uintptr_t)s->lopt < (uintptr_t)(s->nlopt * sizeof *o))
        return s->lwords + o->tgt_off;
    return s->twords + o->tgt_off;
}

void sb_pb_sentence_free(sb_pb_sentence *s) {
    if (!s) return;
    free(s->src);
    free(s->text);
    free(s->tok_off);
    free(s->spans);
    free(s->pass);
    free(s->pass_words);
    free(s->fc);
    free(s->lopt);
    free(s->lwords);
    free(s);
}

int sb_pb_sentence_new(const sb_pb_model *m, const char *text, size_t len, sb_pb_sent_ctx *ctx, sb_pb_sentence **out) {
    *out = NULL;
    if (m->phase != 2) return SB_EINVAL;
    sb_pb_sentence *s = calloc(1, sizeof *s);
    if (!s) return SB_ENOMEM;
    s->model = m;
    s->text = malloc(len + 1);
    s->tok_off = malloc((SB_PB_MAX_WORDS + 1) * sizeof(uint32_t));
    s->src = malloc((SB_PB_MAX_WORDS + 1) * sizeof(uint32_t));
    if (!s->text || !s->tok_off || !s->src) { sb_pb_sentence_free(s); return SB_ENOMEM; }
    int n = 0;
    size_t i = 0, w = 0;
    while (i < len) {
        while (i < len && (sb_pb_is_blank(text[i]) || text[i] == '\n')) i++;
        if (i == len) break;
        size_t j = i;
        while (j < len && !sb_pb_is_blank(text[j]) && text[j] != '\n') j++;
        if (n == SB_PB_MAX_WORDS) { sb_pb_sentence_free(s); return SB_EINVAL; }
        s->tok_off[n] = (uint32_t)w;
        memcpy(s->text + w, text + i, j - i);
        s->text[w + (j - i)] = '\0';
        s->src[n] = sb_pb_table_src_word(m->pt, text + i, j - i);
        w += j - i + 1;
        n++;
        i = j;
    }
    s->n = n;
    size_t nsp = (size_t)(n ? n : 1) * SB_PB_MAX_PHRASE;
    s->spans = calloc(nsp, sizeof *s->spans);
    s->pass = calloc((size_t)(n ? n : 1), sizeof *s->pass);
    s->pass_words = calloc((size_t)(n ? n : 1), sizeof(uint32_t));
    s->fc = malloc((size_t)(n ? n * n : 1) * sizeof(double));
    if (!s->spans || !s->pass || !s->pass_words || !s->fc) { sb_pb_sentence_free(s); return SB_ENOMEM; }
    const sb_pb_table *pt = m->pt;
    s->twords = sb_pb_table_words(pt);
    sb_pb_found L = {.ctx = ctx};
    uint64_t *lfirst = NULL;   /* span -> its first found option + 1 (0: the table's own or none); made at the first */
    for (int a = 0; a < n; a++) {
        for (int b = a; b < n && b - a < pt->max_len; b++) {
            if (s->src[b] == NO_WORD) break;
            sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
            sb_pb_hit hit;
            int rc = sb_pb_table_lookup(pt, s->src + a, b - a + 1, &L, &hit);
            if (rc == SB_OK && hit.n && !hit.opt && !lfirst && !(lfirst = calloc(nsp, sizeof *lfirst))) rc = SB_ENOMEM;
            if (rc) { free(lfirst); sb_pb_found_free(&L); sb_pb_sentence_free(s); return rc; }
            if (hit.n == 0) continue;
            if (hit.opt) sp->opt = hit.opt;
            else lfirst[a * SB_PB_MAX_PHRASE + (b - a)] = hit.first + 1;
            sp->n = hit.n;
        }
        if (s->spans[a * SB_PB_MAX_PHRASE].n == 0) {
            /* pass-through: the source word as target, UnknownWordPenalty -100, TM/reordering 0 */
            const char *tok = s->text + s->tok_off[a];
            uint32_t t = sb_pb_vocab_find(&m->tgt_vocab, tok, strlen(tok));
            s->pass_words[a] = t != NO_WORD ? t : (OOV_BIT | (uint32_t)a);
            sb_pb_option *o = &s->pass[a];
            o->tgt_off = (uint32_t)a;
            o->tgt_len = 1;
            o->unknown = 1;
            sb_pb_option_scores(&m->sc, o, &s->pass_words[a]);
            s->spans[a * SB_PB_MAX_PHRASE].opt = o;
            s->spans[a * SB_PB_MAX_PHRASE].n = 1;
        }
    }
    /* the found options are the sentence's now (their array no longer moves) */
    s->lopt = L.opt;
    s->nlopt = L.n;
    s->lwords = L.words;
    free(L.tmp);
    for (size_t k = 0; lfirst && k < nsp; k++)
        if (lfirst[k]) s->spans[k].opt = L.opt + (lfirst[k] - 1);
    free(lfirst);
    /* future costs: best option of each span, then the best split (Moses' EstimatedScores) */
    for (int len2 = 1; len2 <= n; len2++) {
        for (int a = 0; a + len2 <= n; a++) {
            int b = a + len2 - 1;
            double best = -INFINITY;
            if (len2 <= SB_PB_MAX_PHRASE) {
                const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
                if (sp->n) best = sp->opt[0].estimate;  /* options are sorted best first */
            }
            for (int k = a; k < b; k++) {
                double v = s->fc[a * n + k] + s->fc[(k + 1) * n + b];
                if (v > best) best = v;
            }
            s->fc[a * n + b] = best;
        }
    }
    *out = s;
    return SB_OK;
}

