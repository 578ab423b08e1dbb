/* lmprobe.c - see lmprobe.h. Query semantics follow KenLM's GenericModel::FullScore
 * (ScoreExceptBackoff + ResumeScore + back-off charging), as summarised in
 * shared/notes/kenlm-query-semantics.md; the automaton queue follows Mokry 2016, section 3.2. */
#include "lm/lmprobe.h"
#include "util/probing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    float prob;     /* sign bit set = independent left */
    float backoff;  /* -0.0 = never context (no right extension) */
} entry_t;

typedef struct {
    float prob;
    float backoff;
} unigram_t;

/* one order's n-grams: the project's probing table (probing.h), multiply-high ideal buckets */
typedef struct {
    sb_probing p;
    uint64_t limit;   /* most entries allowed (blanks included) */
    uint64_t group;   /* ~0: probe from the ideal bucket (KenLM); ~3: from the first bucket of its 64-byte line */
} table_t;

struct sb_lm {
    int order;
    int loaded;       /* orders loaded so far */
    uint32_t vocab;
    uint32_t bos, eos, unk;
    int specials_set;
    unigram_t *uni;
    size_t uni_bytes;
    int uni_huge;
    table_t t[SB_LM_MAX_ORDER + 1]; /* t[n] for order n >= 2 */
    uint64_t blanks;
};

