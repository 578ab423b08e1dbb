/* pb/vocab.h - the phrase tables' vocabularies: words interned to dense ids (0, 1, ...) in first-seen order, held
 * NUL-terminated back to back, found through one probing index (probing.h). The model keeps a source and a target
 * vocabulary (the target one seeded with the LM's words, so target ids of LM words are LM ids); the binarizer keeps
 * its own pair and writes them into the file. */
#ifndef SMTBENCH_PB_VOCAB_H
#define SMTBENCH_PB_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/probing.h"

#define SB_PB_NO_WORD UINT32_MAX

typedef struct {
    char *chars;      /* NUL-terminated words back to back */
    size_t chars_len, chars_cap;
    uint64_t *off;    /* id -> offset into chars */
    uint32_t n, cap;
    sb_index ix;      /* the ids */
} sb_pb_vocab;

/* frees what v holds and zeroes it (an all-zero sb_pb_vocab is an empty vocabulary) */
void sb_pb_vocab_free(sb_pb_vocab *v);
static inline const char *sb_pb_vocab_str(const sb_pb_vocab *v, uint32_t id) { return v->chars + v->off[id]; }
/* id of s[0 .. len), or SB_PB_NO_WORD */
uint32_t sb_pb_vocab_find(const sb_pb_vocab *v, const char *s, size_t len);
/* id of s[0 .. len) (added if new); SB_PB_NO_WORD on allocation failure */
uint32_t sb_pb_vocab_intern(sb_pb_vocab *v, const char *s, size_t len);
/* bytes held */
uint64_t sb_pb_vocab_bytes(const sb_pb_vocab *v);

static inline int sb_pb_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
/* The next blank-separated token of p[0 .. len) from *i: 1 with p[*start .. *i) the token (*i just past it), or 0
 * at the end. The one token scanner of the table reader's fields and scores. */
static inline int sb_pb_next_token(const char *p, size_t len, size_t *i, size_t *start) {
    size_t k = *i;
    while (k < len && sb_pb_is_blank(p[k])) k++;
    if (k == len) { *i = k; return 0; }
    *start = k;
    while (k < len && !sb_pb_is_blank(p[k])) k++;
    *i = k;
    return 1;
}
/* ids of the blank-separated tokens of p[0 .. len) (interned when add): count, -1 more than max, -2 no memory,
 * -3 a word not in v (only when !add) */
int sb_pb_tokens(sb_pb_vocab *v, const char *p, size_t len, int add, uint32_t *ids, int max);

#endif
