/* pb/threads.h - sentence-level multi-threaded decoding as Moses2 does it (the Moses2 paper, sections 2.1 and 4.5),
 * for any of the searches (normal, cube, beam): a pool of T worker threads, each with its own workspace
 * (pb/search.h: kept scratch, a pool reset per sentence and a hypothesis recycler, the paper's 4.1), optionally pinned to cpu offset + i * increment (Moses2's
 * cpu-affinity-offset / cpu-affinity-increment). The caller streams: it submits sentences (at most `window` in
 * flight) and takes their results back in input order, so nothing holds the whole corpus.
 *
 * Profile (the paper's Table 3, no hardware counters here): with profile on, each worker publishes the component
 * it is in (LM, phrase table, reordering, search, memory, other; pb/model.h SB_PB_PH_*) with one relaxed store at
 * every change, and a sampler thread reads them every profile_us microseconds into a histogram. */
#ifndef SMTBENCH_PB_THREADS_H
#define SMTBENCH_PB_THREADS_H

#include "pb/beam.h"
#include "pb/cube.h"
#include "pb/normal.h"

/* CFFI-BEGIN */
typedef struct sb_pb_mt sb_pb_mt;
enum { SB_PB_SEARCH_NORMAL = 0, SB_PB_SEARCH_CUBE = 1, SB_PB_SEARCH_BEAM = 2 };
typedef struct {
    int threads;          /* workers, 1..256 */
    int pin;              /* pin worker i to cpu (pin_offset + i * pin_increment) mod online cpus */
    int pin_offset;
    int pin_increment;
    int window;           /* sentences in flight (submitted, not taken); 0 = 8 per thread */
    int pooled;           /* workspaces: 1 pools + recyclers, 0 plain malloc/free */
    int profile_us;       /* > 0: sample the workers' components at this period */
} sb_pb_mt_opts;
/* search SB_PB_SEARCH_*; opts: its options (sb_pb_normal_opts, sb_pb_cube_opts or sb_pb_beam_opts), copied */
int sb_pb_mt_new(const sb_pb_model *m, int search, const void *opts, const sb_pb_mt_opts *mo, sb_pb_mt **out);
/* SB_EFULL when `window` sentences are in flight (take one first) */
int sb_pb_mt_submit(sb_pb_mt *t, const char *text, size_t len);
/* the oldest submitted sentence's result (waits for it); returns its decoding status. SB_EINVAL if none is in
 * flight. *ns: the worker's decoding time of the sentence; stats (may be NULL): the beam search's. The caller frees
 * *out. */
int sb_pb_mt_take(sb_pb_mt *t, sb_pb_result **out, sb_pb_counters *counters, sb_pb_beam_stats *stats, uint64_t *ns);
/* profile samples per component (SB_PB_NPH values, summed over workers; IDLE = waiting for work) */
void sb_pb_mt_profile(sb_pb_mt *t, uint64_t *samples);
/* workers' workspace counters summed (sb_pb_ws_counts) */
void sb_pb_mt_counts(sb_pb_mt *t, uint64_t *counts);
/* 1 if every requested pinning succeeded */
int sb_pb_mt_pinned(sb_pb_mt *t);
void sb_pb_mt_free(sb_pb_mt *t);
/* CFFI-END */

#endif