/* ---- float sign-bit flags (KenLM blank.hh) ---- */
static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ffrom(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static const uint32_t SIGN = 0x80000000u;
static inline int has_extension(float backoff) { return fbits(backoff) != SIGN; } /* not -0.0 */
static inline void set_extension(float *backoff) { if (fbits(*backoff) == SIGN) *backoff = 0.0f; }
static inline float prob_of(float stored) { return ffrom(fbits(stored) | SIGN); }
static inline int independent_left(float stored) { return (fbits(stored) & SIGN) != 0; }
static inline void set_sign(float *f) { *f = ffrom(fbits(*f) | SIGN); }
static inline void clear_sign(float *f) { *f = ffrom(fbits(*f) & ~SIGN); }

/* ---- hashing (KenLM's CombineWordHash) ---- */
static inline uint64_t combine(uint64_t current, uint32_t next) {
    return (current * 8978948897894561157ULL) ^ ((uint64_t)(1 + next) * 17894857484156487943ULL);
}
static inline uint64_t nonzero(uint64_t k) { return k ? k : 0x9E3779B97F4A7C15ULL; }
enum { POLICY = SB_PROBING_MULHI };
static inline entry_t *entries_of(const table_t *t) { return t->p.entries; }
static inline uint64_t bucket_of(const table_t *t, uint64_t key) {
    return sb_probing_ideal(&t->p, key, POLICY) & t->group;
}
static inline entry_t *find(const table_t *t, uint64_t key) {
    uint64_t stop;
    return sb_probing_find_from(&t->p, sizeof(entry_t), key, bucket_of(t, key), &stop);
}
static inline entry_t *find_from(const table_t *t, uint64_t key, uint64_t b) {
    uint64_t stop;
    return sb_probing_find_from(&t->p, sizeof(entry_t), key, b, &stop);
}

/* insert (key must be absent: SB_EINVAL, *where = its entry); SB_EFULL past the table's limit */
static int insert(table_t *t, uint64_t key, float prob, float backoff, entry_t **where) {
    int found;
    entry_t *e = sb_probing_slot(&t->p, sizeof(entry_t), key, bucket_of(t, key), t->limit, &found);
    if (!e) return SB_EFULL;
    if (where) *where = e;
    if (found) return SB_EINVAL;
    e->key = key;
    e->prob = prob;
    e->backoff = backoff;
    t->p.size++;
    return SB_OK;
}

static uint64_t buckets_for(uint64_t count, double multiplier) {
    uint64_t b = (uint64_t)((double)count * multiplier) + 2;
    if (b < count + 2) b = count + 2;
    return b;
}

uint64_t sb_lm_plan_bytes(int order, const uint64_t *counts, double multiplier) {
    /* (line-aligned tables round their buckets up to a multiple of 4: at most 3 more per order) */
    if (order < 1 || order > SB_LM_MAX_ORDER || !(multiplier > 1.0)) return 0;
    uint64_t total = (counts[0] + 1) * sizeof(unigram_t);
    for (int n = 2; n <= order; n++) total += buckets_for(counts[n - 1], multiplier) * sizeof(entry_t);
    return total;
}

int sb_lm_new(int order, const uint64_t *counts, double multiplier, int line_aligned, sb_lm **out) {
    *out = NULL;
    if (order < 1 || order > SB_LM_MAX_ORDER || !(multiplier > 1.0)) return SB_EINVAL;
    if (counts[0] == 0 || counts[0] >= SB_LM_SENTENCE_MARK) return SB_EINVAL;
    sb_lm *m = calloc(1, sizeof(*m));
    if (!m) return SB_ENOMEM;
    m->order = order;
    m->vocab = (uint32_t)counts[0];
    m->uni_bytes = (size_t)counts[0] * sizeof(unigram_t);
    m->uni = sb_huge_alloc(m->uni_bytes, &m->uni_huge);
    if (!m->uni) { free(m); return SB_ENOMEM; }
    for (int n = 2; n <= order; n++) {
        table_t *t = &m->t[n];
        uint64_t buckets = buckets_for(counts[n - 1], multiplier);
        if (line_aligned) buckets = (buckets + 3) & ~(uint64_t)3; /* whole lines of 4 entries */
        t->group = line_aligned ? ~(uint64_t)3 : ~(uint64_t)0;
        t->limit = buckets - 1 - buckets / 20; /* keep >= 5% empty */
        if (t->limit < counts[n - 1]) t->limit = counts[n - 1];
        int rc = sb_probing_init(&t->p, buckets, sizeof(entry_t), POLICY, 1);
        if (rc != SB_OK) { sb_lm_free(m); return rc; }
    }
    *out = m;
    return SB_OK;
}

void sb_lm_free(sb_lm *m) {
    if (!m) return;
    sb_huge_free(m->uni, m->uni_bytes);
    for (int n = 2; n <= SB_LM_MAX_ORDER; n++) sb_probing_release(&m->t[n].p);
    free(m);
}

uint64_t sb_lm_bytes(const sb_lm *m) {
    uint64_t b = m->uni_bytes;
    for (int n = 2; n <= m->order; n++) b += m->t[n].p.bytes;
    return b;
}
int sb_lm_order(const sb_lm *m) { return m->order; }
uint64_t sb_lm_blanks(const sb_lm *m) { return m->blanks; }
int sb_lm_uses_huge_pages(const sb_lm *m) {
    int h = m->uni_huge;
    for (int n = 2; n <= m->order; n++) h |= m->t[n].p.huge;
    return h;
}

int sb_lm_set_specials(sb_lm *m, uint32_t bos, uint32_t eos, uint32_t unk) {
    if (bos >= m->vocab || eos >= m->vocab || unk >= m->vocab) return SB_EINVAL;
    m->bos = bos;
    m->eos = eos;
    m->unk = unk;
    m->specials_set = 1;
    return SB_OK;
}

/* KenLM's FixSRI: the longest existing suffix of an n-gram was found at order `found` (1 =
 * unigram) with stored prob `lower` (sign cleared = its magnitude); insert blanks for the
 * missing suffixes of orders found+1 .. n-1. rev[0..n) is the n-gram reversed (w_n first),
 * keys[j] the key of the suffix of order j+1 (j >= 1). */
static int fix_sri(sb_lm *m, int found, float lower, int n, const uint64_t *keys, const uint32_t *rev) {
    float blank_prob = lower; /* positive: the negative of a log prob, sign bit off = extends left */
    int fix = found + 1;      /* order of the first blank */
    uint64_t ctx_hash = 0;
    if (fix == 2) {
        /* bigram blank (w_{n-1} w_n): p(w_n) + b(w_{n-1}) */
        unigram_t *u = &m->uni[rev[1]];
        blank_prob -= u->backoff;
        set_extension(&u->backoff);
        int rc = insert(&m->t[2], keys[1], blank_prob, -0.0f, NULL);
        if (rc) return rc;
        m->blanks++;
        fix = 3;
        ctx_hash = combine(rev[1], rev[2]);
    } else {
        ctx_hash = combine(rev[1], rev[2]);
        for (int i = 3; i < fix; i++) ctx_hash = combine(ctx_hash, rev[i]);
    }
    for (; fix <= n - 1; fix++) {
        /* blank of order `fix`; its context (w_{n-fix+1} .. w_{n-1}) has order fix-1 */
        entry_t *c = find(&m->t[fix - 1], nonzero(ctx_hash));
        if (c) {
            set_extension(&c->backoff);
            blank_prob -= c->backoff;
        }
        int rc = insert(&m->t[fix], keys[fix - 1], blank_prob, -0.0f, NULL);
        if (rc) return rc;
        m->blanks++;
        ctx_hash = combine(ctx_hash, rev[fix]);
    }
    return SB_OK;
}

int sb_lm_load_order(sb_lm *m, int n, const uint32_t *ids, const float *prob, const float *backoff,
                     uint64_t count, uint64_t *bad_row) {
    *bad_row = 0;
    if (n != m->loaded + 1 || n > m->order) return SB_EINVAL;
    if (n == 1) {
        if (count != m->vocab) return SB_EINVAL;
        for (uint64_t i = 0; i < count; i++) {
            uint32_t w = ids[i];
            if (w >= m->vocab) { *bad_row = i; return SB_EINVAL; }
            float p = prob[i], b = backoff[i];
            set_sign(&p);                 /* independent left until a bigram ends with it */
            if (b == 0.0f) b = -0.0f;     /* missing / zero back-off: no extension yet */
            m->uni[w].prob = p;
            m->uni[w].backoff = b;
        }
        m->loaded = 1;
        return SB_OK;
    }
    table_t *t = &m->t[n];
    uint64_t keys[SB_LM_MAX_ORDER];
    uint32_t rev[SB_LM_MAX_ORDER];
    for (uint64_t i = 0; i < count; i++) {
        const uint32_t *g = ids + i * (uint64_t)n;
        for (int j = 0; j < n; j++) {
            rev[j] = g[n - 1 - j];
            if (rev[j] >= m->vocab) { *bad_row = i; return SB_EINVAL; }
        }
        /* keys[j] = key of the suffix of order j+1 (j >= 1) */
        uint64_t h = rev[0];
        for (int j = 1; j < n; j++) { h = combine(h, rev[j]); keys[j] = nonzero(h); }
        float p = prob[i], b = backoff[i];
        set_sign(&p);
        if (b == 0.0f) b = -0.0f;
        int rc = insert(t, keys[n - 1], p, b, NULL);
        if (rc == SB_EINVAL) { *bad_row = i; return SB_EFORMAT; } /* duplicate (or a blank made it) */
        if (rc) { *bad_row = i; return rc; }
        /* the longest existing right-aligned suffix extends left */
        int found = 0;
        float lower = 0.0f;
        for (int o = n - 1; o >= 1; o--) {
            if (o == 1) {
                clear_sign(&m->uni[rev[0]].prob);
                lower = m->uni[rev[0]].prob;
                found = 1;
                break;
            }
            entry_t *e = find(&m->t[o], keys[o - 1]);
            if (e) {
                clear_sign(&e->prob);
                lower = e->prob;
                found = o;
                break;
            }
        }
        if (found != n - 1) {
            rc = fix_sri(m, found, lower, n, keys, rev);
            if (rc) { *bad_row = i; return rc; }
        }
        /* activate the context (w_1 .. w_{n-1}) */
        if (n == 2) {
            set_extension(&m->uni[rev[1]].backoff);
        } else {
            uint64_t c = rev[1];
            for (int j = 2; j < n; j++) c = combine(c, rev[j]);
            entry_t *e = find(&m->t[n - 1], nonzero(c));
            if (!e) { *bad_row = i; return SB_ENOTFOUND; }
            set_extension(&e->backoff);
        }
    }
    m->loaded = n;
    return SB_OK;
}

void sb_lm_begin_state(const sb_lm *m, sb_lm_state *out) {
    memset(out, 0, sizeof(*out));
    out->length = 1;
    out->words[0] = m->bos;
    out->backoff[0] = m->uni[m->bos].backoff;
}

/* ---- sequential: KenLM FullScore ---- */
static inline float full_score(const sb_lm *m, const sb_lm_state *in, uint32_t w, sb_lm_state *out,
                               int *ngram_length) {
    const unigram_t *u = &m->uni[w];
    float prob = prob_of(u->prob);
    int indep = independent_left(u->prob);
    int nlen = 1;
    out->backoff[0] = u->backoff;
    out->length = has_extension(u->backoff) ? 1 : 0;
    out->words[0] = w;
    const int in_len = in->length;
    if (in_len > 0) {
        uint64_t h = w;
        for (int k = 0;; k++) {
            if (k == in_len || indep || k >= m->order - 1) break;
            h = combine(h, in->words[k]);
            if (k == m->order - 2) {
                const entry_t *e = find(&m->t[m->order], nonzero(h));
                if (e) { prob = e->prob; nlen = m->order; }
                break;
            }
            const entry_t *e = find(&m->t[k + 2], nonzero(h));
            if (!e) break;
            out->backoff[k + 1] = e->backoff;
            prob = prob_of(e->prob);
            indep = independent_left(e->prob);
            nlen = k + 2;
            if (has_extension(e->backoff)) out->length = k + 2;
        }
        for (int i = 1; i < out->length; i++) out->words[i] = in->words[i - 1];
    }
    for (int i = nlen - 1; i < in_len; i++) prob += in->backoff[i];
    *ngram_length = nlen;
    return prob;
}

/* ---- every order's bucket of a query requested at once (flag SB_LM_PREFETCH_ALL) ----
 * The keys of a query's n-grams depend only on its words, not on what the lookups find, so all of them can be
 * computed when the query starts and every order's bucket requested at once; the lookups that follow (the same
 * walk as without the flag, so the same scores bit for bit) then find their lines arriving or arrived instead
 * of each waiting for the previous one. Buckets of n-grams the walk never reaches are fetched for nothing.
 * ctx[0], ctx[step], ... are the context words, most recent first (the mark bit of <s> is ignored);
 * chain_nonzero: the next key extends the previous *stored* key (the automaton's chain) rather than the raw
 * hash (full_score's); the two differ only for a hash of exactly 0. */
static inline void prefetch_orders(const sb_lm *m, uint32_t w, const uint32_t *ctx, ptrdiff_t step, int reach,
                                   int chain_nonzero) {
    uint64_t h = w;
    for (int k = 0; k < reach; k++) {
        h = combine(h, ctx[k * step] & ~SB_LM_SENTENCE_MARK);
        uint64_t key = nonzero(h);
        if (chain_nonzero) h = key;
        const table_t *t = &m->t[k + 2];
        SB_PREFETCH(&((const entry_t *)entries_of(t))[bucket_of(t, key)]);
    }
}

float sb_lm_score(const sb_lm *m, const sb_lm_state *in, uint32_t word, sb_lm_state *out, int *ngram_length) {
    if (word >= m->vocab) word = m->unk;
    return full_score(m, in, word, out, ngram_length);
}

static int score_sequential(const sb_lm *m, const uint32_t *tok, uint64_t n, int prefetch, float *probs,
                            uint8_t *lengths, uint64_t *queries) {
    sb_lm_state st[2];
    int cur = 0;
    sb_lm_begin_state(m, &st[0]);
    uint64_t q = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t t = tok[i];
        if (t & SB_LM_SENTENCE_MARK) { sb_lm_begin_state(m, &st[cur]); continue; }
        int nlen;
        if (prefetch) {
            const sb_lm_state *in = &st[cur];
            prefetch_orders(m, t, in->words, 1, in->length < m->order - 1 ? in->length : m->order - 1, 0);
        }
        probs[q] = full_score(m, &st[cur], t, &st[cur ^ 1], &nlen);
        if (lengths) lengths[q] = (uint8_t)nlen;
        q++;
        cur ^= 1;
    }
    *queries = q;
    return SB_OK;
}

