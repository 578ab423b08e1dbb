/* phrase_score.h - Mediani et al. (2012) §3.1 multithreaded external-memory phrase scoring.
 *
 * Input: Moses' `extract` lines `F ||| E ||| fi-ei ...` (optionally `||| count`, Moses' instance weight,
 * which is how partial counts of the distributed form (§3.3) come back in), and lex.f2e / lex.e2f.
 *
 * Five steps, as in Mediani §3.1 / Figure 1:
 *  1. load: the calling thread reads the (decompressed) input in 1 MiB chunks and hands them to `threads`
 *     workers, which parse lines, compute both lexical weights and append 64-byte records to a per-thread
 *     buffer; a full buffer is sorted by (target, source, alignment) and written to disk as a run. The buffers
 *     together never exceed the memory budget. Records are fixed-size and hold no strings: a phrase is the
 *     codes of its words (1-based ranks of the words in byte order, from the lex tables) packed into 128 bits,
 *     an alignment a 64-bit point set -- §5's fix (integer ids instead of padded fixed-width strings), without
 *     even a phrase dictionary. Key order is byte order of the phrase strings (LC_ALL=C), so the table comes
 *     out sorted like Moses'. Limits: 8 words a side (fewer past 2^16 words of vocabulary).
 *  2./3. the runs are merged (multiway, a heap per thread) in `threads` disjoint target ranges (splitters
 *     from samples taken while forming runs); each thread merges pairs with the same target, counts c(e),
 *     uniquifies identical pairs choosing the most frequent alignment (ties: Moses' rule -- the greater alignment as a vector over target words of source-position sets; the direct and inverse runs each apply it from their side, so lex(e|f) and lex(f|e) may come from different alignments) with its lexical weights, and forms runs of 80-byte unique-pair records sorted by
 *     (source, target). Half the budget feeds the merge buffers, half the new runs.
 *  4./5. those runs are merged in `threads` disjoint source ranges; each thread computes c(f) and writes its
 *     range of the phrase table to its own part file (the caller concatenates / compresses parts in order).
 * With counts_only, step 3 writes `F ||| E ||| align ||| count` for every distinct (pair, alignment) instead
 * (the partial counts of a partition) and steps 4/5 are skipped.
 */
#ifndef SMTBENCH_PHRASE_SCORE_H
#define SMTBENCH_PHRASE_SCORE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_pscore sb_pscore;
enum { SB_PSCORE_SMOOTH_NONE = 0, SB_PSCORE_SMOOTH_KN = 1 };
enum { SB_PSCORE_LEX_F2E = 0, SB_PSCORE_LEX_E2F = 1 };

typedef struct {
    int threads;              /* workers for load, merge and output (>= 1) */
    uint64_t memory_bytes;    /* budget for sort buffers (run formation and merge buffers) */
    const char *tmpdir;       /* where runs go (removed by sb_pscore_free) */
    int smoothing;            /* SB_PSCORE_SMOOTH_NONE or _KN (Foster et al. 2006, Moses' consolidate) */
    int counts_only;          /* 1: write partial counts instead of a phrase table */
    int weighted;             /* 1: extract lines carry a 4th field `||| count` */
} sb_pscore_args;

typedef struct {
    uint64_t lines;           /* extract lines loaded */
    uint64_t runs1, runs2;    /* sorted runs written in steps 1 and 3 */
    uint64_t run_bytes;       /* bytes written to runs */
    uint64_t src_phrases, tgt_phrases, alignments;
    uint64_t pairs;           /* distinct phrase pairs (N) */
    uint64_t out_lines;
    uint64_t dict_bytes;      /* memory held by the phrase dictionaries */
    uint64_t buffer_bytes;    /* largest total of sort buffers at any time */
    uint64_t ns_load, ns_merge1, ns_merge2;
    double kn_d1, kn_d2, kn_d3;
    uint64_t n1, n2, n3, n4;  /* count-of-counts of pair counts */
} sb_pscore_stats;

int sb_pscore_create(const sb_pscore_args *args, sb_pscore **out);
void sb_pscore_free(sb_pscore *s);
/* Load a lex file from fd (read to EOF, not closed). which = SB_PSCORE_LEX_F2E (`e f w(e|f)`) or _E2F
 * (`f e w(f|e)`). On SB_EFORMAT, *err_line is the 1-based line and err holds what is wrong. */
int sb_pscore_load_lex(sb_pscore *s, int which, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Load extract lines from fd in `threads` workers (may be called for several inputs in turn). */
int sb_pscore_load_extract(sb_pscore *s, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Sort, merge, score; writes part files `<out_prefix>.<t>` for t = 0..threads-1 (some may be empty),
 * which concatenated in order form the output. */
int sb_pscore_finish(sb_pscore *s, const char *out_prefix, char *err, size_t errlen);
void sb_pscore_get_stats(const sb_pscore *s, sb_pscore_stats *st);

/* CFFI-END */

/* ---- what phrase_baseline.c (the Moses-style sort pipeline's scorer and consolidate, phrase_baseline.h) takes from
 * this kernel: the record layouts, the scorer's state, the line reader, and the few helpers both use (not for
 * cffi) ---- */
#include "tm/phrase_dict.h"
#include "util/probing.h"

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
