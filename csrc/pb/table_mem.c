/* pb/table_mem.c - see table_mem.h. */
#include "pb/table_mem.h"

#include <stdlib.h>
#include <string.h>

#include "util/probing.h"

#define NO_WORD SB_PB_NO_WORD

typedef struct {
    uint32_t off, len;   /* source ids in src_words */
    uint32_t first, n;   /* options [first, first + n) once made */
} srcphrase;

struct sb_pb_mem {
    sb_pb_table base;    /* the face; base.max_len: the longest source phrase read */
    sb_pb_vocab src_vocab;
    uint32_t *src_words; size_t src_words_len, src_words_cap;
    uint32_t *tgt_words; size_t tgt_words_len, tgt_words_cap;
    srcphrase *phr; uint32_t n_phr, cap_phr;
    sb_index phr_ix;     /* the source phrases */
    sb_pb_rawopt *raw; uint64_t n_raw, cap_raw;   /* the phrase lines' options, until finish_phrases */
    sb_pb_option *opt; uint64_t n_opt, cap_opt;
    uint64_t lines, ro_attached;
};

sb_pb_table *sb_pb_mem_table(sb_pb_mem *t) { return &t->base; }
sb_pb_vocab *sb_pb_mem_src_vocab(sb_pb_mem *t) { return &t->src_vocab; }
uint64_t sb_pb_mem_lines(const sb_pb_mem *t) { return t->lines; }

static void mem_free(sb_pb_table *base) {
    sb_pb_mem *t = (sb_pb_mem *)base;
    sb_pb_vocab_free(&t->src_vocab);
    free(t->src_words);
    free(t->tgt_words);
    free(t->phr);
    sb_index_free(&t->phr_ix);
    free(t->raw);
    free(t->opt);
    free(t);
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


/* the source phrase of ids[0 .. n), or NO_WORD with *end = the empty slot the probe ended at */
static uint32_t phrase_probe(const sb_pb_mem *t, const uint32_t *ids, uint32_t n, uint64_t *end) {
    uint64_t b = sb_index_start(&t->phr_ix, sb_ids_hash(ids, n));
    for (uint32_t k; (k = sb_index_at(&t->phr_ix, b)) != UINT32_MAX; b = sb_index_step(&t->phr_ix, b)) {
        const srcphrase *p = &t->phr[k];
        if (p->len == n && memcmp(t->src_words + p->off, ids, n * sizeof(uint32_t)) == 0) return (uint32_t)k;
    }
    *end = b;
    return NO_WORD;
}

/* the source phrase of ids[0 .. n) (index into phr), or NO_WORD */
static uint32_t phrase_find(const sb_pb_mem *t, const uint32_t *ids, uint32_t n) {
    uint64_t end;
    if (!sb_index_slots(&t->phr_ix)) return NO_WORD;
    return phrase_probe(t, ids, n, &end);
}

static int phrase_grow(sb_pb_mem *t) {
    uint64_t slots = sb_index_slots(&t->phr_ix) ? sb_index_slots(&t->phr_ix) * 2 : 4096;
    int rc = sb_index_reset(&t->phr_ix, slots);
    if (rc != SB_OK) return rc;
    for (uint32_t k = 0; k < t->n_phr; k++) {
        const srcphrase *p = &t->phr[k];
        sb_index_add(&t->phr_ix, sb_ids_hash(t->src_words + p->off, p->len), k);
    }
    return SB_OK;
}

/* the source phrase of the ids at src_words[off .. off+n) (just appended): found or added */
static int phrase_intern(sb_pb_mem *t, size_t off, uint32_t n, uint32_t *index) {
    uint64_t end = 0;
    uint32_t k = sb_index_slots(&t->phr_ix) ? phrase_probe(t, t->src_words + off, n, &end) : NO_WORD;
    if (k != NO_WORD) { t->src_words_len = off; *index = k; return SB_OK; }
    if (sb_index_crowded(&t->phr_ix, 50)) {
        if (phrase_grow(t) != SB_OK) return SB_ENOMEM;
        phrase_probe(t, t->src_words + off, n, &end);
    }
    if (t->n_phr == t->cap_phr) {
        uint32_t cap = t->cap_phr ? t->cap_phr * 2 : 4096;
        srcphrase *p = realloc(t->phr, (size_t)cap * sizeof *p);
        if (!p) return SB_ENOMEM;
        t->phr = p;
        t->cap_phr = cap;
    }
    srcphrase *p = &t->phr[t->n_phr];
    p->off = (uint32_t)off;
    p->len = n;
    p->first = p->n = 0;
    sb_index_put(&t->phr_ix, end, t->n_phr);
    *index = t->n_phr++;
    return SB_OK;
}

/* ---- the reader's sink (table_reader.h): phrase pairs become options, reordering scores attach to them */
int sb_pb_mem_phrase_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_mem *t = rd->sink;
    size_t src_off = t->src_words_len;
    for (int k = 0; k < rec->ns; k++)
        if (push_u32(&t->src_words, &t->src_words_len, &t->src_words_cap, rec->src[k])) return SB_ENOMEM;
    uint32_t phr;
    if (phrase_intern(t, src_off, (uint32_t)rec->ns, &phr) != SB_OK) return SB_ENOMEM;
    sb_pb_rawopt r;
    memset(&r, 0, sizeof r);
    memcpy(r.o.tm, rec->scores, sizeof r.o.tm);
    r.o.tgt_off = (uint32_t)t->tgt_words_len;
    r.o.tgt_len = (uint16_t)rec->nt;
    for (int k = 0; k < rec->nt; k++)
        if (push_u32(&t->tgt_words, &t->tgt_words_len, &t->tgt_words_cap, rec->tgt[k])) return SB_ENOMEM;
    if (t->tgt_words_len > UINT32_MAX - 256) return sb_pb_reader_fail(rd, rec->line, "phrase table too large");
    r.src = phr;
    r.seq = (uint32_t)t->n_raw;
    if (t->n_raw == t->cap_raw) {
        uint64_t cap = t->cap_raw ? t->cap_raw * 2 : 65536;
        sb_pb_rawopt *p = realloc(t->raw, cap * sizeof *p);
        if (!p) return SB_ENOMEM;
        t->raw = p;
        t->cap_raw = cap;
    }
    t->raw[t->n_raw++] = r;
    if (rec->ns > t->base.max_len) t->base.max_len = rec->ns;
    t->lines++;
    return SB_OK;
}