/* ---- the automaton queue (Mokry 2016, section 3.2) ----
 * Each automaton owns one query (one word position of the stream) and has at most one memory
 * access in flight. Assigning a query prefetches its unigram; each STEP looks up the n-gram
 * prefetched by the previous STEP and, if a longer one can still match, computes the key of the
 * (n+1)-gram and prefetches its bucket. The context words are the stream's preceding tokens;
 * how many of them may be used, and the back-offs to charge at the end, come from the
 * predecessor (the previous query) through a small ring of per-position out-states: the
 * predecessor publishes its out-state length as it grows (Mokry: "incrementing the successor's
 * notion of this number after every successful lookup") and marks it final when its walk ends.
 * A successor that needs more context than its unfinished predecessor has published waits
 * (its STEP does nothing); a successor that finishes its walk before its predecessor hands its
 * pending score over, and the predecessor charges the back-offs when it finishes. */
enum { RING = 1024 }; /* stream positions whose state is kept; the dispatcher never runs further than
                       * RING - 2 positions ahead of the oldest query still in flight (see score_automata), so a
                       * long run of queries that finish at once (unknown words) cannot overwrite the state a
                       * waiting query still needs, whatever the run's length */

typedef struct {
    uint64_t tag;      /* stream position + 1 that owns this slot (0 = none) */
    int length;        /* out-state length so far */
    int done;          /* out-state final */
    float backoff[SB_LM_MAX_ORDER];
    uint8_t pad[16];   /* 64 bytes: a ring slot is indexed by a shift and owns its line */
} hist_t;

