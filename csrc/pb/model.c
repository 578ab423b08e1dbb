/* pb/model.c - see model.h: the model's tables (text, fed through the reader as its sink, or binarized), the
 * index of the source phrases, the weights and the counts. */
#include "pb/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_WORD SB_PB_NO_WORD

const sb_lm *sb_pb_lm(const sb_pb_model *m) { return m->sc.lm; }
const double *sb_pb_weights(const sb_pb_model *m) { return m->sc.w; }
uint32_t sb_pb_eos(const sb_pb_model *m) { return m->eos; }
uint64_t sb_pb_error_line(const sb_pb_model *m) { return m->rd.err_line; }
const char *sb_pb_error_message(const sb_pb_model *m) { return m->rd.err; }


int sb_pb_set_weights(sb_pb_model *m, const double *weights) {
    for (int i = 0; i < SB_PB_NFEAT; i++)
        if (!isfinite(weights[i])) return SB_EINVAL;
    memcpy(m->sc.w, weights, sizeof m->sc.w);
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
    m->sc.lm = lm;
    m->sc.order = sb_lm_order(lm);
    m->sc.table_limit = table_limit;
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
    m->sc.lm_vocab = m->tgt_vocab.n;
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
        const sb_pb_srcphrase *p = &m->phr[k];
        if (p->len == n && memcmp(m->src_words + p->off, ids, n * sizeof(uint32_t)) == 0) return (uint32_t)k;
    }
    *end = b;
    return NO_WORD;
}

uint32_t sb_pb_phrase_find(const sb_pb_model *m, const uint32_t *ids, uint32_t n) {
    uint64_t end;
    if (!sb_index_slots(&m->phr_ix)) return NO_WORD;
    return phrase_probe(m, ids, n, &end);
}

static int phrase_grow(sb_pb_model *m) {
    uint64_t slots = sb_index_slots(&m->phr_ix) ? sb_index_slots(&m->phr_ix) * 2 : 4096;
    int rc = sb_index_reset(&m->phr_ix, slots);
    if (rc != SB_OK) return rc;
    for (uint32_t k = 0; k < m->n_phr; k++) {
        const sb_pb_srcphrase *p = &m->phr[k];
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
        sb_pb_srcphrase *p = realloc(m->phr, (size_t)cap * sizeof *p);
        if (!p) return SB_ENOMEM;
        m->phr = p;
        m->cap_phr = cap;
    }
    sb_pb_srcphrase *p = &m->phr[m->n_phr];
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
    sb_pb_rawopt r;
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
        sb_pb_rawopt *p = realloc(m->raw, cap * sizeof *p);
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

int sb_pb_finish_phrases(sb_pb_model *m) {
    if (m->phase != 0) return SB_EINVAL;
    for (uint64_t i = 0; i < m->n_raw; i++)
        sb_pb_option_scores(&m->sc, &m->raw[i].o, m->tgt_words + m->raw[i].o.tgt_off);
    if (m->n_raw) qsort(m->raw, m->n_raw, sizeof *m->raw, sb_pb_cmp_raw);
    m->opt = malloc((m->n_raw ? m->n_raw : 1) * sizeof *m->opt);
    if (!m->opt) return SB_ENOMEM;
    uint64_t n = 0;
    for (uint64_t i = 0; i < m->n_raw;) {
        uint64_t j = i;
        while (j < m->n_raw && m->raw[j].src == m->raw[i].src) j++;
        uint64_t keep = j - i;
        if (m->sc.table_limit && keep > (uint64_t)m->sc.table_limit) keep = (uint64_t)m->sc.table_limit;
        sb_pb_srcphrase *p = &m->phr[m->raw[i].src];
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
    uint32_t k = sb_pb_phrase_find(m, rec->src, (uint32_t)rec->ns);
    if (k == NO_WORD) return SB_OK;
    const uint32_t *tids = rec->tgt;
    const int nt = rec->nt;
    /* every copy of a pair the phrase table repeats gets the scores, as Moses2 looks them up by (source, target) */
    const sb_pb_srcphrase *p = &m->phr[k];
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
         + m->src_words_cap * 4 + m->tgt_words_cap * 4 + (uint64_t)m->cap_phr * sizeof(sb_pb_srcphrase)
         + sb_index_slots(&m->phr_ix) * 4 + m->n_opt * sizeof(sb_pb_option);
}

/* ---------------------------------------------------------------- the binarized table (pb/bin.h) */
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
    sb_pb_local L = {0};
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
        if ((rc = sb_pb_bin_span(&m->sc, m->bin, m->bin_tmap, ids, n, &L, NULL, &first, &cnt))) {
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
