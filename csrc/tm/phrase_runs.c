/* phrase_runs.c - see phrase_runs.h. */
#define _GNU_SOURCE
#include "tm/phrase_runs.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEX_MISSING 1.0    /* w(.|.) of a word pair absent from the lex table: Moses' score multiplies by 1.0
                              (LexicalTable::permissiveLookup, phrase-extract/score.h) */
#define MAXW 128            /* words per phrase */
#define MAXL 1024           /* alignment points per phrase pair */

DEFINE_SORT(sort1, rec1, cmp1)

/* ---------------------------------------------------------------- lex table */

/* the lexical table: an sb_probing of lexent (probing.h), grown at 70% load; keys are mixed when stored (sb_mix64
 * is a bijection, 0 only for 0), so the bucket is key & mask */
static inline uint64_t lex_key(uint32_t f, uint32_t e) { return sb_mix64((((uint64_t)f << 32) | e) + 1); }
static const lexent *lex_find(const sb_probing *L, uint32_t f, uint32_t e) {
    return L->entries ? sb_probing_find(L, sizeof(lexent), SB_PROBING_MASK, lex_key(f, e)) : NULL;
}
/* the entry of (f, e), a new one (both weights -1) if absent; NULL when out of memory */
static lexent *lex_slot(sb_probing *L, uint32_t f, uint32_t e) {
    uint64_t key = lex_key(f, e);
    if (!L->entries || (L->size + 1) * 10 > L->buckets * 7) {
        int rc = L->entries ? sb_probing_resize(L, L->buckets * 2, sizeof(lexent), SB_PROBING_MASK, 0)
                            : sb_probing_init(L, 1024, sizeof(lexent), SB_PROBING_MASK, 0);
        if (rc) return NULL;
    }
    int found;
    lexent *le = sb_probing_slot(L, sizeof(lexent), key, sb_probing_ideal(L, key, SB_PROBING_MASK), L->buckets - 1,
                                 &found);
    if (le && !found) { le->key = key; le->ef = -1; le->fe = -1; L->size++; }
    return le;
}

int sb_pscore_load_lex(sb_pscore *s, int which, int fd, uint64_t *err_line, char *err, size_t errlen) {
    if (which != SB_PSCORE_LEX_F2E && which != SB_PSCORE_LEX_E2F) return SB_EINVAL;
    linereader r = {fd, malloc(CHUNK), CHUNK, 0, 0, 0};
    if (!r.buf) return SB_ENOMEM;
    int rc = SB_OK;
    uint64_t lineno = 0, entries = 0;
    size_t len;
    char *line;
    while ((line = sb_ps_next_line(&r, &len, &rc))) {
        lineno++;
        if (lineno == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) { line += 3; len -= 3; }   /* a BOM */
        if (len && line[len - 1] == '\r') line[--len] = 0;   /* a CRLF's '\r' */
        size_t bad = sb_line_control(line, len);   /* the line rule (common.h) */
        if (bad != len) {
            char why[128];
            sb_line_control_msg((unsigned char)line[bad], why, sizeof why);
            sb_ps_seterr(err, errlen, why); rc = SB_EFORMAT; break;
        }
        char *save = line;
        size_t l1, l2, l3, l4;
        char *w1 = sb_token(&save, 1, &l1), *w2 = sb_token(&save, 1, &l2), *w3 = sb_token(&save, 1, &l3);
        if (!w1 && !w2) continue;   /* blank line */
        if (!w1 || !w2 || !w3 || sb_token(&save, 1, &l4)) {
            sb_ps_seterr(err, errlen, "expected three fields `word word probability`"); rc = SB_EFORMAT; break;
        }
        char *endp;
        errno = 0;
        /* plain decimal only (strtod would also take hex floats, inf and nan, which no lex file holds) */
        int plain = w3[strspn(w3, "0123456789.eE+-")] == '\0';
        double p = strtod(w3, &endp);
        if (!plain || *endp || errno || !(p >= 0.0) || p > 1.0 + 1e-6) {
            sb_ps_seterr(err, errlen, "the probability is not a number in [0, 1]"); rc = SB_EFORMAT; break;
        }
        /* f2e: `e f w(e|f)`; e2f: `f e w(f|e)` */
        const char *fword = which == SB_PSCORE_LEX_F2E ? w2 : w1;
        const char *eword = which == SB_PSCORE_LEX_F2E ? w1 : w2;
        uint32_t fid, eid;
        if ((rc = sb_dict_intern(s->fw, fword, strlen(fword), &fid))) break;
        if ((rc = sb_dict_intern(s->ew, eword, strlen(eword), &eid))) break;
        lexent *le = lex_slot(&s->lex, fid, eid);
        if (!le) { rc = SB_ENOMEM; break; }
        if (which == SB_PSCORE_LEX_F2E) le->ef = p; else le->fe = p;
        entries++;
    }
    free(r.buf);
    if (!rc && entries == 0) {  /* every lexical weight would silently become LEX_MISSING */
        sb_ps_seterr(err, errlen, "empty lex file (no `word word probability` line)");
        rc = SB_EFORMAT;
        lineno = 0;
    }
    if (rc && err_line) *err_line = lineno;
    uint32_t id;
    if (sb_dict_find(s->fw, "NULL", 4, &id)) s->null_f = id;
    if (sb_dict_find(s->ew, "NULL", 4, &id)) s->null_e = id;
    return rc;
}