typedef struct {
    uint64_t tag;      /* stream position + 1 of a query waiting for its predecessor */
    uint64_t q;
    float prob;
    int nlen;
} pend_t;

typedef struct {
    hist_t *me;         /* this position's out-state (ring slot) */
    const hist_t *pred; /* the predecessor's */
    const uint32_t *ctx;/* the stream before this position: context word k at ctx[-k] (k = 0: the previous) */
    uint64_t pos;       /* stream position */
    uint64_t q;         /* query index (output slot) */
    uint64_t key;       /* key of the n-gram to look up next (before the first lookup: the word) */
    const entry_t *bucket;
    const table_t *table;
    float prob;
    int k;              /* context words in the next lookup */
    int nlen;
    int avail;          /* context words before the sentence start, capped at order-1 */
    int indep;
    int busy;
} automaton_t;

typedef struct {
    const sb_lm *m;
    const uint32_t *tok;
    float *probs;
    uint8_t *lengths;
    hist_t *hist;
    pend_t *pend;
    int prefetch_all;   /* SB_LM_PREFETCH_ALL: every order's bucket requested when the query is assigned */
    const table_t *tables; /* m->t */
} aq_ctx;

static inline void finish_query(aq_ctx *c, uint64_t q, float prob, int nlen, const hist_t *pred) {
    for (int i = nlen - 1; i < pred->length; i++) prob += pred->backoff[i];
    c->probs[q] = prob;
    if (c->lengths) c->lengths[q] = (uint8_t)nlen;
}

