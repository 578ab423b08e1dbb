/* extract.c - Moses phrase extraction, the fast path of tm/extract.py (see extract.h). */
#include "tm/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb/vocab.h"
#include "tm/phrase_runs.h"

/* 1 if the byte at p separates words: ASCII space and TAB only (the word rule of CONTRIBUTING.md "Text lines",
 * ioutil.words, the decoder's and Moses'); U+00A0, U+2028, U+3000 and every other byte are word characters. */
static inline int ws_len(const unsigned char *p, const unsigned char *end) {
    (void)end;
    return p[0] == ' ' || p[0] == '\t';
}

/* Words of line [b, b + len): starts and ends (offsets from b) into st/en; returns the count. */
static int32_t split_words(const char *b, size_t len, int32_t *st, int32_t *en) {
    const unsigned char *p = (const unsigned char *)b, *end = p + len;
    const unsigned char *q = p;
    int32_t n = 0;
    while (q < end) {
        int w;
        while (q < end && (w = ws_len(q, end)) > 0) q += w;
        if (q >= end) break;
        st[n] = (int32_t)(q - p);
        while (q < end && ws_len(q, end) == 0) q++;
        en[n++] = (int32_t)(q - p);
    }
    return n;
}

/* 1 if words are separated by exactly one ' ' each. */
static int single_spaced(const char *b, const int32_t *st, const int32_t *en, int32_t n) {
    for (int32_t i = 1; i < n; i++)
        if (st[i] != en[i - 1] + 1 || b[en[i - 1]] != ' ') return 0;
    return 1;
}

static int reserve(sb_extract_state *s, int k, size_t more) {
    return SB_GROW(s->data[k], s->cap[k], s->len[k] + more, 1u << 20);
}

__attribute__((noinline)) static char *put_int_long(char *o, int32_t v) {
    char tmp[12];
    int n = 0;
    while (v) { tmp[n++] = (char)('0' + v % 10); v /= 10; }
    while (n) *o++ = tmp[--n];
    return o;
}

/* v >= 0 in decimal (relative positions: one digit but for phrases longer than 10 words) */
static inline char *put_int(char *o, int32_t v) {
    if (SB_LIKELY(v < 10)) { *o = (char)('0' + v); return o + 1; }
    return put_int_long(o, v);
}

/* Words a..b of a line joined by single spaces; single: the line's words are all one space apart (a tokenized
 * corpus), so the phrase is one run of the line. */
static inline char *put_phrase(char *o, const char *line, const int32_t *ws, const int32_t *we, int32_t a, int32_t b,
                               int single) {
    if (single) {
        size_t n = (size_t)(we[b] - ws[a]);
        memcpy(o, line + ws[a], n);
        return o + n;
    }
    for (int32_t i = a; i <= b; i++) {
        if (i > a) *o++ = ' ';
        size_t n = (size_t)(we[i] - ws[i]);
        memcpy(o, line + ws[i], n);
        o += n;
    }
    return o;
}

static inline size_t phrase_bytes(const int32_t *ws, const int32_t *we, int32_t a, int32_t b) {
    return (size_t)(we[b] - ws[a]);  /* an upper bound: the words and what separates them */
}

typedef struct {
    int32_t n_f, n_e;
    const int32_t *e_off;   /* points of E word e: fs[e_off[e] .. e_off[e + 1]), F ascending */
    const int32_t *fs;
} sent;

static inline int linked(const sent *S, int32_t f, int32_t e) {
    if ((f == -1 && e == -1) || (f == S->n_f && e == S->n_e)) return 1;
    if (f < 0 || e < 0 || f >= S->n_f || e >= S->n_e) return 0;
    for (int32_t i = S->e_off[e]; i < S->e_off[e + 1]; i++)
        if (S->fs[i] == f) return 1;
    return 0;
}

static inline const char *orient(const sent *S, int32_t f1, int32_t e1, int32_t f2, int32_t e2, size_t *n) {
    int a = linked(S, f1, e1), b = linked(S, f2, e2);
    if (a && !b) { *n = 4; return "mono"; }
    if (b && !a) { *n = 4; return "swap"; }
    *n = 5;
    return "other";
}

