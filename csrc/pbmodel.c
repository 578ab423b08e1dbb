/* pbmodel.c - see pbmodel.h. */
#include "pbmodel.h"
#include "pbbin.h"
#include "pb/table_reader.h"
#include "probing.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LN10 2.30258509299404568402
#define FLOOR_LN (-100.0)   /* Moses' FloorScore: ln(0) and anything below becomes -100 */
#define OOV_BIT 0x80000000u
#define NO_WORD SB_PB_NO_WORD

/* ---------------------------------------------------------------- the model */
typedef struct {
    uint32_t off, len;   /* source ids in src_words */
    uint32_t first, n;   /* options [first, first + n) after finish_phrases */
} srcphrase_t;

typedef struct {
    uint32_t src;        /* srcphrase index */
    uint32_t seq;        /* line order (stable sort) */
    sb_pb_option o;
} rawopt_t;

struct sb_pb_model {
    const sb_lm *lm;
    int order;
    uint32_t lm_vocab;   /* target ids below this are LM ids */
    uint32_t eos;
    double w[SB_PB_NFEAT];
    int table_limit;
    sb_pb_vocab src_vocab, tgt_vocab;
    uint32_t *src_words; size_t src_words_len, src_words_cap;
    uint32_t *tgt_words; size_t tgt_words_len, tgt_words_cap;
    srcphrase_t *phr; uint32_t n_phr, cap_phr;
    sb_index phr_ix;     /* the source phrases */
    rawopt_t *raw; uint64_t n_raw, cap_raw;
    sb_pb_option *opt; uint64_t n_opt;
    int max_len;
    int phase;           /* 0 loading phrases, 1 loading reordering, 2 ready */
    uint64_t pt_lines, ro_attached;
    sb_pb_reader rd;     /* the text tables' reader, this model its sink; its error is the model's */
    sb_pb_bin *bin;      /* binarized table (sb_pb_load_binary), or NULL; phr/opt then hold its cache */
    uint32_t *bin_tmap;  /* the file's target ids -> ours */
};

const sb_lm *sb_pb_lm(const sb_pb_model *m) { return m->lm; }
const double *sb_pb_weights(const sb_pb_model *m) { return m->w; }
uint64_t sb_pb_error_line(const sb_pb_model *m) { return m->rd.err_line; }
const char *sb_pb_error_message(const sb_pb_model *m) { return m->rd.err; }


int sb_pb_set_weights(sb_pb_model *m, const double *weights) {
    for (int i = 0; i < SB_PB_NFEAT; i++)
        if (!isfinite(weights[i])) return SB_EINVAL;
    memcpy(m->w, weights, sizeof m->w);
    return SB_OK;
}

static int phrase_record(sb_pb_reader *rd, const sb_pb_record *rec);
static int reordering_record(sb_pb_reader *rd, const sb_pb_record *rec);

int sb_pb_new(const sb_lm *lm, const char *lm_vocab, size_t vocab_len, const double *weights,
              int table_limit, sb_pb_model **out) {
    *out = NULL;
    if (!lm || !lm_vocab || table_limit < 0) return SB_EINVAL;
    sb_pb_model *m = calloc(1, sizeof *m);
    if (!m) return SB_ENOMEM;
    m->lm = lm;
    m->order = sb_lm_order(lm);
    m->table_limit = table_limit;
    if (sb_pb_set_weights(m, weights) != SB_OK) { free(m); return SB_EINVAL; }
    size_t i = 0;
    while (i < vocab_len) {
        size_t j = i;
        while (j < vocab_len && lm_vocab[j] != '\n') j++;
        uint32_t before = m->tgt_vocab.n;
        uint32_t id = sb_pb_vocab_intern(&m->tgt_vocab, lm_vocab + i, j - i);
        if (id == NO_WORD) { sb_pb_free(m); return SB_ENOMEM; }
        if (id != before) { sb_pb_free(m); return SB_EINVAL; } /* duplicate word in the LM vocabulary */
        i = j + 1;
    }
    m->lm_vocab = m->tgt_vocab.n;
    m->rd = (sb_pb_reader){.src = &m->src_vocab, .tgt = &m->tgt_vocab, .phrase = phrase_record,
                           .reordering = reordering_record, .sink = m};
    m->eos = sb_pb_vocab_find(&m->tgt_vocab, "</s>", 4);
    if (m->eos == NO_WORD) { sb_pb_free(m); return SB_EINVAL; } /* an LM vocabulary has </s> */
    *out = m;
    return SB_OK;
}

void sb_pb_free(sb_pb_model *m) {
    if (!m) return;
    sb_pb_vocab_free(&m->src_vocab);
    sb_pb_vocab_free(&m->tgt_vocab);
    free(m->src_words);
    free(m->tgt_words);
    free(m->phr);
    sb_index_free(&m->phr_ix);
    free(m->raw);
    free(m->opt);
    free(m->bin_tmap);
    sb_pb_bin_close(m->bin);
    free(m);
}

