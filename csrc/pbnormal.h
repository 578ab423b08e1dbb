/* pbnormal.h - Moses' normal stack search (-search-algorithm 0), as Moses2 implements it
 * (moses2/PhraseBased/Normal/Search.cpp, moses2/HypothesisColl.cpp): one stack per number of covered
 * source words; each stack, sorted by score + future cost and cut to the stack size, is expanded by
 * every source span (in order of start, then length) x every hypothesis x every option of the span.
 * Adding to a stack recombines equal states (coverage, LM state, last source span), prunes to the stack
 * size when it exceeds twice that, and drops a hypothesis below the beam once the stack is full, with
 * Moses2's bookkeeping of the best and worst scores. n-best lists follow Moses' trellis paths: every
 * hypothesis of the last stack, then deviations through the arcs recombination kept.
 *
 * The result holds its own strings and feature values (recomputed along each path from the model, so
 * every printed n-best entry rescores to its values); the model score of the 1-best is its weighted sum. */
#ifndef SMTBENCH_PBNORMAL_H
#define SMTBENCH_PBNORMAL_H

#include "pbmodel.h"
#include "probing.h"

/* CFFI-BEGIN */
typedef struct sb_pb_result sb_pb_result;
typedef struct {
    int stack_size;          /* Moses -s (default 200); >= 1 */
    double beam_width;       /* ln of Moses' -b (1e-5 -> -11.51); -inf: no beam */
    int distortion_limit;    /* < 0: none */
    int nbest;               /* entries wanted (0: the 1-best only) */
    int recombine_forward;   /* also compare the previous pair's forward reordering scores */
} sb_pb_normal_opts;
typedef struct {
    uint64_t created;        /* hypotheses scored */
    uint64_t recombined;     /* merged into an equal state */
    uint64_t beam_discarded; /* dropped on arrival below the stack's worst score */
    uint64_t pruned;         /* removed by cutting a stack to its size */
    uint64_t expanded;       /* hypotheses whose extensions were generated */
} sb_pb_counters;

int sb_pb_decode_normal(const sb_pb_model *m, const char *text, size_t len, const sb_pb_normal_opts *opts,
                        sb_pb_result **out, sb_pb_counters *counters);
int sb_pb_result_size(const sb_pb_result *r);       /* entries, best first; 0 for an empty sentence */
/* target words of entry i; with segmentation each phrase is followed by |start-end| */
const char *sb_pb_result_text(const sb_pb_result *r, int i, int segmentation);
void sb_pb_result_features(const sb_pb_result *r, int i, double *features); /* SB_PB_NFEAT values */
double sb_pb_result_total(const sb_pb_result *r, int i);  /* weighted sum of the features */
double sb_pb_result_search_score(const sb_pb_result *r, int i); /* the score the search kept */
void sb_pb_result_free(sb_pb_result *r);
/* CFFI-END */

/* ---- shared with other searches ---- */
typedef struct sb_pb_pool sb_pb_pool;
sb_pb_pool *sb_pb_pool_new(void);
/* malloc_mode 0: blocks + a last-in-first-out recycler (sb_pb_pool_new); 1: plain malloc/free per hypothesis */
sb_pb_pool *sb_pb_pool_new_mode(int malloc_mode);
/* every hypothesis given out is released at once; blocks are kept for re-use; ids restart at 0 */
void sb_pb_pool_reset(sb_pb_pool *p);
void sb_pb_pool_free(sb_pb_pool *p);
sb_pb_hyp *sb_pb_pool_get(sb_pb_pool *p);
void sb_pb_pool_put(sb_pb_pool *p, sb_pb_hyp *h);   /* h and its arcs */
/* A stack (Moses2's HypothesisColl): recombination by state, cut to twice the size, beam bookkeeping. */
typedef struct {
    sb_pb_hyp **h;
    int n, cap;
    sb_index ix;        /* of h, by recombination state */
    double best, worst;
} sb_pb_stack;
typedef struct {
    int stack_size;
    double beam_width;
    int recombine_forward;  /* sb_pb_hyp_equal's flags: 1 forward scores; SB_PB_RECOMB_END_ONLY (pbbeam.c) */
    sb_pb_pool *pool;
    sb_pb_counters *c;
    int nbest;          /* keep recombined hypotheses as arcs */
} sb_pb_stack_ctx;
void sb_pb_stack_reset(sb_pb_stack *s);
void sb_pb_stack_free(sb_pb_stack *s);
int sb_pb_stack_add(sb_pb_stack *s, sb_pb_hyp *h, sb_pb_stack_ctx *x);
/* sort best first (score + future cost; ties by creation order) and keep `keep` */
int sb_pb_stack_cut(sb_pb_stack *s, int keep, sb_pb_stack_ctx *x);
/* Build a result from the complete hypotheses `finals` (n of them, any order). */
int sb_pb_make_result(const sb_pb_sentence *s, sb_pb_hyp **finals, int n, int nbest, sb_pb_result **out);
/* Entry i's last source phrase end (-1: empty); add `value` to its feature `feature` (the total follows), for
 * feature values a search charges beyond sb_pb_path_features (e.g. a sentence-final distortion jump). */
int sb_pb_result_last_end(const sb_pb_result *r, int i);
void sb_pb_result_add_feature(sb_pb_result *r, const sb_pb_model *m, int i, int feature, double value);

#endif
