/* probing.h - the one linear-probing hash table of this project, in two shapes, its string hashes (a file format's
 * and an in-memory one) and its one word-id tuple hash.
 *
 * 1. sb_probing: keyed entries in the table itself, page-backed - used by Mokry's hash experiment (hashprobe.c, Mokry
 *    2016 section 3.1) and by the probing LM (lmprobe.c, section 3.2), as KenLM's util/probing_hash_table.hh
 *    ProbingHashTable<Entry, Hash, Equal, Mod> is used by its benchmark and its LM; grown by sb_probing_resize for
 *    the phrase scorer's lexical table (phrase_score.c).
 * 2. sb_index: a growing index over the caller's own array of items (words, phrases, hypotheses, ministacks...):
 *    slots hold item + 1, the caller's hash picks the first slot and the caller's equality test runs inline in its
 *    probe loop. Every growing table of the decoders, the ARPA reader, the sampler and the phrase scorer is one.
 *
 * sb_probing is policy-shaped, in C: an entry is any struct whose FIRST member is its uint64_t key (0 = empty
 * bucket); the entry size is passed as `stride` and the ideal-bucket rule as `policy`, both compile-time constants
 * at every call site, so that the static inline functions below specialise to the code a hand-written table would
 * have (a layout change - e.g. keys apart from values - lands in both users at once). Probing runs forward from the
 * ideal bucket and wraps at the end; a table is never allowed to become full, so every probe ends at the key
 * or at an empty bucket. Keys that are not random enough for a policy are mixed before they are stored (the
 * lexical table's keys are sb_mix64 of (f, e), a bijection that maps no non-zero key to 0). Keep
 * sb_probing_ideal small: a fourth policy there, constant-folded away at every call, still changed GCC's
 * inlining in hashprobe.c (11 more instructions in its object code, +22 K instructions in sb_hash_find_batch).
 *
 * Ideal-bucket policies:
 *   SB_PROBING_MASK   key & (buckets - 1)             (buckets a power of two)
 *   SB_PROBING_MOD    key % buckets                   (KenLM's default Mod policy)
 *   SB_PROBING_MULHI  (key * buckets) >> 64           (Lemire's multiply-high range reduction: any size, no div)
 */
#ifndef SMTBENCH_PROBING_H
#define SMTBENCH_PROBING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/common.h"

enum { SB_PROBING_MASK = 0, SB_PROBING_MOD = 1, SB_PROBING_MULHI = 2 };

typedef struct {
    void *entries;      /* buckets x stride bytes, zeroed (all empty) */
    uint64_t buckets;
    uint64_t mask;      /* buckets - 1 (meaningful for SB_PROBING_MASK) */
    uint64_t size;      /* occupied buckets */
    size_t bytes;
    int huge;           /* backed by transparent huge pages */
} sb_probing;

/* Allocate `buckets` empty buckets of `stride` bytes, page-aligned (so bucket groups of 64 / stride buckets are
 * cache lines), on transparent huge pages if `huge` (sb_page_alloc). SB_EINVAL for < 2 buckets or a
 * non-power-of-two with SB_PROBING_MASK, SB_ENOMEM when it cannot be had. */
int sb_probing_init(sb_probing *t, uint64_t buckets, size_t stride, int policy, int huge);
void sb_probing_release(sb_probing *t);
/* Grow (or shrink) a table to `buckets` buckets, every entry moved to its place under `policy` (a table that
 * grows as it is filled). Errors as sb_probing_init; on an error t is left as it was. */
int sb_probing_resize(sb_probing *t, uint64_t buckets, size_t stride, int policy, int huge);

static inline uint64_t sb_probing_ideal(const sb_probing *t, uint64_t key, int policy) {
    if (policy == SB_PROBING_MASK) return key & t->mask;
    if (policy == SB_PROBING_MOD) return key % t->buckets;
    return (uint64_t)(((unsigned __int128)key * t->buckets) >> 64);
}

static inline void *sb_probing_bucket(const sb_probing *t, size_t stride, uint64_t b) {
    return (char *)t->entries + b * stride;
}

static inline uint64_t sb_probing_key(const void *entry) { return *(const uint64_t *)entry; }

/* Probe for `key` (non-zero) from bucket b: the entry holding it, or NULL at the first empty bucket;
 * *stop = the bucket probing ended at (where an insert puts the key). */
static inline void *sb_probing_find_from(const sb_probing *t, size_t stride, uint64_t key, uint64_t b,
                                         uint64_t *stop) {
    for (;;) {
        char *e = (char *)t->entries + b * stride;
        uint64_t k = sb_probing_key(e);
        if (k == key) { *stop = b; return e; }
        if (k == 0) { *stop = b; return NULL; }
        if (SB_UNLIKELY(++b == t->buckets)) b = 0;
    }
}

static inline void *sb_probing_find(const sb_probing *t, size_t stride, int policy, uint64_t key) {
    uint64_t stop;
    return sb_probing_find_from(t, stride, key, sb_probing_ideal(t, key, policy), &stop);
}

/* The bucket for `key`, probing from bucket b (its ideal bucket under the caller's policy): its entry (*found = 1)
 * or the empty bucket where it goes (*found = 0; the caller writes the entry, key included, and counts it in
 * t->size). NULL (nothing claimed) when `limit` entries are already occupied and the key is absent: the caller's
 * SB_EFULL. */
static inline void *sb_probing_slot(sb_probing *t, size_t stride, uint64_t key, uint64_t b, uint64_t limit,
                                    int *found) {
    uint64_t stop;
    void *e = sb_probing_find_from(t, stride, key, b, &stop);
    *found = e != NULL;
    if (e) return e;
    if (t->size >= limit) return NULL;
    return sb_probing_bucket(t, stride, stop);
}

