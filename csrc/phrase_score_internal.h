/* phrase_score_internal.h - what phrase_score.c (Mediani's kernel: load, sort, external merges, scoring) and
 * phrase_baseline.c (the Moses-style sort pipeline's scorer and consolidate) share: the record layouts, the
 * scorer's state, the line reader, and the few helpers both use. Not part of the C API (no CFFI block). */
#ifndef SMTBENCH_PHRASE_SCORE_INTERNAL_H
#define SMTBENCH_PHRASE_SCORE_INTERNAL_H

#include "phrase_dict.h"
#include "phrase_score.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define LEX_MISSING 1e-7   /* w(.|.) of a word pair absent from the lex table (Moses: a tiny constant) */
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

typedef struct { uint64_t key; double ef, fe; } lexent;   /* key = ((f<<32)|e) + 1, 0 empty */
typedef struct { lexent *t; uint64_t n, mask; } lextab;

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
    lextab lex;
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

/* shared helpers (defined in phrase_score.c) */
int sb_ps_align_cmp_moses(uint64_t a, uint64_t b, int by_f);
char *sb_ps_align_str(uint64_t m, char *p);
const char *sb_ps_key_str(const sb_pscore *s, pkey k, const char **words, char *buf, size_t n);
char *sb_ps_next_line(linereader *r, size_t *len, int *rc);
int sb_ps_parse_line(sb_pscore *s, char *line, rec1 *r, const char **msg, int inverse);
int sb_ps_prepare_vocab(sb_pscore *s);
char *sb_ps_put_count(char *p, double v);
char *sb_ps_put_g6(char *p, double v);
void sb_ps_seterr(char *err, size_t errlen, const char *msg);
char *sb_ps_trim(char *p, char **end);

#endif
