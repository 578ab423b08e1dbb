/* pb/beam.h - Pharaoh's beam search and Moore & Quirk's two modifications of it:
 *   R. C. Moore and C. Quirk, "Faster Beam-Search Decoding for Phrasal Statistical Machine Translation",
 *   MT Summit XI, 2007 (shared/papers/moore-quirk-faster-beam-search.txt).
 *
 * Section 3, Fig 1 (variant PHARAOH): one stack per number of covered source words; each stack is pruned to the
 * hypotheses within `beam_threshold` of its best (score + future cost) and to the best `beam_limit`, then every
 * hypothesis is extended by every uncovered source span x every translation the t-table pruning keeps (within
 * `ttable_threshold` of the span's best stand-alone estimate, at most `ttable_limit`). Recombination on coverage,
 * LM state and the end of the last source phrase (its start too when lexicalized reordering is weighted). The
 * future cost is Pharaoh's: the best estimate of each span (TM, penalties, the LM of the phrase alone: unigram for
 * the first word, bigram for the second, ...), combined over splits; the uncovered gaps summed.
 * Section 4 (variant DE): the distortion penalty of each extension is replaced by the four-case estimate that
 * front-loads the distortion still to come; over a complete hypothesis it sums to Pharaoh's distortion with the
 * final jump to the sentence end charged (footnotes 4-5; sb_pb_beam_distortion_totals checks it).
 * Section 5 (variant DE_EP): early pruning - the scans over start positions (left to right), end positions (left
 * to right) and a span's translations (best first) each stop at the first candidate whose estimated score,
 * without the LM context adjustment, falls more than `ep_threshold` below the hypothesis it extends; the normal
 * beam pruning follows.
 *
 * MODE_PAPER: the paper's distortion limit (section 6, footnote 7): Koehn's distance |prev_end + 1 - start| at
 * most L forward and L + 1 backward, and no extension after which the jump back to the leftmost uncovered word
 * would break it; the final jump to the sentence end is charged (Pharaoh's variant: in the score and in the
 * Distortion feature of the result). MODE_MOSES: Moses' distortion limit (pb/hyp.h sb_pb_distortion_ok), no
 * final jump; there, DE is Moses v1's -early-distortion-cost (moses/FF/DistortionScoreProducer.cpp), whose
 * search score (sb_pb_result_search_score) is the front-loaded one while the result's features and total are the
 * model's (Moses' Distortion), as the derivation scorer computes them.
 *
 * Scores, thresholds and the counters are in the model's units (natural logs times the weights as loaded);
 * normalising the weights is the caller's business (pylib/smtbench/decode/beam.py). "Hypotheses evaluated"
 * (counters->created) = hypotheses whose LM score was computed, the paper's measure of the search space. */
#ifndef SMTBENCH_PB_BEAM_H
#define SMTBENCH_PB_BEAM_H

#include "pb/search.h"

/* CFFI-BEGIN */
enum {
    SB_PB_BEAM_PHARAOH = 0, SB_PB_BEAM_DE = 1, SB_PB_BEAM_DE_EP = 2,
    SB_PB_BEAM_MODE_PAPER = 0, SB_PB_BEAM_MODE_MOSES = 1
};
typedef struct {
    int variant;              /* SB_PB_BEAM_PHARAOH, _DE, _DE_EP */
    int mode;                 /* SB_PB_BEAM_MODE_PAPER, _MOSES */
    double beam_threshold;    /* >= 0 (model units); +inf: none */
    int beam_limit;           /* >= 1 */
    double ttable_threshold;  /* >= 0 (model units); +inf: none */
    int ttable_limit;         /* >= 1; translations beyond the loaded ones do not exist */
    double ep_threshold;      /* >= 0 (model units); +inf: none; DE_EP only */
    int distortion_limit;     /* < 0: none */
    int nbest;                /* entries wanted (0: the 1-best only) */
} sb_pb_beam_opts;
typedef struct {
    uint64_t spans;           /* (hypothesis, source span) pairs whose translations were looked at */
    uint64_t options;         /* translations looked at (evaluated or cut by early pruning) */
    uint64_t ep_start_stops;  /* start-position scans stopped by early pruning */
    uint64_t ep_end_stops;    /* end-position scans stopped by early pruning */
    uint64_t ep_option_stops; /* translation scans stopped by early pruning */
    uint64_t ep_options_cut;  /* translations of looked-at spans left unevaluated by early pruning */
    uint64_t limit_refused;   /* spans refused by the distortion limit */
    uint64_t failed;          /* sentences without a complete hypothesis (empty output) */
} sb_pb_beam_stats;

/* ws: the thread's workspace (pb/search.h), or NULL; stats may be NULL */
int sb_pb_decode_beam(const sb_pb_model *m, const char *text, size_t len, const sb_pb_beam_opts *opts,
                      sb_pb_ws *ws, sb_pb_result **out, sb_pb_counters *counters, sb_pb_beam_stats *stats);
/* The distortion of a segmentation given as source spans in target order (k phrases over n words, which must
 * cover 0..n-1 exactly once): Pharaoh's (Koehn's distances, the final jump to the sentence end included) and the
 * sum of the DE estimates, both computed by the functions the search uses. SB_EINVAL if not a segmentation. */
int sb_pb_beam_distortion_totals(int n, const int *start, const int *end, int k, int *pharaoh, int *de);
/* CFFI-END */

#endif
