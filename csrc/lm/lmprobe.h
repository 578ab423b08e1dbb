/* lmprobe.h - a probing-hash back-off LM with KenLM's query semantics, scored sequentially or
 * through Mokry's automaton queue (Mokry 2016, sections 2.3-2.3.1 and 3.2, Figs 3.3-3.4).
 *
 * Storage (KenLM "probing"): unigrams direct-indexed by word id ({log10 p, back-off}); each order
 * n >= 2 a linear-probing table of {64-bit key, log10 p, back-off}, key = KenLM's incremental
 * hash of the reversed n-gram (w_n, w_{n-1}, ..., w_1), so that the key of the (k+1)-gram is one
 * combine step from the key of the k-gram. The sign bits carry KenLM's flags: a back-off of -0.0
 * means "never used as context" (right-state minimisation); a prob with the sign bit set means
 * "independent left" (no longer n-gram ends with this one). Missing suffixes get KenLM's blanks.
 *
 * Documents are streams of uint32 tokens: a sentence starts with SB_LM_SENTENCE_MARK | <s>-id
 * (the context <s>; not scored), then the words' ids, then </s>'s id (scored). Every token
 * without the mark is one query; probs[i] / lengths[i] receive its log10 p and matched length.
 */
#ifndef SMTBENCH_LMPROBE_H
#define SMTBENCH_LMPROBE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_lm sb_lm;
/* SB_LM_PREFETCH_ALL: a flag of sb_lm_score_stream: when a query starts, the buckets of all its n-grams (every
 * order) are requested at once, before the walk looks them up one by one (see lmprobe.c) */
enum { SB_LM_MAX_ORDER = 8, SB_LM_MAX_QUEUE = 16, SB_LM_PREFETCH_ALL = 1 };

typedef struct {
    uint32_t words[7];     /* SB_LM_MAX_ORDER - 1: most recent first */
    float backoff[7];
    int length;
} sb_lm_state;

/* bytes the model will take for these counts (unigrams direct, higher orders probing) */
uint64_t sb_lm_plan_bytes(int order, const uint64_t *counts, double multiplier);
/* line_aligned: probe each n-gram from the first bucket of its ideal bucket's 64-byte line (4 entries) instead
 * of from the ideal bucket itself (KenLM's layout); scores are identical, fewer lines are touched per lookup. */
int sb_lm_new(int order, const uint64_t *counts, double multiplier, int line_aligned, sb_lm **out);
void sb_lm_free(sb_lm *m);
/* Load order 1 first, then 2, 3, ... in turn. ids: count x n, text order. On SB_EFORMAT,
 * *bad_row is the row whose context is missing; SB_EFULL: blanks overflowed a lower table. */
int sb_lm_load_order(sb_lm *m, int n, const uint32_t *ids, const float *prob, const float *backoff,
                     uint64_t count, uint64_t *bad_row);
int sb_lm_set_specials(sb_lm *m, uint32_t bos, uint32_t eos, uint32_t unk);
uint64_t sb_lm_bytes(const sb_lm *m);
int sb_lm_order(const sb_lm *m);
uint64_t sb_lm_blanks(const sb_lm *m);
int sb_lm_uses_huge_pages(const sb_lm *m);

void sb_lm_begin_state(const sb_lm *m, sb_lm_state *out);
/* One KenLM FullScore: returns log10 p; *ngram_length = matched length. */
float sb_lm_score(const sb_lm *m, const sb_lm_state *in, uint32_t word, sb_lm_state *out, int *ngram_length);

/* Score a token stream. queue_size 0 = sequential; 1..16 = automaton queue of that size. flags: 0 or
 * SB_LM_PREFETCH_ALL (either path; the scores are the same bit for bit).
 * probs / lengths: one entry per query (may be NULL for lengths). *log10_sum: the sum of probs in
 * query order (double); *elapsed_ns: time of the scoring loop and the sum; *queries: count. */
int sb_lm_score_stream(const sb_lm *m, const uint32_t *tokens, uint64_t n_tokens, int queue_size, int flags,
                       float *probs, uint8_t *lengths, double *log10_sum, uint64_t *queries,
                       uint64_t *elapsed_ns);
/* n independent (state, word) queries: out-states, log10 p and matched lengths (may be NULL), equal to
 * sb_lm_score's bit for bit. queue_size 0 = one after another; 1..16 = Mokry's automaton queue over the batch. */
int sb_lm_score_batch(const sb_lm *m, const sb_lm_state *in, const uint32_t *words, uint64_t n, int queue_size,
                      sb_lm_state *out, float *probs, uint8_t *lengths);
/* CFFI-END */

#define SB_LM_SENTENCE_MARK 0x80000000u /* smtbench.lm.probing.SENTENCE_MARK */

#endif
