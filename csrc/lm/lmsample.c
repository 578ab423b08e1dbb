/* lmsample.c - see lmsample.h. */
#define _GNU_SOURCE
#include "lm/lmsample.h"
#include "util/probing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t m;
    uint32_t *ids;       /* m * n */
    float *logprob;      /* m */
    /* links (n >= 2): longest existing proper suffix (order, index); for n == 1 unused */
    uint8_t *sfx_order;
    uint32_t *sfx_index;
    /* as a context (n <= N-1): continuation range in the next order's sorted continuation arrays */
    uint64_t *cont_begin; /* m + 1 */
    /* continuations of order n (n >= 2), sorted by (context index, word) */
    uint32_t *cont_word;  /* m */
    uint32_t *cont_entry; /* m: index of the n-gram in this order's table */
    double *cont_cum;     /* m: cumulative probability within its context group */
    /* packed copies used while sampling (one cache line holds what one step needs) */
    struct ctx_rec *cx;   /* n <= N-1: per context */
    struct cont_rec *ct;  /* n >= 2: per continuation, sorted by (context, word) */
} ord_t;

typedef struct ctx_rec {
    uint32_t begin, end;  /* continuation range in the next order's ct */
    uint32_t sfx_index;   /* longest existing proper suffix (n >= 2) */
    uint32_t sfx_order;
} ctx_rec;

typedef struct cont_rec {
    double cum;           /* cumulative probability within the context group */
    uint32_t word;
    uint32_t entry;       /* index of the n-gram in its order's table (the next context) */
} cont_rec;

struct sb_lms {
    int order;
    uint32_t vocab;
    uint32_t bos, eos, unk;
    ord_t o[8];
    uint32_t *uni_of_word;   /* word id -> unigram index */
    double *uni_cum;         /* cumulative over unigram entries, <s>/<unk> excluded */
    double *alias_prob;      /* Walker/Vose alias table over unigram entries (same distribution) */
    uint32_t *alias_idx;
    int ready;
};

/* ---------- index of word tuples ---------- */
/* the row of ids (m rows of n words) equal to key, or -1 with *end = the empty slot the probe ended at */
static int64_t hash_probe(const sb_index *h, const uint32_t *ids, int n, const uint32_t *key, uint64_t *end) {
    uint64_t b = sb_index_start(h, sb_ids_hash(key, (size_t)n));
    for (uint32_t i; (i = sb_index_at(h, b)) != UINT32_MAX; b = sb_index_step(h, b))
        if (memcmp(ids + (uint64_t)i * n, key, (size_t)n * 4) == 0) return i;
    *end = b;
    return -1;
}

static int hash_build(sb_index *h, const uint32_t *ids, uint64_t m, int n) {
    uint64_t cap = 16;
    while (cap < m * 2) cap <<= 1;
    int rc = sb_index_reset(h, cap);
    if (rc != SB_OK) return rc;
    for (uint64_t i = 0; i < m; ++i) {
        uint64_t end;
        if (hash_probe(h, ids, n, ids + i * n, &end) >= 0) return SB_EFORMAT; /* dup */
        sb_index_put(h, end, (uint32_t)i);
    }
    return SB_OK;
}

static int64_t hash_find(const sb_index *h, const uint32_t *ids, int n, const uint32_t *key) {
    uint64_t end;
    return hash_probe(h, ids, n, key, &end);
}

int sb_lms_create(int order, const uint64_t *counts, uint32_t vocab_size, sb_lms **out) {
    *out = NULL;
    if (order < 1 || order > 7 || vocab_size < 3) return SB_EINVAL;
    for (int n = 1; n <= order; ++n) if (counts[n - 1] == 0 || counts[n - 1] >= UINT32_MAX) return SB_EINVAL;
    sb_lms *s = calloc(1, sizeof(*s));
    if (!s) return SB_ENOMEM;
    s->order = order;
    s->vocab = vocab_size;
    for (int n = 1; n <= order; ++n) s->o[n].m = counts[n - 1];
    *out = s;
    return SB_OK;
}