static int push_u32(uint32_t **a, size_t *len, size_t *cap, uint32_t x) {
    if (*len == *cap) {
        size_t c = *cap ? *cap * 2 : 65536;
        uint32_t *p = realloc(*a, c * sizeof(uint32_t));
        if (!p) return SB_ENOMEM;
        *a = p;
        *cap = c;
    }
    (*a)[(*len)++] = x;
    return SB_OK;
}

static uint64_t hash_ids(const uint32_t *ids, uint32_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    for (uint32_t i = 0; i < n; i++) h = (h ^ ids[i]) * 0xff51afd7ed558ccdULL, h ^= h >> 32;
    return h;
}

/* the source phrase of ids[0 .. n), or NO_WORD with *end = the empty slot the probe ended at */
static uint32_t phrase_probe(const sb_pb_model *m, const uint32_t *ids, uint32_t n, uint64_t *end) {
    uint64_t b = sb_index_start(&m->phr_ix, hash_ids(ids, n));
    for (uint32_t k; (k = sb_index_at(&m->phr_ix, b)) != UINT32_MAX; b = sb_index_step(&m->phr_ix, b)) {
        const srcphrase_t *p = &m->phr[k];
        if (p->len == n && memcmp(m->src_words + p->off, ids, n * sizeof(uint32_t)) == 0) return (uint32_t)k;
    }
    *end = b;
    return NO_WORD;
}

static uint32_t phrase_find(const sb_pb_model *m, const uint32_t *ids, uint32_t n) {
    uint64_t end;
    if (!sb_index_slots(&m->phr_ix)) return NO_WORD;
    return phrase_probe(m, ids, n, &end);
}

static int phrase_grow(sb_pb_model *m) {
    uint64_t slots = sb_index_slots(&m->phr_ix) ? sb_index_slots(&m->phr_ix) * 2 : 4096;
    int rc = sb_index_reset(&m->phr_ix, slots);
    if (rc != SB_OK) return rc;
    for (uint32_t k = 0; k < m->n_phr; k++) {
        const srcphrase_t *p = &m->phr[k];
        sb_index_add(&m->phr_ix, hash_ids(m->src_words + p->off, p->len), k);
    }
    return SB_OK;
}

/* the source phrase of the ids at src_words[off .. off+n) (just appended): found or added */
static int phrase_intern(sb_pb_model *m, size_t off, uint32_t n, uint32_t *index) {
    uint64_t end = 0;
    uint32_t k = sb_index_slots(&m->phr_ix) ? phrase_probe(m, m->src_words + off, n, &end) : NO_WORD;
    if (k != NO_WORD) { m->src_words_len = off; *index = k; return SB_OK; }
    if (sb_index_crowded(&m->phr_ix, 50)) {
        if (phrase_grow(m) != SB_OK) return SB_ENOMEM;
        phrase_probe(m, m->src_words + off, n, &end);
    }
    if (m->n_phr == m->cap_phr) {
        uint32_t cap = m->cap_phr ? m->cap_phr * 2 : 4096;
        srcphrase_t *p = realloc(m->phr, (size_t)cap * sizeof *p);
        if (!p) return SB_ENOMEM;
        m->phr = p;
        m->cap_phr = cap;
    }
    srcphrase_t *p = &m->phr[m->n_phr];
    p->off = (uint32_t)off;
    p->len = n;
    p->first = p->n = 0;
    sb_index_put(&m->phr_ix, end, m->n_phr);
    *index = m->n_phr++;
    return SB_OK;
}

/* ---- the reader's sink (table_reader.h): phrase pairs become options, reordering scores attach to them */
static int phrase_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_model *m = rd->sink;
    size_t src_off = m->src_words_len;
    for (int k = 0; k < rec->ns; k++)
        if (push_u32(&m->src_words, &m->src_words_len, &m->src_words_cap, rec->src[k])) return SB_ENOMEM;
    uint32_t phr;
    if (phrase_intern(m, src_off, (uint32_t)rec->ns, &phr) != SB_OK) return SB_ENOMEM;
    rawopt_t r;
    memset(&r, 0, sizeof r);
    memcpy(r.o.tm, rec->scores, sizeof r.o.tm);
    r.o.tgt_off = (uint32_t)m->tgt_words_len;
    r.o.tgt_len = (uint16_t)rec->nt;
    for (int k = 0; k < rec->nt; k++)
        if (push_u32(&m->tgt_words, &m->tgt_words_len, &m->tgt_words_cap, rec->tgt[k])) return SB_ENOMEM;
    if (m->tgt_words_len > UINT32_MAX - 256) return sb_pb_reader_fail(rd, rec->line, "phrase table too large");
    r.src = phr;
    r.seq = (uint32_t)m->n_raw;
    if (m->n_raw == m->cap_raw) {
        uint64_t cap = m->cap_raw ? m->cap_raw * 2 : 65536;
        rawopt_t *p = realloc(m->raw, cap * sizeof *p);
        if (!p) return SB_ENOMEM;
        m->raw = p;
        m->cap_raw = cap;
    }
    m->raw[m->n_raw++] = r;
    if (rec->ns > m->max_len) m->max_len = rec->ns;
    m->pt_lines++;
    return SB_OK;
}

