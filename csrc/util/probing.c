/* probing.c - see probing.h. */
#include "util/probing.h"

#include <stdlib.h>
#include <string.h>

int sb_probing_init(sb_probing *t, uint64_t buckets, size_t stride, int policy, int huge) {
    memset(t, 0, sizeof *t);
    if (buckets < 2 || stride < sizeof(uint64_t)) return SB_EINVAL;
    if (policy == SB_PROBING_MASK && (buckets & (buckets - 1))) return SB_EINVAL;
    if (policy != SB_PROBING_MASK && policy != SB_PROBING_MOD && policy != SB_PROBING_MULHI) return SB_EINVAL;
    if (buckets > SIZE_MAX / stride) return SB_ENOMEM;
    t->bytes = (size_t)buckets * stride;
    t->entries = sb_page_alloc(t->bytes, huge, &t->huge);
    if (!t->entries) { t->bytes = 0; return SB_ENOMEM; }
    t->buckets = buckets;
    t->mask = buckets - 1;
    return SB_OK;
}

void sb_probing_release(sb_probing *t) {
    if (t->entries) sb_huge_free(t->entries, t->bytes);
    memset(t, 0, sizeof *t);
}

int sb_probing_resize(sb_probing *t, uint64_t buckets, size_t stride, int policy, int huge) {
    if (buckets <= t->size) return SB_EINVAL;   /* never full */
    sb_probing n;
    int rc = sb_probing_init(&n, buckets, stride, policy, huge);
    if (rc != SB_OK) return rc;
    for (uint64_t b = 0; b < t->buckets; b++) {
        const void *e = sb_probing_bucket(t, stride, b);
        uint64_t key = sb_probing_key(e), stop;
        if (!key) continue;
        sb_probing_find_from(&n, stride, key, sb_probing_ideal(&n, key, policy), &stop);
        memcpy(sb_probing_bucket(&n, stride, stop), e, stride);
        n.size++;
    }
    sb_probing_release(t);
    *t = n;
    return SB_OK;
}

int sb_index_reset(sb_index *x, uint64_t slots) {
    if (slots < 2 || (slots & (slots - 1)) || slots > SIZE_MAX / sizeof(uint32_t)) return SB_EINVAL;
    if (x->slot && slots == x->mask + 1) {
        memset(x->slot, 0, (size_t)slots * sizeof(uint32_t));
    } else {
        uint32_t *s = calloc((size_t)slots, sizeof(uint32_t));
        if (!s) return SB_ENOMEM;
        free(x->slot);
        x->slot = s;
        x->mask = slots - 1;
    }
    x->n = 0;
    return SB_OK;
}

void sb_index_clear(sb_index *x, const uint32_t *used, uint64_t nused) {
    if (!x->slot) return;
    const uint64_t slots = x->mask + 1;
    if (used && nused == x->n && nused * 16 < slots) {   /* a memset clears ~16 slots in the time of one store */
        for (uint64_t i = 0; i < nused; i++) x->slot[used[i]] = 0;
    } else if (x->n) {
        memset(x->slot, 0, (size_t)slots * sizeof(uint32_t));
    }
    x->n = 0;
}

void sb_index_free(sb_index *x) {
    free(x->slot);
    memset(x, 0, sizeof *x);
}
