/* phrase_score.h - Mediani et al. (2012) §3.1 multithreaded external-memory phrase scoring.
 *
 * Input: Moses' `extract` lines `F ||| E ||| fi-ei ...` (optionally `||| count`, Moses' instance weight,
 * which is how partial counts of the distributed form (§3.3) come back in), and lex.f2e / lex.e2f.
 *
 * Five steps, as in Mediani §3.1 / Figure 1:
 *  1. load: the calling thread reads the (decompressed) input in 1 MiB chunks and hands them to `threads`
 *     workers, which parse lines, compute both lexical weights and append 64-byte records to a per-thread
 *     buffer; a full buffer is sorted by (target, source, alignment) and written to disk as a run. The buffers
 *     together never exceed the memory budget. Records are fixed-size and hold no strings: a phrase is the
 *     codes of its words (1-based ranks of the words in byte order, from the lex tables) packed into 128 bits,
 *     an alignment a 64-bit point set -- §5's fix (integer ids instead of padded fixed-width strings), without
 *     even a phrase dictionary. Key order is byte order of the phrase strings (LC_ALL=C), so the table comes
 *     out sorted like Moses'. Limits: 8 words a side (fewer past 2^16 words of vocabulary).
 *  2./3. the runs are merged (multiway, a heap per thread) in `threads` disjoint target ranges (splitters
 *     from samples taken while forming runs); each thread merges pairs with the same target, counts c(e),
 *     uniquifies identical pairs choosing the most frequent alignment (ties: Moses' rule -- the greater alignment as a vector over target words of source-position sets; the direct and inverse runs each apply it from their side, so lex(e|f) and lex(f|e) may come from different alignments) with its lexical weights, and forms runs of 80-byte unique-pair records sorted by
 *     (source, target). Half the budget feeds the merge buffers, half the new runs.
 *  4./5. those runs are merged in `threads` disjoint source ranges; each thread computes c(f) and writes its
 *     range of the phrase table to its own part file (the caller concatenates / compresses parts in order).
 * With counts_only, step 3 writes `F ||| E ||| align ||| count` for every distinct (pair, alignment) instead
 * (the partial counts of a partition) and steps 4/5 are skipped.
 */
#ifndef SMTBENCH_PHRASE_SCORE_H
#define SMTBENCH_PHRASE_SCORE_H
#include "common.h"

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

int sb_pscore_create(const sb_pscore_args *args, sb_pscore **out);
void sb_pscore_free(sb_pscore *s);
/* Load a lex file from fd (read to EOF, not closed). which = SB_PSCORE_LEX_F2E (`e f w(e|f)`) or _E2F
 * (`f e w(f|e)`). On SB_EFORMAT, *err_line is the 1-based line and err holds what is wrong. */
int sb_pscore_load_lex(sb_pscore *s, int which, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Load extract lines from fd in `threads` workers (may be called for several inputs in turn). */
int sb_pscore_load_extract(sb_pscore *s, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Sort, merge, score; writes part files `<out_prefix>.<t>` for t = 0..threads-1 (some may be empty),
 * which concatenated in order form the output. */
int sb_pscore_finish(sb_pscore *s, const char *out_prefix, char *err, size_t errlen);
void sb_pscore_get_stats(const sb_pscore *s, sb_pscore_stats *st);

/* The Moses-style baseline's single-threaded pieces (the lex tables loaded into s first):
 * score a *sorted* extract (inverse = 0) or extract.inv (inverse = 1) from in_fd into a half table
 * `F ||| E ||| align ||| lex ||| count(first) count(pair)` on out_fd (F first in both directions, so the
 * inverse half lines up with the direct one once sorted), and join the two sorted halves into the table. */
int sb_pscore_stream_half(sb_pscore *s, int in_fd, int out_fd, int inverse, uint64_t *err_line, char *err,
                          size_t errlen);
int sb_pscore_consolidate(int direct_fd, int inverse_fd, int out_fd, uint64_t *err_line, char *err, size_t errlen);
/* CFFI-END */

#endif
