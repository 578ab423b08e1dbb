/* extract.c - Moses phrase extraction, the fast path of tm/extract.py (see extract.h). */
#include "tm/extract.h"

#include <stdlib.h>
#include <string.h>

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

/* One sentence pair: 1 done, 0 needs the reference path, < 0 an error code. */
static int do_sentence(sb_extract_state *st, const char *ls, size_t nls, const char *lt, size_t nlt,
                       const char *la, size_t nla, int max_len, int flags) {
    size_t wf_max = nls / 2 + 1, we_max = nlt / 2 + 1, p_max = nla / 4 + 1;
    size_t need = 2 * wf_max + 2 * we_max + 3 * p_max + (we_max + 2) + 2 * wf_max;
    if (need > st->scratch_cap) {
        int32_t *p = realloc(st->scratch, need * sizeof(int32_t));
        if (!p) return SB_ENOMEM;
        st->scratch = p;
        st->scratch_cap = need;
    }
    int32_t *fws = st->scratch, *fwe = fws + wf_max, *ews = fwe + wf_max, *ewe = ews + we_max;
    int32_t *pf = ewe + we_max, *pe = pf + p_max, *fs = pe + p_max, *e_off = fs + p_max;
    int32_t *count_f = e_off + we_max + 2, *used = count_f + wf_max;
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
                    int rc = reserve(st, 0, line);
                    if (rc) return rc;
                    char *o = st->data[0] + st->len[0];
                    o = put_phrase(o, ls, fws, fwe, s_f, e_f, f1);
                    memcpy(o, " ||| ", 5); o += 5;
                    o = put_phrase(o, lt, ews, ewe, s_e, e_e, e1);
                    memcpy(o, " ||| ", 5); o += 5;
                    int first = 1;
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

void sb_extract_free(sb_extract_state *st) {
    for (int k = 0; k < 3; k++) { free(st->data[k]); st->data[k] = NULL; st->len[k] = st->cap[k] = 0; }
    free(st->scratch);
    st->scratch = NULL;
    st->scratch_cap = 0;
}
