/* pb/cube.c - see cube.h. */
#include "pb/cube.h"
#include "util/probing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sb_pb_hyp **hyps;        /* the ministack's hypotheses, sorted and cut */
    int nh;
    const sb_pb_option *opt; /* the span's options, best stand-alone score first */
    int nt;
    int start, end;
    double est;              /* future cost of the new coverage */
    const double *ests;      /* per hypothesis, when the edge mixes coverages (cardinality/coverage stacks); or NULL */
} edge_t;

/* items address hypotheses and options by 16-bit indices: an edge keeps at most this many of each */
#define EDGE_MAX 65535

typedef struct {
    double total;            /* hyp->total and hyp->id when pushed (fixed while queued): compared without a deref */
    sb_pb_hyp *hyp;
    uint32_t edge;
    uint16_t hi, ti;
    uint32_t id;
} item_t;

#define ITEM_BEFORE(a, b) ((a).total > (b).total || ((a).total == (b).total && (a).id < (b).id))

typedef struct {            /* a ministack of the stack being built */
    uint64_t cov[SB_PB_COVW];
    int end;
    sb_pb_stack st;
} mini_t;

typedef struct {
    /* edges per destination cardinality */
    edge_t **edges;
    int *nedges, *capedges;
    /* the stack being built: ministacks + index */
    mini_t *mini;
    int nmini, capmini;
    sb_index mini_ix;       /* of mini, by (coverage, end) */
    /* queue */
    item_t *heap;
    int nheap, capheap;
    /* seen (edge, hi, ti): the keys and their index */
    uint64_t *seen;
    uint64_t nseen, capseen;
    sb_index seen_ix;
    int stacks;         /* SB_PB_STACKS_* */
    int mini_ready;     /* mini[0 .. mini_ready) hold stack buffers to re-use */
    sb_arena *arena;    /* per-sentence pool for the edges' arrays, or NULL: malloc/free */
    _Atomic int *phase; /* the profile's current component, or NULL */
} cube_t;

static void *cube_alloc(cube_t *c, size_t bytes) { return c->arena ? sb_arena_alloc(c->arena, bytes) : malloc(bytes); }
static void cube_release(cube_t *c, void *p) { if (!c->arena) free(p); }

/* The queue: a 4-ary heap (half the levels of a binary one; the four children share a cache line or two). Items
 * are totally ordered (ids differ), so the pop order does not depend on the heap's shape. */
#define HEAP_D 4

/* put `it` in the hole at i, moving it up past the parents it comes before */
static void heap_sift_up(item_t *heap, int i, item_t it) {
    while (i > 0) {
        int p = (i - 1) / HEAP_D;
        if (ITEM_BEFORE(heap[p], it)) break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = it;
}

static int heap_push(cube_t *c, item_t it) {
    if (c->nheap == c->capheap) {
        int cap = c->capheap ? c->capheap * 2 : 1024;
        item_t *h = realloc(c->heap, (size_t)cap * sizeof *h);
        if (!h) return SB_ENOMEM;
        c->heap = h;
        c->capheap = cap;
    }
    it.total = it.hyp->total;
    it.id = it.hyp->id;
    heap_sift_up(c->heap, c->nheap++, it);
    return SB_OK;
}

/* Bottom-up (Floyd): the hole left by the top walks down the best children to a leaf, and the last item is sifted
 * up from there (rarely more than a step): no comparison with the last item on the way down. */
static item_t heap_pop(cube_t *c) {
    item_t top = c->heap[0], last = c->heap[--c->nheap];
    const int n = c->nheap;
    if (!n) return top;
    int i = 0;
    for (int l; (l = HEAP_D * i + 1) < n; ) {
        int b = l, e = l + HEAP_D < n ? l + HEAP_D : n;
        for (int k = l + 1; k < e; k++) if (ITEM_BEFORE(c->heap[k], c->heap[b])) b = k;
        c->heap[i] = c->heap[b];
        i = b;
    }
    heap_sift_up(c->heap, i, last);
    return top;
}

/* 1 if (edge, hi, ti) was not seen yet (and marks it) */
static int see(cube_t *c, uint32_t edge, int hi, int ti, int *rc) {
    uint64_t key = (uint64_t)edge << 32 | (uint64_t)hi << 16 | (uint64_t)ti;
    if (sb_index_crowded(&c->seen_ix, 50)) {
        uint64_t slots = sb_index_slots(&c->seen_ix) ? sb_index_slots(&c->seen_ix) * 2 : 4096;
        if ((*rc = sb_index_reset(&c->seen_ix, slots))) return 0;
        for (uint64_t i = 0; i < c->nseen; i++) sb_index_add(&c->seen_ix, sb_mix64(c->seen[i]), (uint32_t)i);
    }
    if (c->nseen == c->capseen) {
        uint64_t cap = c->capseen ? c->capseen * 2 : 1024;
        uint64_t *t = realloc(c->seen, cap * sizeof *t);
        if (!t) { *rc = SB_ENOMEM; return 0; }
        c->seen = t;
        c->capseen = cap;
    }
    uint64_t b = sb_index_start(&c->seen_ix, sb_mix64(key));
    for (uint32_t i; (i = sb_index_at(&c->seen_ix, b)) != UINT32_MAX; b = sb_index_step(&c->seen_ix, b))
        if (c->seen[i] == key) return 0;
    sb_index_put(&c->seen_ix, b, (uint32_t)c->nseen);
    c->seen[c->nseen++] = key;
    return 1;
}

static uint64_t mini_hash(const uint64_t *cov, int end) {
    uint64_t x = (uint64_t)end * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < SB_PB_COVW; i++) x = sb_mix64(x ^ cov[i]);
    return x;
}

