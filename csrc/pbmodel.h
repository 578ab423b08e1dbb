/* pbmodel.h - the phrase-based model every decoder here searches, scored as Moses/Moses2 score it
 * (shared/notes/moses-decoder-semantics.md): a phrase table (PhraseDictionaryMemory: 4 scores, table
 * limit by stand-alone score), a lexicalized reordering table (wbe-msd-bidirectional-fe-allff: 6
 * scores), word/phrase/unknown-word penalties, distortion, and a KenLM-exact probing LM (lmprobe.h).
 *
 * Loading: sb_pb_new with the LM and its vocabulary (target word ids = LM ids for LM words), then
 * feed the phrase table's text (whole lines, any chunking), sb_pb_finish_phrases (stand-alone
 * scores, table limit), feed the reordering table, sb_pb_finish. Each sentence is prepared by
 * sb_pb_sentence_new (translation options per span, pass-through options for unknown words, future
 * costs); the searches (pbnormal.h, ...) extend hypotheses with sb_pb_extend below, so that every
 * decoder scores identically. Feature values are natural logs in the fixed order SB_PB_F_*. */
#ifndef SMTBENCH_PBMODEL_H
#define SMTBENCH_PBMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "lmprobe.h"
#include "pb/table_reader.h"

/* CFFI-BEGIN */
typedef struct sb_pb_model sb_pb_model;
typedef struct sb_pb_sentence sb_pb_sentence;
enum {
    SB_PB_MAX_WORDS = 256,  /* longest sentence a search accepts */
    SB_PB_F_UNK = 0, SB_PB_F_WP = 1, SB_PB_F_PP = 2, SB_PB_F_TM = 3, SB_PB_F_RO = 7,
    SB_PB_F_DIST = 13, SB_PB_F_LM = 14, SB_PB_NFEAT = 15
};

/* weights: SB_PB_NFEAT values in SB_PB_F_* order. lm_vocab: the LM's words joined by '\n', in LM id
 * order (so target ids of LM words are LM ids). table_limit 0 = keep every target phrase. */
int sb_pb_new(const sb_lm *lm, const char *lm_vocab, size_t vocab_len, const double *weights,
              int table_limit, sb_pb_model **out);
void sb_pb_free(sb_pb_model *m);
/* Whole lines of a Moses phrase table ("src ||| tgt ||| p1 p2 p3 p4 [||| ...]"); first_line = the
 * line number of buf's first line. On SB_EFORMAT see sb_pb_error_line / sb_pb_error_message. */
int sb_pb_feed_phrases(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line);
int sb_pb_finish_phrases(sb_pb_model *m);
/* Whole lines of a reordering table ("src ||| tgt ||| 6 scores"); pairs not kept are skipped. */
int sb_pb_feed_reordering(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line);
int sb_pb_finish(sb_pb_model *m);
uint64_t sb_pb_error_line(const sb_pb_model *m);
const char *sb_pb_error_message(const sb_pb_model *m);
/* counts: [0] phrase-table lines, [1] source phrases, [2] options kept, [3] reordering lines,
 * [4] of them attached to a kept option, [5] kept options without reordering scores,
 * [6] longest source phrase, [7] bytes held */
void sb_pb_counts(const sb_pb_model *m, uint64_t *counts);
int sb_pb_set_weights(sb_pb_model *m, const double *weights);

/* A sentence: tokens separated by blanks. SB_EINVAL if longer than SB_PB_MAX_WORDS. */
int sb_pb_sentence_new(const sb_pb_model *m, const char *text, size_t len, sb_pb_sentence **out);
void sb_pb_sentence_free(sb_pb_sentence *s);

/* The binarized phrase table (pbbin.h) instead of the text tables: after sb_pb_new, instead of the feed/finish
 * calls. The file is memory-mapped and read on demand; the `cache` most frequent source phrases are decoded,
 * scored and kept at load (the static cache of the Moses2 paper, 4.3). SB_EIO / SB_EFORMAT (message set). */
int sb_pb_load_binary(sb_pb_model *m, const char *path, uint64_t cache);
/* the components of the per-thread time profile (the Moses2 paper's Table 3) */
enum { SB_PB_PH_IDLE = 0, SB_PB_PH_LM = 1, SB_PB_PH_PT = 2, SB_PB_PH_RO = 3, SB_PB_PH_SEARCH = 4,
       SB_PB_PH_MEM = 5, SB_PB_PH_OTHER = 6, SB_PB_NPH = 7 };

/* CFFI-END */

/* ---- internal API shared by the searches (not for cffi) ---- */
#include <stdatomic.h>

/* Per-sentence context of a search: the profile's current component (NULL: no profile) and the binarized
 * table's counters. */
typedef struct {
    _Atomic int *phase;
    uint64_t lookups, cache_hits, ro_lookups;
} sb_pb_sent_ctx;
static inline void sb_pb_phase(_Atomic int *ph, int x) {
    if (ph) atomic_store_explicit(ph, x, memory_order_relaxed);
}
int sb_pb_sentence_new_ctx(const sb_pb_model *m, const char *text, size_t len, sb_pb_sent_ctx *ctx,
                           sb_pb_sentence **out);