/* ---------------------------------------------------------------- load (step 1) */
typedef struct { char *buf; size_t len; uint64_t line0; } chunk_t;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    chunk_t *q; size_t cap, head, n;
    int done;          /* reader finished */
    int stop;          /* an error: everyone stops */
    int rc; uint64_t err_line; char err[256];
} loadq;

typedef struct {
    sb_pscore *s; loadq *q; int t;
    uint64_t lines;
} worker_t;

static void q_fail(loadq *q, int rc, uint64_t line, const char *msg) {
    pthread_mutex_lock(&q->mu);
    if (!q->rc || (line && line < q->err_line)) {
        q->rc = rc; q->err_line = line;
        snprintf(q->err, sizeof q->err, "%s", msg ? msg : "");
    }
    q->stop = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->mu);
}

#define STAGE 128   /* records staged between a sorted buffer and its run file (8 KiB: stays in the first-level cache
                     * beside the buffer streaming through it; 512 were evicted by it) */

/* The sorted b[0 .. n) written to fd with records of the same (target, source, alignment) as one, their counts
 * summed (the merge sums counts, so the table is the same): a run holds each distinct (pair, alignment) once, as
 * Moses' score counts per distinct pair. One read of b, through a small staging buffer (combining in place, then
 * writing, read the buffer twice: +8% first-level misses a line on the count point). *kept = records written. */
static int write_combined(int fd, const rec1 *b, size_t n, size_t *kept) {
    rec1 *stage = malloc(STAGE * sizeof(rec1));
    if (!stage) return SB_ENOMEM;
    size_t ns = 1, k = 0;
    int rc = SB_OK;
    stage[0] = b[0];
    for (size_t i = 1; i < n && !rc; i++) {
        if (cmp1(&b[i], &stage[ns - 1]) == 0) { stage[ns - 1].count += b[i].count; continue; }
        if (ns == STAGE) {   /* all but the last, which a duplicate may still join */
            rc = sb_ps_write_all(fd, stage, (STAGE - 1) * sizeof(rec1));
            k += STAGE - 1;
            stage[0] = stage[STAGE - 1];
            ns = 1;
        }
        stage[ns++] = b[i];
    }
    if (!rc) { rc = sb_ps_write_all(fd, stage, ns * sizeof(rec1)); k += ns; }
    free(stage);
    *kept = k;
    return rc;
}

/* Sort buffer t and append it as a run to thread t's step-1 file: duplicates combined (write_combined), except for
 * weighted input, whose counts need not be integers (a sum's rounding would then depend on how runs were cut). The
 * merge's splitters are sampled from the sorted buffer. */
int sb_ps_spill1(sb_pscore *s, int t) {
    size_t n = s->n1[t], kept = n;
    if (!n) return SB_OK;
    rec1 *b = s->buf1[t];
    sort1(b, n);
    int rc = s->a.weighted ? sb_ps_write_all(s->fd1[t], b, n * sizeof(rec1)) : write_combined(s->fd1[t], b, n, &kept);
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rc = sb_ps_runvec_push(&s->runs1, (run_t){t, s->end1[t], kept, NULL});
    for (size_t i = 0; i < n && !rc; i += SAMPLE_EVERY) rc = sb_ps_u64_push(&s->samples1, b[i].tgt.hi);
    s->st.runs1++;
    s->st.run_bytes += kept * sizeof(rec1);
    pthread_mutex_unlock(&s->mu);
    s->end1[t] += kept;
    s->n1[t] = 0;
    return rc;
}