int sb_pb_feed_phrases(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line) {
    if (m->phase != 0) return SB_EINVAL;
    return sb_pb_read_phrases(&m->rd, buf, len, first_line);
}

static uint32_t lm_id(const sb_pb_model *m, uint32_t w) {
    return w < m->lm_vocab ? w : NO_WORD; /* sb_lm_score maps ids beyond its vocabulary to <unk> */
}

/* stand-alone scores of an option whose target ids are `words` */
static void option_scores(const sb_pb_model *m, sb_pb_option *o, const uint32_t *words) {
    const double *w = m->w;
    double fixed = w[SB_PB_F_WP] * -(double)o->tgt_len + w[SB_PB_F_PP] * 1.0;
    if (o->unknown) fixed += w[SB_PB_F_UNK] * -100.0;
    for (int k = 0; k < 4; k++) fixed += w[SB_PB_F_TM + k] * o->tm[k];
    o->fixed = (float)fixed;
    sb_lm_state st[2];
    memset(st, 0, sizeof st);  /* null context */
    int cur = 0, nlen;
    double est = 0, ngram = 0;
    for (int k = 0; k < o->tgt_len; k++) {
        float p = sb_lm_score(m->lm, &st[cur], lm_id(m, words[k]), &st[cur ^ 1], &nlen);
        cur ^= 1;
        if (k < m->order - 1) est += p; else ngram += p;
    }
    o->lm_est = (float)est;
    o->lm_ngram = (float)ngram;
    o->end = st[cur];
    o->estimate = (float)(fixed + w[SB_PB_F_LM] * LN10 * (est + ngram));
}

static int cmp_raw(const void *a, const void *b) {
    const rawopt_t *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->o.estimate != y->o.estimate) return x->o.estimate > y->o.estimate ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

int sb_pb_finish_phrases(sb_pb_model *m) {
    if (m->phase != 0) return SB_EINVAL;
    for (uint64_t i = 0; i < m->n_raw; i++)
        option_scores(m, &m->raw[i].o, m->tgt_words + m->raw[i].o.tgt_off);
    if (m->n_raw) qsort(m->raw, m->n_raw, sizeof *m->raw, cmp_raw);
    m->opt = malloc((m->n_raw ? m->n_raw : 1) * sizeof *m->opt);
    if (!m->opt) return SB_ENOMEM;
    uint64_t n = 0;
    for (uint64_t i = 0; i < m->n_raw;) {
        uint64_t j = i;
        while (j < m->n_raw && m->raw[j].src == m->raw[i].src) j++;
        uint64_t keep = j - i;
        if (m->table_limit && keep > (uint64_t)m->table_limit) keep = (uint64_t)m->table_limit;
        srcphrase_t *p = &m->phr[m->raw[i].src];
        p->first = (uint32_t)n;
        p->n = (uint32_t)keep;
        for (uint64_t k = 0; k < keep; k++) m->opt[n++] = m->raw[i + k].o;
        i = j;
    }
    m->n_opt = n;
    free(m->raw);
    m->raw = NULL;
    m->n_raw = m->cap_raw = 0;
    sb_pb_option *shrunk = realloc(m->opt, (n ? n : 1) * sizeof *m->opt);
    if (shrunk) m->opt = shrunk;
    m->phase = 1;
    return SB_OK;
}

static int reordering_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_model *m = rd->sink;
    uint32_t k = phrase_find(m, rec->src, (uint32_t)rec->ns);
    if (k == NO_WORD) return SB_OK;
    const uint32_t *tids = rec->tgt;
    const int nt = rec->nt;
    /* every copy of a pair the phrase table repeats gets the scores, as Moses2 looks them up by (source, target) */
    const srcphrase_t *p = &m->phr[k];
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < p->n; i++) {
            sb_pb_option *o = &m->opt[p->first + i];
            if (o->tgt_len != (uint16_t)nt || memcmp(m->tgt_words + o->tgt_off, tids, (size_t)nt * 4) != 0) continue;
            if (pass == 0) {
                if (o->has_ro) return sb_pb_reader_fail(rd, rec->line, "the pair appears twice in the reordering table");
                continue;
            }
            memcpy(o->ro, rec->scores, sizeof o->ro);
            o->has_ro = 1;
            m->ro_attached++;
        }
    }
    return SB_OK;
}