/* ---------------------------------------------------------------- the string hash */
/* The one hash of a byte string: 64-bit FNV-1a, finished by sb_mix64 so that its low bits (a slot) and its high
 * bits (a shard, a tag) are both well mixed. Part of the binarized phrase table's format (pbbin.c: the source
 * vocabulary's keys are sb_str_hash | 1), hence its offset basis 1469598103934665603 - the one those files were
 * written with, not FNV's published 14695981039346656037: changing either changes that file. */
static inline uint64_t sb_str_hash(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)s, *e = p + len; p < e; p++) h = (h ^ *p) * 0x100000001b3ULL;
    return sb_mix64(h);
}

/* The in-memory hash of a byte string, 8 bytes a step (sb_str_hash runs a byte at a time and is part of a file
 * format; this one is part of none): each little-endian word (the tail zero-padded) multiplied into the state with
 * its high half folded down, the length in the seed, sb_mix64 at the end. For tables keyed by whole lines (the
 * reordering scorer's "F ||| E", csrc/tm/reorder.c), where the byte loop cost a multiply per byte. */
static inline uint64_t sb_bytes_hash(const char *s, size_t len) {
    uint64_t h = 0x243F6A8885A308D3ULL ^ (uint64_t)len, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 32;
    }
    if (i < len) {
        w = 0;
        memcpy(&w, s + i, len - i);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    }
    return sb_mix64(h);
}

/* The one hash of a tuple of word ids (an n-gram, a phrase), for the in-memory indexes (the ARPA reader's duplicate
 * table, the sampler's context index): the length, then each id at its position, mixed in through sb_mix64, so that
 * tuples of several lengths may share an index and a permutation hashes apart. Not part of any file format (the
 * binarized table's keys, pb/bin.c, are its own). */
static inline uint64_t sb_ids_hash(const uint32_t *ids, size_t n) {
    uint64_t h = 0x243F6A8885A308D3ULL ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) h = sb_mix64(h ^ ((uint64_t)ids[i] + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)));
    return h;
}

/* ---------------------------------------------------------------- sb_index */
/* A growing open-addressing index over items 0 .. n-1 that live in the caller's own array: 2^k slots (heap), each
 * holding item + 1 or 0 (empty), probed linearly from hash & mask, never full (the caller grows it first). The
 * caller supplies the hash and tests equality itself, inline, while walking the probe:
 *
 *     uint64_t b = sb_index_start(&ix, hash);
 *     for (uint32_t i; (i = sb_index_at(&ix, b)) != UINT32_MAX; b = sb_index_step(&ix, b))
 *         if (equal(items[i], key)) return i;            <- found
 *     sb_index_put(&ix, b, new_item);                     <- absent: b is the empty slot the probe ended at
 *
 * (The slot moves on only after a mismatch: on the ARPA reader's vocabulary a cursor that moved before the
 * compare cost 2% more instructions in sb_arpa_feed.)
 *
 * Growing: if (sb_index_crowded(&ix, pct)) { sb_index_reset(&ix, bigger); for every item i: sb_index_add(&ix,
 * hash(i), i); } - before the probe whose end slot is used. An index with no slots yet (zeroed struct) has
 * sb_index_slots() == 0 and must not be probed. */
typedef struct {
    uint32_t *slot;     /* item + 1; 0 = empty */
    uint64_t mask;      /* slots - 1 (slots a power of two) */
    uint64_t n;         /* items indexed */
} sb_index;

/* (Re)allocate `slots` empty slots (a power of two >= 2; the same count as now: cleared in place); n = 0.
 * SB_EINVAL, SB_ENOMEM (the index is left as it was). */
int sb_index_reset(sb_index *x, uint64_t slots);
void sb_index_free(sb_index *x);

static inline uint64_t sb_index_slots(const sb_index *x) { return x->slot ? x->mask + 1 : 0; }

/* 1 when one more item would fill more than `pct` percent of the slots (or there are none): grow first. */
static inline int sb_index_crowded(const sb_index *x, unsigned pct) {
    return (x->n + 1) * 100 > sb_index_slots(x) * pct;
}

static inline uint64_t sb_index_start(const sb_index *x, uint64_t hash) { return hash & x->mask; }

/* The item in slot b, or UINT32_MAX at an empty slot (items are < UINT32_MAX: item + 1 fits a slot). */
static inline uint32_t sb_index_at(const sb_index *x, uint64_t b) { return x->slot[b] - 1; }

/* The slot after b, wrapping at the end. */
static inline uint64_t sb_index_step(const sb_index *x, uint64_t b) { return (b + 1) & x->mask; }

/* Claim slot b (empty: where a probe ended) for `item`. */
static inline void sb_index_put(sb_index *x, uint64_t b, uint32_t item) {
    x->slot[b] = item + 1;
    x->n++;
}

/* Index `item`, known to be absent (a rebuild, or a table that allows duplicates), at the first empty slot;
 * returns that slot. */
static inline uint64_t sb_index_add(sb_index *x, uint64_t hash, uint32_t item) {
    uint64_t b = hash & x->mask;
    while (x->slot[b]) b = (b + 1) & x->mask;
    sb_index_put(x, b, item);
    return b;
}

/* Empty the index in place (n = 0, slots kept), given the slots its items were put at, used[0 .. nused): only
 * those are cleared when they are few (a re-used index that once grew large holds a handful of items: a search
 * empties its stacks' indexes hundreds of times a sentence), else the whole array. A `used` that does not account
 * for every item (nused != n, or NULL) clears the whole array: never a stale slot. */
void sb_index_clear(sb_index *x, const uint32_t *used, uint64_t nused);

#endif