void sb_lms_free(sb_lms *s) {
    if (!s) return;
    for (int n = 1; n <= s->order; ++n) {
        ord_t *o = &s->o[n];
        free(o->ids); free(o->logprob); free(o->sfx_order); free(o->sfx_index);
        free(o->cont_begin); free(o->cont_word); free(o->cont_entry); free(o->cont_cum);
        free(o->cx); free(o->ct);
    }
    free(s->uni_of_word);
    free(s->uni_cum);
    free(s->alias_prob);
    free(s->alias_idx);
    free(s);
}

int sb_lms_set_order(sb_lms *s, int n, const uint32_t *ids, const float *logprob) {
    if (!s || n < 1 || n > s->order || s->ready) return SB_EINVAL;
    ord_t *o = &s->o[n];
    free(o->ids); free(o->logprob);
    o->ids = malloc(o->m * n * 4);
    o->logprob = malloc(o->m * 4);
    if (!o->ids || !o->logprob) return SB_ENOMEM;
    for (uint64_t i = 0; i < o->m * n; ++i) if (ids[i] >= s->vocab) return SB_EINVAL;
    memcpy(o->ids, ids, o->m * n * 4);
    memcpy(o->logprob, logprob, o->m * 4);
    return SB_OK;
}

typedef struct { uint64_t key; uint32_t idx; } sort_rec;
static int cmp_rec(const void *a, const void *b) {
    uint64_t x = ((const sort_rec *)a)->key, y = ((const sort_rec *)b)->key;
    return x < y ? -1 : x > y;
}

