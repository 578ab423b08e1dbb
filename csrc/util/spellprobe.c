/* spellprobe.c - dependent loads over a random cycle (see spellprobe.h). */
#include "util/spellprobe.h"

#include <stdlib.h>

struct sb_spell {
    uint64_t *next; /* next[i] = the slot after i on one cycle through every slot */
    uint64_t n;     /* slots */
    uint64_t bytes; /* allocated bytes */
    uint64_t pos;   /* where the last walk stopped: the next walk goes on from there, over lines it has not read */
};

int sb_spell_create(uint64_t bytes, uint64_t seed, sb_spell **out) {
    if (!out || bytes < (1u << 20) || bytes > ((uint64_t)1 << 40))
        return SB_EINVAL;
    *out = NULL;
    sb_spell *p = calloc(1, sizeof *p);
    if (!p)
        return SB_ENOMEM;
    p->n = bytes / sizeof(uint64_t);
    p->bytes = p->n * sizeof(uint64_t);
    int huge = 0;
    p->next = sb_page_alloc(p->bytes, 0, &huge); /* 4 KiB pages: the TLB walk is part of what a spell slows */
    if (!p->next) {
        free(p);
        return SB_ENOMEM;
    }
    for (uint64_t i = 0; i < p->n; i++)
        p->next[i] = i;
    /* Sattolo: a uniformly random permutation with a single cycle */
    uint64_t st = seed;
    for (uint64_t i = p->n - 1; i > 0; i--) {
        uint64_t j = sb_splitmix64(&st) % i;
        uint64_t t = p->next[i];
        p->next[i] = p->next[j];
        p->next[j] = t;
    }
    *out = p;
    return SB_OK;
}

void sb_spell_free(sb_spell *p) {
    if (!p)
        return;
    sb_huge_free(p->next, p->bytes);
    free(p);
}


int sb_spell_walk(sb_spell *p, uint64_t steps, double *ns_per_load, uint64_t *sink) {
    if (!p || !ns_per_load || !sink || steps < 1)
        return SB_EINVAL;
    const uint64_t *next = p->next;
    uint64_t i = p->pos;
    uint64_t t0 = sb_now_ns();
    for (uint64_t s = 0; s < steps; s++)
        i = next[i];
    uint64_t t1 = sb_now_ns();
    *ns_per_load = (double)(t1 - t0) / (double)steps;
    *sink = i;
    p->pos = i;
    return SB_OK;
}
