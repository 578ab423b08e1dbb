/* arpa.h - a streaming ARPA parser (the format of SRILM/KenLM back-off language models).
 *
 * The caller feeds whole lines (any number per call); the parser checks the structure
 * (\data\ header, counts, sections in order, \end\), parses every entry without per-line
 * allocations, maps words to ids (ids in the order unigrams appear; `<UNK>` is read as `<unk>`;
 * a missing `<unk>` is appended after the unigrams with log10 p = -100, KenLM's default) and
 * writes ids / log10 p / log10 back-off into arrays the caller owns.
 *
 * Protocol:  sb_arpa_new -> sb_arpa_feed ... (returns SB_OK with *need_buffers = 1 once the
 * \data\ counts are known: read sb_arpa_order / sb_arpa_count, hand over one buffer triple
 * per order with sb_arpa_set_buffers, feed the rest) -> sb_arpa_finish.
 * On SB_EFORMAT, sb_arpa_error_line / sb_arpa_error_message say where and what.
 */
#ifndef SMTBENCH_ARPA_H
#define SMTBENCH_ARPA_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_arpa sb_arpa;
enum { SB_ARPA_MAX_ORDER = 16 };

int sb_arpa_new(sb_arpa **out);
void sb_arpa_free(sb_arpa *p);
/* Parse the whole lines in buf[0..len) (the last may lack its newline only at end of input).
 * Stops early, with *consumed < len and *need_buffers = 1, right after the line that ends the
 * \data\ block; call again with the rest once buffers are set. */
int sb_arpa_feed(sb_arpa *p, const char *buf, size_t len, size_t *consumed, int *need_buffers);
int sb_arpa_finish(sb_arpa *p);
int sb_arpa_order(const sb_arpa *p);
uint64_t sb_arpa_count(const sb_arpa *p, int n);        /* the header's count for order n */
/* Buffers for order n: ids (capacity * n), prob and backoff (capacity each). The unigram
 * capacity must be count + 1 (room for an appended <unk>). */
int sb_arpa_set_buffers(sb_arpa *p, int n, uint32_t *ids, float *prob, float *backoff, uint64_t capacity);
uint64_t sb_arpa_filled(const sb_arpa *p, int n);       /* entries written for order n */
uint64_t sb_arpa_error_line(const sb_arpa *p);
const char *sb_arpa_error_message(const sb_arpa *p);
uint32_t sb_arpa_vocab_size(const sb_arpa *p);
uint64_t sb_arpa_vocab_bytes(const sb_arpa *p);         /* sum of word lengths + one '\n' each */
int sb_arpa_vocab_dump(const sb_arpa *p, char *out, uint64_t cap); /* words joined by '\n' */
/* CFFI-END */

#endif
