/* phrase_merge.c - see phrase_merge.h. */
#define _GNU_SOURCE
#include "tm/phrase_merge.h"
#include "tm/phrase_runs.h"
#include "tm/phrase_write.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DEFINE_SORT(sort2, rec2, cmp2)

/* ---------------------------------------------------------------- merging */
static int cur_fill(sb_ps_cursor *c) {
    uint64_t left = c->end - c->next;
    size_t n = left < c->cap ? (size_t)left : c->cap;
    c->pos = 0; c->nbuf = n;
    if (!n) return SB_OK;
    int rc = sb_ps_pread_all(c->fd, c->buf, n * c->recsz, c->next * c->recsz);
    c->next += n;
    return rc;
}
static inline const void *cur_peek(const sb_ps_cursor *c) { return c->buf + c->pos * c->recsz; }

/* binary search in run r (in file fd): first index whose key >= k (key = tgt for rec1, src for rec2) */
static int lower_bound(int fd, run_t r, size_t recsz, uint64_t k, uint64_t *out) {
    uint64_t lo = 0, hi = r.n;
    char tmp[128];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const void *x = tmp;
        if (r.mem) x = (const char *)r.mem + (r.off + mid) * recsz;
        else {
            int rc = sb_ps_pread_all(fd, tmp, recsz, (r.off + mid) * recsz);
            if (rc) return rc;
        }
        uint64_t key = recsz == sizeof(rec1) ? ((const rec1 *)x)->tgt.hi : ((const rec2 *)x)->src.hi;
        if (key < k) lo = mid + 1; else hi = mid;
    }
    *out = r.off + lo;
    return SB_OK;
}

static inline int mless(const sb_ps_merger *m, int a, int b) {
    const void *x = cur_peek(&m->c[a]), *y = cur_peek(&m->c[b]);
    return m->type == 1 ? cmp1(x, y) < 0 : cmp2(x, y) < 0;
}
static void sift_down(sb_ps_merger *m, int i) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, b = i;
        if (l < m->hn && mless(m, m->heap[l], m->heap[b])) b = l;
        if (r < m->hn && mless(m, m->heap[r], m->heap[b])) b = r;
        if (b == i) return;
        int t = m->heap[i]; m->heap[i] = m->heap[b]; m->heap[b] = t;
        i = b;
    }
}

