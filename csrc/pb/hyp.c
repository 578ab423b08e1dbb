/* pb/hyp.c - see hyp.h. */
#include "pb/hyp.h"

#include <math.h>
#include <string.h>

void sb_pb_hyp_init(const sb_pb_sentence *s, sb_pb_hyp *h) {
    memset(h, 0, sizeof *h);
    sb_lm_begin_state(s->model->sc.lm, &h->lm);
    h->start = h->end = -1;
    h->total = s->n ? s->fc[s->n - 1] : 0.0;
}

/* lowest set bit index of a non-zero word */
static inline int lowest_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int i = 0;
    while (!(x & 1u)) { x >>= 1; i++; }
    return i;
#endif
}

/* first position >= i whose coverage bit equals `covered` (n if none) */
static inline int next_with(const uint64_t *cov, int i, int n, int covered) {
    while (i < n) {
        int w = i >> 6;
        uint64_t bits = covered ? cov[w] : ~cov[w];
        bits &= ~(uint64_t)0 << (i & 63);
        if (bits) {
            int k = (w << 6) + lowest_bit(bits);
            return k < n ? k : n;
        }
        i = (w + 1) << 6;
    }
    return n;
}

double sb_pb_estimate(const sb_pb_sentence *s, const uint64_t *cov) {
    double est = 0;
    const int n = s->n;
    int i = next_with(cov, 0, n, 0);
    while (i < n) {
        int j = next_with(cov, i, n, 1);   /* gap [i, j-1] */
        est += s->fc[i * n + (j - 1)];
        i = next_with(cov, j, n, 0);
    }
    return est;
}

int sb_pb_first_gap(const sb_pb_sentence *s, const uint64_t *cov) { return next_with(cov, 0, s->n, 0); }

static int distortion_distance(int prev_end, int start) {
    int d = prev_end < 0 ? start : prev_end - start + 1;
    return d < 0 ? -d : d;
}

int sb_pb_distortion_ok(const sb_pb_hyp *h, int start, int end, int gap, int limit) {
    if (limit < 0) return 1;
    if (distortion_distance(h->end, start) > limit) return 0;
    if (gap != start && distortion_distance(end, gap) > limit) return 0;
    return 1;
}

/* orientation of [start, end] after [pstart, pend]: 0 monotone, 1 swap, 2 discontinuous */
static int orientation(int pstart, int pend, int start, int end) {
    if (pend < 0) return start == 0 ? 0 : 2;
    if (start == pend + 1) return 0;
    if (pstart == end + 1) return 1;
    return 2;
}

int sb_pb_orientation(int pstart, int pend, int start, int end) { return orientation(pstart, pend, start, end); }

/* the extension's score without the LM of the first order-1 words (rescored in context) and </s> */
static inline double score_without_context_lm(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o,
                                              int start, int end) {
    const double *w = s->model->sc.w;
    double score = h->score + o->fixed;
    score += w[SB_PB_F_DIST] * -(double)distortion_distance(h->end, start);
    int ori = orientation(h->start, h->end, start, end);
    score += w[SB_PB_F_RO + ori] * o->ro[ori];
    if (h->opt) score += w[SB_PB_F_RO + 3 + ori] * h->opt->ro[3 + ori];
    if (o->tgt_len >= s->model->sc.order) score += w[SB_PB_F_LM] * SB_PB_LN10 * o->lm_ngram;
    return score;
}

double sb_pb_extend_base(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end) {
    return score_without_context_lm(s, h, o, start, end);
}

double sb_pb_extend_bound(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                          double est) {
    /* log probabilities are <= 0: with a non-negative LM weight this bounds the total from above */
    if (s->model->sc.w[SB_PB_F_LM] < 0) return INFINITY;
    return score_without_context_lm(s, h, o, start, end) + est;
}

/* sb_pb_extend_nolm with its score (score_without_context_lm's) given */
static inline void extend_nolm_from(const sb_pb_hyp *h, const sb_pb_option *o, int start, int end, double est,
                                    double base, sb_pb_hyp *out) {
    out->prev = h;
    out->opt = o;
    out->arcs = NULL;
    out->next_arc = NULL;
    memcpy(out->cov, h->cov, sizeof out->cov);
    for (int i = start; i <= end; i++) sb_pb_cov_set(out->cov, i);
    out->ncov = (int16_t)(h->ncov + (end - start + 1));
    out->start = (int16_t)start;
    out->end = (int16_t)end;
    out->tgt_len = (int16_t)(h->tgt_len + o->tgt_len);
    out->lm.length = -1;  /* not scored yet */
    out->score = base;
    out->total = out->score + est;
}

