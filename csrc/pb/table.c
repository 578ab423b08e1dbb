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

int sb_pb_found_reserve(sb_pb_found *f, uint64_t more, uint64_t more_words) {
    if (f->n + more > f->cap) {
        uint64_t c = f->cap ? f->cap * 2 : 256;
        while (c < f->n + more) c *= 2;
        sb_pb_option *o = realloc(f->opt, c * sizeof *o);
        if (!o) return SB_ENOMEM;
        f->opt = o;
        f->cap = c;
    }
    if (f->nw + more_words > f->capw) {
        uint64_t c = f->capw ? f->capw * 2 : 4096;
        while (c < f->nw + more_words) c *= 2;
        uint32_t *w = realloc(f->words, c * sizeof *w);
        if (!w) return SB_ENOMEM;
        f->words = w;
        f->capw = c;
    }
    return SB_OK;
}
