/* pbnormal.c - see pbnormal.h. */
#include "pbnormal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- hypothesis pool */
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

sb_pb_pool *sb_pb_pool_new(void) { return sb_pb_pool_new_mode(0); }

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

/* ---------------------------------------------------------------- stacks (Moses2 HypothesisColl) */
void sb_pb_stack_free(sb_pb_stack *s) {
    free(s->h);
    sb_index_free(&s->ix);
}

void sb_pb_stack_reset(sb_pb_stack *s) {
    s->n = 0;
    if (sb_index_slots(&s->ix)) sb_index_reset(&s->ix, sb_index_slots(&s->ix));   /* in place: cannot fail */
    s->best = -INFINITY;
    s->worst = INFINITY;
}

static int stack_rehash(sb_pb_stack *s, uint64_t slots, int forward) {
    if (!slots) return SB_OK;   /* nothing added yet */
    int rc = sb_index_reset(&s->ix, slots);
    if (rc != SB_OK) return rc;
    for (int i = 0; i < s->n; i++) sb_index_add(&s->ix, sb_pb_hyp_hash(s->h[i], forward), (uint32_t)i);
    return SB_OK;
}

static int by_total(const void *a, const void *b) {
    const sb_pb_hyp *x = *(sb_pb_hyp *const *)a, *y = *(sb_pb_hyp *const *)b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

/* sort best first and keep `keep` (Moses2 SortHypos + the cut) */
int sb_pb_stack_cut(sb_pb_stack *s, int keep, sb_pb_stack_ctx *x) {
    if (s->n > 1) qsort(s->h, (size_t)s->n, sizeof *s->h, by_total);
    if (s->n > keep) {
        for (int i = keep; i < s->n; i++) sb_pb_pool_put(x->pool, s->h[i]);
        x->c->pruned += (uint64_t)(s->n - keep);
        s->n = keep;
    }
    return stack_rehash(s, sb_index_slots(&s->ix), x->recombine_forward);
}

int sb_pb_stack_add(sb_pb_stack *s, sb_pb_hyp *h, sb_pb_stack_ctx *x) {
    const int max = x->stack_size;
    int fw = x->recombine_forward;
    if (s->n > 2 * max) {
        qsort(s->h, (size_t)s->n, sizeof *s->h, by_total);
        s->worst = s->h[max - 1]->total;
        int rc = sb_pb_stack_cut(s, max, x);
        if (rc != SB_OK) return rc;
    }
    double fut = h->total;
    if (s->n >= max && fut < s->worst) {
        x->c->beam_discarded++;
        sb_pb_pool_put(x->pool, h);
        return SB_OK;
    }
    if (sb_index_crowded(&s->ix, 50)) {
        int rc = stack_rehash(s, sb_index_slots(&s->ix) ? sb_index_slots(&s->ix) * 2 : 1024, fw);
        if (rc != SB_OK) return rc;
    }
    uint64_t b = sb_index_start(&s->ix, sb_pb_hyp_hash(h, fw));
    int added;
    for (;; b = sb_index_step(&s->ix, b)) {
        uint32_t k = sb_index_at(&s->ix, b);
        if (k == UINT32_MAX) {
            if (s->n == s->cap) {
                int cap = s->cap ? s->cap * 2 : 256;
                sb_pb_hyp **p = realloc(s->h, (size_t)cap * sizeof *p);
                if (!p) return SB_ENOMEM;
                s->h = p;
                s->cap = cap;
            }
            sb_index_put(&s->ix, b, (uint32_t)s->n);
            s->h[s->n++] = h;
            added = 1;
            break;
        }
        sb_pb_hyp *old = s->h[k];
        if (sb_pb_hyp_equal(old, h, fw)) {
            x->c->recombined++;
            if (fut > old->total) {
                s->h[k] = h;
                if (x->nbest) {   /* the loser and its arcs become arcs of the winner */
                    h->arcs = old->arcs;
                    old->arcs = NULL;
                    old->next_arc = h->arcs;
                    h->arcs = old;
                } else {
                    sb_pb_pool_put(x->pool, old);
                }
                added = 1;
            } else {
                if (x->nbest) {
                    h->next_arc = old->arcs;
                    old->arcs = h;
                } else {
                    sb_pb_pool_put(x->pool, h);
                }
                added = 0;
            }
            break;
        }
    }
    if (added) {
        if (fut > s->best) {
            s->best = fut;
            if (s->best + x->beam_width > s->worst) s->worst = s->best + x->beam_width;
        } else if (s->n <= max && fut < s->worst) {
            s->worst = fut;
        }
    }
    return SB_OK;
}

/* ---------------------------------------------------------------- results and n-best */
typedef struct {
    char *text, *seg;
    double f[SB_PB_NFEAT];
    double total, search;
    int last_end;            /* end of the last source phrase (-1: empty) */
} entry_t;

struct sb_pb_result {
    entry_t *e;
    int n;
};

int sb_pb_result_size(const sb_pb_result *r) { return r->n; }
const char *sb_pb_result_text(const sb_pb_result *r, int i, int seg) {
    if (i < 0 || i >= r->n) return "";
    return seg ? r->e[i].seg : r->e[i].text;
}
void sb_pb_result_features(const sb_pb_result *r, int i, double *f) {
    if (i >= 0 && i < r->n) memcpy(f, r->e[i].f, sizeof r->e[i].f);
}
double sb_pb_result_total(const sb_pb_result *r, int i) { return i >= 0 && i < r->n ? r->e[i].total : NAN; }
double sb_pb_result_search_score(const sb_pb_result *r, int i) {
    return i >= 0 && i < r->n ? r->e[i].search : NAN;
}
int sb_pb_result_last_end(const sb_pb_result *r, int i) { return i >= 0 && i < r->n ? r->e[i].last_end : -1; }
void sb_pb_result_add_feature(sb_pb_result *r, const sb_pb_model *m, int i, int feature, double value) {
    if (i < 0 || i >= r->n || feature < 0 || feature >= SB_PB_NFEAT) return;
    r->e[i].f[feature] += value;
    r->e[i].total = sb_pb_weighted(m, r->e[i].f);
}
void sb_pb_result_free(sb_pb_result *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        free(r->e[i].text);
        free(r->e[i].seg);
    }
    free(r->e);
    free(r);
}