int sb_pb_feed_reordering(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line) {
    if (m->phase != 1) return SB_EINVAL;
    return sb_pb_read_reordering(&m->rd, buf, len, first_line);
}

int sb_pb_finish(sb_pb_model *m) {
    if (m->phase == 0) {
        int rc = sb_pb_finish_phrases(m);
        if (rc != SB_OK) return rc;
    }
    m->phase = 2;
    return SB_OK;
}

void sb_pb_counts(const sb_pb_model *m, uint64_t *c) {
    c[0] = m->pt_lines;
    c[1] = m->n_phr;
    c[2] = m->n_opt;
    c[3] = m->rd.ro_lines;
    c[4] = m->ro_attached;
    c[5] = m->n_opt - m->ro_attached;
    c[6] = (uint64_t)m->max_len;
    c[7] = sizeof *m + sb_pb_vocab_bytes(&m->src_vocab) + sb_pb_vocab_bytes(&m->tgt_vocab)
         + m->src_words_cap * 4 + m->tgt_words_cap * 4 + (uint64_t)m->cap_phr * sizeof(srcphrase_t)
         + sb_index_slots(&m->phr_ix) * 4 + m->n_opt * sizeof(sb_pb_option);
}

/* ---------------------------------------------------------------- sentences */
const char *sb_pb_word(const sb_pb_sentence *s, uint32_t w) {
    if (w & OOV_BIT) return s->text + s->tok_off[w & ~OOV_BIT];
    return sb_pb_vocab_str(&s->model->tgt_vocab, w);
}