#define SB_PB_COVW 4 /* uint64 words of coverage: SB_PB_MAX_WORDS / 64 */

typedef struct {
    uint32_t tgt_off;      /* into the model's (or sentence's) target word array */
    uint16_t tgt_len;
    uint8_t unknown;       /* pass-through option */
    uint8_t has_ro;
    float tm[4];           /* ln, floored at -100 */
    float ro[6];           /* ln; 0 when the pair has no reordering entry */
    float fixed;           /* weighted UNK + WP + PP + TM */
    float lm_ngram;        /* log10 of the words at positions >= order-1 (exact in the phrase) */
    float lm_est;          /* log10 of the first min(len, order-1) words, in-phrase context */
    float estimate;        /* stand-alone score: fixed + w_lm * ln10 * (lm_ngram + lm_est) */
    sb_lm_state end;       /* LM state after the phrase; valid when tgt_len >= order */
} sb_pb_option;

typedef struct {
    const sb_pb_option *opt; /* options of a span, best stand-alone score first */
    int n;
} sb_pb_span;

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

struct sb_pb_model;
const sb_lm *sb_pb_lm(const sb_pb_model *m);
const double *sb_pb_weights(const sb_pb_model *m);

struct sb_pb_sentence {
    const sb_pb_model *model;
    int n;
    uint32_t *src;           /* source word ids (UINT32_MAX: not in the table's vocabulary) */
    char *text;              /* copy of the tokens, NUL-separated */
    uint32_t *tok_off;       /* token i = text + tok_off[i] */
    sb_pb_span *spans;       /* spans[i * SB_PB_MAX_PHRASE + (j - i)] */
    sb_pb_option *pass;      /* pass-through options (n of them; used where unknown) */
    uint32_t *pass_words;    /* their target word ids */
    double *fc;              /* future costs fc[i * n + j] */
    sb_pb_option *lopt;      /* options decoded for this sentence from a binarized table (nlopt of them) */
    uint64_t nlopt;
    uint32_t *lwords;        /* their target word ids */
};

/* Empty hypothesis (coverage empty, LM state <s>). */
void sb_pb_hyp_init(const sb_pb_sentence *s, sb_pb_hyp *h);
/* Distortion-limit check with Moses' semantics (distortion_limit < 0: none). */
int sb_pb_can_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, int start, int end, int distortion_limit);
/* The same check once overlap is excluded, with the hypothesis' first uncovered position `gap` given. */
int sb_pb_distortion_ok(const sb_pb_hyp *h, int start, int end, int gap, int distortion_limit);
int sb_pb_first_gap(const sb_pb_sentence *s, const uint64_t *cov);
/* Lexicalized reordering orientation of [start, end] after [pstart, pend] (-1, -1: none): 0 M, 1 S, 2 D. */
int sb_pb_orientation(int pstart, int pend, int start, int end);
/* Fill `out` as `h` extended by option `o` over [start, end]; `est` = future cost of the new coverage. */
void sb_pb_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                  double est, sb_pb_hyp *out);
/* the same, marking the LM queries as the profile's LM component (ph may be NULL) */
void sb_pb_extend_ph(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                     double est, sb_pb_hyp *out, _Atomic int *ph);
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
uint32_t sb_pb_eos(const sb_pb_model *m);
/* Future cost of the uncovered words of a coverage. */
double sb_pb_estimate(const sb_pb_sentence *s, const uint64_t *cov);
/* Recombination: same coverage, LM state, last span (and, if forward & 1, the previous pair's forward scores).
 * forward & SB_PB_RECOMB_END_ONLY: compare only the end of the last span, not its start (Pharaoh's key, exact
 * when no lexicalized reordering is weighted: Moore & Quirk 2007 section 3). */
#define SB_PB_RECOMB_END_ONLY 2
int sb_pb_hyp_equal(const sb_pb_hyp *a, const sb_pb_hyp *b, int forward);
uint64_t sb_pb_hyp_hash(const sb_pb_hyp *h, int forward);
/* Target word string of id w in sentence s. */
const char *sb_pb_word(const sb_pb_sentence *s, uint32_t w);
const uint32_t *sb_pb_option_words(const sb_pb_sentence *s, const sb_pb_option *o);
/* Recompute the feature values of the path ending in h (walked back to the empty hypothesis). */
void sb_pb_path_features(const sb_pb_sentence *s, const sb_pb_hyp *h, double *features);
double sb_pb_weighted(const sb_pb_model *m, const double *features);

static inline int sb_pb_cov_get(const uint64_t *c, int i) { return (int)((c[i >> 6] >> (i & 63)) & 1u); }
static inline void sb_pb_cov_set(uint64_t *c, int i) { c[i >> 6] |= (uint64_t)1 << (i & 63); }

#endif