static int mini_rehash(cube_t *c, uint64_t slots) {
    int rc = sb_index_reset(&c->mini_ix, slots);
    if (rc != SB_OK) return rc;
    for (int i = 0; i < c->nmini; i++)
        sb_index_add(&c->mini_ix, mini_hash(c->mini[i].cov, c->mini[i].end), (uint32_t)i);
    return SB_OK;
}

/* the pruning unit a hypothesis belongs to: (coverage, end) as Moses2, coverage only, or the whole stack */
static void stack_key(const cube_t *c, const sb_pb_hyp *h, uint64_t *cov, int *end) {
    if (c->stacks == SB_PB_STACKS_CARDINALITY) {
        memset(cov, 0, SB_PB_COVW * sizeof *cov);
        *end = -3;
    } else {
        memcpy(cov, h->cov, SB_PB_COVW * sizeof *cov);
        *end = c->stacks == SB_PB_STACKS_COVERAGE ? -2 : h->end;
    }
}

static sb_pb_stack *ministack(cube_t *c, const sb_pb_hyp *h, int *rc) {
    if (sb_index_crowded(&c->mini_ix, 50) &&
        (*rc = mini_rehash(c, sb_index_slots(&c->mini_ix) ? sb_index_slots(&c->mini_ix) * 2 : 256)))
        return NULL;
    uint64_t kcov[SB_PB_COVW];
    int kend;
    stack_key(c, h, kcov, &kend);
    uint64_t b = sb_index_start(&c->mini_ix, mini_hash(kcov, kend));
    for (uint32_t i; (i = sb_index_at(&c->mini_ix, b)) != UINT32_MAX; b = sb_index_step(&c->mini_ix, b)) {
        mini_t *m = &c->mini[i];
        if (m->end == kend && memcmp(m->cov, kcov, sizeof m->cov) == 0) return &m->st;
    }
    if (c->nmini == c->capmini) {
        int cap = c->capmini ? c->capmini * 2 : 64;
        mini_t *x = realloc(c->mini, (size_t)cap * sizeof *x);
        if (!x) { *rc = SB_ENOMEM; return NULL; }
        /* the stacks' own arrays move with their structs: fine, nothing points into mini[] */
        c->mini = x;
        c->capmini = cap;
    }
    mini_t *m = &c->mini[c->nmini];
    memcpy(m->cov, kcov, sizeof m->cov);
    m->end = kend;
    if (c->nmini >= c->mini_ready) {
        memset(&m->st, 0, sizeof m->st);
        c->mini_ready = c->nmini + 1;
    }
    sb_pb_stack_reset(&m->st);
    sb_index_put(&c->mini_ix, b, (uint32_t)c->nmini++);
    return &m->st;
}

static int add_edge(cube_t *c, int dest, edge_t e) {
    if (c->nedges[dest] == c->capedges[dest]) {
        int cap = c->capedges[dest] ? c->capedges[dest] * 2 : 64;
        edge_t *x = realloc(c->edges[dest], (size_t)cap * sizeof *x);
        if (!x) return SB_ENOMEM;
        c->edges[dest] = x;
        c->capedges[dest] = cap;
    }
    c->edges[dest][c->nedges[dest]++] = e;
    return SB_OK;
}