const uint32_t *sb_pb_option_words(const sb_pb_sentence *s, const sb_pb_option *o) {
    if (o->unknown) return s->pass_words + o->tgt_off;
    if (SB_UNLIKELY(s->lopt != NULL) && (uintptr_t)o - (uintptr_t)s->lopt < (uintptr_t)(s->nlopt * sizeof *o))
        return s->lwords + o->tgt_off;
    return s->model->tgt_words + o->tgt_off;
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

int sb_pb_sentence_new(const sb_pb_model *m, const char *text, size_t len, sb_pb_sentence **out) {
    return sb_pb_sentence_new_ctx(m, text, len, NULL, out);
}

/* ---- the binarized table's options of a span (not in the cache): decoded, scored, sorted, cut */
typedef struct {
    sb_pb_option *opt; uint64_t n, cap;
    uint32_t *words; uint64_t nw, capw;
    rawopt_t *tmp; uint64_t captmp;
} local_t;

static int bin_span(const sb_pb_model *m, const uint32_t *ids, int n, local_t *L, sb_pb_sent_ctx *ctx,
                    uint64_t *first, int *count) {
    const uint8_t *p;
    *count = 0;
    uint32_t nt;
    int rc = sb_pb_bin_phrase(m->bin, ids, n, &p, &nt);
    if (rc || !nt) return rc;
    if (nt > L->captmp) {
        rawopt_t *t = realloc(L->tmp, (size_t)nt * sizeof *t);
        if (!t) return SB_ENOMEM;
        L->tmp = t;
        L->captmp = nt;
    }
    const int separate = sb_pb_bin_ro_mode(m->bin) == SB_PB_BIN_RO_SEPARATE;
    sb_pb_bin_target t;
    for (uint32_t k = 0; k < nt; k++) {
        if ((rc = sb_pb_bin_target_next(m->bin, &p, &t))) return rc;
        if (L->nw + (uint64_t)t.len > L->capw) {
            uint64_t c = L->capw ? L->capw * 2 : 4096;
            while (c < L->nw + (uint64_t)t.len) c *= 2;
            uint32_t *w = realloc(L->words, c * sizeof *w);
            if (!w) return SB_ENOMEM;
            L->words = w;
            L->capw = c;
        }
        rawopt_t *r = &L->tmp[k];
        memset(r, 0, sizeof *r);
        r->seq = k;
        r->o.tgt_off = (uint32_t)L->nw;
        r->o.tgt_len = (uint16_t)t.len;
        for (int i = 0; i < t.len; i++) L->words[L->nw + (uint64_t)i] = m->bin_tmap[t.ids[i]];
        memcpy(r->o.tm, t.tm, sizeof t.tm);
        if (separate) {
            if (ctx) { sb_pb_phase(ctx->phase, SB_PB_PH_RO); ctx->ro_lookups++; }
            t.has_ro = sb_pb_bin_reordering(m->bin, ids, n, t.ids, t.len, t.ro);
            if (t.has_ro < 0) return SB_EFORMAT;
            if (ctx) sb_pb_phase(ctx->phase, SB_PB_PH_PT);
        }
        if (t.has_ro) { memcpy(r->o.ro, t.ro, sizeof t.ro); r->o.has_ro = 1; }
        option_scores(m, &r->o, L->words + L->nw);
        L->nw += (uint64_t)t.len;
    }
    qsort(L->tmp, nt, sizeof *L->tmp, cmp_raw);
    uint32_t keep = m->table_limit && nt > (uint32_t)m->table_limit ? (uint32_t)m->table_limit : nt;
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

int sb_pb_sentence_new_ctx(const sb_pb_model *m, const char *text, size_t len, sb_pb_sent_ctx *ctx,
                           sb_pb_sentence **out) {
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
        s->src[n] = m->bin ? sb_pb_bin_src_word(m->bin, text + i, j - i) : sb_pb_vocab_find(&m->src_vocab, text + i, j - i);
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
    local_t L = {0};
    uint64_t *lfirst = NULL;   /* binarized: span -> first local option + 1 (0: the cache's or none) */
    if (m->bin) {
        lfirst = calloc(nsp, sizeof *lfirst);
        if (!lfirst) { sb_pb_sentence_free(s); return SB_ENOMEM; }
    }
    for (int a = 0; a < n; a++) {
        for (int b = a; b < n && b - a < m->max_len; b++) {
            if (s->src[b] == NO_WORD) break;
            uint32_t k = phrase_find(m, s->src + a, (uint32_t)(b - a + 1));
            sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
            if (m->bin) {
                if (ctx) ctx->lookups++;
                if (k != NO_WORD) {
                    if (ctx) ctx->cache_hits++;
                } else {
                    uint64_t first;
                    int cnt, rc = bin_span(m, s->src + a, b - a + 1, &L, ctx, &first, &cnt);
                    if (rc) { free(lfirst); free(L.opt); free(L.words); free(L.tmp); sb_pb_sentence_free(s); return rc; }
                    if (cnt) { lfirst[a * SB_PB_MAX_PHRASE + (b - a)] = first + 1; sp->n = cnt; }
                    continue;
                }
            }
            if (k == NO_WORD || m->phr[k].n == 0) continue;
            sp->opt = m->opt + m->phr[k].first;
            sp->n = (int)m->phr[k].n;
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
            option_scores(m, o, &s->pass_words[a]);
            s->spans[a * SB_PB_MAX_PHRASE].opt = o;
            s->spans[a * SB_PB_MAX_PHRASE].n = 1;
        }
    }
    if (m->bin) {
        free(L.tmp);
        s->lopt = L.opt;
        s->nlopt = L.n;
        s->lwords = L.words;
        for (size_t k = 0; k < nsp; k++)
            if (lfirst[k]) s->spans[k].opt = L.opt + (lfirst[k] - 1);
        free(lfirst);
    }
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

/* ---------------------------------------------------------------- hypotheses */
void sb_pb_hyp_init(const sb_pb_sentence *s, sb_pb_hyp *h) {
    memset(h, 0, sizeof *h);
    sb_lm_begin_state(s->model->lm, &h->lm);
    h->start = h->end = -1;
    h->total = s->n ? s->fc[s->n - 1] : 0.0;
}

/* lowest set bit index of a non-zero word */
static inline int lowest_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int i = 0;
    while (!(x & 1u)) { x >>= 1; i++; }
    return i;
#endif
}

/* first position >= i whose coverage bit equals `covered` (n if none) */
static inline int next_with(const uint64_t *cov, int i, int n, int covered) {
    while (i < n) {
        int w = i >> 6;
        uint64_t bits = covered ? cov[w] : ~cov[w];
        bits &= ~(uint64_t)0 << (i & 63);
        if (bits) {
            int k = (w << 6) + lowest_bit(bits);
            return k < n ? k : n;
        }
        i = (w + 1) << 6;
    }
    return n;
}

double sb_pb_estimate(const sb_pb_sentence *s, const uint64_t *cov) {
    double est = 0;
    const int n = s->n;
    int i = next_with(cov, 0, n, 0);
    while (i < n) {
        int j = next_with(cov, i, n, 1);   /* gap [i, j-1] */
        est += s->fc[i * n + (j - 1)];
        i = next_with(cov, j, n, 0);
    }
    return est;
}

int sb_pb_first_gap(const sb_pb_sentence *s, const uint64_t *cov) { return next_with(cov, 0, s->n, 0); }

static int distortion_distance(int prev_end, int start) {
    int d = prev_end < 0 ? start : prev_end - start + 1;
    return d < 0 ? -d : d;
}

int sb_pb_distortion_ok(const sb_pb_hyp *h, int start, int end, int gap, int limit) {
    if (limit < 0) return 1;
    if (distortion_distance(h->end, start) > limit) return 0;
    if (gap != start && distortion_distance(end, gap) > limit) return 0;
    return 1;
}

int sb_pb_can_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, int start, int end, int limit) {
    if (next_with(h->cov, start, end + 1, 1) <= end) return 0;  /* overlap */
    return sb_pb_distortion_ok(h, start, end, sb_pb_first_gap(s, h->cov), limit);
}

/* orientation of [start, end] after [pstart, pend]: 0 monotone, 1 swap, 2 discontinuous */
static int orientation(int pstart, int pend, int start, int end) {
    if (pend < 0) return start == 0 ? 0 : 2;
    if (start == pend + 1) return 0;
    if (pstart == end + 1) return 1;
    return 2;
}

int sb_pb_orientation(int pstart, int pend, int start, int end) { return orientation(pstart, pend, start, end); }

/* the extension's score without the LM of the first order-1 words (rescored in context) and </s> */
static inline double score_without_context_lm(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o,
                                              int start, int end) {
    const double *w = s->model->w;
    double score = h->score + o->fixed;
    score += w[SB_PB_F_DIST] * -(double)distortion_distance(h->end, start);
    int ori = orientation(h->start, h->end, start, end);
    score += w[SB_PB_F_RO + ori] * o->ro[ori];
    if (h->opt) score += w[SB_PB_F_RO + 3 + ori] * h->opt->ro[3 + ori];
    if (o->tgt_len >= s->model->order) score += w[SB_PB_F_LM] * LN10 * o->lm_ngram;
    return score;
}

double sb_pb_extend_bound(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                          double est) {
    /* log probabilities are <= 0: with a non-negative LM weight this bounds the total from above */
    if (s->model->w[SB_PB_F_LM] < 0) return INFINITY;
    return score_without_context_lm(s, h, o, start, end) + est;
}

void sb_pb_extend_nolm(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                       double est, sb_pb_hyp *out) {
    out->prev = h;
    out->opt = o;
    out->arcs = NULL;
    out->next_arc = NULL;
    memcpy(out->cov, h->cov, sizeof out->cov);
    for (int i = start; i <= end; i++) sb_pb_cov_set(out->cov, i);
    out->ncov = (int16_t)(h->ncov + (end - start + 1));
    out->start = (int16_t)start;
    out->end = (int16_t)end;
    out->tgt_len = (int16_t)(h->tgt_len + o->tgt_len);
    out->lm.length = -1;  /* not scored yet */
    out->score = score_without_context_lm(s, h, o, start, end);
    out->total = out->score + est;
}


static inline void extend_impl(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start,
                               int end, double est, sb_pb_hyp *out, _Atomic int *ph) {
    const sb_pb_model *m = s->model;
    sb_pb_extend_nolm(s, h, o, start, end, est, out);
    sb_pb_phase(ph, SB_PB_PH_LM);
    /* LM: the first order-1 words in context; the rest as scored in the phrase (in the base score) */
    const uint32_t *words = sb_pb_option_words(s, o);
    int ctx = o->tgt_len < m->order - 1 ? o->tgt_len : m->order - 1;
    sb_lm_state st[2];
    const sb_lm_state *in = &h->lm;
    int nlen, cur = 0;
    double lm = 0;
    for (int k = 0; k < ctx; k++) {
        lm += sb_lm_score(m->lm, in, lm_id(m, words[k]), &st[cur], &nlen);
        in = &st[cur];
        cur ^= 1;
    }
    out->lm = o->tgt_len > ctx ? o->end : *in;  /* tgt_len > ctx means tgt_len >= order */
    if (out->ncov == s->n) lm += sb_lm_score(m->lm, &out->lm, m->eos, &st[cur], &nlen);
    out->score += m->w[SB_PB_F_LM] * LN10 * lm;
    out->total = out->score + est;
    sb_pb_phase(ph, SB_PB_PH_SEARCH);
}

void sb_pb_extend_ph(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                     double est, sb_pb_hyp *out, _Atomic int *ph) {
    extend_impl(s, h, o, start, end, est, out, ph);
}

void sb_pb_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                  double est, sb_pb_hyp *out) {
    extend_impl(s, h, o, start, end, est, out, NULL);
}