/* the walk is over: publish the out-state, charge or hand over, resolve a waiting successor */
static inline void complete(aq_ctx *c, automaton_t *a) {
    hist_t *me = a->me;
    me->done = 1;
    const hist_t *pred = a->pred;
    if (pred->done) {
        finish_query(c, a->q, a->prob, a->nlen, pred);
    } else {
        pend_t *p = &c->pend[a->pos % RING];
        p->tag = a->pos + 1;
        p->q = a->q;
        p->prob = a->prob;
        p->nlen = a->nlen;
    }
    pend_t *succ = &c->pend[(a->pos + 1) % RING];
    if (succ->tag == a->pos + 2) {
        finish_query(c, succ->q, succ->prob, succ->nlen, me);
        succ->tag = 0;
    }
    a->busy = 0;
}

/* after a lookup: the walk ends (returns 1), or the next n-gram's key is computed and its bucket prefetched */
static inline int advance(aq_ctx *c, automaton_t *a) {
    if (a->indep || a->k >= a->avail) { complete(c, a); return 1; }
    a->key = nonzero(combine(a->key, a->ctx[-(ptrdiff_t)a->k] & ~SB_LM_SENTENCE_MARK));
    a->k++;
    const table_t *t = &c->tables[a->k + 1];
    a->table = t;
    a->bucket = &entries_of(t)[bucket_of(t, a->key)];
    SB_PREFETCH(a->bucket);
    return 0;
}

