/* phrase_merge.h - steps 2/3 of the phrase scorer (phrase_score.h): the k-way merge of sorted runs over a key range
 * (a heap of cursors, each reading its run in buffered slices), the range splitters from the runs' samples, and the
 * merge by target: c(e), identical pairs made one with the most frequent alignment (Moses' tie rule) and their
 * lexical weights, written as runs of 80-byte records sorted by source (or, counts_only, as partial counts). */
#ifndef SMTBENCH_PHRASE_MERGE_H
#define SMTBENCH_PHRASE_MERGE_H
#include "tm/phrase_core.h"

typedef struct {
    int fd; uint64_t next, end;      /* record indices in the file */
    char *buf; size_t nbuf, pos, cap, recsz;
    int own;                         /* buf is the cursor's (0: a run kept in memory, read in place) */
} sb_ps_cursor;

typedef struct {
    sb_ps_cursor *c; int n;     /* cursors */
    int *heap; int hn;    /* indices into c */
    int type;             /* 1 or 2 */
} sb_ps_merger;

/* Set up a merge (type 1: rec1 by target, type 2: rec2 by source) of the slices [lo_key, hi_key) (hi_inf: to the
 * end) of every run, buf_recs records buffered per run. sb_ps_merger_free after any outcome. */
int sb_ps_merger_init(sb_ps_merger *m, int type, runvec *runs, int *fds, uint64_t lo_key, uint64_t hi_key,
                      int hi_inf, size_t buf_recs);
void sb_ps_merger_free(sb_ps_merger *m);
/* Copy the smallest record to out; returns 1, 0 at the end, or a negative error. */
int sb_ps_merger_pop(sb_ps_merger *m, void *out);
/* T+1 range bounds (on the key's high word) from samples: bounds[0] = 0, bounds[T] unused (infinite) */
void sb_ps_make_bounds(u64vec *smp, int T, uint64_t *bounds);

/* Steps 2/3 in `threads` workers over disjoint target ranges (bounds: T+1 slots, left holding the ranges): the step-1
 * runs merged with mrecs records buffered per run, unique pairs into step-3 runs of cap2 records (or, counts_only,
 * the partial counts into part files `<out_prefix>.<t>`); adds to s's pair and line counts, nk[1..4] = how many
 * pairs occur 1..4 times. */
int sb_ps_merge_by_target(sb_pscore *s, const char *out_prefix, size_t mrecs, size_t cap2, uint64_t *bounds,
                          uint64_t nk[5]);

#endif