/* Parses the alignment line into (f, e) pairs; 0 if the reference path must take the sentence. */
static int parse_points(const char *b, size_t len, int32_t *pf, int32_t *pe, int32_t *np) {
    const unsigned char *p = (const unsigned char *)b, *end = p + len;
    int32_t n = 0;
    while (p < end) {
        if (*p == ' ' || *p == '\t') { p++; continue; }
        int32_t v[2];
        for (int k = 0; k < 2; k++) {
            const unsigned char *d = p;
            int64_t x = 0;
            while (p < end && *p >= '0' && *p <= '9') {
                x = x * 10 + (*p - '0');
                if (x > (1 << 30)) return 0;
                p++;
            }
            if (p == d) return 0;
            v[k] = (int32_t)x;
            if (k == 0) {
                if (p >= end || *p != '-') return 0;
                p++;
            }
        }
        if (p < end && *p != ' ' && *p != '\t') return 0;  /* a non-ASCII byte or a second '-' */
        pf[n] = v[0];
        pe[n] = v[1];
        n++;
    }
    *np = n;
    return 1;
}

/* ---------------------------------------------------------------- the lexical counts (flag 4) */
typedef struct { uint32_t f, e; int64_t c; } lex_pair;

typedef struct {
    sb_pb_vocab v;          /* every F and E word and NULL: one vocabulary (a word on both sides is one id) */
    int64_t *cf, *ce;       /* c(f), c(e) by word id */
    uint32_t cnt_cap;
    lex_pair *p;            /* c(f,e), found through ix */
    size_t np, pcap;
    sb_index ix;
    uint32_t null_id;
    uint32_t *ids;          /* per-sentence scratch: the F words' ids, then the E words' */
    size_t ids_cap;
    unsigned char *aligned; /* per-sentence scratch: F words, then E words */
} lex_counts;

static void lex_free(lex_counts *L) {
    if (!L) return;
    sb_pb_vocab_free(&L->v);
    free(L->cf);
    free(L->ce);
    free(L->p);
    sb_index_free(&L->ix);
    free(L->ids);
    free(L->aligned);
    free(L);
}

static lex_counts *lex_get(sb_extract_state *st) {
    if (st->lex) return st->lex;
    lex_counts *L = calloc(1, sizeof(*L));
    if (!L) return NULL;
    if ((L->null_id = sb_pb_vocab_intern(&L->v, "NULL", 4)) == SB_PB_NO_WORD) { lex_free(L); return NULL; }
    st->lex = L;
    return L;
}

static inline uint64_t pair_hash(uint32_t f, uint32_t e) { return sb_mix64(((uint64_t)f << 32) | e); }

static int lex_pair_add(lex_counts *L, uint32_t f, uint32_t e) {
    if (sb_index_crowded(&L->ix, 50)) {
        uint64_t slots = sb_index_slots(&L->ix) ? sb_index_slots(&L->ix) * 2 : 4096;
        int rc = sb_index_reset(&L->ix, slots);
        if (rc != SB_OK) return rc;
        for (size_t i = 0; i < L->np; i++) sb_index_add(&L->ix, pair_hash(L->p[i].f, L->p[i].e), (uint32_t)i);
    }
    uint64_t b = sb_index_start(&L->ix, pair_hash(f, e));
    for (uint32_t i; (i = sb_index_at(&L->ix, b)) != UINT32_MAX; b = sb_index_step(&L->ix, b))
        if (L->p[i].f == f && L->p[i].e == e) { L->p[i].c++; return SB_OK; }
    if (L->np >= UINT32_MAX - 1) return SB_EFULL;
    if (SB_GROW(L->p, L->pcap, L->np + 1, 4096)) return SB_ENOMEM;
    L->p[L->np] = (lex_pair){f, e, 1};
    sb_index_put(&L->ix, b, (uint32_t)L->np++);
    return SB_OK;
}

/* the id of a word, c(f) and c(e) sized for it */
static int lex_word(lex_counts *L, const char *w, size_t n, uint32_t *id) {
    if ((*id = sb_pb_vocab_intern(&L->v, w, n)) == SB_PB_NO_WORD) return SB_ENOMEM;
    if (*id >= L->cnt_cap) {
        uint32_t cap = L->cnt_cap ? L->cnt_cap * 2 : 4096;
        int64_t *cf = realloc(L->cf, (size_t)cap * sizeof(int64_t));
        if (!cf) return SB_ENOMEM;
        L->cf = cf;
        int64_t *ce = realloc(L->ce, (size_t)cap * sizeof(int64_t));
        if (!ce) return SB_ENOMEM;
        L->ce = ce;
        memset(L->cf + L->cnt_cap, 0, (size_t)(cap - L->cnt_cap) * sizeof(int64_t));
        memset(L->ce + L->cnt_cap, 0, (size_t)(cap - L->cnt_cap) * sizeof(int64_t));
        L->cnt_cap = cap;
    }
    return SB_OK;
}

