/* pb/table.c - see table.h: the calls of the face, and the growing arrays of a sentence's found options. */
#include "pb/table.h"

#include <stdlib.h>
#include <string.h>

uint32_t sb_pb_table_src_word(const sb_pb_table *t, const char *w, size_t len) { return t->ops->src_word(t, w, len); }

int sb_pb_table_lookup(const sb_pb_table *t, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit) {
    return t->ops->lookup(t, ids, n, found, hit);
}

const uint32_t *sb_pb_table_words(const sb_pb_table *t) { return t->ops->words(t); }

void sb_pb_table_counts(const sb_pb_table *t, sb_pb_table_stats *st) {
    memset(st, 0, sizeof *st);
    t->ops->stats(t, st);
}

void sb_pb_table_free(sb_pb_table *t) {
    if (t) t->ops->free(t);
}

void sb_pb_found_free(sb_pb_found *f) {
    free(f->opt);
    free(f->words);
    free(f->tmp);
    memset(f, 0, sizeof *f);
}

/* *a grown to hold need elements of elem bytes (its capacity doubled from `first`) */
static int grow(void **a, uint64_t *cap, uint64_t need, size_t elem, uint64_t first) {
    if (need <= *cap) return SB_OK;
    uint64_t c = *cap ? *cap * 2 : first;
    while (c < need) c *= 2;
    void *p = realloc(*a, c * elem);
    if (!p) return SB_ENOMEM;
    *a = p;
    *cap = c;
    return SB_OK;
}

int sb_pb_found_reserve(sb_pb_found *f, uint64_t more, uint64_t more_words) {
    if (grow((void **)&f->opt, &f->cap, f->n + more, sizeof *f->opt, 256)) return SB_ENOMEM;
    return grow((void **)&f->words, &f->capw, f->nw + more_words, sizeof *f->words, 4096);
}