/* b[0 .. n) sorted: records of the same (target, source, alignment) made one, counts summed; the new n */
static size_t combine_in_place(rec1 *b, size_t n) {
    if (!n) return 0;
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (cmp1(&b[i], &b[k]) == 0) b[k].count += b[i].count;
        else b[++k] = b[i];
    }
    return k + 1;
}

typedef struct { sb_pscore *s; int t; } sort_job;
static void *sort_buffer(void *arg) {   /* thread t's buffer sorted, equal records combined (unless weighted) */
    sort_job *j = arg;
    sb_pscore *s = j->s;
    sort1(s->buf1[j->t], s->n1[j->t]);
    if (!s->a.weighted) s->n1[j->t] = combine_in_place(s->buf1[j->t], s->n1[j->t]);
    return NULL;
}

int sb_ps_keep1(sb_pscore *s, uint64_t limit, uint64_t *bytes, int *in_mem) {
    int T = s->a.threads, rc = SB_OK;
    uint64_t k = 0;
    sort_job *jobs = malloc((size_t)T * sizeof(sort_job));   /* the buffers sorted side by side, a thread each */
    if (!jobs) return SB_ENOMEM;
    for (int t = 0; t < T; t++) jobs[t] = (sort_job){s, t};
    if (T == 1) sort_buffer(&jobs[0]);   /* (one buffer: no thread) */
    else rc = sb_run_threads(T, sort_buffer, jobs, sizeof(sort_job));
    free(jobs);
    if (rc) return rc;
    for (int t = 0; t < T; t++) k += s->n1[t] * sizeof(rec1);
    *bytes = k;
    *in_mem = k <= limit;
    for (int t = 0; t < T && !rc; t++) {
        size_t n = s->n1[t];
        if (!n) continue;
        rec1 *b = s->buf1[t];
        if (*in_mem) {
            rec1 *shrunk = realloc(b, n * sizeof(rec1));   /* (a failed shrink keeps the buffer as it is) */
            if (shrunk) s->buf1[t] = b = shrunk;
        } else if ((rc = sb_ps_write_all(s->fd1[t], b, n * sizeof(rec1)))) break;
        rc = sb_ps_runvec_push(&s->runs1, (run_t){t, *in_mem ? 0 : s->end1[t], n, *in_mem ? b : NULL});
        for (size_t i = 0; i < n && !rc; i += SAMPLE_EVERY) rc = sb_ps_u64_push(&s->samples1, b[i].tgt.hi);
        if (!*in_mem) { s->st.runs1++; s->st.run_bytes += n * sizeof(rec1); s->end1[t] += n; }
        s->n1[t] = 0;
    }
    return rc;
}

static inline double lexw(const sb_pscore *s, uint32_t f, uint32_t e, int ef) {
    if (f == UINT32_MAX || e == UINT32_MAX) return LEX_MISSING;
    const lexent *le = lex_find(&s->lex, f, e);
    if (!le) return LEX_MISSING;
    double v = ef ? le->ef : le->fe;
    return v < 0 ? LEX_MISSING : v;
}

void sb_ps_lex_weights(const sb_pscore *s, pkey src, pkey tgt, uint64_t m, int want, double *lex_ef, double *lex_fe) {
    uint32_t fid[8], eid[8];
    int nf = 0, ne = 0;
    for (uint64_t c; nf < s->maxw && (c = sb_ps_key_get(src, s->bits, nf)) && c != s->fend; nf++) fid[nf] = s->fid_of[c];
    for (uint64_t c; ne < s->maxw && (c = sb_ps_key_get(tgt, s->bits, ne)) && c != s->eend; ne++) eid[ne] = s->eid_of[c];
    if (want & 1) {
        double w = 1.0;
        for (int j = 0; j < ne; j++) {
            double sum = 0;
            int c = 0;
            for (uint64_t col = (m >> j) & 0x0101010101010101ULL; col; col &= col - 1, c++)
                sum += lexw(s, fid[__builtin_ctzll(col) >> 3], eid[j], 1);
            w *= c ? sum / c : lexw(s, s->null_f, eid[j], 1);
        }
        *lex_ef = w;
    }
    if (want & 2) {
        double w = 1.0;
        for (int i = 0; i < nf; i++) {
            double sum = 0;
            int c = 0;
            for (uint64_t row = (m >> (i * 8)) & 0xff; row; row &= row - 1, c++)
                sum += lexw(s, fid[i], eid[__builtin_ctzll(row)], 0);
            w *= c ? sum / c : lexw(s, fid[i], s->null_e, 0);
        }
        *lex_fe = w;
    }
}