int sb_pb_mem_finish_phrases(sb_pb_mem *t, const sb_pb_scorer *sc) {
    for (uint64_t i = 0; i < t->n_raw; i++)
        sb_pb_option_scores(sc, &t->raw[i].o, t->tgt_words + t->raw[i].o.tgt_off);
    if (t->n_raw) qsort(t->raw, t->n_raw, sizeof *t->raw, sb_pb_cmp_raw);
    t->opt = malloc((t->n_raw ? t->n_raw : 1) * sizeof *t->opt);
    if (!t->opt) return SB_ENOMEM;
    uint64_t n = 0;
    for (uint64_t i = 0; i < t->n_raw;) {
        uint64_t j = i;
        while (j < t->n_raw && t->raw[j].src == t->raw[i].src) j++;
        uint64_t keep = j - i;
        if (sc->table_limit && keep > (uint64_t)sc->table_limit) keep = (uint64_t)sc->table_limit;
        srcphrase *p = &t->phr[t->raw[i].src];
        p->first = (uint32_t)n;
        p->n = (uint32_t)keep;
        for (uint64_t k = 0; k < keep; k++) t->opt[n++] = t->raw[i + k].o;
        i = j;
    }
    t->n_opt = n;
    free(t->raw);
    t->raw = NULL;
    t->n_raw = t->cap_raw = 0;
    sb_pb_option *shrunk = realloc(t->opt, (n ? n : 1) * sizeof *t->opt);
    if (shrunk) t->opt = shrunk;
    t->cap_opt = n ? n : 1;
    return SB_OK;
}