/* One sentence pair's events (lexical_counts' loop): each point (f, e) counts c(f,e), c(f), c(e); then each
 * unaligned E word w counts c(NULL,w), c(w), c(NULL); each unaligned F word w counts c(w,NULL), c(w), c(NULL).
 * Points are within the pair (the caller checked). */
static int lex_sentence(lex_counts *L, const char *ls, const int32_t *fws, const int32_t *fwe, int32_t n_f,
                        const char *lt, const int32_t *ews, const int32_t *ewe, int32_t n_e,
                        const int32_t *pf, const int32_t *pe, int32_t np) {
    size_t need = (size_t)n_f + (size_t)n_e;
    if (need > L->ids_cap) {
        uint32_t *ids = realloc(L->ids, need * sizeof(uint32_t));
        if (!ids) return SB_ENOMEM;
        L->ids = ids;
        unsigned char *al = realloc(L->aligned, need);
        if (!al) return SB_ENOMEM;
        L->aligned = al;
        L->ids_cap = need;
    }
    uint32_t *fid = L->ids, *eid = L->ids + n_f;
    unsigned char *fal = L->aligned, *eal = L->aligned + n_f;
    int rc;
    for (int32_t i = 0; i < n_f; i++)
        if ((rc = lex_word(L, ls + fws[i], (size_t)(fwe[i] - fws[i]), &fid[i]))) return rc;
    for (int32_t i = 0; i < n_e; i++)
        if ((rc = lex_word(L, lt + ews[i], (size_t)(ewe[i] - ews[i]), &eid[i]))) return rc;
    memset(L->aligned, 0, need);
    for (int32_t i = 0; i < np; i++) {
        uint32_t f = fid[pf[i]], e = eid[pe[i]];
        fal[pf[i]] = eal[pe[i]] = 1;
        if ((rc = lex_pair_add(L, f, e))) return rc;
        L->cf[f]++;
        L->ce[e]++;
    }
    const uint32_t nul = L->null_id;
    for (int32_t i = 0; i < n_e; i++)
        if (!eal[i]) {
            if ((rc = lex_pair_add(L, nul, eid[i]))) return rc;
            L->ce[eid[i]]++;
            L->cf[nul]++;
        }
    for (int32_t i = 0; i < n_f; i++)
        if (!fal[i]) {
            if ((rc = lex_pair_add(L, fid[i], nul))) return rc;
            L->cf[fid[i]]++;
            L->ce[nul]++;
        }
    return SB_OK;
}