int sb_lms_finalize(sb_lms *s, uint32_t bos, uint32_t eos, uint32_t unk) {
    if (!s || s->ready || bos >= s->vocab || eos >= s->vocab || unk >= s->vocab) return SB_EINVAL;
    const int N = s->order;
    for (int n = 1; n <= N; ++n) if (!s->o[n].ids) return SB_EINVAL;
    s->bos = bos; s->eos = eos; s->unk = unk;
    /* unigrams */
    ord_t *u = &s->o[1];
    s->uni_of_word = malloc((size_t)s->vocab * 4);
    s->uni_cum = malloc(u->m * sizeof(double));
    if (!s->uni_of_word || !s->uni_cum) return SB_ENOMEM;
    for (uint32_t w = 0; w < s->vocab; ++w) s->uni_of_word[w] = UINT32_MAX;
    double acc = 0.0;
    for (uint64_t i = 0; i < u->m; ++i) {
        uint32_t w = u->ids[i];
        if (s->uni_of_word[w] != UINT32_MAX) return SB_EFORMAT;
        s->uni_of_word[w] = (uint32_t)i;
        if (w != bos && w != unk) acc += pow(10.0, (double)u->logprob[i]);
        s->uni_cum[i] = acc;
    }
    if (!(acc > 0.0)) return SB_EFORMAT;
    for (uint64_t i = 0; i < u->m; ++i) s->uni_cum[i] /= acc;
    /* Vose's alias method: O(1) unigram draws */
    {
        uint64_t m = u->m;
        s->alias_prob = malloc(m * sizeof(double));
        s->alias_idx = malloc(m * 4);
        uint32_t *small = malloc(m * 4), *large = malloc(m * 4);
        double *q = malloc(m * sizeof(double));
        if (!s->alias_prob || !s->alias_idx || !small || !large || !q) {
            free(small); free(large); free(q);
            return SB_ENOMEM;
        }
        uint64_t ns = 0, nl = 0;
        for (uint64_t i = 0; i < m; ++i) {
            double w = s->uni_cum[i] - (i ? s->uni_cum[i - 1] : 0.0);
            q[i] = w * (double)m;
            if (q[i] < 1.0) small[ns++] = (uint32_t)i; else large[nl++] = (uint32_t)i;
        }
        while (ns && nl) {
            uint32_t a = small[--ns], g = large[--nl];
            s->alias_prob[a] = q[a];
            s->alias_idx[a] = g;
            q[g] = (q[g] + q[a]) - 1.0;
            if (q[g] < 1.0) small[ns++] = g; else large[nl++] = g;
        }
        while (nl) { uint32_t g = large[--nl]; s->alias_prob[g] = 1.0; s->alias_idx[g] = g; }
        while (ns) { uint32_t a = small[--ns]; s->alias_prob[a] = 1.0; s->alias_idx[a] = a; } /* rounding */
        free(small); free(large); free(q);
    }
    if (s->uni_of_word[bos] == UINT32_MAX || s->uni_of_word[eos] == UINT32_MAX) return SB_EFORMAT;
    /* higher orders: context and suffix links, continuation groups */
    sb_index h[8];
    memset(h, 0, sizeof(h));
    int rc = SB_OK;
    for (int n = 1; n < N && rc == SB_OK; ++n) rc = (n == 1) ? SB_OK : hash_build(&h[n], s->o[n].ids, s->o[n].m, n);
    for (int n = 2; n <= N && rc == SB_OK; ++n) {
        ord_t *o = &s->o[n], *lo = &s->o[n - 1];
        o->sfx_order = malloc(o->m);
        o->sfx_index = malloc(o->m * 4);
        sort_rec *rec = malloc(o->m * sizeof(sort_rec));
        lo->cont_begin = calloc(lo->m + 1, 8);
        o->cont_word = malloc(o->m * 4);
        o->cont_entry = malloc(o->m * 4);
        o->cont_cum = malloc(o->m * 8);
        if (!o->sfx_order || !o->sfx_index || !rec || !lo->cont_begin || !o->cont_word || !o->cont_entry ||
            !o->cont_cum) { free(rec); rc = SB_ENOMEM; break; }
        for (uint64_t i = 0; i < o->m && rc == SB_OK; ++i) {
            const uint32_t *w = o->ids + i * n;
            int64_t ctx;
            if (n == 2) {
                ctx = s->uni_of_word[w[0]] == UINT32_MAX ? -1 : (int64_t)s->uni_of_word[w[0]];
            } else {
                ctx = hash_find(&h[n - 1], lo->ids, n - 1, w);
            }
            if (ctx < 0) { rc = SB_EFORMAT; break; } /* the context of every n-gram must be an (n-1)-gram */
            /* longest existing proper suffix */
            int k;
            int64_t si = -1;
            for (k = n - 1; k >= 2; --k) {
                si = hash_find(&h[k], s->o[k].ids, k, w + (n - k));
                if (si >= 0) break;
            }
            if (k < 2) {
                k = 1;
                si = s->uni_of_word[w[n - 1]] == UINT32_MAX ? -1 : (int64_t)s->uni_of_word[w[n - 1]];
                if (si < 0) { rc = SB_EFORMAT; break; }
            }
            o->sfx_order[i] = (uint8_t)k;
            o->sfx_index[i] = (uint32_t)si;
            rec[i].key = ((uint64_t)ctx << 32) | w[n - 1];
            rec[i].idx = (uint32_t)i;
        }
        if (rc) { free(rec); break; }
        qsort(rec, o->m, sizeof(sort_rec), cmp_rec);
        uint64_t prev_ctx = UINT64_MAX;
        double cum = 0.0;
        for (uint64_t j = 0; j < o->m; ++j) {
            uint64_t ctx = rec[j].key >> 32;
            uint32_t word = (uint32_t)rec[j].key;
            if (ctx != prev_ctx) { cum = 0.0; prev_ctx = ctx; }
            lo->cont_begin[ctx + 1] = j + 1;
            o->cont_word[j] = word;
            o->cont_entry[j] = rec[j].idx;
            if (word != bos && word != unk) cum += pow(10.0, (double)o->logprob[rec[j].idx]);
            o->cont_cum[j] = cum;
        }
        /* make cont_begin a proper prefix array: begin[c] = end of the previous non-empty group */
        for (uint64_t c = 1; c <= lo->m; ++c)
            if (lo->cont_begin[c] < lo->cont_begin[c - 1]) lo->cont_begin[c] = lo->cont_begin[c - 1];
        free(rec);
    }
    for (int n = 0; n < 8; ++n) sb_index_free(&h[n]);
    if (rc) return rc;
    /* pack */
    for (int n = 1; n <= N; ++n) {
        ord_t *o = &s->o[n];
        if (n <= N - 1) {
            o->cx = malloc((o->m ? o->m : 1) * sizeof(ctx_rec));
            if (!o->cx) return SB_ENOMEM;
            for (uint64_t i = 0; i < o->m; ++i) {
                o->cx[i].begin = (uint32_t)o->cont_begin[i];
                o->cx[i].end = (uint32_t)o->cont_begin[i + 1];
                o->cx[i].sfx_index = n >= 2 ? o->sfx_index[i] : 0;
                o->cx[i].sfx_order = n >= 2 ? o->sfx_order[i] : 0;
            }
        }
        if (n >= 2) {
            o->ct = malloc(o->m * sizeof(cont_rec));
            if (!o->ct) return SB_ENOMEM;
            for (uint64_t j = 0; j < o->m; ++j) {
                o->ct[j].cum = o->cont_cum[j];
                o->ct[j].word = o->cont_word[j];
                o->ct[j].entry = o->cont_entry[j];
            }
        }
        free(o->cont_begin); free(o->cont_word); free(o->cont_entry); free(o->cont_cum);
        free(o->sfx_order); free(o->sfx_index);
        o->cont_begin = NULL; o->cont_word = NULL; o->cont_entry = NULL; o->cont_cum = NULL;
        o->sfx_order = NULL; o->sfx_index = NULL;
    }
    s->ready = 1;
    return SB_OK;
}


