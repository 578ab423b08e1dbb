/* pb/normal.h - Moses' normal stack search (-search-algorithm 0), as Moses2 implements it
 * (moses2/PhraseBased/Normal/Search.cpp, moses2/HypothesisColl.cpp): one stack per number of covered
 * source words; each stack, sorted by score + future cost and cut to the stack size, is expanded by
 * every source span (in order of start, then length) x every hypothesis x every option of the span.
 * Adding to a stack recombines equal states (coverage, LM state, last source span): pb/stack.h. n-best lists
 * follow Moses' trellis paths from the hypotheses of the last stack: pb/nbest.h. */
#ifndef SMTBENCH_PB_NORMAL_H
#define SMTBENCH_PB_NORMAL_H

#include "pb/search.h"

/* CFFI-BEGIN */
typedef struct {
    int stack_size;          /* Moses -s (default 200); >= 1 */
    double beam_width;       /* ln of Moses' -b (1e-5 -> -11.51); -inf: no beam */
    int distortion_limit;    /* < 0: none */
    int nbest;               /* entries wanted (0: the 1-best only) */
    int recombine_forward;   /* also compare the previous pair's forward reordering scores */
} sb_pb_normal_opts;
/* ws: the thread's workspace (pb/search.h), or NULL */
int sb_pb_decode_normal(const sb_pb_model *m, const char *text, size_t len, const sb_pb_normal_opts *opts,
                        sb_pb_ws *ws, sb_pb_result **out, sb_pb_counters *counters);
/* CFFI-END */

#endif