typedef struct {
    const sb_pb_hyp **node;  /* node[0] = the complete hypothesis, then back to the first phrase */
    int len;
    int dev;                 /* index of the last deviation (-1: none) */
    double score;
} path_t;

typedef struct {
    path_t *p;
    int n, cap;
} heap_t;

static int heap_push(heap_t *h, path_t p) {
    if (h->n == h->cap) {
        int cap = h->cap ? h->cap * 2 : 64;
        path_t *q = realloc(h->p, (size_t)cap * sizeof *q);
        if (!q) return SB_ENOMEM;
        h->p = q;
        h->cap = cap;
    }
    int i = h->n++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (h->p[parent].score >= p.score) break;
        h->p[i] = h->p[parent];
        i = parent;
    }
    h->p[i] = p;
    return SB_OK;
}

static path_t heap_pop(heap_t *h) {
    path_t top = h->p[0];
    path_t last = h->p[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, best = i;
        double bs = last.score;
        if (l < h->n && h->p[l].score > bs) { best = l; bs = h->p[l].score; }
        if (r < h->n && h->p[r].score > bs) best = r;
        if (best == i) break;
        h->p[i] = h->p[best];
        i = best;
    }
    if (h->n) h->p[i] = last;
    return top;
}

static int chain_len(const sb_pb_hyp *h) {
    int n = 0;
    for (; h && h->opt; h = h->prev) n++;
    return n;
}

/* a path through `h` (positions 0..n-1 from the end), or through prefix[0..k) then h's chain */
static int make_path(const sb_pb_hyp **prefix, int k, const sb_pb_hyp *h, double score, int dev, path_t *out) {
    int n = k + chain_len(h);
    out->node = malloc((size_t)(n ? n : 1) * sizeof *out->node);
    if (!out->node) return SB_ENOMEM;
    for (int i = 0; i < k; i++) out->node[i] = prefix[i];
    int i = k;
    for (const sb_pb_hyp *x = h; x && x->opt; x = x->prev) out->node[i++] = x;
    out->len = n;
    out->dev = dev;
    out->score = score;
    return SB_OK;
}

