/* probing.h - the one linear-probing hash table of this project, used by Mokry's hash experiment
 * (hashprobe.c, Mokry 2016 section 3.1) and by the probing LM (lmprobe.c, section 3.2), as KenLM's
 * util/probing_hash_table.hh ProbingHashTable<Entry, Hash, Equal, Mod> is used by its benchmark and its LM.
 *
 * Policy-shaped, in C: an entry is any struct whose FIRST member is its uint64_t key (0 = empty bucket); the
 * entry size is passed as `stride` and the ideal-bucket rule as `policy`, both compile-time constants at every
 * call site, so that the static inline functions below specialise to the code a hand-written table would have
 * (a layout change - e.g. keys apart from values - lands in both users at once). Probing runs forward from the
 * ideal bucket and wraps at the end; a table is never allowed to become full, so every probe ends at the key
 * or at an empty bucket.
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

#include "common.h"

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

#endif
