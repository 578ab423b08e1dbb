/* lmsample.h - exact, seeded sampling of text from an ARPA back-off model (synthetic corpora).
 *
 * The next word after context c (the longest suffix of the history present in the model, at most
 * order-1 words) is drawn from KenLM's back-off distribution:
 *   - with probability P(c w) one of c's explicit continuations w;
 *   - otherwise (probability 1 - sum of the explicit P(c w)) back off: draw w from the distribution of the
 *     next shorter existing suffix of c, rejecting words that are explicit after c (exact rejection sampling;
 *     for a normalised model this is b(c) * p(w | c') restricted to the non-explicit words).
 * The unigram level excludes <s> and <unk> (renormalised): synthetic text never contains them, so lmplz can
 * train on it. Explicit continuations <s> / <unk> at higher orders are dropped (their mass backs off).
 * Each sentence starts from context <s> and ends at </s> (written as a newline).
 */
#ifndef SMTBENCH_LMSAMPLE_H
#define SMTBENCH_LMSAMPLE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_lms sb_lms;
typedef struct {
    uint64_t rng;        /* xorshift state (seeded by sb_lms_seed) */
    uint64_t words;      /* words emitted so far (</s> not counted) */
    uint64_t sentences;  /* newlines emitted so far */
    uint64_t backoffs;   /* back-off steps taken */
    uint64_t rejections; /* rejected back-off draws */
    uint32_t ctx_order;  /* current context: order 1..N-1 and index in that order's table */
    uint32_t ctx_index;
    int line_open;       /* 1 when the current line has words */
} sb_lms_state;

/* counts[n-1] = number of n-grams of order n (n = 1..order). */
int sb_lms_create(int order, const uint64_t *counts, uint32_t vocab_size, sb_lms **out);
void sb_lms_free(sb_lms *s);
/* Hand over order n (1..order, in any order): ids (count x n, row-major), log10 probs. Copied. */
int sb_lms_set_order(sb_lms *s, int n, const uint32_t *ids, const float *logprob);
/* Link orders (contexts, suffixes), build the sampling tables. bos/eos/unk: the special word ids. */
int sb_lms_finalize(sb_lms *s, uint32_t bos, uint32_t eos, uint32_t unk);
void sb_lms_seed(const sb_lms *s, sb_lms_state *st, uint64_t seed);
/* Emit text into buf until max_words words have been emitted in total or buf is nearly full. When
 * max_words is reached mid-sentence the line is closed with a newline. vocab / vocab_off as in kn.h. */
int sb_lms_generate(const sb_lms *s, sb_lms_state *st, uint64_t max_words, const char *vocab,
                    const uint64_t *vocab_off, char *buf, size_t cap, size_t *written);
/* Draw n word ids (</s> included as its id) without text, for tests and speed checks. */
int sb_lms_draw_ids(const sb_lms *s, sb_lms_state *st, uint32_t *out, size_t n);
/* CFFI-END */

#endif
