/* phrase_core.h - what the phases of the Mediani phrase scorer share (tm/phrase_score.h has the whole design): the
 * argument and statistics types of the public interface, and, below CFFI-END (not for cffi), the records and their
 * 128-bit phrase keys, the scorer's state, the run bookkeeping, the chunked line reader and the small IO helpers.
 * The phases, bottom up: phrase_runs.c (step 1: parse extract lines, sorted runs), phrase_write.c (the output
 * formats), phrase_merge.c (steps 2/3: the k-way merge, counts by target), phrase_score.c (steps 4/5: scores by
 * source; the interface); phrase_baseline.c (the Moses-style baseline) reuses the parser and the formats. */
#ifndef SMTBENCH_PHRASE_CORE_H
#define SMTBENCH_PHRASE_CORE_H
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
/* CFFI-END */

#include "tm/phrase_dict.h"
#include "util/probing.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHUNK (1u << 20)     /* bytes a line reader reads at a time */
#define SAMPLE_EVERY 256     /* a run's records sampled for the merge's range splitters */

typedef struct { uint64_t hi, lo; } pkey;
static inline int kcmp(pkey a, pkey b) {
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}
static inline int keq(pkey a, pkey b) { return a.hi == b.hi && a.lo == b.lo; }

/* An alignment is a 64-bit set of points, bit f*8+e (so phrases have at most 8 words a side); its string
 * form lists the points in E order, then F order, as Moses' extract writes them. */
typedef struct {            /* step 1: one per extract line (48 bytes; the lexical weights are computed in the merge,
                             * once for a distinct pair's chosen alignment: phrase_runs.h sb_ps_lex_weights) */
    pkey tgt, src;
    uint64_t align;
    double count;
} rec1;

typedef struct {            /* step 3: one per distinct pair (80 bytes) */
    pkey src, tgt;
    uint64_t align;
    uint32_t n1e, pad;
    double c_ef, c_e, lex_ef, lex_fe;
} rec2;

typedef struct { uint64_t key; double ef, fe; } lexent;   /* key = sb_mix64(((f<<32)|e) + 1), 0 empty */

/* a word of a side's vocabulary, for the parser (key = sb_bytes_hash | 1, 0 empty): its code beside it */
typedef struct { uint64_t key; const char *w; uint32_t len, code; } wordent;

typedef struct {            /* off/n in records; mem: a run kept in memory (the records themselves, file unused) */
    int file; uint64_t off, n; const void *mem;
} run_t;

typedef struct {
    run_t *v; size_t n, cap;
} runvec;

typedef struct { uint64_t *v; size_t n, cap; } u64vec;