static char *path_text(const sb_pb_sentence *s, const path_t *p, int seg) {
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[0] = '\0';
    for (int i = p->len - 1; i >= 0; i--) {
        const sb_pb_hyp *x = p->node[i];
        const uint32_t *w = sb_pb_option_words(s, x->opt);
        for (int k = 0; k <= x->opt->tgt_len; k++) {
            char tmp[48];
            const char *piece;
            if (k < x->opt->tgt_len) {
                piece = sb_pb_word(s, w[k]);
            } else {
                if (!seg) break;
                snprintf(tmp, sizeof tmp, "|%d-%d|", x->start, x->end);
                piece = tmp;
            }
            size_t pl = strlen(piece);
            if (len + pl + 2 > cap) {
                while (len + pl + 2 > cap) cap *= 2;
                char *b = realloc(buf, cap);
                if (!b) { free(buf); return NULL; }
                buf = b;
            }
            if (len) buf[len++] = ' ';
            memcpy(buf + len, piece, pl);
            len += pl;
            buf[len] = '\0';
        }
    }
    return buf;
}

/* features along a path whose nodes may come from different chains: rebuild a linked chain */
static void path_features(const sb_pb_sentence *s, const path_t *p, double *f) {
    sb_pb_hyp tmp[SB_PB_MAX_WORDS + 1];
    const sb_pb_hyp *prev = NULL;
    for (int i = p->len - 1; i >= 0; i--) {
        sb_pb_hyp *t = &tmp[i];
        *t = *p->node[i];
        t->prev = prev;
        prev = t;
    }
    if (!p->len) {
        sb_pb_hyp empty;
        sb_pb_hyp_init(s, &empty);
        sb_pb_path_features(s, &empty, f);
        return;
    }
    sb_pb_path_features(s, &tmp[0], f);
}

int sb_pb_make_result(const sb_pb_sentence *s, sb_pb_hyp **finals, int n, int nbest, sb_pb_result **out) {
    *out = NULL;
    sb_pb_result *r = calloc(1, sizeof *r);
    if (!r) return SB_ENOMEM;
    int want = nbest > 0 ? nbest : 1;
    if (n == 0) { *out = r; return SB_OK; }
    r->e = calloc((size_t)want, sizeof *r->e);
    if (!r->e) { free(r); return SB_ENOMEM; }
    heap_t heap = {0};
    int rc = SB_OK;
    for (int i = 0; i < n && rc == SB_OK; i++) {
        path_t p;
        rc = make_path(NULL, 0, finals[i], finals[i]->score, -1, &p);
        if (rc == SB_OK) rc = heap_push(&heap, p);
        if (nbest <= 0) break; /* finals[0] is the best when no n-best is wanted */
    }
    while (rc == SB_OK && r->n < want && heap.n) {
        path_t p = heap_pop(&heap);
        entry_t *e = &r->e[r->n];
        e->text = path_text(s, &p, 0);
        e->seg = path_text(s, &p, 1);
        if (!e->text || !e->seg) { free(p.node); rc = SB_ENOMEM; break; }
        path_features(s, &p, e->f);
        e->total = sb_pb_weighted(s->model, e->f);
        e->last_end = p.len ? p.node[0]->end : -1;
        e->search = p.score;
        r->n++;
        if (nbest > 1) {
            for (int i = p.dev + 1; i < p.len && rc == SB_OK; i++) {
                for (const sb_pb_hyp *a = p.node[i]->arcs; a && rc == SB_OK; a = a->next_arc) {
                    path_t q;
                    rc = make_path(p.node, i, a, p.score - p.node[i]->score + a->score, i, &q);
                    if (rc == SB_OK) rc = heap_push(&heap, q);
                }
            }
        }
        free(p.node);
    }
    for (int i = 0; i < heap.n; i++) free(heap.p[i].node);
    free(heap.p);
    if (rc != SB_OK) { sb_pb_result_free(r); return rc; }
    *out = r;
    return SB_OK;
}