int sb_pb_lm_queries(const sb_pb_sentence *s, const sb_pb_hyp *h, uint32_t *words) {
    const sb_pb_model *m = s->model;
    const sb_pb_option *o = h->opt;
    const uint32_t *w = sb_pb_option_words(s, o);
    int ctx = o->tgt_len < m->order - 1 ? o->tgt_len : m->order - 1;
    int n = 0;
    for (int k = 0; k < ctx; k++) words[n++] = lm_id(m, w[k]);
    return n;
}

void sb_pb_set_lm_state(const sb_pb_sentence *s, sb_pb_hyp *h, const sb_lm_state *after_ctx) {
    const sb_pb_model *m = s->model;
    const sb_pb_option *o = h->opt;
    int ctx = o->tgt_len < m->order - 1 ? o->tgt_len : m->order - 1;
    h->lm = o->tgt_len > ctx ? o->end : *after_ctx;
}

void sb_pb_add_lm(const sb_pb_sentence *s, sb_pb_hyp *h, double lm_log10) {
    double est = h->total - h->score;
    h->score += s->model->w[SB_PB_F_LM] * LN10 * lm_log10;
    h->total = h->score + est;
}

uint32_t sb_pb_eos(const sb_pb_model *m) { return m->eos; }

void sb_pb_score_lm_now(const sb_pb_sentence *s, sb_pb_hyp *h) {
    const sb_pb_model *m = s->model;
    uint32_t words[SB_LM_MAX_ORDER];
    int n = sb_pb_lm_queries(s, h, words);
    sb_lm_state st[2];
    const sb_lm_state *in = &h->prev->lm;
    int nlen, cur = 0;
    double lm = 0;
    for (int k = 0; k < n; k++) {
        lm += sb_lm_score(m->lm, in, words[k], &st[cur], &nlen);
        in = &st[cur];
        cur ^= 1;
    }
    sb_pb_set_lm_state(s, h, in);
    /* summed as sb_pb_extend sums them, so that every mode gives the same score to the bit */
    if (h->ncov == s->n) lm += sb_lm_score(m->lm, &h->lm, m->eos, &st[cur], &nlen);
    sb_pb_add_lm(s, h, lm);
}

