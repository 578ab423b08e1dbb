/* pb/nbest.c - see nbest.h. */
#include "pb/nbest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