/* One sentence pair: 1 done, 0 needs the reference path, < 0 an error code. */
static int do_sentence(sb_extract_state *st, const char *ls, size_t nls, const char *lt, size_t nlt,
                       const char *la, size_t nla, int max_len, int flags) {
    size_t wf_max = nls / 2 + 1, we_max = nlt / 2 + 1, p_max = nla / 4 + 1;
    size_t need = 2 * wf_max + 2 * we_max + 3 * p_max + (we_max + 2) + 2 * wf_max + wf_max + we_max;
    if (need > st->scratch_cap) {
        int32_t *p = realloc(st->scratch, need * sizeof(int32_t));
        if (!p) return SB_ENOMEM;
        st->scratch = p;
        st->scratch_cap = need;
    }
    int32_t *fws = st->scratch, *fwe = fws + wf_max, *ews = fwe + wf_max, *ewe = ews + we_max;
    int32_t *pf = ewe + we_max, *pe = pf + p_max, *fs = pe + p_max, *e_off = fs + p_max;
    int32_t *count_f = e_off + we_max + 2, *used = count_f + wf_max;
    uint32_t *fcode = (uint32_t *)(used + wf_max), *ecode = fcode + wf_max;   /* flag 16: the words' codes */
    int32_t np;
    if (!parse_points(la, nla, pf, pe, &np)) return 0;
    int32_t n_f = split_words(ls, nls, fws, fwe), n_e = split_words(lt, nlt, ews, ewe);
    for (int32_t i = 0; i < np; i++)
        if (pf[i] >= n_f || pe[i] >= n_e) return 0;
    /* points grouped by E word (counting sort), each group's F ascending (insertion sort: groups are small) */
    memset(e_off, 0, (size_t)(n_e + 2) * sizeof(int32_t));
    memset(count_f, 0, (size_t)n_f * sizeof(int32_t));
    for (int32_t i = 0; i < np; i++) { e_off[pe[i] + 2]++; count_f[pf[i]]++; }
    for (int32_t e = 0; e < n_e; e++) e_off[e + 2] += e_off[e + 1];
    for (int32_t i = 0; i < np; i++) fs[e_off[pe[i] + 1]++] = pf[i];
    for (int32_t e = 0; e < n_e; e++) {
        for (int32_t i = e_off[e] + 1; i < e_off[e + 1]; i++) {
            int32_t x = fs[i], j = i;
            while (j > e_off[e] && fs[j - 1] > x) { fs[j] = fs[j - 1]; j--; }
            fs[j] = x;
        }
    }
    if (flags & 4) {
        lex_counts *L = lex_get(st);
        if (!L) return SB_ENOMEM;
        int rc = lex_sentence(L, ls, fws, fwe, n_f, lt, ews, ewe, n_e, pf, pe, np);
        if (rc) return rc;
    }
    if ((flags & 8) && !(flags & 3)) return 1;   /* the lexical counts only: no phrase pair is needed */
    sb_pscore *ps = (flags & 16) ? st->score : NULL;
    if (ps) {   /* each word's code once a sentence; a pair's record is then its codes packed */
        for (int32_t i = 0; i < n_f; i++)
            if (!(fcode[i] = sb_ps_word_code(ps, 0, ls + fws[i], (size_t)(fwe[i] - fws[i])))) return SB_EINVAL;
        for (int32_t i = 0; i < n_e; i++)
            if (!(ecode[i] = sb_ps_word_code(ps, 1, lt + ews[i], (size_t)(ewe[i] - ews[i])))) return SB_EINVAL;
    }
    sent S = {n_f, n_e, e_off, fs};
    const int f1 = single_spaced(ls, fws, fwe, n_f), e1 = single_spaced(lt, ews, ewe, n_e);
    const int64_t L = max_len;  /* 64-bit: s_e + L and max_f - L cannot overflow */
    for (int32_t s_e = 0; s_e < n_e; s_e++) {
        memcpy(used, count_f, (size_t)n_f * sizeof(int32_t));
        int32_t min_f = n_f, max_f = -1;
        int64_t e_lim = (int64_t)s_e + L < n_e ? (int64_t)s_e + L : n_e;
        for (int32_t e_e = s_e; e_e < e_lim; e_e++) {
            for (int32_t i = e_off[e_e]; i < e_off[e_e + 1]; i++) {
                int32_t f = fs[i];
                used[f]--;
                if (f < min_f) min_f = f;
                if (f > max_f) max_f = f;
            }
            if (max_f < 0 || max_f - min_f >= L) continue;
            int ok = 1;
            for (int32_t f = min_f; f <= max_f; f++)
                if (used[f]) { ok = 0; break; }
            if (!ok) continue;
            int32_t links = e_off[e_e + 1] - e_off[s_e];
            for (int32_t s_f = min_f; s_f >= 0 && s_f > max_f - L && (s_f == min_f || count_f[s_f] == 0);
                 s_f--) {
                for (int32_t e_f = max_f; e_f < n_f && e_f < s_f + L && (e_f == max_f || count_f[e_f] == 0);
                     e_f++) {
                    size_t fb = phrase_bytes(fws, fwe, s_f, e_f), eb = phrase_bytes(ews, ewe, s_e, e_e);
                    size_t line = fb + eb + 16 + (size_t)links * 24;
                    int rc;
                    char *o;
                    int first;
                    if (ps) {   /* the record the scorer would parse from the extract line */
                        if (e_f - s_f >= 8 || e_e - s_e >= 8) return SB_EINVAL;   /* (the alignment's 8x8 bits) */
                        uint64_t m = 0;
                        for (int32_t e = s_e; e <= e_e; e++)
                            for (int32_t i = e_off[e]; i < e_off[e + 1]; i++)
                                m |= 1ULL << ((fs[i] - s_f) * 8 + (e - s_e));
                        if ((rc = sb_ps_add_pair(ps, st->score_t, fcode + s_f, e_f - s_f + 1, ecode + s_e,
                                                 e_e - s_e + 1, m)))
                            return rc;
                        goto inverse;
                    }
                    if (flags & 8) goto inverse;   /* no extract line */
                    if ((rc = reserve(st, 0, line))) return rc;
                    o = st->data[0] + st->len[0];
                    o = put_phrase(o, ls, fws, fwe, s_f, e_f, f1);
                    memcpy(o, " ||| ", 5); o += 5;
                    o = put_phrase(o, lt, ews, ewe, s_e, e_e, e1);
                    memcpy(o, " ||| ", 5); o += 5;
                    first = 1;
                    for (int32_t e = s_e; e <= e_e; e++)
                        for (int32_t i = e_off[e]; i < e_off[e + 1]; i++) {
                            if (!first) *o++ = ' ';
                            first = 0;
                            o = put_int(o, fs[i] - s_f);
                            *o++ = '-';
                            o = put_int(o, e - s_e);
                        }
                    *o++ = '\n';
                    st->len[0] = (size_t)(o - st->data[0]);
                inverse:
                    if (flags & 1) {
                        if ((rc = reserve(st, 1, line))) return rc;
                        o = st->data[1] + st->len[1];
                        o = put_phrase(o, lt, ews, ewe, s_e, e_e, e1);
                        memcpy(o, " ||| ", 5); o += 5;
                        o = put_phrase(o, ls, fws, fwe, s_f, e_f, f1);
                        memcpy(o, " ||| ", 5); o += 5;
                        first = 1;
                        for (int32_t e = s_e; e <= e_e; e++)
                            for (int32_t i = e_off[e]; i < e_off[e + 1]; i++) {
                                if (!first) *o++ = ' ';
                                first = 0;
                                o = put_int(o, e - s_e);
                                *o++ = '-';
                                o = put_int(o, fs[i] - s_f);
                            }
                        *o++ = '\n';
                        st->len[1] = (size_t)(o - st->data[1]);
                    }
                    if (flags & 2) {
                        if ((rc = reserve(st, 2, fb + eb + 32))) return rc;
                        size_t n1, n2;
                        const char *prev = orient(&S, s_f - 1, s_e - 1, e_f + 1, s_e - 1, &n1);
                        const char *next = orient(&S, e_f + 1, e_e + 1, s_f - 1, e_e + 1, &n2);
                        o = st->data[2] + st->len[2];
                        o = put_phrase(o, ls, fws, fwe, s_f, e_f, f1);
                        memcpy(o, " ||| ", 5); o += 5;
                        o = put_phrase(o, lt, ews, ewe, s_e, e_e, e1);
                        memcpy(o, " ||| ", 5); o += 5;
                        memcpy(o, prev, n1); o += n1;
                        *o++ = ' ';
                        memcpy(o, next, n2); o += n2;
                        *o++ = '\n';
                        st->len[2] = (size_t)(o - st->data[2]);
                    }
                    st->pairs++;
                }
            }
        }
    }
    return 1;
}

