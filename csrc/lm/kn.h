/* kn.h - interpolated modified Kneser-Ney estimation the way KenLM's lmplz computes it
 * (see /work/shared/notes/lmplz-modified-kneser-ney.md), with compact in-memory sorted id arrays.
 *
 * Word ids: 0 <unk>, 1 <s>, 2 </s>, 3.. the words in first-seen order (every id < vocab_size must occur).
 * Pipeline (one call per stage so the caller can show progress):
 *   sb_kn_create(order, chunk_tokens)      order 2..6; chunk_tokens bounds the counting buffer
 *   sb_kn_add(ids, n)   (repeated)         whole sentences, each terminated by id 2 (</s>); no <s>/<unk>
 *   sb_kn_finish_counts(vocab_size)        flush the last chunk (every counted order is sorted and unique)
 *   sb_kn_adjust(n) for n = order-1 .. 1   adjusted counts of order n from order n+1, suffix links
 *   sb_kn_discounts(fallback, D, coc)      three discounts per order from counts-of-counts
 *   sb_kn_probs(n) for n = 1 .. order      uninterpolated probs and gammas, interpolation, back-offs
 *   sb_kn_format(n, start, ...)            ARPA lines of order n into a caller buffer (repeat until done)
 *
 * Highest-order n-grams are the windows of the sentence padded with order-1 <s> and one </s>; windows with
 * <s> at position >= 2 are collapsed to the n-gram starting at the last <s> (lmplz's AdjustCounts).
 * Memory per n-gram of order n: 4n + 16 bytes, plus the sort buffers of the counting stage.
 */
#ifndef SMTBENCH_KN_H
#define SMTBENCH_KN_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_kn sb_kn;
enum { SB_KN_MAX_ORDER = 6 };
/* sb_kn_discounts: the stage that failed when a discount is out of range (no fallback given). */
enum { SB_KN_EDISCOUNT = -100 };

int sb_kn_create(int order, uint64_t chunk_tokens, sb_kn **out);
void sb_kn_free(sb_kn *kn);
int sb_kn_add(sb_kn *kn, const uint32_t *ids, size_t n);
int sb_kn_finish_counts(sb_kn *kn, uint32_t vocab_size);
int sb_kn_adjust(sb_kn *kn, int n);
/* fallback: NULL, or 3 discounts (for D1, D2, D3+) used for an order whose discounts are bad.
 * discounts: order*4 doubles (D0..D3 per order, order 1 first); coc: order*5 counts n_0..n_4 (n_0 unused).
 * bad_order: 0, or the first order whose discounts were bad (and replaced when fallback != NULL). */
int sb_kn_discounts(sb_kn *kn, const double *fallback, double *discounts, uint64_t *coc, int *bad_order);
int sb_kn_probs(sb_kn *kn, int n);
uint64_t sb_kn_size(const sb_kn *kn, int n);
uint64_t sb_kn_bytes(const sb_kn *kn);
uint64_t sb_kn_peak_bytes(const sb_kn *kn);
/* vocab: the words' bytes concatenated; vocab_off: vocab_size+1 offsets into it.
 * Writes whole lines of entries [start, ...) into buf (cap bytes); *next = first entry not written. */
int sb_kn_format(const sb_kn *kn, int n, uint64_t start, const char *vocab, const uint64_t *vocab_off,
                 char *buf, size_t cap, size_t *written, uint64_t *next);
/* CFFI-END */

#endif