/* edges from one group of hypotheses with the same coverage and end (sorted best first) */
static int group_edges(const sb_pb_sentence *s, cube_t *c, sb_pb_hyp **hyps, int nh, int distortion_limit) {
    const int n = s->n;
    const sb_pb_hyp *h0 = hyps[0];
    int gap = sb_pb_first_gap(s, h0->cov);
    int used = 0, rc = SB_OK;
    /* sb_pb_distortion_ok's two checks, hoisted: the jump to a (the same for every span from a), and, past the
     * gap, the jump back from b to the gap (failing for every longer span once it fails) */
    const int lim = distortion_limit;
    for (int a = gap; a < n && rc == SB_OK; a++) {
        if (sb_pb_cov_get(h0->cov, a) || !sb_pb_jump_ok(h0->end, a, lim)) continue;  /* nothing from a */
        uint64_t mask[SB_PB_COVW] = {0};
        for (int b = a; b < n && b - a < SB_PB_MAX_PHRASE; b++) {
            if (sb_pb_cov_get(h0->cov, b)) break;  /* longer spans from a overlap too */
            if (lim >= 0 && a != gap && b - gap + 1 > lim) break;
            sb_pb_cov_set(mask, b);
            const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
            if (!sp->n) continue;
            uint64_t cov[SB_PB_COVW];
            for (int w = 0; w < SB_PB_COVW; w++) cov[w] = h0->cov[w] | mask[w];
            edge_t e = {hyps, nh < EDGE_MAX ? nh : EDGE_MAX, sp->opt, sp->n < EDGE_MAX ? sp->n : EDGE_MAX, a, b,
                        sb_pb_estimate(s, cov), NULL};
            int dest = h0->ncov + (b - a + 1);
            if ((rc = add_edge(c, dest, e))) break;
            used = 1;
        }
    }
    /* the array outlives this stack through its edges: remember it (edges[0] is never a destination); an arena's
     * arrays go with the arena */
    if (rc == SB_OK && used) { if (!c->arena) rc = add_edge(c, 0, (edge_t){hyps, 0, NULL, 0, -1, -1, 0, NULL}); }
    else cube_release(c, hyps);
    return rc;
}

/* The Moses2 paper's Fig 4: edges from a whole pruning unit (a cardinality or coverage stack, sorted best first):
 * per source span, the unit's hypotheses that may take it -- overlap and distortion checked for every hypothesis,
 * the cost the paper names -- in their order, each with the future cost of its own new coverage. */
static int unit_edges(const sb_pb_sentence *s, cube_t *c, sb_pb_hyp *const *unit, int nu, int distortion_limit) {
    const int n = s->n;
    int rc = SB_OK;
    int *gap = malloc((size_t)nu * sizeof *gap);
    if (!gap) return SB_ENOMEM;
    for (int i = 0; i < nu; i++) gap[i] = sb_pb_first_gap(s, unit[i]->cov);
    for (int a = 0; a < n && rc == SB_OK; a++) {
        uint64_t mask[SB_PB_COVW] = {0};
        for (int b = a; b < n && b - a < SB_PB_MAX_PHRASE && rc == SB_OK; b++) {
            sb_pb_cov_set(mask, b);
            const sb_pb_span *sp = &s->spans[a * SB_PB_MAX_PHRASE + (b - a)];
            if (!sp->n) continue;
            int cap = nu < EDGE_MAX ? nu : EDGE_MAX, k = 0;
            void *block = cube_alloc(c, (size_t)cap * (sizeof(sb_pb_hyp *) + sizeof(double)));
            if (!block) { rc = SB_ENOMEM; break; }
            sb_pb_hyp **hyps = block;
            double *ests = (double *)(hyps + cap);
            for (int i = 0; i < nu && k < cap; i++) {
                const sb_pb_hyp *h = unit[i];
                uint64_t overlap = 0, cov[SB_PB_COVW];
                for (int w = 0; w < SB_PB_COVW; w++) { overlap |= h->cov[w] & mask[w]; cov[w] = h->cov[w] | mask[w]; }
                if (overlap || !sb_pb_distortion_ok(h, a, b, gap[i], distortion_limit)) continue;
                hyps[k] = unit[i];
                ests[k++] = sb_pb_estimate(s, cov);
            }
            if (!k) { cube_release(c, block); continue; }
            edge_t e = {hyps, k, sp->opt, sp->n < EDGE_MAX ? sp->n : EDGE_MAX, a, b, 0, ests};
            if ((rc = add_edge(c, unit[0]->ncov + (b - a + 1), e))) { cube_release(c, block); break; }
            if (!c->arena && (rc = add_edge(c, 0, (edge_t){hyps, 0, NULL, 0, -1, -1, 0, NULL}))) break;
        }
    }
    free(gap);
    return rc;
}