static inline uint64_t rng_next(uint64_t *x) {
    /* xorshift64* */
    uint64_t z = *x;
    z ^= z >> 12; z ^= z << 25; z ^= z >> 27;
    *x = z;
    return z * 0x2545F4914F6CDD1DULL;
}
static inline double rng_unit(uint64_t *x) { return (double)(rng_next(x) >> 11) * (1.0 / 9007199254740992.0); }

void sb_lms_seed(const sb_lms *s, sb_lms_state *st, uint64_t seed) {
    memset(st, 0, sizeof(*st));
    uint64_t z = seed;
    st->rng = sb_splitmix64(&z) | 1;
    st->ctx_order = 1;
    st->ctx_index = s ? s->uni_of_word[s->bos] : 0;
}

/* First j in [lo, hi) with ct[j].cum > r; hi-1 if none. */
static inline uint64_t upper_ct(const cont_rec *ct, uint64_t lo, uint64_t hi, double r) {
    uint64_t a = lo, b = hi;
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        if (ct[mid].cum > r) b = mid; else a = mid + 1;
    }
    return a < hi ? a : hi - 1;
}

/* Is word explicit after context (k, i)? Returns its position in order k+1's ct or -1. */
static inline int64_t find_cont(const sb_lms *s, uint32_t k, uint32_t i, uint32_t word) {
    const cont_rec *ct = s->o[k + 1].ct;
    uint64_t a = s->o[k].cx[i].begin, b = s->o[k].cx[i].end;
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        uint32_t w = ct[mid].word;
        if (w == word) return (int64_t)mid;
        if (w < word) a = mid + 1; else b = mid;
    }
    return -1;
}

