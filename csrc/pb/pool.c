/* pb/pool.c - see pool.h. */
#include "pb/pool.h"

#include <stdlib.h>

#define POOL_BLOCK 4096

/* malloc mode: each hypothesis is its own malloc, behind a header linking the live ones (freed with the pool) */
typedef struct mhdr { struct mhdr *prev, *next; } mhdr_t;
#define MHDR_SIZE ((sizeof(mhdr_t) + 15) & ~(size_t)15)

struct sb_pb_pool {
    sb_pb_hyp **blocks;
    int n_blocks, cap_blocks;
    int cur;            /* the block being filled */
    int used;           /* in that block */
    sb_pb_hyp *free;    /* recycled, linked through next_arc: last in, first out */
    uint32_t next_id;
    int malloc_mode;    /* 1: plain malloc/free per hypothesis (no blocks, no recycling) */
    mhdr_t live;        /* malloc mode: ring of the live hypotheses */
};

sb_pb_pool *sb_pb_pool_new_mode(int malloc_mode) {
    sb_pb_pool *p = calloc(1, sizeof(sb_pb_pool));
    if (!p) return NULL;
    p->malloc_mode = malloc_mode != 0;
    p->live.prev = p->live.next = &p->live;
    return p;
}

static void pool_release_live(sb_pb_pool *p) {
    mhdr_t *x = p->live.next;
    while (x != &p->live) {
        mhdr_t *next = x->next;
        free(x);
        x = next;
    }
    p->live.prev = p->live.next = &p->live;
}

void sb_pb_pool_free(sb_pb_pool *p) {
    if (!p) return;
    for (int i = 0; i < p->n_blocks; i++) free(p->blocks[i]);
    free(p->blocks);
    pool_release_live(p);
    free(p);
}

void sb_pb_pool_reset(sb_pb_pool *p) {
    p->cur = 0;
    p->used = 0;
    p->free = NULL;
    p->next_id = 0;
    pool_release_live(p);
}

sb_pb_hyp *sb_pb_pool_get(sb_pb_pool *p) {
    sb_pb_hyp *h;
    if (p->malloc_mode) {
        mhdr_t *x = malloc(MHDR_SIZE + sizeof(sb_pb_hyp));
        if (!x) return NULL;
        x->next = p->live.next;
        x->prev = &p->live;
        x->next->prev = x;
        p->live.next = x;
        h = (sb_pb_hyp *)((char *)x + MHDR_SIZE);
    } else if (p->free) {
        h = p->free;
        p->free = h->next_arc;
    } else {
        if (p->n_blocks == 0 || p->used == POOL_BLOCK) {
            if (p->n_blocks && p->cur + 1 < p->n_blocks) {
                p->cur++;
            } else {
                if (p->n_blocks == p->cap_blocks) {
                    int cap = p->cap_blocks ? p->cap_blocks * 2 : 64;
                    sb_pb_hyp **b = realloc(p->blocks, (size_t)cap * sizeof *b);
                    if (!b) return NULL;
                    p->blocks = b;
                    p->cap_blocks = cap;
                }
                sb_pb_hyp *blk = malloc(POOL_BLOCK * sizeof *blk);
                if (!blk) return NULL;
                p->blocks[p->n_blocks++] = blk;
                p->cur = p->n_blocks - 1;
            }
            p->used = 0;
        }
        h = &p->blocks[p->cur][p->used++];
    }
    h->id = p->next_id++;
    return h;
}

void sb_pb_pool_put(sb_pb_pool *p, sb_pb_hyp *h) {
    sb_pb_hyp *a = h->arcs;
    while (a) {
        sb_pb_hyp *next = a->next_arc;
        sb_pb_pool_put(p, a);
        a = next;
    }
    h->arcs = NULL;
    if (p->malloc_mode) {
        mhdr_t *x = (mhdr_t *)((char *)h - MHDR_SIZE);
        x->prev->next = x->next;
        x->next->prev = x->prev;
        free(x);
        return;
    }
    h->next_arc = p->free;
    p->free = h;
}