static int lm_state_equal(const sb_lm_state *a, const sb_lm_state *b) {
    return a->length == b->length && memcmp(a->words, b->words, (size_t)a->length * sizeof(uint32_t)) == 0;
}

int sb_pb_hyp_equal(const sb_pb_hyp *a, const sb_pb_hyp *b, int forward) {
    if (a->end != b->end || (!(forward & SB_PB_RECOMB_END_ONLY) && a->start != b->start)) return 0;
    if (memcmp(a->cov, b->cov, sizeof a->cov) != 0) return 0;
    if (!lm_state_equal(&a->lm, &b->lm)) return 0;
    if ((forward & 1) && a->opt && b->opt && memcmp(a->opt->ro + 3, b->opt->ro + 3, 3 * sizeof(float)) != 0) return 0;
    return 1;
}

uint64_t sb_pb_hyp_hash(const sb_pb_hyp *h, int forward) {
    uint64_t x = (forward & SB_PB_RECOMB_END_ONLY ? 0 : (uint64_t)(uint16_t)h->start << 16) ^ (uint16_t)h->end
               ^ ((uint64_t)h->lm.length << 40);
    for (int i = 0; i < SB_PB_COVW; i++) x = (x ^ h->cov[i]) * 0x9E3779B97F4A7C15ULL, x ^= x >> 31;
    for (int i = 0; i < h->lm.length; i++) x = (x ^ h->lm.words[i]) * 0xff51afd7ed558ccdULL, x ^= x >> 29;
    if ((forward & 1) && h->opt) {
        uint32_t r[3];
        memcpy(r, h->opt->ro + 3, sizeof r);
        for (int i = 0; i < 3; i++) x = (x ^ r[i]) * 0xc4ceb9fe1a85ec53ULL, x ^= x >> 32;
    }
    return x;
}

double sb_pb_weighted(const sb_pb_model *m, const double *f) {
    double t = 0;
    for (int i = 0; i < SB_PB_NFEAT; i++) t += m->w[i] * f[i];
    return t;
}