static int cmp_by_str(const void *a, const void *b, void *ctx) {   /* GNU qsort_r: no global state */
    const sb_dict *d = ctx;
    return strcmp(sb_dict_str(d, *(const uint32_t *)a), sb_dict_str(d, *(const uint32_t *)b));
}
/* codes = 1-based ranks of the words in byte order, with one more code, *end, ranked where a phrase's end sorts in
 * `LC_ALL=C sort`ed lines `F ||| E ||| ...`: there a word is followed by ' ' (the next word, or the ' ||| ' that ends
 * the phrase), and the end's ' ||| ' compares with the next word of a longer phrase as a word '|||' would (no word
 * can be '|||': it would split the line). The lex loader refuses control bytes, so no word has a byte below ' ' and
 * byte order is the lines' order among words. A key puts *end after its last word (phrase_core.h), so key order is
 * the order of the sorted lines. */
static int make_codes(const sb_dict *d, uint32_t **code_of, const char ***word_of, uint32_t **len_of,
                      uint32_t **id_of, uint32_t *end, uint64_t *ncodes) {
    uint64_t n = sb_dict_size(d), maxid = sb_dict_max_id(d);
    uint32_t *ids = malloc((n + 1) * sizeof(uint32_t));
    uint32_t *idof = malloc((n + 2) * sizeof(uint32_t));   /* code -> id (codes 0 and *end: none) */
    uint32_t *code = calloc(maxid ? maxid : 1, sizeof(uint32_t));
    const char **word = malloc((n + 2) * sizeof(char *));
    uint32_t *len = malloc((n + 2) * sizeof(uint32_t));
    if (!ids || !idof || !code || !word || !len) {
        free(ids); free(idof); free(code); free((void *)word); free(len);
        return SB_ENOMEM;
    }
    uint64_t k = 0;
    for (uint64_t id = 0; id < maxid; id++) if (sb_dict_has_id(d, (uint32_t)id)) ids[k++] = (uint32_t)id;
    qsort_r(ids, k, sizeof(uint32_t), cmp_by_str, (void *)d);
    uint64_t e = 0;   /* words before the end: those that sort below '|||' */
    while (e < k) {
        const char *w = sb_dict_str(d, ids[e]);
        if (strcmp(w, "|||") >= 0) break;
        e++;
    }
    word[0] = "";
    len[0] = 0;
    idof[0] = UINT32_MAX;
    for (uint64_t r = 0; r < k; r++) {
        uint32_t c = (uint32_t)(r < e ? r + 1 : r + 2);
        code[ids[r]] = c;
        idof[c] = ids[r];
        word[c] = sb_dict_str(d, ids[r]);
        len[c] = (uint32_t)strlen(word[c]);
    }
    word[e + 1] = "";
    len[e + 1] = 0;
    idof[e + 1] = UINT32_MAX;
    free(ids);
    *code_of = code; *word_of = word; *len_of = len; *id_of = idof; *end = (uint32_t)(e + 1); *ncodes = k + 1;
    return SB_OK;
}
/* The parser's word table of one side (wordent in an sb_probing, at most half full): a word found by one hash of 8
 * bytes a step and one probe, its code beside it (the sharded dict hashed a byte a step, probed through its
 * index, then looked the code up: ~130 instructions a word). Exact: a word is compared whole; two vocabulary words
 * with one hash (p ~ 1e-11) set *collided and the dicts answer instead. */