/* Draw a word after context (k, i), k >= 1 (k = 0: the unigram distribution). */
static uint32_t draw_word(const sb_lms *s, sb_lms_state *st, uint32_t k, uint32_t i) {
    if (k == 0) {
        const ord_t *u = &s->o[1];
        for (;;) {
            uint64_t j = (uint64_t)(rng_unit(&st->rng) * (double)u->m);
            if (j >= u->m) j = u->m - 1;
            if (rng_unit(&st->rng) >= s->alias_prob[j]) j = s->alias_idx[j];
            uint32_t w = u->ids[j];
            if (w != s->bos && w != s->unk) return w;
        }
    }
    const ctx_rec c = s->o[k].cx[i];
    const cont_rec *ct = s->o[k + 1].ct;
    double mass = (c.end > c.begin) ? ct[c.end - 1].cum : 0.0;
    double r = rng_unit(&st->rng);
    if (r < mass) {
        uint64_t j = upper_ct(ct, c.begin, c.end, r);
        uint32_t w = ct[j].word;
        if (w != s->bos && w != s->unk) return w;
    }
    /* back off to the longest existing suffix of the context, rejecting words explicit here */
    uint32_t bk = 0, bi = 0;
    if (k >= 2) { bk = c.sfx_order; bi = c.sfx_index; }
    st->backoffs++;
    for (;;) {
        uint32_t w = draw_word(s, st, bk, bi);
        if (c.end == c.begin || find_cont(s, k, i, w) < 0) return w;
        st->rejections++;
    }
}

/* The context after emitting word w in context (k, i): the longest suffix of (context w) in the model
 * with at most N-1 words. */
static inline void next_ctx(const sb_lms *s, sb_lms_state *st, uint32_t w) {
    const uint32_t N1 = (uint32_t)s->order - 1;
    uint32_t k = st->ctx_order, i = st->ctx_index;
    if (k >= N1) { /* c w would be an N-gram: start from c's suffix */
        if (k >= 2) { const ctx_rec *c = &s->o[k].cx[i]; k = c->sfx_order; i = c->sfx_index; }
        else k = 0;
    }
    while (k >= 1) {
        int64_t j = find_cont(s, k, i, w);
        if (j >= 0) { st->ctx_order = k + 1; st->ctx_index = s->o[k + 1].ct[j].entry; return; }
        if (k >= 2) { const ctx_rec *c = &s->o[k].cx[i]; k = c->sfx_order; i = c->sfx_index; }
        else k = 0;
    }
    st->ctx_order = 1;
    st->ctx_index = s->uni_of_word[w];
}

static inline uint32_t step(const sb_lms *s, sb_lms_state *st) {
    uint32_t w = draw_word(s, st, st->ctx_order, st->ctx_index);
    if (w == s->eos) {
        st->ctx_order = 1;
        st->ctx_index = s->uni_of_word[s->bos];
    } else if (s->order >= 2) {
        next_ctx(s, st, w);
    }
    return w;
}

int sb_lms_draw_ids(const sb_lms *s, sb_lms_state *st, uint32_t *out, size_t n) {
    if (!s || !s->ready || s->order < 2) return SB_EINVAL;
    for (size_t j = 0; j < n; ++j) {
        uint32_t w = step(s, st);
        out[j] = w;
        if (w == s->eos) st->sentences++; else st->words++;
    }
    return SB_OK;
}

int sb_lms_generate(const sb_lms *s, sb_lms_state *st, uint64_t max_words, const char *vocab,
                    const uint64_t *vocab_off, char *buf, size_t cap, size_t *written) {
    if (!s || !s->ready || s->order < 2 || cap < 4096) return SB_EINVAL;
    size_t w = 0;
    uint64_t maxlen = 0;
    for (uint32_t v = 0; v < s->vocab; ++v) {
        uint64_t l = vocab_off[v + 1] - vocab_off[v];
        if (l > maxlen) maxlen = l;
    }
    if (maxlen + 2 > cap) return SB_EINVAL;
    while (st->words < max_words && w + maxlen + 2 <= cap) {
        uint32_t t = step(s, st);
        if (t == s->eos) {
            buf[w++] = '\n';
            st->sentences++;
            st->line_open = 0;
            continue;
        }
        if (st->line_open) buf[w++] = ' ';
        size_t len = (size_t)(vocab_off[t + 1] - vocab_off[t]);
        memcpy(buf + w, vocab + vocab_off[t], len);
        w += len;
        st->line_open = 1;
        st->words++;
    }
    if (st->words >= max_words && st->line_open) {
        buf[w++] = '\n';
        st->sentences++;
        st->line_open = 0;
        st->ctx_order = 1;
        st->ctx_index = s->uni_of_word[s->bos];
    }
    *written = w;
    return SB_OK;
}