/* after a stack is complete: cut its pruning units, make the edges of each (coverage, end) group */
static int post_decode(const sb_pb_sentence *s, cube_t *c, sb_pb_stack_ctx *x, int distortion_limit) {
    int rc = SB_OK;
    for (int mi = 0; mi < c->nmini && rc == SB_OK; mi++) {
        mini_t *m = &c->mini[mi];
        if ((rc = sb_pb_stack_cut(&m->st, x->stack_size, x))) break;
        const int nh = m->st.n;
        if (!nh) continue;
        if (c->stacks == SB_PB_STACKS_COVERAGE_END) {
            sb_pb_hyp **hyps = cube_alloc(c, (size_t)nh * sizeof *hyps);
            if (!hyps) return SB_ENOMEM;
            memcpy(hyps, m->st.h, (size_t)nh * sizeof *hyps);
            rc = group_edges(s, c, hyps, nh, distortion_limit);
            continue;
        }
        rc = unit_edges(s, c, m->st.h, nh, distortion_limit);
    }
    return rc;
}

typedef struct { uint64_t cov[SB_PB_COVW]; int end; int idx; } qkey_t;
static int by_qkey(const void *a, const void *b) {
    const qkey_t *x = a, *y = b;
    int c = memcmp(x->cov, y->cov, sizeof x->cov);
    if (c) return c;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->idx - y->idx;
}
static int same_queue(const qkey_t *a, const qkey_t *b) {
    return a->end == b->end && memcmp(a->cov, b->cov, sizeof a->cov) == 0;
}

static sb_pb_hyp *create(const sb_pb_sentence *s, const edge_t *e, int hi, int ti, sb_pb_pool *pool,
                         sb_pb_counters *cnt, int lm_mode, _Atomic int *ph) {
    sb_pb_phase(ph, SB_PB_PH_MEM);
    sb_pb_hyp *h = sb_pb_pool_get(pool);
    sb_pb_phase(ph, SB_PB_PH_SEARCH);
    if (!h) return NULL;
    double est = e->ests ? e->ests[hi] : e->est;
    if (lm_mode == 0) sb_pb_extend(s, e->hyps[hi], &e->opt[ti], e->start, e->end, est, h, ph);
    else sb_pb_extend_nolm(s, e->hyps[hi], &e->opt[ti], e->start, e->end, est, h);
    cnt->created++;
    return h;
}

/* scratch arrays of batch_lm, grown as needed and reused across calls */
typedef struct {
    uint32_t (*words)[SB_LM_MAX_ORDER];
    int *nq, *idx;
    double *sum;
    sb_lm_state *cur, *in, *out;
    uint32_t *w;
    float *p;
    int cap;
} lmbuf_t;