/* the first STEP, run when the query is assigned (unigrams are direct-indexed and small: no lap of the queue
 * for them): the unigram, the bigram's bucket prefetched; returns 1 when the query is already done */
static inline int start(aq_ctx *c, automaton_t *a) {
    const unigram_t *u = &c->m->uni[a->key];
    hist_t *me = a->me;
    a->prob = prob_of(u->prob);
    a->indep = independent_left(u->prob);
    a->nlen = 1;
    me->backoff[0] = u->backoff;
    me->length = has_extension(u->backoff) ? 1 : 0;
    if (c->prefetch_all && !a->indep) prefetch_orders(c->m, (uint32_t)a->key, a->ctx, -1, a->avail, 1);
    return advance(c, a);
}

/* one STEP (k >= 1): the n-gram prefetched by the previous STEP; returns 1 when the automaton finished */
static inline int step(aq_ctx *c, automaton_t *a) {
    const sb_lm *m = c->m;
    const hist_t *pred = a->pred;
    if (a->k > pred->length) {
        if (pred->done) { complete(c, a); return 1; }
        return 0; /* wait: the predecessor has not yet published that much context */
    }
    const entry_t *e = find_from(a->table, a->key, (uint64_t)(a->bucket - entries_of(a->table)));
    if (a->k == m->order - 1) {
        if (e) { a->prob = e->prob; a->nlen = m->order; }
        complete(c, a);
        return 1;
    }
    if (!e) { complete(c, a); return 1; }
    hist_t *me = a->me;
    me->backoff[a->k] = e->backoff;
    a->prob = prob_of(e->prob);
    a->indep = independent_left(e->prob);
    a->nlen = a->k + 1;
    if (has_extension(e->backoff)) me->length = a->k + 1;
    return advance(c, a);
}

static int score_automata(const sb_lm *m, const uint32_t *tok, uint64_t n, int Q, int prefetch_all,
                          float *probs, uint8_t *lengths, uint64_t *queries) {
    hist_t *hist = calloc(RING, sizeof(hist_t));
    pend_t *pend = calloc(RING, sizeof(pend_t));
    if (!hist || !pend) { free(hist); free(pend); return SB_ENOMEM; }
    aq_ctx c = {m, tok, probs, lengths, hist, pend, prefetch_all, m->t};
    automaton_t aq[SB_LM_MAX_QUEUE];
    memset(aq, 0, sizeof(aq));
    const int cap = m->order - 1;
    uint64_t next = 0, q = 0, sent_start = 0;
    int busy = 0, rc = SB_OK;
    automaton_t *a = aq, *const aq_end = aq + Q;
    /* a stream that does not start with a sentence mark starts from <s> anyway */
    int have_start = 0;
    uint64_t oldest = 0; /* a lower bound of the oldest in-flight query's position */
    for (;;) {
        if (a->busy) {
            if (step(&c, a)) busy--;
        }
        while (!a->busy && next < n) {
            /* stay within RING - 2 positions of the oldest query in flight (its predecessor's state and
             * every pending hand-over between must survive); refresh the bound only when it binds */
            if (busy && next - oldest >= RING - 2) {
                oldest = next;
                for (int i = 0; i < Q; i++)
                    if (aq[i].busy && aq[i].pos < oldest) oldest = aq[i].pos;
                if (next - oldest >= RING - 2) break;  /* let the queue drain a little */
            }
            /* assign the next query, publishing <s> states for the sentence marks passed on the way */
            if (tok[next] & SB_LM_SENTENCE_MARK) {  /* one mark at a time, each under the bound above */
                hist_t *h = &hist[next % RING];
                if (h->tag && !h->done) { rc = SB_EFULL; goto out; }
                h->tag = next + 1;
                h->done = 1;
                h->length = 1;
                h->backoff[0] = m->uni[m->bos].backoff;
                sent_start = next;
                have_start = 1;
                next++;
                continue;
            }
            {
                if (!have_start) { rc = SB_EINVAL; goto out; }
                hist_t *h = &hist[next % RING];
                if ((h->tag && !h->done) || pend[next % RING].tag) { rc = SB_EFULL; goto out; }
                h->tag = next + 1;
                h->done = 0;
                h->length = 0;
                a->pos = next;
                a->me = h;
                a->pred = &hist[(next - 1) % RING];
                a->ctx = &tok[next - 1];
                a->q = q++;
                a->k = 0;
                a->key = tok[next];
                uint64_t av = next - sent_start;
                a->avail = av > (uint64_t)cap ? cap : (int)av;
                a->busy = 1;
                busy++;
                next++;
                if (start(&c, a)) busy--;
            }
        }
        if (++a == aq_end) a = aq;
        if (!busy && next >= n) break;
    }
    *queries = q;
out:
    free(hist);
    free(pend);
    return rc;
}

