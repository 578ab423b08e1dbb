/* probing.c - see probing.h. */
#include "probing.h"

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
