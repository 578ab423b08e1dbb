/* pb/options.h - translation options: the features every option and hypothesis is scored in (SB_PB_F_*), an
 * option (a target phrase of a source phrase, with its scores), its stand-alone score (the features fixed by the
 * pair and the LM of the phrase alone, Moses' EvaluateInIsolation) from an LM and the weights, and the order of a
 * source phrase's options. Below the phrase table's backends and the model (pb/table_mem.h, pb/bin_read.h,
 * pb/model.h make options with these; the model holds the scorer): options.c reads nothing of a table or model. */
#ifndef SMTBENCH_PB_OPTIONS_H
#define SMTBENCH_PB_OPTIONS_H

#include <stdatomic.h>
#include <stdint.h>

#include "util/common.h"
#include "lm/lmprobe.h"
#include "pb/vocab.h"

/* CFFI-BEGIN */
/* the feature values of an option or a path, natural logs, in this order */
enum {
    SB_PB_F_UNK = 0, SB_PB_F_WP = 1, SB_PB_F_PP = 2, SB_PB_F_TM = 3, SB_PB_F_RO = 7,
    SB_PB_F_DIST = 13, SB_PB_F_LM = 14, SB_PB_NFEAT = 15
};
/* the components of the per-thread time profile (the Moses2 paper's Table 3) */
enum { SB_PB_PH_IDLE = 0, SB_PB_PH_LM = 1, SB_PB_PH_PT = 2, SB_PB_PH_RO = 3, SB_PB_PH_SEARCH = 4,
       SB_PB_PH_MEM = 5, SB_PB_PH_OTHER = 6, SB_PB_NPH = 7 };
/* CFFI-END */

#define SB_PB_LN10 2.30258509299404568402

/* set the profile's current component (ph NULL: no profile) */
static inline void sb_pb_phase(_Atomic int *ph, int x) {
    if (ph) atomic_store_explicit(ph, x, memory_order_relaxed);
}

typedef struct {
    uint32_t tgt_off;      /* into the target words of its table (or of the sentence: decoded, pass-through) */
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

/* What a source phrase's options are made with: the LM and the weights of their stand-alone scores, and how many
 * of them are kept (the model holds one). */
typedef struct {
    const sb_lm *lm;
    int order;
    uint32_t lm_vocab;     /* target ids below this are LM ids */
    int table_limit;       /* options kept per source phrase, best stand-alone score first; 0 = all */
    double w[SB_PB_NFEAT];
} sb_pb_scorer;

/* the LM id of target id w: itself below the LM's vocabulary, else SB_PB_NO_WORD (sb_lm_score maps ids beyond
 * its vocabulary to <unk>) */
static inline uint32_t sb_pb_lm_id(const sb_pb_scorer *sc, uint32_t w) {
    return w < sc->lm_vocab ? w : SB_PB_NO_WORD;
}

/* stand-alone scores of an option whose target ids are `words` */
void sb_pb_option_scores(const sb_pb_scorer *sc, sb_pb_option *o, const uint32_t *words);

/* an option of a source phrase before the table limit: its phrase (index into a table's source phrases) and its
 * line order (the stable tie-break) */
typedef struct {
    uint32_t src;
    uint32_t seq;
    sb_pb_option o;
} sb_pb_rawopt;
/* qsort order of sb_pb_rawopt: by source phrase, best stand-alone score first, ties in line order */
int sb_pb_cmp_raw(const void *a, const void *b);

#endif