int sb_pb_mem_reordering_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_mem *t = rd->sink;
    uint32_t k = phrase_find(t, rec->src, (uint32_t)rec->ns);
    if (k == NO_WORD) return SB_OK;
    const uint32_t *tids = rec->tgt;
    const int nt = rec->nt;
    /* every copy of a pair the phrase table repeats gets the scores, as Moses2 looks them up by (source, target) */
    const srcphrase *p = &t->phr[k];
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < p->n; i++) {
            sb_pb_option *o = &t->opt[p->first + i];
            if (o->tgt_len != (uint16_t)nt || memcmp(t->tgt_words + o->tgt_off, tids, (size_t)nt * 4) != 0) continue;
            if (pass == 0) {
                if (o->has_ro) return sb_pb_reader_fail(rd, rec->line, "the pair appears twice in the reordering table");
                continue;
            }
            memcpy(o->ro, rec->scores, sizeof o->ro);
            o->has_ro = 1;
            t->ro_attached++;
        }
    }
    return SB_OK;
}

/* ---- phrase by phrase (a binarized table's static cache) */
int sb_pb_mem_add(sb_pb_mem *t, const uint32_t *ids, int n, const sb_pb_option *opt, int count, const uint32_t *words) {
    int rc = SB_OK;
    size_t off = t->src_words_len;
    for (int k = 0; k < n && rc == SB_OK; k++) rc = push_u32(&t->src_words, &t->src_words_len, &t->src_words_cap, ids[k]);
    uint32_t phr;
    if (rc || (rc = phrase_intern(t, off, (uint32_t)n, &phr))) return rc;
    if (t->n_opt + (uint64_t)count > t->cap_opt) {
        uint64_t c = t->cap_opt ? t->cap_opt * 2 : 1024;
        while (c < t->n_opt + (uint64_t)count) c *= 2;
        sb_pb_option *o = realloc(t->opt, c * sizeof *o);
        if (!o) return SB_ENOMEM;
        t->opt = o;
        t->cap_opt = c;
    }
    t->phr[phr].first = (uint32_t)t->n_opt;
    t->phr[phr].n = (uint32_t)count;
    for (int k = 0; k < count && rc == SB_OK; k++) {
        sb_pb_option x = opt[k];
        uint32_t off2 = (uint32_t)t->tgt_words_len;
        for (int w = 0; w < x.tgt_len && rc == SB_OK; w++)
            rc = push_u32(&t->tgt_words, &t->tgt_words_len, &t->tgt_words_cap, words[x.tgt_off + (uint32_t)w]);
        x.tgt_off = off2;
        t->opt[t->n_opt++] = x;
        t->ro_attached += x.has_ro;
    }
    return rc;
}

/* ---- the face */
int sb_pb_mem_find(const sb_pb_mem *t, const uint32_t *ids, int n, sb_pb_hit *hit) {
    uint32_t k = phrase_find(t, ids, (uint32_t)n);
    hit->opt = NULL;
    hit->first = 0;
    hit->n = 0;
    if (k == NO_WORD) return 0;
    if (t->phr[k].n) {
        hit->opt = t->opt + t->phr[k].first;
        hit->n = (int)t->phr[k].n;
    }
    return 1;
}

static int mem_lookup(const sb_pb_table *base, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit) {
    sb_pb_mem_find((const sb_pb_mem *)base, ids, n, hit);
    return SB_OK;
}

static uint32_t mem_src_word(const sb_pb_table *base, const char *w, size_t len) {
    return sb_pb_vocab_find(&((const sb_pb_mem *)base)->src_vocab, w, len);
}

static const uint32_t *mem_words(const sb_pb_table *base) { return ((const sb_pb_mem *)base)->tgt_words; }

static void mem_stats(const sb_pb_table *base, sb_pb_table_stats *st) {
    const sb_pb_mem *t = (const sb_pb_mem *)base;
    st->lines = t->lines;
    st->phrases = t->n_phr;
    st->options = t->n_opt;
    st->ro_attached = t->ro_attached;
    st->bytes = sizeof *t + sb_pb_vocab_bytes(&t->src_vocab) + t->src_words_cap * 4 + t->tgt_words_cap * 4
              + (uint64_t)t->cap_phr * sizeof(srcphrase) + sb_index_slots(&t->phr_ix) * 4 + t->n_opt * sizeof(sb_pb_option);
}

static const sb_pb_table_ops mem_ops = {mem_src_word, mem_lookup, mem_words, mem_stats, mem_free};

int sb_pb_mem_new(sb_pb_mem **out) {
    *out = calloc(1, sizeof **out);
    if (!*out) return SB_ENOMEM;
    (*out)->base.ops = &mem_ops;
    return SB_OK;
}