static inline uint64_t word_key(const char *w, size_t len) { return sb_bytes_hash(w, len) | 1; }
static int build_words(const sb_dict *d, const uint32_t *code, sb_probing *t, int *collided) {
    uint64_t n = sb_dict_size(d), maxid = sb_dict_max_id(d), buckets = 16;
    while (buckets < 2 * n + 2) buckets *= 2;
    int rc = sb_probing_init(t, buckets, sizeof(wordent), SB_PROBING_MASK, 0);
    if (rc) return rc;
    for (uint64_t id = 0; id < maxid; id++) {
        if (!sb_dict_has_id(d, (uint32_t)id)) continue;
        const char *w = sb_dict_str(d, (uint32_t)id);
        size_t len = strlen(w);
        uint64_t key = word_key(w, len);
        int found;
        wordent *e = sb_probing_slot(t, sizeof(wordent), key, sb_probing_ideal(t, key, SB_PROBING_MASK),
                                     t->buckets - 1, &found);
        if (found || !e) { *collided = 1; return SB_OK; }
        *e = (wordent){key, w, (uint32_t)len, code[id]};
        t->size++;
    }
    return SB_OK;
}
/* word w[0 .. len) of side e (0: source) -> its code; 0 when it is not in the lex tables */
static inline int find_word(const sb_pscore *s, int e, const char *w, size_t len, uint32_t *code) {
    if (s->wt) {
        const wordent *x = sb_probing_find(e ? &s->ewt : &s->fwt, sizeof(wordent), SB_PROBING_MASK, word_key(w, len));
        if (!x || x->len != len || memcmp(x->w, w, len)) return 0;
        *code = x->code;
        return 1;
    }
    uint32_t id;
    if (!sb_dict_find(e ? s->ew : s->fw, w, len, &id)) return 0;
    *code = (e ? s->ecode : s->fcode)[id];
    return 1;
}

int sb_ps_prepare_vocab(sb_pscore *s) {
    if (s->fcode) return SB_OK;
    uint64_t nf, ne;
    int rc = make_codes(s->fw, &s->fcode, &s->fword, &s->fwlen, &s->fid_of, &s->fend, &nf);
    if (!rc) rc = make_codes(s->ew, &s->ecode, &s->eword, &s->ewlen, &s->eid_of, &s->eend, &ne);
    if (rc) return rc;
    int collided = 0;
    if ((rc = build_words(s->fw, s->fcode, &s->fwt, &collided)) || (rc = build_words(s->ew, s->ecode, &s->ewt, &collided)))
        return rc;
    s->wt = !collided;
    uint64_t v = (nf > ne ? nf : ne) + 1;
    int bits = 1;
    while (bits < 32 && (1ULL << bits) < v) bits++;
    s->bits = bits;
    s->maxw = 128 / bits > 8 ? 8 : 128 / bits;
    return SB_OK;
}

/* Split a phrase field into words, in place (each NUL-terminated where it lies: no copy). */
static int split_words(char *p, char **words, size_t *wlen, int *nw) {
    int n = 0;
    char *save = p;
    size_t l;
    for (char *w = sb_token(&save, 1, &l); w; w = sb_token(&save, 1, &l)) {
        if (n == MAXW) return SB_EFORMAT;
        words[n] = w;
        wlen[n++] = l;
    }
    *nw = n;
    return n ? SB_OK : SB_EFORMAT;
}

/* An alignment point `i-j`: two runs of decimal digits joined by one '-', nothing else (no sign, no space). A value
 * past 10^8 stays there (outside any phrase pair, as strtol's LONG_MAX was); strtol cost 600 instructions a line. */
static inline unsigned long point_num(const char **pp) {
    const char *p = *pp;
    unsigned long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) if (v < 100000000UL) v = v * 10 + (unsigned long)(*p - '0');
    *pp = p;
    return v;
}
static inline int parse_point(const char *tok, long *i, long *j) {
    const char *p = tok;
    if (*p < '0' || *p > '9') return -1;
    *i = (long)point_num(&p);
    if (*p++ != '-' || *p < '0' || *p > '9') return -1;
    *j = (long)point_num(&p);
    return *p ? -1 : 0;
}

