/* phrase_score_internal.h - what phrase_score.c (Mediani's kernel: load, sort, external merges, scoring) and
 * phrase_baseline.c (the Moses-style sort pipeline's scorer and consolidate) share: the record layouts, the
 * scorer's state, the line reader, and the few helpers both use. Not part of the C API (no CFFI block). */
#ifndef SMTBENCH_PHRASE_SCORE_INTERNAL_H
#define SMTBENCH_PHRASE_SCORE_INTERNAL_H

#include "phrase_dict.h"
#include "phrase_score.h"
#include "probing.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LEX_MISSING 1.0    /* w(.|.) of a word pair absent from the lex table: Moses' score multiplies by 1.0
                              (LexicalTable::permissiveLookup, phrase-extract/score.h) */
#define MAXW 128            /* words per phrase */
#define MAXL 1024           /* alignment points per phrase pair */
#define CHUNK (1u << 20)
#define SAMPLE_EVERY 256
#define MIN_MERGE_RECS 64

typedef struct { uint64_t hi, lo; } pkey;
static inline int kcmp(pkey a, pkey b) {
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}
static inline int keq(pkey a, pkey b) { return a.hi == b.hi && a.lo == b.lo; }

/* An alignment is a 64-bit set of points, bit f*8+e (so phrases have at most 8 words a side); its string
 * form lists the points in E order, then F order, as Moses' extract writes them. */
typedef struct {            /* step 1: one per extract line (64 bytes) */
    pkey tgt, src;
    uint64_t align;
    double count, lex_ef, lex_fe;
} rec1;

typedef struct {            /* step 3: one per distinct pair (80 bytes) */
    pkey src, tgt;
    uint64_t align;
    uint32_t n1e, pad;
    double c_ef, c_e, lex_ef, lex_fe;
} rec2;

typedef struct { uint64_t key; double ef, fe; } lexent;   /* key = sb_mix64(((f<<32)|e) + 1), 0 empty */

typedef struct { int file; uint64_t off, n; } run_t;   /* off/n in records */

typedef struct {
    run_t *v; size_t n, cap;
} runvec;

typedef struct { uint64_t *v; size_t n, cap; } u64vec;

struct sb_pscore {
    sb_pscore_args a;
    char tmpdir[4096];
    sb_dict *aln, *fw, *ew;              /* alignments, words */
    uint32_t *fcode, *ecode;              /* word id -> code (1-based byte-order rank) */
    const char **fword, **eword;          /* code -> word */
    int bits, maxw;                       /* bits per word code, words per 128-bit key */
    sb_probing lex;                      /* of lexent */
    uint32_t null_f, null_e;              /* word ids of NULL (UINT32_MAX when absent) */
    int *fd1, *fd2;                       /* per-thread run files of steps 1 and 3 */
    uint64_t *end1, *end2;                /* records written per file */
    runvec runs1, runs2;
    u64vec samples1, samples2;
    pthread_mutex_t mu;
    sb_pscore_stats st;
    /* load state shared by the workers of one sb_pscore_load_extract call, buffers kept across calls */
    rec1 **buf1; size_t *n1; size_t cap1;
};

typedef struct {
    int fd; char *buf; size_t cap, len, pos; int eof;
} linereader;

/* formatting helpers, inline in both files (the baseline must not pay a call the kernel does not) */
static inline char *sb_ps_align_str(uint64_t m, char *p) {
    char *start = p;
    for (int e = 0; e < 8; e++)
        for (int f = 0; f < 8; f++)
            if (m >> (f * 8 + e) & 1) {
                if (p != start) *p++ = ' ';
                *p++ = (char)('0' + f); *p++ = '-'; *p++ = (char)('0' + e);
            }
    *p = 0;
    return p;
}
/* Moses' tie rule between equally frequent alignments (score-main.cpp, FindBestAlignmentTargetToSource): the
 * greater alignment wins, compared as Moses stores it -- a vector over target positions of the set of source
 * positions linked to each, compared lexicographically (an empty set is less than any other). by_f = 0: the
 * direct run, target = E (sets of F positions per E word); by_f = 1: the inverse run, target = F. */
static inline int sb_ps_align_cmp_moses(uint64_t a, uint64_t b, int by_f) {
    for (int t = 0; t < 8; t++) {
        int sa[8], sb[8], na = 0, nb = 0;
        for (int x = 0; x < 8; x++) {
            int bit = by_f ? t * 8 + x : x * 8 + t;
            if (a >> bit & 1) sa[na++] = x;
            if (b >> bit & 1) sb[nb++] = x;
        }
        for (int k = 0; k < na && k < nb; k++)
            if (sa[k] != sb[k]) return sa[k] < sb[k] ? -1 : 1;
        if (na != nb) return na < nb ? -1 : 1;
    }
    return 0;
}

/* fast number output: integers as such, scores as printf's %.6g (6 significant digits) */
static inline char *sb_ps_put_u64(char *p, uint64_t v) {
    char t[24];
    int n = 0;
    do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = t[--n];
    return p;
}
static inline char *sb_ps_put_count(char *p, double v) {
    if (v >= 0 && v < 1e15 && v == floor(v)) return sb_ps_put_u64(p, (uint64_t)v);
    return p + sprintf(p, "%.10g", v);
}
static inline char *sb_ps_put_g6(char *p, double v) {
    if (!(v > 0) || !isfinite(v) || v < 1e-300) return p + sprintf(p, "%.6g", v);
    int e = (int)floor(log10(v));
    uint64_t m = 0;
    for (int tries = 0; tries < 3; tries++) {
        m = (uint64_t)llround(v * pow(10.0, 5 - e));
        if (m >= 1000000) e++;
        else if (m < 100000) e--;
        else break;
    }
    if (m >= 1000000 || m < 100000) return p + sprintf(p, "%.6g", v);
    char d[6];
    for (int i = 5; i >= 0; i--) { d[i] = (char)('0' + m % 10); m /= 10; }
    int nd = 6;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    if (e < -4 || e >= 6) {
        *p++ = d[0];
        if (nd > 1) { *p++ = '.'; memcpy(p, d + 1, (size_t)nd - 1); p += nd - 1; }
        *p++ = 'e'; *p++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae < 10) *p++ = '0';
        p = sb_ps_put_u64(p, (uint64_t)ae);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++) *p++ = i < nd ? d[i] : '0';
        if (nd > e + 1) { *p++ = '.'; memcpy(p, d + e + 1, (size_t)(nd - e - 1)); p += nd - e - 1; }
    } else {
        *p++ = '0'; *p++ = '.';
        for (int i = 0; i < -e - 1; i++) *p++ = '0';
        memcpy(p, d, (size_t)nd); p += nd;
    }
    return p;
}

static inline char *sb_ps_trim(char *p, char **end) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    *e = 0;
    *end = e;
    return p;
}

/* shared helpers (defined in phrase_score.c) */
const char *sb_ps_key_str(const sb_pscore *s, pkey k, const char **words, char *buf, size_t n);
char *sb_ps_next_line(linereader *r, size_t *len, int *rc);
int sb_ps_parse_line(sb_pscore *s, char *line, rec1 *r, const char **msg, char *msgbuf, size_t msglen, int inverse);
int sb_ps_prepare_vocab(sb_pscore *s);
void sb_ps_seterr(char *err, size_t errlen, const char *msg);

#endif
