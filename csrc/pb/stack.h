/* pb/stack.h - a stack of hypotheses as Moses2's HypothesisColl (moses2/HypothesisColl.cpp): recombination of equal
 * states (the worse kept as an arc of the better for n-best lists), pruning to the stack size when it exceeds twice
 * that, and a hypothesis below the beam dropped on arrival once the stack is full, with Moses2's bookkeeping of
 * the best and worst scores; and the counters every search keeps. */
#ifndef SMTBENCH_PB_STACK_H
#define SMTBENCH_PB_STACK_H

#include "pb/pool.h"
#include "util/probing.h"

/* CFFI-BEGIN */
typedef struct {
    uint64_t created;        /* hypotheses scored */
    uint64_t recombined;     /* merged into an equal state */
    uint64_t beam_discarded; /* dropped on arrival below the stack's worst score */
    uint64_t pruned;         /* removed by cutting a stack to its size */
    uint64_t expanded;       /* hypotheses whose extensions were generated */
} sb_pb_counters;

/* CFFI-END */

/* A stack (Moses2's HypothesisColl): recombination by state, cut to twice the size, beam bookkeeping. */
typedef struct {
    sb_pb_hyp **h;
    uint32_t *slot;     /* slot[i]: the index slot of h[i] (emptying the index clears only those) */
    int n, cap;
    sb_index ix;        /* of h, by recombination state */
    double best, worst;
} sb_pb_stack;
typedef struct {
    int stack_size;
    double beam_width;
    int recombine_forward;  /* sb_pb_hyp_equal's flags: 1 forward scores; SB_PB_RECOMB_END_ONLY (pb/beam.c) */
    sb_pb_pool *pool;
    sb_pb_counters *c;
    int nbest;          /* keep recombined hypotheses as arcs */
} sb_pb_stack_ctx;
void sb_pb_stack_reset(sb_pb_stack *s);
void sb_pb_stack_free(sb_pb_stack *s);
int sb_pb_stack_add(sb_pb_stack *s, sb_pb_hyp *h, sb_pb_stack_ctx *x);
/* sort best first (score + future cost; ties by creation order) and keep `keep` (the recombination index is rebuilt
 * only if the stack is added to again) */
int sb_pb_stack_cut(sb_pb_stack *s, int keep, sb_pb_stack_ctx *x);

#endif