int sb_extract_block(sb_extract_state *st, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                     const char *aln, size_t aln_len, int max_len, int flags) {
    const char *buf[3] = {src, tgt, aln};
    size_t blen[3] = {src_len, tgt_len, aln_len};
    st->stop = -1;
    for (;;) {
        const char *line[3];
        size_t n[3];
        int ended = 0;
        for (int k = 0; k < 3; k++) ended += st->pos[k] >= blen[k];
        if (ended == 3) return SB_OK;
        for (int k = 0; k < 3; k++) {
            if (st->pos[k] >= blen[k]) { st->bad_stream = k; st->bad_col = -1; return SB_EFORMAT; }
            line[k] = buf[k] + st->pos[k];
            const char *nl = memchr(line[k], '\n', blen[k] - st->pos[k]);
            if (!nl) { st->bad_stream = k; st->bad_col = -1; return SB_EFORMAT; }
            n[k] = (size_t)(nl - line[k]);
            size_t c = sb_line_control(line[k], n[k]);
            if (c < n[k]) { st->bad_stream = k; st->bad_col = (int64_t)c; return SB_EFORMAT; }
        }
        for (int k = 0; k < 3; k++) st->pos[k] += n[k] + 1;
        int64_t idx = st->next++;
        int rc = do_sentence(st, line[0], n[0], line[1], n[1], line[2], n[2], max_len, flags);
        if (rc < 0) return rc;
        if (rc == 0) { st->stop = idx; return SB_OK; }
    }
}