static void lmbuf_free(lmbuf_t *b) {
    free(b->words); free(b->nq); free(b->idx); free(b->sum); free(b->cur); free(b->in); free(b->out); free(b->w);
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int lmbuf_reserve(lmbuf_t *b, int n) {
    if (n <= b->cap) return SB_OK;
    int cap = b->cap ? b->cap : 256;
    while (cap < n) cap *= 2;
    lmbuf_free(b);
    b->words = malloc((size_t)cap * sizeof *b->words);
    b->nq = malloc((size_t)cap * sizeof *b->nq);
    b->idx = malloc((size_t)cap * sizeof *b->idx);
    b->sum = malloc((size_t)cap * sizeof *b->sum);
    b->cur = malloc((size_t)cap * sizeof *b->cur);
    b->in = malloc((size_t)cap * sizeof *b->in);
    b->out = malloc((size_t)cap * sizeof *b->out);
    b->w = malloc((size_t)cap * sizeof *b->w);
    b->p = malloc((size_t)cap * sizeof *b->p);
    if (!b->words || !b->nq || !b->idx || !b->sum || !b->cur || !b->in || !b->out || !b->w || !b->p) {
        lmbuf_free(b);
        return SB_ENOMEM;
    }
    b->cap = cap;
    return SB_OK;
}

/* The LM of hypotheses created without it, through the batch API (rounds: the i-th context word of every
 * hypothesis that has one, then </s> for complete ones), summed and applied exactly as sb_pb_score_lm_now would. */
static int batch_lm(const sb_pb_sentence *s, sb_pb_hyp **hs, int n, int queue_size, lmbuf_t *b) {
    const sb_lm *lm = sb_pb_lm(s->model);
    const int order = sb_lm_order(lm);
    int rc = lmbuf_reserve(b, n);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        b->nq[i] = sb_pb_lm_queries(s, hs[i], b->words[i]);
        b->cur[i] = hs[i]->prev->lm;
        b->sum[i] = 0;
    }
    for (int r = 0; r < order - 1; r++) {
        int c = 0;
        for (int i = 0; i < n; i++)
            if (b->nq[i] > r) { b->idx[c] = i; b->in[c] = b->cur[i]; b->w[c] = b->words[i][r]; c++; }
        if (!c) break;
        if ((rc = sb_lm_score_batch(lm, b->in, b->w, (uint64_t)c, queue_size, b->out, b->p, NULL))) return rc;
        for (int j = 0; j < c; j++) { b->cur[b->idx[j]] = b->out[j]; b->sum[b->idx[j]] += b->p[j]; }
    }
    int c = 0;
    for (int i = 0; i < n; i++) {
        sb_pb_set_lm_state(s, hs[i], &b->cur[i]);
        if (hs[i]->ncov == s->n) { b->idx[c] = i; b->in[c] = hs[i]->lm; b->w[c] = sb_pb_eos(s->model); c++; }
    }
    if (c) {
        if ((rc = sb_lm_score_batch(lm, b->in, b->w, (uint64_t)c, queue_size, b->out, b->p, NULL))) return rc;
        for (int j = 0; j < c; j++) b->sum[b->idx[j]] += b->p[j];
    }
    for (int i = 0; i < n; i++) sb_pb_add_lm(s, hs[i], b->sum[i]);
    return SB_OK;
}

/* queue-exact: items created without the LM, held until their LM is through the automaton queue */
typedef struct { item_t *it; sb_pb_hyp **h; int n, cap; } fresh_t;

static int fresh_add(fresh_t *f, item_t it) {
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 256;
        item_t *a = realloc(f->it, (size_t)cap * sizeof *a);
        if (!a) return SB_ENOMEM;
        f->it = a;
        sb_pb_hyp **b = realloc(f->h, (size_t)cap * sizeof *b);
        if (!b) return SB_ENOMEM;
        f->h = b;
        f->cap = cap;
    }
    f->h[f->n] = it.hyp;
    f->it[f->n++] = it;
    return SB_OK;
}

static int fresh_flush(const sb_pb_sentence *s, cube_t *c, fresh_t *f, int queue_size, lmbuf_t *b) {
    int rc = f->n ? batch_lm(s, f->h, f->n, queue_size, b) : SB_OK;
    for (int i = 0; i < f->n && rc == SB_OK; i++) rc = heap_push(c, f->it[i]);
    f->n = 0;
    return rc;
}

/* a popped item's two neighbours in its edge's grid (next hypothesis, next option), if not seen: into the heap,
 * or (queue-exact) into f */
static int neighbours(const sb_pb_sentence *s, cube_t *c, const edge_t *edges, item_t it, sb_pb_pool *pool,
                      sb_pb_counters *cnt, int lm_mode, fresh_t *f) {
    const edge_t *e = &edges[it.edge];
    int rc = SB_OK;
    for (int k = 0; k < 2; k++) {
        int hi = it.hi + (k == 0), ti = it.ti + (k == 1);
        if (hi >= e->nh || ti >= e->nt || !see(c, it.edge, hi, ti, &rc)) {
            if (rc) return rc;
            continue;
        }
        sb_pb_hyp *h = create(s, e, hi, ti, pool, cnt, lm_mode, c->phase);
        if (!h) return SB_ENOMEM;
        item_t n = {0, h, it.edge, (uint16_t)hi, (uint16_t)ti, 0};
        if ((rc = f ? fresh_add(f, n) : heap_push(c, n))) return rc;
    }
    return SB_OK;
}

