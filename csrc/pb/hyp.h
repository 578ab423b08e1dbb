/* pb/hyp.h - hypotheses over a sentence (pb/lattice.h): the empty one, coverage and distortion checks, extension by
 * an option (every feature scored as Moses/Moses2 score it, the LM in context, optionally deferred), the future
 * cost of a coverage, recombination keys, and the features of a path recomputed from the model. */
#ifndef SMTBENCH_PB_HYP_H
#define SMTBENCH_PB_HYP_H

#include "pb/lattice.h"

#define SB_PB_COVW 4 /* uint64 words of coverage: SB_PB_MAX_WORDS / 64 */
static inline int sb_pb_cov_get(const uint64_t *c, int i) { return (int)((c[i >> 6] >> (i & 63)) & 1u); }
static inline void sb_pb_cov_set(uint64_t *c, int i) { c[i >> 6] |= (uint64_t)1 << (i & 63); }

typedef struct sb_pb_hyp {
    const struct sb_pb_hyp *prev;
    const sb_pb_option *opt;
    struct sb_pb_hyp *arcs;      /* recombined worse hypotheses (n-best) */
    struct sb_pb_hyp *next_arc;
    uint64_t cov[SB_PB_COVW];
    sb_lm_state lm;
    double score;                /* model score so far */
    double total;                /* score + future-cost estimate of the uncovered words */
    int16_t start, end;          /* source span of the last phrase; -1, -1 in the empty hypothesis */
    int16_t ncov;
    int16_t tgt_len;             /* target words so far */
    uint32_t id;                 /* creation order (deterministic tie-break) */
} sb_pb_hyp;

/* Empty hypothesis (coverage empty, LM state <s>). */
void sb_pb_hyp_init(const sb_pb_sentence *s, sb_pb_hyp *h);
/* Distortion-limit check with Moses' semantics (distortion_limit < 0: none), overlap excluded, with the hypothesis'
 * first uncovered position `gap` given. */
int sb_pb_distortion_ok(const sb_pb_hyp *h, int start, int end, int gap, int distortion_limit);
/* its first check: the jump from a last span ending at prev_end (-1: none) to start is within the limit */
static inline int sb_pb_jump_ok(int prev_end, int start, int distortion_limit) {
    int d = prev_end < 0 ? start : prev_end - start + 1;
    return distortion_limit < 0 || (d < 0 ? -d : d) <= distortion_limit;
}
int sb_pb_first_gap(const sb_pb_sentence *s, const uint64_t *cov);
/* Lexicalized reordering orientation of [start, end] after [pstart, pend] (-1, -1: none): 0 M, 1 S, 2 D. */
int sb_pb_orientation(int pstart, int pend, int start, int end);
/* Fill `out` as `h` extended by option `o` over [start, end]; `est` = future cost of the new coverage; the LM
 * queries marked as the profile's LM component (ph may be NULL). */
void sb_pb_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end, double est,
                  sb_pb_hyp *out, _Atomic int *ph);
/* sb_pb_extend's score before the LM of the first order-1 words in context and </s> (what sb_pb_extend_bound adds
 * est to), and sb_pb_extend given it (computed once where both are needed): the same result bit for bit. */
double sb_pb_extend_base(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end);
void sb_pb_extend_from(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                       double est, double base, sb_pb_hyp *out, _Atomic int *ph);
/* An upper bound of the total sb_pb_extend would give (the LM terms still to compute are <= 0). */
double sb_pb_extend_bound(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                          double est);
/* Deferred LM (the pipeline-tolerant decoders): everything but the LM of the first order-1 words (in context)
 * and </s>; then either sb_pb_score_lm_now, or the queries (sb_pb_lm_queries: LM ids of the words to score in
 * context, in order) answered elsewhere (e.g. a batch through the automaton queue), the state after them set
 * by sb_pb_set_lm_state, </s> queried from it if the coverage is complete, and the sum added by sb_pb_add_lm. */
void sb_pb_extend_nolm(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                       double est, sb_pb_hyp *out);
int sb_pb_lm_queries(const sb_pb_sentence *s, const sb_pb_hyp *h, uint32_t *words);
/* the LM state after a hypothesis' context words (given the state after them), then its LM score (log10, the
 * context words' and, for a complete hypothesis, </s>'s summed in that order as sb_pb_extend does) */
void sb_pb_set_lm_state(const sb_pb_sentence *s, sb_pb_hyp *h, const sb_lm_state *after_ctx);
void sb_pb_add_lm(const sb_pb_sentence *s, sb_pb_hyp *h, double lm_log10);
void sb_pb_score_lm_now(const sb_pb_sentence *s, sb_pb_hyp *h);
/* Future cost of the uncovered words of a coverage. */
double sb_pb_estimate(const sb_pb_sentence *s, const uint64_t *cov);
/* Recombination: same coverage, LM state, last span (and, if forward & 1, the previous pair's forward scores).
 * forward & SB_PB_RECOMB_END_ONLY: compare only the end of the last span, not its start (Pharaoh's key, exact
 * when no lexicalized reordering is weighted: Moore & Quirk 2007 section 3). */
#define SB_PB_RECOMB_END_ONLY 2
int sb_pb_hyp_equal(const sb_pb_hyp *a, const sb_pb_hyp *b, int forward);
uint64_t sb_pb_hyp_hash(const sb_pb_hyp *h, int forward);
/* the weighted sum of SB_PB_NFEAT feature values */
double sb_pb_weighted(const sb_pb_model *m, const double *features);
/* Recompute the feature values of the path ending in h (walked back to the empty hypothesis). */
void sb_pb_path_features(const sb_pb_sentence *s, const sb_pb_hyp *h, double *features);

#endif