struct sb_pscore {
    sb_pscore_args a;
    char tmpdir[4096];
    sb_dict *aln, *fw, *ew;              /* alignments, words */
    uint32_t *fcode, *ecode;              /* word id -> code (1-based rank in the lines' order) */
    uint32_t fend, eend;                  /* the code of a phrase's end (no word's; ranked as ' ||| ' sorts) */
    uint32_t *fid_of, *eid_of;            /* code -> word id (for the lexical weights of a key) */
    const char **fword, **eword;          /* code -> word */
    uint32_t *fwlen, *ewlen;              /* code -> the word's length in bytes */
    int bits, maxw;                       /* bits per word code, words per 128-bit key */
    sb_probing fwt, ewt;                  /* of wordent: the words the parser looks up (one probe, no shards) */
    int wt;                               /* 1: fwt/ewt built (0: two words' hashes collided - the dicts answer) */
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

/* ---------------------------------------------------------------- keys and record order */
/* A phrase is its word codes packed into 128 bits, first word in the most significant bits, then the side's end
 * code (where fewer than maxw words leave room), 0 past it. Codes are 1-based ranks of the words in the order
 * `LC_ALL=C sort` gives lines `F ||| E ||| ...` (phrase_runs.c make_codes: a word is followed by a space there,
 * and a phrase's end by ' ||| ', ranked among the words as the code end), so key order is the order of Moses'
 * sorted extract files and of its phrase table; and no phrase dictionary is needed at all (the fix Mediani §5 asks
 * for: integer ids, not fixed-width strings). */
static inline void sb_ps_key_put(pkey *k, int bits, int i, uint64_t c) {
    int pos = 128 - bits * (i + 1);
    if (pos >= 64) k->hi |= c << (pos - 64);
    else if (pos + bits <= 64) k->lo |= c << pos;
    else { k->hi |= c >> (64 - pos); k->lo |= c << pos; }
}
/* the end code after a phrase's n words, where the key has room */
static inline void sb_ps_key_end(pkey *k, int bits, int maxw, int n, uint32_t end) {
    if (n < maxw) sb_ps_key_put(k, bits, n, end);
}
static inline uint64_t sb_ps_key_get(pkey k, int bits, int i) {
    int pos = 128 - bits * (i + 1);
    uint64_t mask = (1ULL << bits) - 1, c;
    if (pos >= 64) c = k.hi >> (pos - 64);
    else if (pos + bits <= 64) c = k.lo >> pos;
    else c = (k.lo >> pos) | (k.hi << (64 - pos));
    return c & mask;
}

static inline int cmp1(const rec1 *a, const rec1 *b) {
    int c = kcmp(a->tgt, b->tgt);
    if (c) return c;
    if ((c = kcmp(a->src, b->src))) return c;
    if (a->align != b->align) return a->align < b->align ? -1 : 1;
    return 0;
}
static inline int cmp2(const rec2 *a, const rec2 *b) {
    int c = kcmp(a->src, b->src);
    return c ? c : kcmp(a->tgt, b->tgt);
}

/* in-place quicksort (median of three, insertion sort below 16), instantiated per record type */
#define DEFINE_SORT(NAME, T, CMP)                                                        \
    static void NAME(T *a, size_t n) {                                                   \
        while (n > 16) {                                                                 \
            size_t m = n / 2;                                                            \
            T t;                                                                         \
            if (CMP(&a[m], &a[0]) < 0) { t = a[m]; a[m] = a[0]; a[0] = t; }              \
            if (CMP(&a[n - 1], &a[m]) < 0) { t = a[n - 1]; a[n - 1] = a[m]; a[m] = t;    \
                if (CMP(&a[m], &a[0]) < 0) { t = a[m]; a[m] = a[0]; a[0] = t; } }        \
            T p = a[m];                                                                  \
            size_t i = 0, j = n - 1;                                                     \
            for (;;) {                                                                   \
                while (CMP(&a[i], &p) < 0) i++;                                          \
                while (CMP(&p, &a[j]) < 0) j--;                                          \
                if (i >= j) break;                                                       \
                t = a[i]; a[i] = a[j]; a[j] = t;                                         \
                i++; j--;                                                                \
            }                                                                            \
            size_t left = j + 1;                                                         \
            if (left < n - left) { NAME(a, left); a += left; n -= left; }                \
            else { NAME(a + left, n - left); n = left; }                                 \
        }                                                                                \
        for (size_t i = 1; i < n; i++) {                                                 \
            T x = a[i];                                                                  \
            size_t j = i;                                                                \
            while (j > 0 && CMP(&x, &a[j - 1]) < 0) { a[j] = a[j - 1]; j--; }            \
            a[j] = x;                                                                    \
        }                                                                                \
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

static inline char *sb_ps_trim(char *p, char **end) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
    *e = 0;
    *end = e;
    return p;
}

/* ---------------------------------------------------------------- helpers (phrase_core.c) */
/* err <- msg (truncated to errlen) */
void sb_ps_seterr(char *err, size_t errlen, const char *msg);
/* Next line (without '\n') or NULL at EOF; *rc set on error. The line is NUL-terminated in place. */
char *sb_ps_next_line(linereader *r, size_t *len, int *rc);
/* write n bytes / read n bytes at off, retrying short transfers and EINTR; SB_EIO on failure (or EOF) */
int sb_ps_write_all(int fd, const void *buf, size_t n);
int sb_ps_pread_all(int fd, void *buf, size_t n, uint64_t off);
/* append a run / a sample (grown by doubling); SB_ENOMEM when it cannot grow */
int sb_ps_runvec_push(runvec *rv, run_t r);
int sb_ps_u64_push(u64vec *a, uint64_t x);

#endif