int sb_extract_lex_points(sb_extract_state *st, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                          const int32_t *pf, const int32_t *pe, int32_t np) {
    if (np < 0) return SB_EINVAL;
    size_t wf_max = src_len / 2 + 1, we_max = tgt_len / 2 + 1;
    int32_t *w = malloc(2 * (wf_max + we_max) * sizeof(int32_t));
    if (!w) return SB_ENOMEM;
    int32_t *fws = w, *fwe = w + wf_max, *ews = fwe + wf_max, *ewe = ews + we_max;
    int32_t n_f = split_words(src, src_len, fws, fwe), n_e = split_words(tgt, tgt_len, ews, ewe);
    int rc = SB_OK;
    for (int32_t i = 0; i < np && rc == SB_OK; i++)
        if (pf[i] < 0 || pe[i] < 0 || pf[i] >= n_f || pe[i] >= n_e) rc = SB_EINVAL;
    lex_counts *L = rc == SB_OK ? lex_get(st) : NULL;
    if (rc == SB_OK && !L) rc = SB_ENOMEM;
    if (rc == SB_OK) rc = lex_sentence(L, src, fws, fwe, n_f, tgt, ews, ewe, n_e, pf, pe, np);
    free(w);
    return rc;
}

typedef struct { const char *s; uint32_t id; } lex_word_ref;
typedef struct { uint64_t key; uint32_t i; } lex_sorted;

static int cmp_word(const void *a, const void *b) {
    return strcmp(((const lex_word_ref *)a)->s, ((const lex_word_ref *)b)->s);
}

static int cmp_key(const void *a, const void *b) {
    uint64_t x = ((const lex_sorted *)a)->key, y = ((const lex_sorted *)b)->key;
    return (x > y) - (x < y);
}

int sb_extract_lex_format(sb_extract_state *st, int which) {
    if (which != 0 && which != 1) return SB_EINVAL;
    lex_counts *L = st->lex;
    if (!L || !L->np) return SB_OK;
    /* words ranked by their bytes (strcmp: unsigned bytes, the code points' order in UTF-8; no NUL in a word) */
    lex_word_ref *w = malloc((size_t)L->v.n * sizeof(*w));
    uint32_t *rank = malloc((size_t)L->v.n * sizeof(uint32_t));
    lex_sorted *o = malloc(L->np * sizeof(*o));
    int rc = SB_OK;
    if (!w || !rank || !o) { rc = SB_ENOMEM; goto done; }
    for (uint32_t i = 0; i < L->v.n; i++) w[i] = (lex_word_ref){sb_pb_vocab_str(&L->v, i), i};
    qsort(w, L->v.n, sizeof(*w), cmp_word);
    for (uint32_t i = 0; i < L->v.n; i++) rank[w[i].id] = i;
    for (size_t i = 0; i < L->np; i++)
        o[i] = (lex_sorted){((uint64_t)rank[L->p[i].f] << 32) | rank[L->p[i].e], (uint32_t)i};
    qsort(o, L->np, sizeof(*o), cmp_key);
    for (size_t k = 0; k < L->np; k++) {
        const lex_pair *p = &L->p[o[k].i];
        const char *f = sb_pb_vocab_str(&L->v, p->f), *e = sb_pb_vocab_str(&L->v, p->e);
        const char *a = which == 0 ? e : f, *b = which == 0 ? f : e;
        double prob = (double)p->c / (double)(which == 0 ? L->cf[p->f] : L->ce[p->e]);
        size_t room = strlen(a) + strlen(b) + 64;
        if ((rc = reserve(st, 0, room))) goto done;
        int n = snprintf(st->data[0] + st->len[0], room, "%s %s %.7f\n", a, b, prob);
        if (n < 0 || (size_t)n >= room) { rc = SB_EINVAL; goto done; }
        st->len[0] += (size_t)n;
    }
done:
    free(w);
    free(rank);
    free(o);
    return rc;
}

void sb_extract_free(sb_extract_state *st) {
    for (int k = 0; k < 3; k++) { free(st->data[k]); st->data[k] = NULL; st->len[k] = st->cap[k] = 0; }
    free(st->scratch);
    st->scratch = NULL;
    st->scratch_cap = 0;
    lex_free(st->lex);
    st->lex = NULL;
}
