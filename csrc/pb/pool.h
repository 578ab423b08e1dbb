/* pb/pool.h - where hypotheses live (Moses2's MemPool + Recycler): blocks of hypotheses handed out in order and
 * reset at once per sentence, the ones given back re-used last in, first out; or plain malloc/free per hypothesis
 * (the Moses2 paper's 4.1 baseline). Ids count the hypotheses given out (the searches' deterministic tie-break). */
#ifndef SMTBENCH_PB_POOL_H
#define SMTBENCH_PB_POOL_H

#include "pb/hyp.h"

typedef struct sb_pb_pool sb_pb_pool;
/* malloc_mode 0: blocks + a last-in-first-out recycler; 1: plain malloc/free per hypothesis */
sb_pb_pool *sb_pb_pool_new_mode(int malloc_mode);
/* every hypothesis given out is released at once; blocks are kept for re-use; ids restart at 0 */
void sb_pb_pool_reset(sb_pb_pool *p);
void sb_pb_pool_free(sb_pb_pool *p);
sb_pb_hyp *sb_pb_pool_get(sb_pb_pool *p);
void sb_pb_pool_put(sb_pb_pool *p, sb_pb_hyp *h);   /* h and its arcs */

#endif
