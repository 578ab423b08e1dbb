/* pb/lattice.h - a sentence prepared for search (Moses2's InputPaths and their translation options): its tokens,
 * the options of every span (looked up through the phrase table's face, pb/table.h, whichever backend holds the
 * table: the table's own options, or options decoded for this sentence), pass-through options for unknown words,
 * and the future costs of every span. */
#ifndef SMTBENCH_PB_LATTICE_H
#define SMTBENCH_PB_LATTICE_H

#include <stddef.h>
#include <stdint.h>

#include "pb/model.h"
#include "pb/options.h"
#include "pb/table.h"

typedef struct sb_pb_sentence sb_pb_sentence;

typedef struct {
    const sb_pb_option *opt; /* options of a span, best stand-alone score first */
    int n;
} sb_pb_span;

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
    sb_pb_option *lopt;      /* options decoded for this sentence by the table (nlopt of them) */
    uint64_t nlopt;
    uint32_t *lwords;        /* their target word ids */
    const uint32_t *twords;  /* the target word ids of the table's own options */
};

/* A sentence: tokens separated by blanks. SB_EINVAL if longer than SB_PB_MAX_WORDS. ctx may be NULL. */
int sb_pb_sentence_new(const sb_pb_model *m, const char *text, size_t len, sb_pb_sent_ctx *ctx, sb_pb_sentence **out);
void sb_pb_sentence_free(sb_pb_sentence *s);
/* Target word string of id w in sentence s. */
const char *sb_pb_word(const sb_pb_sentence *s, uint32_t w);
/* the target word ids of an option of sentence s (the model's, the sentence's decoded or pass-through ones) */
const uint32_t *sb_pb_option_words(const sb_pb_sentence *s, const sb_pb_option *o);

#endif