/* ---------------------------------------------------------------- the search */
int sb_pb_decode_normal(const sb_pb_model *m, const char *text, size_t len, const sb_pb_normal_opts *o,
                        sb_pb_result **out, sb_pb_counters *counters) {
    *out = NULL;
    memset(counters, 0, sizeof *counters);
    if (o->stack_size < 1 || o->nbest < 0 || isnan(o->beam_width) || o->beam_width > 0) return SB_EINVAL;
    sb_pb_sentence *s;
    int rc = sb_pb_sentence_new(m, text, len, &s);
    if (rc != SB_OK) return rc;
    const int n = s->n;
    sb_pb_pool *pool = sb_pb_pool_new();
    sb_pb_stack *stacks = calloc((size_t)n + 1, sizeof *stacks);
    if (!pool || !stacks) { rc = SB_ENOMEM; goto done; }
    for (int i = 0; i <= n; i++) sb_pb_stack_reset(&stacks[i]);
    sb_pb_stack_ctx x = {o->stack_size, o->beam_width, o->recombine_forward, pool, counters, o->nbest > 0};
    sb_pb_hyp *init = sb_pb_pool_get(pool);
    if (!init) { rc = SB_ENOMEM; goto done; }
    sb_pb_hyp_init(s, init);
    rc = sb_pb_stack_add(&stacks[0], init, &x);
    const int maxlen = SB_PB_MAX_PHRASE;
    for (int k = 0; k < n && rc == SB_OK; k++) {
        sb_pb_stack *st = &stacks[k];
        rc = sb_pb_stack_cut(st, o->stack_size, &x);
        if (rc != SB_OK) break;
        counters->expanded += (uint64_t)st->n;
        int *gaps = malloc((size_t)(st->n ? st->n : 1) * sizeof(int));
        if (!gaps) { rc = SB_ENOMEM; break; }
        for (int hi = 0; hi < st->n; hi++) gaps[hi] = sb_pb_first_gap(s, st->h[hi]->cov);
        for (int a = 0; a < n && rc == SB_OK; a++) {
            uint64_t mask[SB_PB_COVW] = {0};
            for (int b = a; b < n && b - a < maxlen && rc == SB_OK; b++) {
                sb_pb_cov_set(mask, b);
                const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
                if (!sp->n) continue;
                int dest = k + (b - a + 1);
                if (dest > n) break;
                for (int hi = 0; hi < st->n && rc == SB_OK; hi++) {
                    const sb_pb_hyp *h = st->h[hi];
                    uint64_t overlap = 0;
                    for (int w = 0; w < SB_PB_COVW; w++) overlap |= h->cov[w] & mask[w];
                    if (overlap || !sb_pb_distortion_ok(h, a, b, gaps[hi], o->distortion_limit)) continue;
                    uint64_t cov[SB_PB_COVW];
                    for (int w = 0; w < SB_PB_COVW; w++) cov[w] = h->cov[w] | mask[w];
                    double est = sb_pb_estimate(s, cov);
                    sb_pb_stack *ds = &stacks[dest];
                    for (int t = 0; t < sp->n; t++) {
                        /* exact shortcut: when no pruning is pending in the destination stack, a hypothesis
                         * whose upper bound is below the stack's worst score would be discarded on arrival */
                        if (ds->n >= o->stack_size && ds->n <= 2 * o->stack_size &&
                            sb_pb_extend_bound(s, h, &sp->opt[t], a, b, est) < ds->worst) {
                            counters->created++;
                            counters->beam_discarded++;
                            continue;
                        }
                        sb_pb_hyp *nh = sb_pb_pool_get(pool);
                        if (!nh) { rc = SB_ENOMEM; break; }
                        sb_pb_extend(s, h, &sp->opt[t], a, b, est, nh);
                        counters->created++;
                        rc = sb_pb_stack_add(&stacks[dest], nh, &x);
                        if (rc != SB_OK) break;
                    }
                }
            }
        }
        free(gaps);
    }
    if (rc == SB_OK) {
        sb_pb_stack *last = &stacks[n];
        rc = sb_pb_stack_cut(last, o->stack_size, &x);
        if (rc == SB_OK) rc = sb_pb_make_result(s, last->h, last->n, o->nbest, out);
    }
done:
    if (stacks) {
        for (int i = 0; i <= n; i++) sb_pb_stack_free(&stacks[i]);
        free(stacks);
    }
    sb_pb_pool_free(pool);
    sb_pb_sentence_free(s);
    return rc;
}