int sb_ps_merger_init(sb_ps_merger *m, int type, runvec *runs, int *fds, uint64_t lo_key, uint64_t hi_key,
                      int hi_inf, size_t buf_recs) {
    memset(m, 0, sizeof *m);
    m->type = type;
    size_t recsz = type == 1 ? sizeof(rec1) : sizeof(rec2);
    m->c = calloc(runs->n ? runs->n : 1, sizeof(sb_ps_cursor));
    m->heap = calloc(runs->n ? runs->n : 1, sizeof(int));
    if (!m->c || !m->heap) return SB_ENOMEM;
    for (size_t i = 0; i < runs->n; i++) {
        run_t r = runs->v[i];
        uint64_t a, b;
        int rc;
        if ((rc = lower_bound(fds[r.file], r, recsz, lo_key, &a))) return rc;
        if (hi_inf) b = r.off + r.n;
        else if ((rc = lower_bound(fds[r.file], r, recsz, hi_key, &b))) return rc;
        if (a >= b) continue;
        sb_ps_cursor *c = &m->c[m->n];
        if (r.mem) {   /* read in place: one slice, the whole range (no fill follows: next = end) */
            *c = (sb_ps_cursor){-1, b, b, (char *)r.mem + a * recsz, (size_t)(b - a), 0, (size_t)(b - a), recsz, 0};
            m->n++;
        } else {
            *c = (sb_ps_cursor){fds[r.file], a, b, malloc(buf_recs * recsz), 0, 0, buf_recs, recsz, 1};
            if (!c->buf) return SB_ENOMEM;
            m->n++;
            if ((rc = cur_fill(c))) return rc;
        }
        m->heap[m->hn++] = m->n - 1;
    }
    for (int i = m->hn / 2 - 1; i >= 0; i--) sift_down(m, i);
    return SB_OK;
}
void sb_ps_merger_free(sb_ps_merger *m) {
    for (int i = 0; i < m->n; i++) if (m->c[i].own) free(m->c[i].buf);
    free(m->c); free(m->heap);
}
int sb_ps_merger_pop(sb_ps_merger *m, void *out) {
    if (!m->hn) return 0;
    sb_ps_cursor *c = &m->c[m->heap[0]];
    memcpy(out, cur_peek(c), c->recsz);
    if (++c->pos == c->nbuf) {
        int rc = cur_fill(c);
        if (rc) return rc;
        if (!c->nbuf) { m->heap[0] = m->heap[--m->hn]; }
    }
    if (m->hn) sift_down(m, 0);
    return 1;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
void sb_ps_make_bounds(u64vec *smp, int T, uint64_t *bounds) {
    if (smp->n > 1) qsort(smp->v, smp->n, sizeof(uint64_t), cmp_u64);
    bounds[0] = 0;
    for (int t = 1; t < T; t++) {
        uint64_t b = smp->n ? smp->v[(size_t)t * smp->n / (size_t)T] : 0;
        bounds[t] = b < bounds[t - 1] ? bounds[t - 1] : b;
    }
    bounds[T] = UINT64_MAX;
}

/* ---------------------------------------------------------------- step 3: merge by target */
typedef struct {
    sb_pscore *s; int t; uint64_t lo, hi; int hi_inf; size_t merge_recs;
    FILE *out;                        /* counts_only output */
    rec2 *buf2; size_t n2, cap2;      /* step-3 run buffer */
    rec2 *grp; size_t ng, capg;       /* one target's pairs */
    uint64_t pairs, nk[5], lines;
    int rc;
} m1_t;

static int spill2(m1_t *w) {
    sb_pscore *s = w->s;
    if (!w->n2) return SB_OK;
    sort2(w->buf2, w->n2);
    int rc = sb_ps_write_all(s->fd2[w->t], w->buf2, w->n2 * sizeof(rec2));
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rc = sb_ps_runvec_push(&s->runs2, (run_t){w->t, s->end2[w->t], w->n2, NULL});
    for (size_t i = 0; i < w->n2 && !rc; i += SAMPLE_EVERY) rc = sb_ps_u64_push(&s->samples2, w->buf2[i].src.hi);
    s->st.runs2++;
    s->st.run_bytes += w->n2 * sizeof(rec2);
    pthread_mutex_unlock(&s->mu);
    s->end2[w->t] += w->n2;
    w->n2 = 0;
    return rc;
}

static int flush_target(m1_t *w) {
    if (!w->ng) return SB_OK;
    double ce = 0;
    for (size_t i = 0; i < w->ng; i++) ce += w->grp[i].c_ef;
    for (size_t i = 0; i < w->ng; i++) {
        rec2 r = w->grp[i];
        r.c_e = ce; r.n1e = (uint32_t)w->ng;
        double c = r.c_ef;
        for (int k = 1; k <= 4; k++) if (fabs(c - k) < 1e-9) w->nk[k]++;
        if (w->n2 == w->cap2) { int rc = spill2(w); if (rc) return rc; }
        w->buf2[w->n2++] = r;
    }
    w->pairs += w->ng;
    w->ng = 0;
    return SB_OK;
}

static void *merge1_worker(void *arg) {
    m1_t *w = arg;
    sb_pscore *s = w->s;
    sb_ps_merger m;
    int rc = sb_ps_merger_init(&m, 1, &s->runs1, s->fd1, w->lo, w->hi, w->hi_inf, w->merge_recs);
    rec1 r, cur;
    memset(&cur, 0, sizeof cur);
    int have = 0;
    double c_ef = 0, c_al = 0, best_c = -1, best_ci = -1, best_lef = 0, best_lfe = 0;
    uint64_t best_al = 0, best_ali = 0;
    /* close the current alignment run of the current pair */
    #define CLOSE_ALIGN() do {                                                                    \
        if (s->a.counts_only) {                                                                   \
            sb_ps_write_counts(w->out, s, cur.src, cur.tgt, cur.align, c_al);                     \
            w->lines++;                                                                           \
        }                                                                                         \
        /* direct run's winner: printed alignment and lex(e|f); inverse run's winner: lex(f|e) */   \
        if (c_al > best_c || (c_al == best_c && sb_ps_align_cmp_moses(cur.align, best_al, 0) > 0)) {    \
            best_c = c_al; best_al = cur.align;                                                   \
        }                                                                                         \
        if (c_al > best_ci || (c_al == best_ci && sb_ps_align_cmp_moses(cur.align, best_ali, 1) > 0)) { \
            best_ci = c_al; best_ali = cur.align;                                                 \
        }                                                                                         \
    } while (0)
    /* the winners' lexical weights, once a distinct pair (one computation where both runs chose one alignment) */
    #define PAIR_LEX() do {                                                                       \
        if (best_al == best_ali) sb_ps_lex_weights(s, cur.src, cur.tgt, best_al, 3, &best_lef, &best_lfe); \
        else {                                                                                    \
            sb_ps_lex_weights(s, cur.src, cur.tgt, best_al, 1, &best_lef, &best_lfe);             \
            sb_ps_lex_weights(s, cur.src, cur.tgt, best_ali, 2, &best_lef, &best_lfe);            \
        }                                                                                         \
    } while (0)
    #define CLOSE_PAIR() do {                                                                     \
        CLOSE_ALIGN();                                                                            \
        if (!s->a.counts_only) {                                                                  \
            PAIR_LEX();                                                                           \
            if (SB_GROW(w->grp, w->capg, w->ng + 1, 256)) { rc = SB_ENOMEM; break; }              \
            w->grp[w->ng++] = (rec2){cur.src, cur.tgt, best_al, 0, 0, c_ef, 0, best_lef, best_lfe}; \
        } else w->pairs++;                                                                        \
    } while (0)
    while (!rc) {
        int got = sb_ps_merger_pop(&m, &r);
        if (got < 0) { rc = got; break; }
        if (!got) break;
        if (!have) { cur = r; have = 1; c_ef = 0; c_al = 0; best_c = best_ci = -1; }
        else if (!keq(r.tgt, cur.tgt) || !keq(r.src, cur.src)) {
            CLOSE_PAIR();
            if (rc) break;
            if (!keq(r.tgt, cur.tgt) && !s->a.counts_only && (rc = flush_target(w))) break;
            cur = r; c_ef = 0; c_al = 0; best_c = best_ci = -1;
        } else if (r.align != cur.align) {
            CLOSE_ALIGN();
            cur = r; c_al = 0;
        }
        c_ef += r.count; c_al += r.count;
    }
    if (!rc && have) {
        do { CLOSE_PAIR(); } while (0);
        if (!rc && !s->a.counts_only) rc = flush_target(w);
    }
    #undef CLOSE_ALIGN
    #undef PAIR_LEX
    #undef CLOSE_PAIR
    if (!rc && !s->a.counts_only) rc = spill2(w);
    if (!rc && w->out && ferror(w->out)) rc = SB_EIO;
    sb_ps_merger_free(&m);
    w->rc = rc;
    return NULL;
}

