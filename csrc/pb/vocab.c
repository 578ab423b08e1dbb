/* pb/vocab.c - see vocab.h. */
#include "pb/vocab.h"

#include <stdlib.h>
#include <string.h>

void sb_pb_vocab_free(sb_pb_vocab *v) {
    free(v->chars);
    free(v->off);
    sb_index_free(&v->ix);
    memset(v, 0, sizeof(*v));
}

/* id of s (hash h), or SB_PB_NO_WORD with *end = the empty slot the probe ended at */
static uint32_t vocab_probe(const sb_pb_vocab *v, const char *s, size_t len, uint64_t h, uint64_t *end) {
    uint64_t b = sb_index_start(&v->ix, h);
    for (uint32_t id; (id = sb_index_at(&v->ix, b)) != UINT32_MAX; b = sb_index_step(&v->ix, b)) {
        const char *w = sb_pb_vocab_str(v, (uint32_t)id);
        if (strncmp(w, s, len) == 0 && w[len] == '\0') return (uint32_t)id;
    }
    *end = b;
    return SB_PB_NO_WORD;
}

uint32_t sb_pb_vocab_find(const sb_pb_vocab *v, const char *s, size_t len) {
    uint64_t end;
    if (!sb_index_slots(&v->ix)) return SB_PB_NO_WORD;
    return vocab_probe(v, s, len, sb_str_hash(s, len), &end);
}

static int vocab_grow(sb_pb_vocab *v) {
    uint64_t slots = sb_index_slots(&v->ix) ? sb_index_slots(&v->ix) * 2 : 1024;
    int rc = sb_index_reset(&v->ix, slots);
    if (rc != SB_OK) return rc;
    for (uint32_t id = 0; id < v->n; id++) {
        const char *w = sb_pb_vocab_str(v, id);
        sb_index_add(&v->ix, sb_str_hash(w, strlen(w)), id);
    }
    return SB_OK;
}

uint32_t sb_pb_vocab_intern(sb_pb_vocab *v, const char *s, size_t len) {
    uint64_t h = sb_str_hash(s, len), end = 0;
    uint32_t id = sb_index_slots(&v->ix) ? vocab_probe(v, s, len, h, &end) : SB_PB_NO_WORD;
    if (id != SB_PB_NO_WORD) return id;
    if (sb_index_crowded(&v->ix, 50)) {
        if (vocab_grow(v) != SB_OK) return SB_PB_NO_WORD;
        vocab_probe(v, s, len, h, &end);
    }
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 1024;
        uint64_t *off = realloc(v->off, (size_t)cap * sizeof(uint64_t));
        if (!off) return SB_PB_NO_WORD;
        v->off = off;
        v->cap = cap;
    }
    if (v->chars_len + len + 1 > v->chars_cap) {
        size_t cap = v->chars_cap ? v->chars_cap * 2 : 65536;
        while (cap < v->chars_len + len + 1) cap *= 2;
        char *c = realloc(v->chars, cap);
        if (!c) return SB_PB_NO_WORD;
        v->chars = c;
        v->chars_cap = cap;
    }
    memcpy(v->chars + v->chars_len, s, len);
    v->chars[v->chars_len + len] = '\0';
    v->off[v->n] = v->chars_len;
    v->chars_len += len + 1;
    id = v->n++;
    sb_index_put(&v->ix, end, id);
    return id;
}

uint64_t sb_pb_vocab_bytes(const sb_pb_vocab *v) {
    return v->chars_cap + (uint64_t)v->cap * 8 + sb_index_slots(&v->ix) * 4;
}

int sb_pb_tokens(sb_pb_vocab *v, const char *p, size_t len, int add, uint32_t *ids, int max) {
    int n = 0;
    for (size_t i = 0, t; sb_pb_next_token(p, len, &i, &t);) {
        if (n == max) return -1;
        uint32_t id = add ? sb_pb_vocab_intern(v, p + t, i - t) : sb_pb_vocab_find(v, p + t, i - t);
        if (id == SB_PB_NO_WORD) return add ? -2 : -3;
        ids[n++] = id;
    }
    return n;
}
