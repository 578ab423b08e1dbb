/* pb/model.h - the phrase-based model every decoder here searches, scored as Moses/Moses2 score it
 * (shared/notes/moses-decoder-semantics.md): a phrase table (PhraseDictionaryMemory: 4 scores, table
 * limit by stand-alone score), a lexicalized reordering table (wbe-msd-bidirectional-fe-allff: 6
 * scores), word/phrase/unknown-word penalties, distortion, and a KenLM-exact probing LM (lmprobe.h).
 *
 * Loading: sb_pb_new with the LM and its vocabulary (target word ids = LM ids for LM words), then
 * feed the phrase table's text (whole lines, any chunking), sb_pb_finish_phrases (stand-alone
 * scores, table limit), feed the reordering table, sb_pb_finish. Each sentence is prepared by
 * sb_pb_sentence_new (translation options per span, pass-through options for unknown words, future
 * costs: pb/lattice.c); the searches (pb/normal.h, ...) extend hypotheses with sb_pb_extend, so that every
 * decoder scores identically (pb/hyp.h). Feature values are natural logs in the fixed order SB_PB_F_*. */
#ifndef SMTBENCH_PB_MODEL_H
#define SMTBENCH_PB_MODEL_H

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

/* The binarized phrase table (pb/bin.h) instead of the text tables: after sb_pb_new, instead of the feed/finish
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
/* A sentence: tokens separated by blanks. SB_EINVAL if longer than SB_PB_MAX_WORDS. ctx may be NULL. */
int sb_pb_sentence_new(const sb_pb_model *m, const char *text, size_t len, sb_pb_sent_ctx *ctx, sb_pb_sentence **out);
void sb_pb_sentence_free(sb_pb_sentence *s);
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

uint32_t sb_pb_eos(const sb_pb_model *m);
/* Target word string of id w in sentence s. */
const char *sb_pb_word(const sb_pb_sentence *s, uint32_t w);
const uint32_t *sb_pb_option_words(const sb_pb_sentence *s, const sb_pb_option *o);
/* the weighted sum of SB_PB_NFEAT feature values */
double sb_pb_weighted(const sb_pb_model *m, const double *features);

static inline int sb_pb_cov_get(const uint64_t *c, int i) { return (int)((c[i >> 6] >> (i & 63)) & 1u); }
static inline void sb_pb_cov_set(uint64_t *c, int i) { c[i >> 6] |= (uint64_t)1 << (i & 63); }

#endif