int sb_ps_merge_by_target(sb_pscore *s, const char *out_prefix, size_t mrecs, size_t cap2, uint64_t *bounds,
                          uint64_t nk[5]) {
    int T = s->a.threads, rc = SB_OK;
    m1_t *w1 = calloc(T, sizeof(m1_t));
    if (!w1) return SB_ENOMEM;
    sb_ps_make_bounds(&s->samples1, T, bounds);
    for (int t = 0; t < T && !rc; t++) {
        w1[t] = (m1_t){.s = s, .t = t, .lo = bounds[t], .hi = bounds[t + 1], .hi_inf = t == T - 1,
                       .merge_recs = mrecs, .cap2 = cap2};
        if (s->a.counts_only) {
            if (!(w1[t].out = sb_ps_open_part(out_prefix, t))) { rc = SB_EIO; break; }
        } else if (!(w1[t].buf2 = malloc(cap2 * sizeof(rec2)))) { rc = SB_ENOMEM; break; }
    }
    if (!rc) rc = sb_run_threads(T, merge1_worker, w1, sizeof *w1);
    for (int t = 0; t < T; t++) {
        if (!rc && w1[t].rc) rc = w1[t].rc;
        s->st.pairs += w1[t].pairs;
        s->st.out_lines += w1[t].lines;
        for (int k = 1; k <= 4; k++) nk[k] += w1[t].nk[k];
        if (w1[t].out && fclose(w1[t].out) && !rc) rc = SB_EIO;
        free(w1[t].buf2); free(w1[t].grp);
    }
    free(w1);
    return rc;
}