int sb_lm_score_stream(const sb_lm *m, const uint32_t *tokens, uint64_t n_tokens, int queue_size, int flags,
                       float *probs, uint8_t *lengths, double *log10_sum, uint64_t *queries,
                       uint64_t *elapsed_ns) {
    if (!m->specials_set || m->loaded != m->order) return SB_EINVAL;
    if (queue_size < 0 || queue_size > SB_LM_MAX_QUEUE) return SB_EINVAL;
    if (flags & ~SB_LM_PREFETCH_ALL) return SB_EINVAL;
    /* validate once, outside the timed loop */
    for (uint64_t i = 0; i < n_tokens; i++) {
        uint32_t t = tokens[i] & ~SB_LM_SENTENCE_MARK;
        if (t >= m->vocab) return SB_EINVAL;
        if ((tokens[i] & SB_LM_SENTENCE_MARK) && t != m->bos) return SB_EINVAL;
    }
    if (n_tokens && !(tokens[0] & SB_LM_SENTENCE_MARK)) return SB_EINVAL;
    uint64_t t0 = sb_now_ns();
    const int pf = (flags & SB_LM_PREFETCH_ALL) != 0;
    int rc = queue_size == 0 ? score_sequential(m, tokens, n_tokens, pf, probs, lengths, queries)
                             : score_automata(m, tokens, n_tokens, queue_size, pf, probs, lengths, queries);
    if (rc) return rc;
    double sum = 0.0;
    for (uint64_t i = 0; i < *queries; i++) sum += probs[i];
    *elapsed_ns = sb_now_ns() - t0;
    *log10_sum = sum;
    return SB_OK;
}

/* ---- state-in/state-out batches (for decoders): n independent (state, word) queries ----
 * queue_size 0: one FullScore after another; 1..SB_LM_MAX_QUEUE: Mokry's automaton queue over the batch,
 * each automaton walking one query up its context with the next n-gram's bucket prefetched. Queries are
 * independent, so no hand-over between automata is needed. Results equal sb_lm_score's, bit for bit. */
typedef struct {
    uint64_t i;          /* query */
    uint64_t h;          /* hash of the words so far (KenLM's CombineWordHash chain) */
    const entry_t *bucket;
    const table_t *table;
    float prob;
    int k, indep, nlen, busy;
} bq_t;

static inline void bq_finish(const sb_lm_state *in, sb_lm_state *out, float prob, int nlen, float *p,
                             uint8_t *len) {
    for (int i = 1; i < out->length; i++) out->words[i] = in->words[i - 1];
    for (int i = nlen - 1; i < in->length; i++) prob += in->backoff[i];
    *p = prob;
    if (len) *len = (uint8_t)nlen;
}

