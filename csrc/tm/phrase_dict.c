/* phrase_dict.c - see phrase_dict.h. */
#include "tm/phrase_dict.h"
#include "util/probing.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NSHARD 64
#define SHARD_BITS 6
#define BLOCK (256u << 10)

typedef struct {
    pthread_mutex_t mu;
    sb_index ix;              /* of the local indices, by hash >> SHARD_BITS */
    uint64_t *hash;
    char **str;
    uint32_t n, cap;
    char *blk; size_t blk_used, blk_cap;
    char **blocks; size_t nblocks, capblocks;
    uint64_t bytes;
} shard;

struct sb_dict { shard sh[NSHARD]; };

int sb_dict_create(sb_dict **out) {
    sb_dict *d = calloc(1, sizeof(*d));
    if (!d) return SB_ENOMEM;
    for (int i = 0; i < NSHARD; i++) pthread_mutex_init(&d->sh[i].mu, NULL);
    *out = d;
    return SB_OK;
}

void sb_dict_free(sb_dict *d) {
    if (!d) return;
    for (int i = 0; i < NSHARD; i++) {
        shard *h = &d->sh[i];
        for (size_t b = 0; b < h->nblocks; b++) free(h->blocks[b]);
        free(h->blocks); sb_index_free(&h->ix); free(h->hash); free(h->str);
        pthread_mutex_destroy(&h->mu);
    }
    free(d);
}

static int grow_slots(shard *h) {
    uint64_t old = sb_index_slots(&h->ix), nb = old ? old * 2 : 256;
    int rc = sb_index_reset(&h->ix, nb);
    if (rc != SB_OK) return rc;
    for (uint32_t i = 0; i < h->n; i++) sb_index_add(&h->ix, h->hash[i] >> SHARD_BITS, i);
    h->bytes += (nb - old) * sizeof(uint32_t);
    return SB_OK;
}

static char *arena_copy(shard *h, const char *s, size_t len) {
    if (h->blk_used + len + 1 > h->blk_cap) {
        size_t cap = h->blk_cap ? h->blk_cap * 2 : 1024;   /* blocks grow 1 KiB .. BLOCK */
        if (cap > BLOCK) cap = BLOCK;
        if (cap < len + 1) cap = len + 1;
        char *b = malloc(cap);
        if (!b) return NULL;
        if (SB_GROW(h->blocks, h->capblocks, h->nblocks + 1, 16)) { free(b); return NULL; }
        h->blocks[h->nblocks++] = b;
        h->blk = b; h->blk_used = 0; h->blk_cap = cap;
        h->bytes += cap;
    }
    char *p = h->blk + h->blk_used;
    memcpy(p, s, len);
    p[len] = 0;
    h->blk_used += len + 1;
    return p;
}

/* 1 with *slot = the local index of s, or 0 with *slot = the empty slot the probe ended at */
static inline int probe(const shard *h, const char *s, size_t len, uint64_t hv, uint64_t *slot) {
    if (!sb_index_slots(&h->ix)) return 0;
    uint64_t b = sb_index_start(&h->ix, hv >> SHARD_BITS);
    for (uint32_t i; (i = sb_index_at(&h->ix, b)) != UINT32_MAX; b = sb_index_step(&h->ix, b)) {
        if (h->hash[i] == hv && !memcmp(h->str[i], s, len) && h->str[i][len] == 0) {
            *slot = (uint64_t)i; return 1;
        }
    }
    *slot = b;
    return 0;
}

int sb_dict_intern(sb_dict *d, const char *s, size_t len, uint32_t *id) {
    uint64_t hv = sb_str_hash(s, len);
    unsigned si = (unsigned)(hv & (NSHARD - 1));
    shard *h = &d->sh[si];
    int rc = SB_OK;
    pthread_mutex_lock(&h->mu);
    uint64_t slot = 0;
    if (probe(h, s, len, hv, &slot)) { *id = (uint32_t)(slot * NSHARD + si); goto out; }
    if ((uint64_t)h->n >= (UINT32_MAX / NSHARD) - 1) { rc = SB_EFULL; goto out; }
    if (sb_index_crowded(&h->ix, 70)) {
        if ((rc = grow_slots(h))) goto out;
        probe(h, s, len, hv, &slot);
    }
    if (h->n == h->cap) {   /* two arrays of one capacity */
        size_t ch = h->cap, cs = h->cap;
        if (SB_GROW(h->hash, ch, ch + 1, 64) || SB_GROW(h->str, cs, cs + 1, 64)) { rc = SB_ENOMEM; goto out; }
        h->bytes += (uint64_t)(ch - h->cap) * (sizeof(uint64_t) + sizeof(char *));
        h->cap = (uint32_t)ch;
    }
    char *p = arena_copy(h, s, len);
    if (!p) { rc = SB_ENOMEM; goto out; }
    h->hash[h->n] = hv;
    h->str[h->n] = p;
    sb_index_put(&h->ix, slot, h->n);
    *id = (uint32_t)((uint64_t)h->n * NSHARD + si);
    h->n++;
out:
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int sb_dict_find(const sb_dict *d, const char *s, size_t len, uint32_t *id) {
    uint64_t hv = sb_str_hash(s, len);
    unsigned si = (unsigned)(hv & (NSHARD - 1));
    uint64_t slot;
    if (!probe(&d->sh[si], s, len, hv, &slot)) return 0;
    *id = (uint32_t)(slot * NSHARD + si);
    return 1;
}

const char *sb_dict_str(const sb_dict *d, uint32_t id) {
    return d->sh[id % NSHARD].str[id / NSHARD];
}

uint64_t sb_dict_size(const sb_dict *d) {
    uint64_t n = 0;
    for (int i = 0; i < NSHARD; i++) n += d->sh[i].n;
    return n;
}

uint64_t sb_dict_max_id(const sb_dict *d) {
    uint64_t m = 0;
    for (int i = 0; i < NSHARD; i++) if (d->sh[i].n > m) m = d->sh[i].n;
    return m * NSHARD;
}

int sb_dict_has_id(const sb_dict *d, uint32_t id) { return id / NSHARD < d->sh[id % NSHARD].n; }

uint64_t sb_dict_bytes(const sb_dict *d) {
    uint64_t b = sizeof(*d);
    for (int i = 0; i < NSHARD; i++) b += d->sh[i].bytes;
    return b;
}