void sb_pb_extend_nolm(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                       double est, sb_pb_hyp *out) {
    extend_nolm_from(h, o, start, end, est, score_without_context_lm(s, h, o, start, end), out);
}

static inline void extend_from(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                               double est, double base, sb_pb_hyp *out, _Atomic int *ph);

void sb_pb_extend(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end, double est,
                  sb_pb_hyp *out, _Atomic int *ph) {
    extend_from(s, h, o, start, end, est, score_without_context_lm(s, h, o, start, end), out, ph);
}

void sb_pb_extend_from(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                       double est, double base, sb_pb_hyp *out, _Atomic int *ph) {
    extend_from(s, h, o, start, end, est, base, out, ph);
}

static inline void extend_from(const sb_pb_sentence *s, const sb_pb_hyp *h, const sb_pb_option *o, int start, int end,
                               double est, double base, sb_pb_hyp *out, _Atomic int *ph) {
    const sb_pb_model *m = s->model;
    extend_nolm_from(h, o, start, end, est, base, out);
    sb_pb_phase(ph, SB_PB_PH_LM);
    /* LM: the first order-1 words in context; the rest as scored in the phrase (in the base score) */
    const uint32_t *words = sb_pb_option_words(s, o);
    int ctx = o->tgt_len < m->sc.order - 1 ? o->tgt_len : m->sc.order - 1;
    sb_lm_state st[2];
    const sb_lm_state *in = &h->lm;
    int nlen, cur = 0;
    double lm = 0;
    for (int k = 0; k < ctx; k++) {
        lm += sb_lm_score(m->sc.lm, in, sb_pb_lm_id(&m->sc, words[k]), &st[cur], &nlen);
        in = &st[cur];
        cur ^= 1;
    }
    out->lm = o->tgt_len > ctx ? o->end : *in;  /* tgt_len > ctx means tgt_len >= order */
    if (out->ncov == s->n) lm += sb_lm_score(m->sc.lm, &out->lm, m->eos, &st[cur], &nlen);
    out->score += m->sc.w[SB_PB_F_LM] * SB_PB_LN10 * lm;
    out->total = out->score + est;
    sb_pb_phase(ph, SB_PB_PH_SEARCH);
}

int sb_pb_lm_queries(const sb_pb_sentence *s, const sb_pb_hyp *h, uint32_t *words) {
    const sb_pb_model *m = s->model;
    const sb_pb_option *o = h->opt;
    const uint32_t *w = sb_pb_option_words(s, o);
    int ctx = o->tgt_len < m->sc.order - 1 ? o->tgt_len : m->sc.order - 1;
    int n = 0;
    for (int k = 0; k < ctx; k++) words[n++] = sb_pb_lm_id(&m->sc, w[k]);
    return n;
}

void sb_pb_set_lm_state(const sb_pb_sentence *s, sb_pb_hyp *h, const sb_lm_state *after_ctx) {
    const sb_pb_model *m = s->model;
    const sb_pb_option *o = h->opt;
    int ctx = o->tgt_len < m->sc.order - 1 ? o->tgt_len : m->sc.order - 1;
    h->lm = o->tgt_len > ctx ? o->end : *after_ctx;
}

void sb_pb_add_lm(const sb_pb_sentence *s, sb_pb_hyp *h, double lm_log10) {
    double est = h->total - h->score;
    h->score += s->model->sc.w[SB_PB_F_LM] * SB_PB_LN10 * lm_log10;
    h->total = h->score + est;
}


void sb_pb_score_lm_now(const sb_pb_sentence *s, sb_pb_hyp *h) {
    const sb_pb_model *m = s->model;
    uint32_t words[SB_LM_MAX_ORDER];
    int n = sb_pb_lm_queries(s, h, words);
    sb_lm_state st[2];
    const sb_lm_state *in = &h->prev->lm;
    int nlen, cur = 0;
    double lm = 0;
    for (int k = 0; k < n; k++) {
        lm += sb_lm_score(m->sc.lm, in, words[k], &st[cur], &nlen);
        in = &st[cur];
        cur ^= 1;
    }
    sb_pb_set_lm_state(s, h, in);
    /* summed as sb_pb_extend sums them, so that every mode gives the same score to the bit */
    if (h->ncov == s->n) lm += sb_lm_score(m->sc.lm, &h->lm, m->eos, &st[cur], &nlen);
    sb_pb_add_lm(s, h, lm);
}