/* inverse: the line is `E ||| F ||| ei-fi ...` (extract.inv); the record is the same as for extract */
int sb_ps_parse_line(sb_pscore *s, char *line, rec1 *r, const char **msg, char *msgbuf, size_t msglen, int inverse) {
    char *fields[5];
    int nf = 0;
    char *p = line;
    for (;;) {
        char *sep = strstr(p, "|||");
        if (nf == 4) { *msg = "too many ||| fields"; return SB_EFORMAT; }
        fields[nf++] = p;
        if (!sep) break;
        *sep = 0;
        p = sep + 3;
    }
    int want = s->a.weighted ? 4 : 3;
    if (nf != want) {
        *msg = s->a.weighted ? "expected `F ||| E ||| alignment ||| count`" : "expected `F ||| E ||| alignment`";
        return SB_EFORMAT;
    }
    char *fwords[MAXW], *ewords[MAXW];
    size_t fwl[MAXW], ewl[MAXW];
    int nfw, new_;
    char *end;
    if (inverse) { char *x = fields[0]; fields[0] = fields[1]; fields[1] = x; }
    if (split_words(fields[0], fwords, fwl, &nfw)) { *msg = "empty or over-long source phrase"; return SB_EFORMAT; }
    if (split_words(fields[1], ewords, ewl, &new_)) { *msg = "empty or over-long target phrase"; return SB_EFORMAT; }
    if (nfw > s->maxw || new_ > s->maxw) {
        *msg = "phrase has more words than fit a key (at most 8, fewer for vocabularies over 2^16 words)";
        return SB_EFORMAT;
    }
    /* alignment */
    int nl = 0;
    uint64_t amask = 0;
    char *save = fields[2];
    size_t tl;
    for (char *tok = sb_token(&save, 1, &tl); tok; tok = sb_token(&save, 1, &tl)) {
        long i, j;
        if (parse_point(tok, &i, &j)) { *msg = "bad alignment point (expected i-j)"; return SB_EFORMAT; }
        if (inverse) { long x = i; i = j; j = x; }
        if (i >= nfw || j >= new_) { *msg = "alignment point outside the phrase pair"; return SB_EFORMAT; }
        if (nl == MAXL) { *msg = "too many alignment points"; return SB_EFORMAT; }
        nl++;
        amask |= 1ULL << (i * 8 + j);
    }
    double count = 1.0;
    if (s->a.weighted) {
        char *cs = sb_ps_trim(fields[3], &end), *ce;
        errno = 0;
        count = strtod(cs, &ce);
        if (!*cs || *ce || errno || !(count > 0) || !isfinite(count)) { *msg = "bad count"; return SB_EFORMAT; }
    }
    pkey ks = {0, 0}, kt = {0, 0};
    uint32_t code;
    for (int i = 0; i < nfw; i++) {
        if (!find_word(s, 0, fwords[i], fwl[i], &code)) {
            snprintf(msgbuf, msglen, "the source word '%.*s' is not in the lex tables", (int)(fwl[i] > 100 ? 100 : fwl[i]), fwords[i]);
            *msg = msgbuf;
            return SB_EFORMAT;
        }
        sb_ps_key_put(&ks, s->bits, i, code);
    }
    for (int j = 0; j < new_; j++) {
        if (!find_word(s, 1, ewords[j], ewl[j], &code)) {
            snprintf(msgbuf, msglen, "the target word '%.*s' is not in the lex tables", (int)(ewl[j] > 100 ? 100 : ewl[j]), ewords[j]);
            *msg = msgbuf;
            return SB_EFORMAT;
        }
        sb_ps_key_put(&kt, s->bits, j, code);
    }
    sb_ps_key_end(&ks, s->bits, s->maxw, nfw, s->fend);
    sb_ps_key_end(&kt, s->bits, s->maxw, new_, s->eend);
    r->src = ks; r->tgt = kt;
    r->align = amask;
    r->count = count;
    return SB_OK;
}

/* Lines p .. end parsed into thread t's buffer (in place: each cut at its '\n'; *end writable, one byte past the
 * last line's), *lineno the first's number: on an error *lineno is the failing line's and *msg says what is wrong;
 * *lines counts the records made. */