/* the cube's own scratch in a thread's workspace (pb/search.h), kept across sentences when the workspace is pooled */
typedef struct {
    cube_t c;
    int cap_k;               /* c.edges / nedges / capedges have cap_k entries */
    sb_arena arena;          /* the per-sentence pool: edges' arrays */
    lmbuf_t lb;
    fresh_t fr;
    sb_pb_hyp **popped;
    int cappopped;
} cube_ws_t;

static void cube_scratch_free(cube_t *c, int n_k) {
    if (c->edges) {
        for (int i = 0; i < c->nedges[0]; i++) free(c->edges[0][i].hyps);
        for (int k = 0; k < n_k; k++) free(c->edges[k]);
    }
    free(c->edges);
    free(c->nedges);
    free(c->capedges);
    for (int i = 0; i < c->mini_ready; i++) sb_pb_stack_free(&c->mini[i].st);
    free(c->mini);
    sb_index_free(&c->mini_ix);
    free(c->heap);
    free(c->seen);
    sb_index_free(&c->seen_ix);
    memset(c, 0, sizeof *c);
}

static void cube_ws_free(void *p) {
    cube_ws_t *w = p;
    cube_scratch_free(&w->c, w->cap_k);
    lmbuf_free(&w->lb);
    free(w->fr.it);
    free(w->fr.h);
    free(w->popped);
    sb_arena_free(&w->arena);
    free(w);
}

static uint64_t cube_ws_bytes(const void *p) { return sb_arena_bytes(&((const cube_ws_t *)p)->arena); }

/* make room for n + 1 destination stacks' edges in kept scratch */
static int ws_edges(cube_ws_t *w, int n) {
    cube_t *c = &w->c;
    if (n + 1 > w->cap_k) {
        int cap = n + 1 > 2 * w->cap_k ? n + 1 : 2 * w->cap_k;
        edge_t **e = realloc(c->edges, (size_t)cap * sizeof *e);
        if (!e) return SB_ENOMEM;
        c->edges = e;
        int *ne = realloc(c->nedges, (size_t)cap * sizeof *ne);
        if (!ne) return SB_ENOMEM;
        c->nedges = ne;
        int *ce = realloc(c->capedges, (size_t)cap * sizeof *ce);
        if (!ce) return SB_ENOMEM;
        c->capedges = ce;
        for (int k = w->cap_k; k < cap; k++) { c->edges[k] = NULL; c->capedges[k] = 0; }
        w->cap_k = cap;
    }
    memset(c->nedges, 0, (size_t)w->cap_k * sizeof *c->nedges);
    return SB_OK;
}