static int lm_state_equal(const sb_lm_state *a, const sb_lm_state *b) {
    return a->length == b->length && memcmp(a->words, b->words, (size_t)a->length * sizeof(uint32_t)) == 0;
}

int sb_pb_hyp_equal(const sb_pb_hyp *a, const sb_pb_hyp *b, int forward) {
    if (a->end != b->end || (!(forward & SB_PB_RECOMB_END_ONLY) && a->start != b->start)) return 0;
    if (memcmp(a->cov, b->cov, sizeof a->cov) != 0) return 0;
    if (!lm_state_equal(&a->lm, &b->lm)) return 0;
    if ((forward & 1) && a->opt && b->opt && memcmp(a->opt->ro + 3, b->opt->ro + 3, 3 * sizeof(float)) != 0) return 0;
    return 1;
}

uint64_t sb_pb_hyp_hash(const sb_pb_hyp *h, int forward) {
    uint64_t x = (forward & SB_PB_RECOMB_END_ONLY ? 0 : (uint64_t)(uint16_t)h->start << 16) ^ (uint16_t)h->end
               ^ ((uint64_t)h->lm.length << 40);
    for (int i = 0; i < SB_PB_COVW; i++) x = (x ^ h->cov[i]) * 0x9E3779B97F4A7C15ULL, x ^= x >> 31;
    for (int i = 0; i < h->lm.length; i++) x = (x ^ h->lm.words[i]) * 0xff51afd7ed558ccdULL, x ^= x >> 29;
    if ((forward & 1) && h->opt) {
        uint32_t r[3];
        memcpy(r, h->opt->ro + 3, sizeof r);
        for (int i = 0; i < 3; i++) x = (x ^ r[i]) * 0xc4ceb9fe1a85ec53ULL, x ^= x >> 32;
    }
    return x;
}

double sb_pb_weighted(const sb_pb_model *m, const double *f) {
    double t = 0;
    for (int i = 0; i < SB_PB_NFEAT; i++) t += m->sc.w[i] * f[i];
    return t;
}

void sb_pb_path_features(const sb_pb_sentence *s, const sb_pb_hyp *h, double *f) {
    const sb_pb_model *m = s->model;
    const sb_pb_hyp *chain[SB_PB_MAX_WORDS + 1];
    int n = 0;
    for (const sb_pb_hyp *x = h; x && x->opt; x = x->prev) chain[n++] = x;
    for (int i = 0; i < SB_PB_NFEAT; i++) f[i] = 0;
    sb_lm_state st[2];
    sb_lm_begin_state(m->sc.lm, &st[0]);
    int cur = 0, nlen;
    double lm = 0;
    int pstart = -1, pend = -1;
    const sb_pb_option *prev = NULL;
    for (int i = n - 1; i >= 0; i--) {
        const sb_pb_hyp *x = chain[i];
        const sb_pb_option *o = x->opt;
        if (o->unknown) f[SB_PB_F_UNK] += -100.0;
        f[SB_PB_F_WP] -= o->tgt_len;
        f[SB_PB_F_PP] += 1;
        for (int k = 0; k < 4; k++) f[SB_PB_F_TM + k] += o->tm[k];
        f[SB_PB_F_DIST] -= distortion_distance(pend, x->start);
        int ori = orientation(pstart, pend, x->start, x->end);
        f[SB_PB_F_RO + ori] += o->ro[ori];
        if (prev) f[SB_PB_F_RO + 3 + ori] += prev->ro[3 + ori];
        const uint32_t *words = sb_pb_option_words(s, o);
        for (int k = 0; k < o->tgt_len; k++) {
            lm += sb_lm_score(m->sc.lm, &st[cur], sb_pb_lm_id(&m->sc, words[k]), &st[cur ^ 1], &nlen);
            cur ^= 1;
        }
        pstart = x->start;
        pend = x->end;
        prev = o;
    }
    lm += sb_lm_score(m->sc.lm, &st[cur], m->eos, &st[cur ^ 1], &nlen);
    f[SB_PB_F_LM] = lm * SB_PB_LN10;
}