static int parse_lines(sb_pscore *s, int t, char *p, char *end, uint64_t *lineno, uint64_t *lines, const char **msg,
                       char *msgbuf, size_t msglen) {
    int rc = SB_OK;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        *le = 0;
        size_t ll = (size_t)(le - p);
        if (ll && p[ll - 1] == '\r') p[--ll] = 0;   /* a CRLF's '\r' */
        size_t bad = sb_line_control(p, ll);
        if (bad != ll) {   /* the line rule (common.h): a NUL would cut the line short, a '\r' split it */
            sb_line_control_msg((unsigned char)p[bad], msgbuf, msglen);
            *msg = msgbuf;
            return SB_EFORMAT;
        }
        if (*lineno == 1 && ll >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3;   /* a BOM at the file's start */
        char *w = p;   /* (the fields' own splitting skips separators: no trim, no strlen) */
        while (*w == ' ' || *w == '\t') w++;
        if (*w) {
            if (s->n1[t] == s->cap1 && (rc = sb_ps_spill1(s, t))) { *msg = "writing a run failed"; return rc; }
            rc = sb_ps_parse_line(s, w, &s->buf1[t][s->n1[t]], msg, msgbuf, msglen, 0);
            if (rc) { if (!*msg) *msg = "out of memory"; return rc; }
            s->n1[t]++;
            (*lines)++;
        }
        (*lineno)++;
        p = le + 1;
    }
    return rc;
}

static void *load_worker(void *arg) {
    worker_t *w = arg;
    sb_pscore *s = w->s;
    loadq *q = w->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->n && !q->done && !q->stop) pthread_cond_wait(&q->not_empty, &q->mu);
        if (q->stop || (!q->n && q->done)) { pthread_mutex_unlock(&q->mu); break; }
        chunk_t c = q->q[q->head];
        q->head = (q->head + 1) % q->cap; q->n--;
        pthread_cond_signal(&q->not_full);
        pthread_mutex_unlock(&q->mu);

        uint64_t lineno = c.line0;
        const char *msg = NULL;
        char msgbuf[192];
        int rc = parse_lines(s, w->t, c.buf, c.buf + c.len, &lineno, &w->lines, &msg, msgbuf, sizeof msgbuf);
        free(c.buf);
        if (rc) { q_fail(q, rc, lineno, msg); break; }
    }
    return NULL;
}

int sb_pscore_begin_pairs(sb_pscore *s, int *maxw) {
    if (!s->buf1[0]) return SB_EINVAL;   /* finish() already ran */
    int rc = sb_ps_prepare_vocab(s);
    if (!rc) *maxw = s->maxw;
    return rc;
}

int sb_pscore_load_text(sb_pscore *s, int t, char *buf, size_t len, uint64_t *err_line, char *err, size_t errlen) {
    if (!s->buf1[0] || t < 0 || t >= s->a.threads || !len || buf[len - 1] != '\n') return SB_EINVAL;
    int rc = sb_ps_prepare_vocab(s);
    if (rc) return rc;
    uint64_t t0 = sb_now_ns(), lineno = 1;
    const char *msg = NULL;
    char msgbuf[192];
    rc = parse_lines(s, t, buf, buf + len - 1, &lineno, &s->st.lines, &msg, msgbuf, sizeof msgbuf);
    if (rc) {
        if (err_line) *err_line = lineno;
        sb_ps_seterr(err, errlen, msg ? msg : "");
    }
    s->st.ns_load += sb_now_ns() - t0;
    return rc;
}

uint32_t sb_ps_word_code(const sb_pscore *s, int e, const char *w, size_t len) {
    uint32_t code;
    return find_word(s, e, w, len, &code) ? code : 0;
}

int sb_ps_add_pair(sb_pscore *s, int t, const uint32_t *fc, int nf, const uint32_t *ec, int ne, uint64_t align) {
    if (nf > s->maxw || ne > s->maxw) return SB_EINVAL;
    if (s->n1[t] == s->cap1) {
        int rc = sb_ps_spill1(s, t);
        if (rc) return rc;
    }
    rec1 *r = &s->buf1[t][s->n1[t]++];
    pkey ks = {0, 0}, kt = {0, 0};
    for (int i = 0; i < nf; i++) sb_ps_key_put(&ks, s->bits, i, fc[i]);
    for (int j = 0; j < ne; j++) sb_ps_key_put(&kt, s->bits, j, ec[j]);
    sb_ps_key_end(&ks, s->bits, s->maxw, nf, s->fend);
    sb_ps_key_end(&kt, s->bits, s->maxw, ne, s->eend);
    *r = (rec1){kt, ks, align, 1.0};
    s->st.lines++;
    return SB_OK;
}