int sb_pb_decode_cube(const sb_pb_model *m, const char *text, size_t len, const sb_pb_cube_opts *o, sb_pb_ws *ws0,
                      sb_pb_result **out, sb_pb_counters *counters) {
    *out = NULL;
    memset(counters, 0, sizeof *counters);
    if (o->pop_limit < 1 || o->stack_size < 1 || o->nbest < 0 || isnan(o->beam_width) || o->beam_width > 0 ||
        o->lm_mode < 0 || o->lm_mode > 3 || o->queue_size < 0 || o->queue_size > SB_LM_MAX_QUEUE ||
        o->stacks < 0 || o->stacks > 2 || o->queues < 0 || o->queues > 2 ||
        (o->stacks == SB_PB_STACKS_CARDINALITY && o->queues != SB_PB_QUEUES_CARDINALITY))
        return SB_EINVAL;
    sb_pb_frame f;
    sb_pb_stack_ctx x0 = {o->stack_size, o->beam_width, o->recombine_forward, NULL, NULL, o->nbest > 0};
    int rc = sb_pb_frame_begin(&f, m, text, len, ws0, 0, x0, counters);
    if (rc != SB_OK) return rc;
    sb_pb_ws *pws = f.ws;
    _Atomic int *ph = pws->phase;
    sb_pb_phase(ph, SB_PB_PH_MEM);
    const sb_pb_sentence *s = f.s;
    const int n = s->n;
    if (!pws->scratch) {
        if (!(pws->scratch = calloc(1, sizeof(cube_ws_t)))) { sb_pb_frame_end(&f); return SB_ENOMEM; }
        pws->scratch_free = cube_ws_free;
        pws->scratch_bytes = cube_ws_bytes;
    }
    cube_ws_t *ws = pws->scratch;
    /* pooled: the thread's kept scratch, reset; else everything malloc'd now and freed at the end */
    if (pws->pooled) {
        sb_arena_reset(&ws->arena);
        ws->c.arena = &ws->arena;
        rc = ws_edges(ws, n);
        ws->c.nmini = 0;
        ws->c.nheap = 0;
        if (sb_index_slots(&ws->c.mini_ix)) sb_index_reset(&ws->c.mini_ix, sb_index_slots(&ws->c.mini_ix));
    } else {
        rc = ws_edges(ws, n);
    }
    cube_t c = ws->c;
    c.stacks = o->stacks;
    c.phase = ph;
    sb_pb_pool *pool = f.pool;
    sb_pb_hyp **finals = NULL, **popped = ws->popped;
    int cappopped = ws->cappopped;
    fresh_t fr = ws->fr;
    lmbuf_t lb = ws->lb;
    if (rc) goto done;
    sb_pb_phase(ph, SB_PB_PH_SEARCH);
    sb_pb_stack_ctx x = f.x;
    sb_pb_hyp *init = f.init;
    {
        sb_pb_stack *st = ministack(&c, init, &rc);
        if (!st) goto done;
        if ((rc = sb_pb_stack_add(st, init, &x))) goto done;
    }
    if ((rc = post_decode(s, &c, &x, o->distortion_limit))) goto done;
    for (int k = 1; k <= n; k++) {
        /* clear: ministacks of the previous stack live on through their edges' arrays */
        if (!pws->pooled) {
            for (int i = 0; i < c.nmini; i++) sb_pb_stack_free(&c.mini[i].st);
            c.mini_ready = 0;
        }
        c.nmini = 0;
        if (sb_index_slots(&c.mini_ix)) sb_index_reset(&c.mini_ix, sb_index_slots(&c.mini_ix));   /* in place */
        for (int i = 0; i < c.nheap; i++) sb_pb_pool_put(pool, c.heap[i].hyp);
        c.nheap = 0;
        if (sb_index_slots(&c.seen_ix)) sb_index_reset(&c.seen_ix, sb_index_slots(&c.seen_ix));   /* in place */
        c.nseen = 0;
        const edge_t *edges = c.edges[k];
        const int ne = c.nedges[k];
        /* the queues: one per stack (Moses2), or one per destination coverage (and end), each popped up to the
         * pop limit (the Moses2 paper's Table 5) */
        qkey_t *ord = malloc((size_t)(ne ? ne : 1) * sizeof *ord);
        if (!ord) { rc = SB_ENOMEM; break; }
        for (int ei = 0; ei < ne; ei++) {
            const edge_t *e = &edges[ei];
            memset(&ord[ei], 0, sizeof ord[ei]);
            ord[ei].idx = ei;
            if (o->queues != SB_PB_QUEUES_CARDINALITY) {
                memcpy(ord[ei].cov, e->hyps[0]->cov, sizeof ord[ei].cov);
                for (int i = e->start; i <= e->end; i++) sb_pb_cov_set(ord[ei].cov, i);
                ord[ei].end = o->queues == SB_PB_QUEUES_COVERAGE_END ? e->end : -1;
            }
        }
        if (o->queues != SB_PB_QUEUES_CARDINALITY && ne > 1) qsort(ord, (size_t)ne, sizeof *ord, by_qkey);
        int pops_total = 0, npopped = 0;
        for (int g0 = 0; g0 < ne && rc == SB_OK;) {
            int g1 = g0 + 1;
            while (g1 < ne && same_queue(&ord[g0], &ord[g1])) g1++;
            for (int i = 0; i < c.nheap; i++) sb_pb_pool_put(pool, c.heap[i].hyp);
            c.nheap = 0;
            for (int gi = g0; gi < g1 && rc == SB_OK; gi++) {
                int ei = ord[gi].idx;
                sb_pb_hyp *h = create(s, &edges[ei], 0, 0, pool, counters, o->lm_mode, c.phase);
                if (!h) { rc = SB_ENOMEM; break; }
                see(&c, (uint32_t)ei, 0, 0, &rc);
                if (rc == SB_OK) rc = o->lm_mode == 3 ? fresh_add(&fr, (item_t){0, h, (uint32_t)ei, 0, 0, 0})
                                                      : heap_push(&c, (item_t){0, h, (uint32_t)ei, 0, 0, 0});
            }
            if (rc == SB_OK && o->lm_mode == 3) rc = fresh_flush(s, &c, &fr, o->queue_size, &lb);
            g0 = g1;
            int pops = 0;
            while (rc == SB_OK && c.nheap && pops < o->pop_limit) {
                if (o->lm_mode == 3) {
                    /* queue-exact: a round of up to queue_size pops; their new items go through the automaton
                     * queue and enter the heap with exact scores when the round ends */
                    int round = o->queue_size > 1 ? o->queue_size : 1;
                    for (int r = 0; r < round && c.nheap && pops < o->pop_limit && rc == SB_OK; r++, pops++) {
                        item_t it = heap_pop(&c);
                        sb_pb_stack *st = ministack(&c, it.hyp, &rc);
                        if (!st) break;
                        if ((rc = sb_pb_stack_add(st, it.hyp, &x))) break;
                        rc = neighbours(s, &c, edges, it, pool, counters, o->lm_mode, &fr);
                    }
                    if (rc == SB_OK) rc = fresh_flush(s, &c, &fr, o->queue_size, &lb);
                    continue;
                }
                item_t it = heap_pop(&c);
                if (o->lm_mode == 2) {
                    if (npopped == cappopped) {
                        int cap = cappopped ? cappopped * 2 : 1024;
                        sb_pb_hyp **q = realloc(popped, (size_t)cap * sizeof *q);
                        if (!q) { rc = SB_ENOMEM; break; }
                        popped = q;
                        cappopped = cap;
                    }
                    popped[npopped++] = it.hyp;
                } else {
                    if (o->lm_mode == 1) {
                        sb_pb_phase(ph, SB_PB_PH_LM);
                        sb_pb_score_lm_now(s, it.hyp);
                        sb_pb_phase(ph, SB_PB_PH_SEARCH);
                    }
                    sb_pb_stack *st = ministack(&c, it.hyp, &rc);
                    if (!st) break;
                    if ((rc = sb_pb_stack_add(st, it.hyp, &x))) break;
                }
                if ((rc = neighbours(s, &c, edges, it, pool, counters, o->lm_mode, NULL))) break;
                pops++;
            }
            pops_total += pops;
        }
        free(ord);
        if (rc) break;
        if (o->lm_mode == 2 && npopped) {
            /* the queue is drained before the next stack: LM through the automaton queue, then the stack */
            sb_pb_phase(ph, SB_PB_PH_LM);
            rc = batch_lm(s, popped, npopped, o->queue_size, &lb);
            sb_pb_phase(ph, SB_PB_PH_SEARCH);
            if (rc) break;
            for (int i = 0; i < npopped && rc == SB_OK; i++) {
                sb_pb_stack *st = ministack(&c, popped[i], &rc);
                if (!st) break;
                rc = sb_pb_stack_add(st, popped[i], &x);
            }
            if (rc) break;
        }
        counters->expanded += (uint64_t)pops_total;
        if (k < n && (rc = post_decode(s, &c, &x, o->distortion_limit))) break;
    }
    if (rc == SB_OK) {
        /* the last stack: every ministack cut, all their hypotheses are the n-best's starting points */
        int total = 0;
        for (int i = 0; i < c.nmini && rc == SB_OK; i++) {
            rc = sb_pb_stack_cut(&c.mini[i].st, o->stack_size, &x);
            total += c.mini[i].st.n;
        }
        if (rc == SB_OK) {
            finals = malloc((size_t)(total ? total : 1) * sizeof *finals);
            if (!finals) rc = SB_ENOMEM;
        }
        if (rc == SB_OK) {
            int nf = 0;
            for (int i = 0; i < c.nmini; i++)
                for (int j = 0; j < c.mini[i].st.n; j++) finals[nf++] = c.mini[i].st.h[j];
            /* best first, as the result wants its first entry to be the 1-best */
            for (int i = 1; i < nf; i++) {
                sb_pb_hyp *t = finals[i];
                int j = i - 1;
                while (j >= 0 && (finals[j]->total < t->total ||
                                  (finals[j]->total == t->total && finals[j]->id > t->id))) {
                    finals[j + 1] = finals[j];
                    j--;
                }
                finals[j + 1] = t;
            }
            rc = sb_pb_frame_result(&f, finals, nf, o->nbest, out);
        }
    }
done:
    free(finals);
    ws->c = c;
    ws->popped = popped;
    ws->cappopped = cappopped;
    ws->fr = fr;
    ws->lb = lb;
    if (!pws->pooled) {
        /* plain malloc/free: nothing outlives the sentence */
        cube_ws_free(ws);
        pws->scratch = NULL;
    }
    sb_pb_frame_end(&f);
    return rc;
}
