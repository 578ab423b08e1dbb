/* btree.h - gLM's B-tree trie language model (Bogoychev & Lopez 2016, sections 3-4).
 *
 * The model is ONE byte array (4-byte aligned), laid out breadth-first:
 *   root        : direct-indexed unigram array, vocab x {float prob, float backoff, uint32 child}
 *   trie nodes  : every order-2 trie node (children of unigram 0, 1, ...), then every order-3 node, ...
 *                 A trie node = uint32 count (its number of entries) followed by a B-tree of node size K
 *                 (K-1 keys per full node) built full from the sorted keys (Cesarini & Soda 1983; paper 4.1);
 *                 the B-tree's own nodes are also laid out breadth-first.
 *   B-tree node : keys[nk] (uint32 word ids, sorted), then, if internal, children[K] (uint32 offsets relative
 *                 to this node, divided by 4; 0 = no child), then values[nk].
 *                 value = {float log10 prob, float log10 backoff, uint32 child} for orders < N
 *                         (child: offset of the child trie node relative to this B-tree node, /4; 0 = none),
 *                         {float log10 prob} for order N (which has neither back-offs nor children).
 * The shape of a B-tree is a function of (count, K) only, so no per-node header is stored: a node of a
 * subtree holding c keys is a leaf with c keys when c < K, else a full node of K-1 keys whose K subtrees
 * hold the rest split evenly (the single last child when K <= c < 2K).
 *
 * A query is N uint32 word ids: q[0] = the predicted word, q[1..N-1] = its context, most recent first,
 * SB_BTREE_NONE after the context ends. The answer is Eq. 2: log10 p of the longest match plus the
 * back-offs of the longer contexts, and the matched n-gram length.
 */
#ifndef SMTBENCH_BTREE_H
#define SMTBENCH_BTREE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_btree sb_btree;
enum { SB_BTREE_MIN_K = 3, SB_BTREE_MAX_K = 64, SB_BTREE_MAX_ORDER = 16 };
enum { SB_BTREE_MAX_INTERLEAVE = 64 };
/* Queries in flight a thread where a caller has no reason to pick another: the library's (BTreeLM, BTreeScorer,
 * the btree-o5-k31 count point) and the device driver's, as the default grid's glm_btree.interleave (16 beat 8 by
 * 12-18% there; again on the AMD EPYC VM, bible.o5, K 31, 1 thread, interleaved processes: +8% in a fast memory
 * regime, +20-34% in slow ones, and 20-24 no better than 16). */
enum { SB_BTREE_DEFAULT_INTERLEAVE = 16 };

/* Build from sorted tables. counts[0] = vocab size (unigram ids 0..vocab-1, direct-indexed);
 * counts[n-1] = number of n-grams of order n. For orders n >= 2, concatenated in order 2, 3, ..., N:
 *   parents[i]: index of the entry's trie parent (the order-(n-1) entry of its reversed (n-1)-gram prefix,
 *               i.e. a unigram id for n = 2, else a rank in that order's table), non-decreasing;
 *   keys[i]   : the word that extends the parent (text-order first word), strictly increasing per parent;
 *   probs[i], backoffs[i] (backoffs of order N are ignored).
 * uni_probs / uni_backoffs: vocab entries. Errors: SB_EINVAL (K, order, unsorted input, vocab >= 2^31),
 * SB_EFORMAT (a parent index out of range), SB_EUNSUPPORTED (model over 16 GiB), SB_ENOMEM. */
int sb_btree_build(int order, int K, const uint64_t *counts,
                   const float *uni_probs, const float *uni_backoffs,
                   const uint32_t *parents, const uint32_t *keys,
                   const float *probs, const float *backoffs, sb_btree **out);
/* The sorted tables sb_btree_build takes, from an ARPA model's tables in text order (as sb_arpa fills them):
 * counts[n-1] entries of order n (counts[0] = the unigram entries: exactly one per word of the vocabulary),
 * ids[n-1] (count x n ids), prob[n-1], backoff[n-1]. Writes uni_prob / uni_backoff (vocab entries) and, for the
 * orders 2..N concatenated, parents / keys / probs / backoffs (sum of counts[1..N-1] entries), every order sorted by
 * (parent, key) with ties kept in input order: each entry's parent is the rank of its suffix w2..wn in order n-1's
 * sorted table (for n = 2 the unigram id), found by binary search. On SB_EFORMAT, *bad_order / *bad_row name the
 * offending entry (its row in that order's input) and *why says what: k >= 2 = it has no k-gram suffix w(n-k+1)..wn
 * (a pruned ARPA), -1 = it repeats another entry, -2 = a unigram entry's id is out of range or repeated, or a word
 * has none. SB_EINVAL: order outside 1..SB_BTREE_MAX_ORDER, vocab 0 or >= 2^31. SB_ENOMEM. */
int sb_btree_sort_tables(int order, uint32_t vocab, const uint64_t *counts, const uint32_t *const *ids,
                         const float *const *prob, const float *const *backoff, float *uni_prob, float *uni_backoff,
                         uint32_t *parents, uint32_t *keys, float *probs, float *backoffs,
                         int *bad_order, uint64_t *bad_row, int *why);
void sb_btree_free(sb_btree *t);
uint64_t sb_btree_bytes(const sb_btree *t);
/* The byte array (read-only) and its size (without the trailing padding). */
const uint8_t *sb_btree_data(const sb_btree *t);
/* Per order n (2..N): trie nodes, B-stumps (trie nodes whose B-tree is one node), deepest B-tree, entries. */
int sb_btree_stats(const sb_btree *t, int n, uint64_t *trie_nodes, uint64_t *stumps, int *max_depth,
                   uint64_t *entries);

/* Batch query. queries: n x order uint32 (see above). interleave: 0 or 1 = one query after another;
 * 2..SB_BTREE_MAX_INTERLEAVE = that many queries in flight per thread, each one's next node prefetched
 * while the others compare. threads >= 1 split the batch. out_len may be NULL. */
int sb_btree_query(const sb_btree *t, const uint32_t *queries, uint64_t n, int interleave, int threads,
                   float *out_prob, uint8_t *out_len);
/* The same with flags. SB_BTREE_STREAM_REUSE: when row i's context continues row i-1 (c1 = row i-1's
 * word, c_k = its c_{k-1}: consecutive n-grams of one token stream), row i's back-offs are read from
 * row i-1's longest-match walk, which visits exactly the entries of row i's back-off walk, instead of
 * walking again (KenLM's state, rebuilt from the batch); other rows walk as usual. Same scores, bit for
 * bit. Not gLM's independent-query semantics: benchmarks label it. */
enum { SB_BTREE_STREAM_REUSE = 1 };
int sb_btree_query_ex(const sb_btree *t, const uint32_t *queries, uint64_t n, int interleave, int threads,
                      int flags, float *out_prob, uint8_t *out_len);
/* Which K-ary compare this binary uses: "avx2", "sse2" or "scalar". */
const char *sb_btree_simd(void);
/* CFFI-END */

/* The 'no word' filler of a query's context (Python: smtbench.lm.btree.NONE). */
#define SB_BTREE_NONE 0xFFFFFFFFu

#endif