int sb_pscore_load_extract(sb_pscore *s, int fd, uint64_t *err_line, char *err, size_t errlen) {
    int T = s->a.threads;
    if (!s->buf1[0]) return SB_EINVAL;   /* finish() already ran */
    int prc = sb_ps_prepare_vocab(s);
    if (prc) return prc;
    uint64_t t0 = sb_now_ns();
    loadq q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.not_empty, NULL);
    pthread_cond_init(&q.not_full, NULL);
    q.cap = (size_t)(2 * T + 2);
    q.q = calloc(q.cap, sizeof(chunk_t));
    worker_t *ws = calloc(T, sizeof(worker_t));
    pthread_t *th = calloc(T, sizeof(pthread_t));
    int rc = SB_OK, started = 0;
    if (!q.q || !ws || !th) rc = SB_ENOMEM;
    for (int t = 0; t < T && !rc; t++) {
        ws[t] = (worker_t){s, &q, t, 0};
        if (pthread_create(&th[t], NULL, load_worker, &ws[t])) rc = SB_ETHREAD; else started++;
    }
    /* reader: chunks ending at a newline */
    char *carry = NULL; size_t carry_len = 0;
    uint64_t line0 = 1;
    int eof = 0;
    while (!rc && !eof) {
        size_t cap = CHUNK + carry_len;
        char *buf = malloc(cap + 1);
        if (!buf) { rc = SB_ENOMEM; break; }
        if (carry_len) memcpy(buf, carry, carry_len);
        size_t len = carry_len;
        free(carry); carry = NULL; carry_len = 0;
        while (len < cap) {
            ssize_t n = read(fd, buf + len, cap - len);
            if (n < 0) { if (errno == EINTR) continue; rc = SB_EIO; break; }
            if (n == 0) { eof = 1; break; }
            len += (size_t)n;
        }
        if (rc) { free(buf); break; }
        size_t cut = len;
        if (!eof) {
            char *nl = memrchr(buf, '\n', len);
            if (!nl) { carry = buf; carry_len = len; continue; }   /* a line longer than the chunk: grow */
            cut = (size_t)(nl - buf) + 1;
            carry_len = len - cut;
            if (carry_len) {
                carry = malloc(carry_len);
                if (!carry) { free(buf); rc = SB_ENOMEM; break; }
                memcpy(carry, buf + cut, carry_len);
            }
        }
        if (cut == 0) { free(buf); continue; }
        buf[cut] = 0;
        uint64_t nlines = 0;
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + cut - p))); p++) nlines++;
        if (cut && buf[cut - 1] != '\n') nlines++;
        pthread_mutex_lock(&q.mu);
        while (q.n == q.cap && !q.stop) pthread_cond_wait(&q.not_full, &q.mu);
        if (q.stop) { pthread_mutex_unlock(&q.mu); free(buf); break; }
        q.q[(q.head + q.n) % q.cap] = (chunk_t){buf, cut, line0};
        q.n++;
        pthread_cond_signal(&q.not_empty);
        pthread_mutex_unlock(&q.mu);
        line0 += nlines;
    }
    free(carry);
    pthread_mutex_lock(&q.mu);
    q.done = 1;
    if (rc) q.stop = 1;
    pthread_cond_broadcast(&q.not_empty);
    pthread_mutex_unlock(&q.mu);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    /* drain chunks left in the queue after a stop */
    while (q.n) { free(q.q[q.head].buf); q.head = (q.head + 1) % q.cap; q.n--; }
    if (!rc && q.rc) {
        rc = q.rc;
        if (err_line) *err_line = q.err_line;
        sb_ps_seterr(err, errlen, q.err);
    }
    for (int t = 0; t < T; t++) s->st.lines += ws ? ws[t].lines : 0;
    pthread_mutex_destroy(&q.mu);
    pthread_cond_destroy(&q.not_empty);
    pthread_cond_destroy(&q.not_full);
    free(q.q); free(ws); free(th);
    s->st.ns_load += sb_now_ns() - t0;
    return rc;
}
