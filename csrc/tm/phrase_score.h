/* phrase_score.h - Mediani et al. (2012) §3.1 multithreaded external-memory phrase scoring.
 *
 * Input: Moses' `extract` lines `F ||| E ||| fi-ei ...` (optionally `||| count`, Moses' instance weight,
 * which is how partial counts of the distributed form (§3.3) come back in), and lex.f2e / lex.e2f; or, with no
 * extract file at all, the extractor's phrase pairs as records (tm extract --phrase-table: phrase_runs.h
 * sb_pscore_begin_pairs / sb_ps_add_pair, step 1 without its parse).
 *
 * Five steps, as in Mediani §3.1 / Figure 1:
 *  1. load: the calling thread reads the (decompressed) input in 1 MiB chunks and hands them to `threads`
 *     workers, which parse lines and append 48-byte records (keys, alignment, count) to a per-thread
 *     buffer; a full buffer is sorted by (target, source, alignment) and written to disk as a run, equal records
 *     as one with their counts summed (unweighted input). A load that filled no buffer keeps its buffers, sorted
 *     and combined, as the runs where they take at most 3/4 of the budget (the merge reads them in place; the
 *     rest of the budget holds step 3's buffers): nothing is written that memory already holds. The buffers
 *     together never exceed the memory budget. Records are fixed-size and hold no strings: a phrase is the
 *     codes of its words (1-based ranks of the words in byte order, from the lex tables) packed into 128 bits,
 *     an alignment a 64-bit point set -- §5's fix (integer ids instead of padded fixed-width strings), without
 *     even a phrase dictionary. Key order is the order `LC_ALL=C sort` gives the lines (phrase_core.h), so the
 *     table comes out in Moses' order. Limits: 8 words a side (fewer past 2^16 words of vocabulary).
 *  2./3. the runs are merged (multiway, a heap per thread) in `threads` disjoint target ranges (splitters
 *     from samples taken while forming runs); each thread merges pairs with the same target, counts c(e),
 *     uniquifies identical pairs choosing the most frequent alignment (ties: Moses' rule -- the greater alignment as a vector over target words of source-position sets; the direct and inverse runs each apply it from their side, so lex(e|f) and lex(f|e) may come from different alignments), computes the lexical weights of the chosen alignment(s) there (once a distinct pair, not once a line: phrase_runs.h sb_ps_lex_weights), and forms runs of 80-byte unique-pair records sorted by
 *     (source, target). Half the budget feeds the merge buffers, half the new runs.
 *  4./5. those runs are merged in `threads` disjoint source ranges; each thread computes c(f) and writes its
 *     range of the phrase table to its own part file (the caller concatenates / compresses parts in order).
 * The phases, each a file with its own header over phrase_core.h (the records, keys and state they share):
 * phrase_runs.c (step 1), phrase_merge.c (steps 2/3), this file (steps 4/5: the scores; the interface),
 * phrase_write.c (the output lines and formats).
 * With counts_only, step 3 writes `F ||| E ||| align ||| count` for every distinct (pair, alignment) instead
 * (the partial counts of a partition) and steps 4/5 are skipped.
 */
#ifndef SMTBENCH_PHRASE_SCORE_H
#define SMTBENCH_PHRASE_SCORE_H
#include "tm/phrase_core.h"

/* CFFI-BEGIN */
int sb_pscore_create(const sb_pscore_args *args, sb_pscore **out);
void sb_pscore_free(sb_pscore *s);
/* Sort, merge, score; writes part files `<out_prefix>.<t>` for t = 0..threads-1 (some may be empty),
 * which concatenated in order form the output. */
int sb_pscore_finish(sb_pscore *s, const char *out_prefix, char *err, size_t errlen);
void sb_pscore_get_stats(const sb_pscore *s, sb_pscore_stats *st);
/* CFFI-END */

#endif
