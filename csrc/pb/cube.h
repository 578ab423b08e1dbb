/* pb/cube.h - cube pruning over the phrase-based model (pb/model.h), as Moses2 implements it
 * (moses2/PhraseBased/CubePruningMiniStack/{Search,Misc,Stack}.cpp): one stack per number of covered
 * source words, made of "ministacks" keyed by (coverage, end of the last source phrase), each a Moses2
 * HypothesisColl cut to the stack size -s; after a stack is complete, every ministack x every source span it
 * may extend becomes a cube edge (its hypotheses sorted and cut, the span's options sorted best first) of the
 * stack its coverage leads to; a stack is then built by one priority queue of items over its edges: each
 * edge's corner (0, 0), then up to pop-limit pops, each popped hypothesis entering its ministack and pushing
 * its two neighbours (next hypothesis, next option) if not seen. Items are scored in full when created. */
#ifndef SMTBENCH_PB_CUBE_H
#define SMTBENCH_PB_CUBE_H

#include "pb/search.h"

/* CFFI-BEGIN */
enum { SB_PB_STACKS_COVERAGE_END = 0, SB_PB_STACKS_COVERAGE = 1, SB_PB_STACKS_CARDINALITY = 2 };
enum { SB_PB_QUEUES_CARDINALITY = 0, SB_PB_QUEUES_COVERAGE = 1, SB_PB_QUEUES_COVERAGE_END = 2 };
typedef struct {
    int pop_limit;           /* Moses -cube-pruning-pop-limit (Moses2 default 1000) */
    int stack_size;          /* Moses -s, per ministack (200) */
    double beam_width;       /* ln of the beam threshold; -inf: none */
    int distortion_limit;    /* < 0: none */
    int nbest;
    int recombine_forward;
    int lm_mode;             /* 0: items scored in full when created (Moses2); 1: lazy -- items carry every
                              * feature but the LM of their first words, are ordered by that, and get the LM when
                              * popped; 2: the pipeline-tolerant decoder (Mokry 3.3) -- as 1, but the popped
                              * hypotheses' LM queries go through the automaton queue (queue_size) once the
                              * stack's pops are done, and they enter their ministacks then, in pop order;
                              * 3: queue-exact (the thesis' future work) -- items created without the LM go
                              * through the automaton queue before they enter the item queue, which so orders them
                              * by exact scores; pops come in rounds of queue_size (1: Moses2's order exactly) */
    int queue_size;          /* automaton queue size for lm_mode 2 (1..16; 0 = sequential batch) */
    int stacks;              /* how hypotheses are grouped (the Moses2 paper, Figs 4-5), both as the unit -s prunes
                              * and as the hypothesis side of a cube edge: SB_PB_STACKS_COVERAGE_END (Moses2's
                              * ministacks: an edge = ministack x span x options, distortion checked once per
                              * ministack), _COVERAGE or _CARDINALITY (an edge = the unit's hypotheses that may
                              * take the span, checked one by one, x its options) */
    int queues;              /* SB_PB_QUEUES_CARDINALITY: one item queue per stack (Moses2); _COVERAGE /
                              * _COVERAGE_END: one per destination coverage (and end of the new phrase), each
                              * popped up to pop_limit (the Moses2 paper, Fig 7 and Table 5); these need edges of
                              * one coverage, so not _CARDINALITY stacks */
} sb_pb_cube_opts;
/* ws: the thread's workspace (pb/search.h; pooled, it also keeps the cube's scratch and a pool reset per sentence
 * for the edges' arrays), or NULL */
int sb_pb_decode_cube(const sb_pb_model *m, const char *text, size_t len, const sb_pb_cube_opts *opts, sb_pb_ws *ws,
                      sb_pb_result **out, sb_pb_counters *counters);
/* CFFI-END */

#endif
