/* pb/model_impl.h - the model's insides, shared by model.c (tables), options.c (option scores), lattice.c
 * (sentences) and hyp.c (hypotheses); not for the searches. */
#ifndef SMTBENCH_PB_MODEL_IMPL_H
#define SMTBENCH_PB_MODEL_IMPL_H

#include "pb/model.h"
#include "pb/bin.h"
#include "pb/table_reader.h"
#include "probing.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LN10 2.30258509299404568402
#define OOV_BIT 0x80000000u
#define NO_WORD SB_PB_NO_WORD

typedef struct {
    uint32_t off, len;   /* source ids in src_words */
    uint32_t first, n;   /* options [first, first + n) after finish_phrases */
} srcphrase_t;

typedef struct {
    uint32_t src;        /* srcphrase index */
    uint32_t seq;        /* line order (stable sort) */
    sb_pb_option o;
} rawopt_t;

struct sb_pb_model {
    const sb_lm *lm;
    int order;
    uint32_t lm_vocab;   /* target ids below this are LM ids */
    uint32_t eos;
    double w[SB_PB_NFEAT];
    int table_limit;
    sb_pb_vocab src_vocab, tgt_vocab;
    uint32_t *src_words; size_t src_words_len, src_words_cap;
    uint32_t *tgt_words; size_t tgt_words_len, tgt_words_cap;
    srcphrase_t *phr; uint32_t n_phr, cap_phr;
    sb_index phr_ix;     /* the source phrases */
    rawopt_t *raw; uint64_t n_raw, cap_raw;
    sb_pb_option *opt; uint64_t n_opt;
    int max_len;
    int phase;           /* 0 loading phrases, 1 loading reordering, 2 ready */
    uint64_t pt_lines, ro_attached;
    sb_pb_reader rd;     /* the text tables' reader, this model its sink; its error is the model's */
    sb_pb_bin *bin;      /* binarized table (sb_pb_load_binary), or NULL; phr/opt then hold its cache */
    uint32_t *bin_tmap;  /* the file's target ids -> ours */
};

static inline uint32_t lm_id(const sb_pb_model *m, uint32_t w) {
    return w < m->lm_vocab ? w : NO_WORD; /* sb_lm_score maps ids beyond its vocabulary to <unk> */
}

/* the source phrase of ids[0 .. n) (index into phr), or NO_WORD */
uint32_t sb_pb_phrase_find(const sb_pb_model *m, const uint32_t *ids, uint32_t n);
/* stand-alone scores of an option whose target ids are `words` */
void sb_pb_option_scores(const sb_pb_model *m, sb_pb_option *o, const uint32_t *words);
/* qsort order of a source phrase's options: best stand-alone score first, ties in line order */
int sb_pb_cmp_raw(const void *a, const void *b);
/* a binarized table's options of a span (not in the cache): decoded, scored, sorted and cut by sb_pb_bin_span
 * into these growing arrays (first: index of the first, count: how many) */
typedef struct {
    sb_pb_option *opt; uint64_t n, cap;
    uint32_t *words; uint64_t nw, capw;
    rawopt_t *tmp; uint64_t captmp;
} sb_pb_local;

int sb_pb_bin_span(const sb_pb_model *m, const uint32_t *ids, int n, sb_pb_local *L, sb_pb_sent_ctx *ctx,
                   uint64_t *first, int *count);

#endif
