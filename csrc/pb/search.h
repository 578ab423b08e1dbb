/* pb/search.h - the frame every search shares (Moses2's Manager + the per-thread memory of the Moses2 paper, 4.1):
 * a workspace kept by a thread across sentences (its hypothesis pool, a search's own scratch, the profile's current
 * component, the binarized table's counters), and per sentence: the sentence prepared (pb/lattice.c), the pool
 * reset (or, unpooled, plain malloc/free per hypothesis), the cardinality stacks, the empty hypothesis, the result
 * from the complete hypotheses, and the cleanup. The searches (normal.c, cube.c, beam.c) only search; threads.c
 * runs any of them on T workers. */
#ifndef SMTBENCH_PB_SEARCH_H
#define SMTBENCH_PB_SEARCH_H

#include "pb/nbest.h"
#include "pb/stack.h"

/* CFFI-BEGIN */
/* A thread's workspace (threads.c makes one per worker). A search given no workspace (NULL) uses a pooled one of
 * its own for the sentence. */
typedef struct sb_pb_ws sb_pb_ws;
/* pooled 1: scratch kept across sentences, hypotheses from blocks with a last-in-first-out recycler, reset per
 * sentence; 0: plain malloc/free (everything allocated per sentence, each hypothesis its own malloc). Output is the
 * same. One thread at a time per workspace. */
int sb_pb_ws_new(int pooled, sb_pb_ws **out);
void sb_pb_ws_free(sb_pb_ws *w);
/* CFFI-END */

/* [0] binarized-table lookups, [1] of them cache hits, [2] separate reordering lookups, [3] arena bytes */
void sb_pb_ws_counts(const sb_pb_ws *w, uint64_t *counts);

struct sb_pb_ws {
    int pooled;
    sb_pb_pool *pool;            /* pooled: kept and reset per sentence; else made and freed per sentence */
    _Atomic int *phase;          /* the profile's current component (SB_PB_PH_*), or NULL */
    uint64_t lookups, cache_hits, ro_lookups;
    void *scratch;               /* a search's own kept scratch (the cube's), made by that search */
    void (*scratch_free)(void *scratch);
    uint64_t (*scratch_bytes)(const void *scratch);
};

/* one sentence's frame */
typedef struct {
    sb_pb_ws *ws;
    sb_pb_ws *own;               /* the workspace made for this sentence when none was given */
    sb_pb_sentence *s;
    sb_pb_pool *pool;            /* ws->pool */
    sb_pb_stack *stacks;         /* one per number of covered words (NULL when the search keeps its own) */
    int nstacks;                 /* the sentence's length + 1, or 0 */
    sb_pb_stack_ctx x;           /* for adding to stacks: pool and counters set here */
    sb_pb_hyp *init;             /* the empty hypothesis (not yet in any stack) */
} sb_pb_frame;

/* counters zeroed; the sentence prepared; the pool; cardinality 1: the empty stacks, one per number of covered
 * words; the empty hypothesis in f->init. x: the stacks' settings (pool and counters filled here). On an error
 * everything is released. */
int sb_pb_frame_begin(sb_pb_frame *f, const sb_pb_model *m, const char *text, size_t len, sb_pb_ws *ws, int cardinality,
                      sb_pb_stack_ctx x, sb_pb_counters *counters);
/* the result from the complete hypotheses `finals` (best first when nbest is 0) */
int sb_pb_frame_result(sb_pb_frame *f, sb_pb_hyp **finals, int n, int nbest, sb_pb_result **out);
/* cut stack `last` to `keep` and take the result from its hypotheses */
int sb_pb_frame_result_stack(sb_pb_frame *f, sb_pb_stack *last, int keep, int nbest, sb_pb_result **out);
/* release the sentence, the stacks and (unpooled) the pool */
void sb_pb_frame_end(sb_pb_frame *f);

#endif