/* 1 when the query is finished; else the next lookup's bucket is prefetched */
static inline int bq_advance(const sb_lm *m, bq_t *a, const sb_lm_state *in, sb_lm_state *out, float *probs,
                             uint8_t *lengths) {
    if (a->k == in->length || a->indep || a->k >= m->order - 1) {
        bq_finish(in, out, a->prob, a->nlen, &probs[a->i], lengths ? &lengths[a->i] : NULL);
        return 1;
    }
    a->h = combine(a->h, in->words[a->k]);
    a->table = &m->t[a->k + 2];
    a->bucket = &entries_of(a->table)[bucket_of(a->table, nonzero(a->h))];
    SB_PREFETCH(a->bucket);
    return 0;
}

static inline int bq_begin(const sb_lm *m, bq_t *a, uint64_t i, const sb_lm_state *in, uint32_t w,
                           sb_lm_state *out, float *probs, uint8_t *lengths) {
    if (w >= m->vocab) w = m->unk;
    const unigram_t *u = &m->uni[w];
    a->i = i;
    a->prob = prob_of(u->prob);
    a->indep = independent_left(u->prob);
    a->nlen = 1;
    a->k = 0;
    a->h = w;
    out->backoff[0] = u->backoff;
    out->length = has_extension(u->backoff) ? 1 : 0;
    out->words[0] = w;
    return bq_advance(m, a, in, out, probs, lengths);
}

static inline int bq_step(const sb_lm *m, bq_t *a, const sb_lm_state *in, sb_lm_state *out, float *probs,
                          uint8_t *lengths) {
    const entry_t *e = find_from(a->table, nonzero(a->h), (uint64_t)(a->bucket - entries_of(a->table)));
    if (a->k == m->order - 2) {
        if (e) { a->prob = e->prob; a->nlen = m->order; }
        bq_finish(in, out, a->prob, a->nlen, &probs[a->i], lengths ? &lengths[a->i] : NULL);
        return 1;
    }
    if (!e) {
        bq_finish(in, out, a->prob, a->nlen, &probs[a->i], lengths ? &lengths[a->i] : NULL);
        return 1;
    }
    out->backoff[a->k + 1] = e->backoff;
    a->prob = prob_of(e->prob);
    a->indep = independent_left(e->prob);
    a->nlen = a->k + 2;
    if (has_extension(e->backoff)) out->length = a->k + 2;
    a->k++;
    return bq_advance(m, a, in, out, probs, lengths);
}

int sb_lm_score_batch(const sb_lm *m, const sb_lm_state *in, const uint32_t *words, uint64_t n, int queue_size,
                      sb_lm_state *out, float *probs, uint8_t *lengths) {
    if (!m->specials_set || m->loaded != m->order) return SB_EINVAL;
    if (queue_size < 0 || queue_size > SB_LM_MAX_QUEUE) return SB_EINVAL;
    for (uint64_t i = 0; i < n; i++)
        if (in[i].length < 0 || in[i].length > m->order - 1) return SB_EINVAL;
    if (queue_size == 0) {
        for (uint64_t i = 0; i < n; i++) {
            int nlen;
            probs[i] = sb_lm_score(m, &in[i], words[i], &out[i], &nlen);
            if (lengths) lengths[i] = (uint8_t)nlen;
        }
        return SB_OK;
    }
    bq_t aq[SB_LM_MAX_QUEUE];
    memset(aq, 0, sizeof aq);
    uint64_t next = 0;
    int busy = 0;
    for (int cur = 0;; cur = cur + 1 == queue_size ? 0 : cur + 1) {
        bq_t *a = &aq[cur];
        if (a->busy && bq_step(m, a, &in[a->i], &out[a->i], probs, lengths)) { a->busy = 0; busy--; }
        while (!a->busy && next < n) {
            uint64_t i = next++;
            if (!bq_begin(m, a, i, &in[i], words[i], &out[i], probs, lengths)) { a->busy = 1; busy++; }
        }
        if (!busy && next >= n) break;
    }
    return SB_OK;
}