void sb_pb_path_features(const sb_pb_sentence *s, const sb_pb_hyp *h, double *f) {
    const sb_pb_model *m = s->model;
    const sb_pb_hyp *chain[SB_PB_MAX_WORDS + 1];
    int n = 0;
    for (const sb_pb_hyp *x = h; x && x->opt; x = x->prev) chain[n++] = x;
    for (int i = 0; i < SB_PB_NFEAT; i++) f[i] = 0;
    sb_lm_state st[2];
    sb_lm_begin_state(m->lm, &st[0]);
    int cur = 0, nlen;
    double lm = 0;
    int pstart = -1, pend = -1;
    const sb_pb_option *prev = NULL;
    for (int i = n - 1; i >= 0; i--) {
        const sb_pb_hyp *x = chain[i];
        const sb_pb_option *o = x->opt;
        if (o->unknown) f[SB_PB_F_UNK] += -100.0;
        f[SB_PB_F_WP] -= o->tgt_len;
        f[SB_PB_F_PP] += 1;
        for (int k = 0; k < 4; k++) f[SB_PB_F_TM + k] += o->tm[k];
        f[SB_PB_F_DIST] -= distortion_distance(pend, x->start);
        int ori = orientation(pstart, pend, x->start, x->end);
        f[SB_PB_F_RO + ori] += o->ro[ori];
        if (prev) f[SB_PB_F_RO + 3 + ori] += prev->ro[3 + ori];
        const uint32_t *words = sb_pb_option_words(s, o);
        for (int k = 0; k < o->tgt_len; k++) {
            lm += sb_lm_score(m->lm, &st[cur], lm_id(m, words[k]), &st[cur ^ 1], &nlen);
            cur ^= 1;
        }
        pstart = x->start;
        pend = x->end;
        prev = o;
    }
    lm += sb_lm_score(m->lm, &st[cur], m->eos, &st[cur ^ 1], &nlen);
    f[SB_PB_F_LM] = lm * LN10;
}

/* ---------------------------------------------------------------- the binarized table (pbbin.h) */
int sb_pb_load_binary(sb_pb_model *m, const char *path, uint64_t cache) {
    if (m->phase != 0 || m->pt_lines || m->bin) return SB_EINVAL;
    char why[200] = "";
    int rc = sb_pb_bin_open(path, &m->bin, why, sizeof why);
    if (rc == SB_EFORMAT) return sb_pb_reader_fail(&m->rd, 0, "%s", why);
    if (rc) return rc;
    m->max_len = sb_pb_bin_max_len(m->bin);
    /* the file's target vocabulary -> our target ids (LM ids for LM words) */
    const char *str;
    uint32_t nv = sb_pb_bin_tgt_vocab(m->bin, &str);
    m->bin_tmap = malloc((size_t)(nv ? nv : 1) * sizeof *m->bin_tmap);
    if (!m->bin_tmap) return SB_ENOMEM;
    for (uint32_t i = 0; i < nv; i++) {
        size_t l = strlen(str);
        uint32_t id = sb_pb_vocab_intern(&m->tgt_vocab, str, l);
        if (id == NO_WORD) return SB_ENOMEM;
        m->bin_tmap[i] = id;
        str += l + 1;
    }
    /* the static cache: the most frequent source phrases, decoded, scored and cut as every lookup would */
    uint64_t nc = sb_pb_bin_ncache(m->bin);
    if (cache > nc) cache = nc;
    local_t L = {0};
    for (uint64_t i = 0; i < cache && rc == SB_OK; i++) {
        uint32_t ids[SB_PB_MAX_PHRASE + 1];
        int n;
        const uint8_t *p;
        if (i && i % 512 == 0) sb_pb_bin_release(m->bin);  /* the records read so far are not needed again */
        uint32_t nt;
        if ((rc = sb_pb_bin_cache_entry(m->bin, i, ids, &n, &p, &nt))) { sb_pb_reader_fail(&m->rd, 0, "corrupted phrase record"); break; }
        L.n = 0;
        L.nw = 0;
        uint64_t first;
        int cnt;
        if ((rc = bin_span(m, ids, n, &L, NULL, &first, &cnt))) {
            if (rc == SB_EFORMAT) sb_pb_reader_fail(&m->rd, 0, "corrupted phrase record");
            break;
        }
        size_t off = m->src_words_len;
        for (int k = 0; k < n && rc == SB_OK; k++) rc = push_u32(&m->src_words, &m->src_words_len, &m->src_words_cap, ids[k]);
        uint32_t phr;
        if (rc || (rc = phrase_intern(m, off, (uint32_t)n, &phr))) break;
        sb_pb_option *o = realloc(m->opt, (m->n_opt + (uint64_t)cnt + 1) * sizeof *o);
        if (!o) { rc = SB_ENOMEM; break; }
        m->opt = o;
        m->phr[phr].first = (uint32_t)m->n_opt;
        m->phr[phr].n = (uint32_t)cnt;
        for (int k = 0; k < cnt && rc == SB_OK; k++) {
            sb_pb_option x = L.opt[first + (uint64_t)k];
            uint32_t off2 = (uint32_t)m->tgt_words_len;
            for (int w = 0; w < x.tgt_len && rc == SB_OK; w++)
                rc = push_u32(&m->tgt_words, &m->tgt_words_len, &m->tgt_words_cap, L.words[x.tgt_off + (uint32_t)w]);
            x.tgt_off = off2;
            m->opt[m->n_opt++] = x;
            m->ro_attached += x.has_ro;
        }
    }
    free(L.opt);
    free(L.words);
    free(L.tmp);
    if (rc) return rc;
    sb_pb_bin_release(m->bin);
    m->phase = 2;
    return SB_OK;
}
