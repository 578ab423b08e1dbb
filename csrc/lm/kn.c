/* kn.c - see kn.h. Interpolated modified Kneser-Ney, lmplz's rules, written from the fact sheet. */
#define _GNU_SOURCE
#include "lm/kn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_UNK 0u
#define ID_BOS 1u
#define ID_EOS 2u

/* One table per order n: records of n word ids + a count (stride n+1), sorted by words (prefix order),
 * unique. After sb_kn_adjust the count of orders < N is the adjusted count. */
typedef struct {
    uint32_t *rec;    /* m * (n+1) */
    uint64_t m;
    uint32_t *sfx;    /* m: index of the suffix w2..wn in order n-1 (n >= 2) */
    float *prob;      /* m: interpolated probability (linear) */
    float *bow;       /* m: gamma as a context (linear), NaN when not a context */
} table_t;

struct sb_kn {
    int order;
    uint64_t chunk_tokens;
    uint32_t *tok;        /* pending tokens (whole sentences) */
    size_t ntok, captok;
    uint32_t vocab_size;
    int counted, adjusted_to, probs_done;
    table_t t[SB_KN_MAX_ORDER + 1];   /* t[1..order] */
    table_t prim[SB_KN_MAX_ORDER + 1]; /* <s>-prefixed n-grams of order n < N with raw counts */
    double D[SB_KN_MAX_ORDER + 1][4];
    /* lmplz quirk (AdjustCounts' final flush): the suffixes of the last highest-order window in suffix order
     * enter the counts-of-counts with their raw occurrence count instead of the adjusted count. */
    uint32_t last_words[SB_KN_MAX_ORDER];
    int last_k;
    uint64_t last_raw[SB_KN_MAX_ORDER + 1];
    int have_discounts;
    uint64_t bytes, peak;
};

/* ---------- memory accounting ---------- */
static void *kn_alloc(sb_kn *kn, size_t bytes) {
    if (bytes == 0) bytes = 1;
    void *p = malloc(bytes);
    if (p) {
        kn->bytes += bytes;
        if (kn->bytes > kn->peak) kn->peak = kn->bytes;
    }
    return p;
}
static void kn_release(sb_kn *kn, void *p, size_t bytes) {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    free(p);
    kn->bytes -= bytes;
}

static inline int cmp_words(const uint32_t *a, const uint32_t *b, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

/* LSD radix sort of m records of `stride` uint32s by their first `nkeys` words (lexicographic).
 * tmp has room for m records. Returns the buffer holding the result (a or tmp). */
static uint32_t *radix_sort(uint32_t *a, uint32_t *tmp, uint64_t m, int stride, int nkeys, uint64_t *hist) {
    uint32_t *src = a, *dst = tmp;
    for (int k = nkeys - 1; k >= 0; --k) {
        for (int half = 0; half < 2; ++half) {
            int shift = half * 16;
            memset(hist, 0, sizeof(uint64_t) * 65536);
            for (uint64_t i = 0; i < m; ++i) hist[(src[i * stride + k] >> shift) & 0xFFFF]++;
            int skip = (m == 0);
            for (int b = 0; b < 65536 && !skip; ++b) if (hist[b] == m) skip = 1;
            if (skip) continue;
            uint64_t sum = 0;
            for (int b = 0; b < 65536; ++b) { uint64_t c = hist[b]; hist[b] = sum; sum += c; }
            const size_t rb = (size_t)stride * 4;
            for (uint64_t i = 0; i < m; ++i) {
                const uint32_t *r = src + i * stride;
                uint64_t pos = hist[(r[k] >> shift) & 0xFFFF]++;
                memcpy(dst + pos * stride, r, rb);
            }
            uint32_t *x = src; src = dst; dst = x;
        }
    }
    return src;
}

/* Sum counts of equal records (sorted, stride n+1, count last); returns the new length. */
static uint64_t unique_sum(uint32_t *r, uint64_t m, int n) {
    if (m == 0) return 0;
    const int s = n + 1;
    uint64_t w = 0;
    for (uint64_t i = 1; i < m; ++i) {
        uint32_t *cur = r + i * s, *last = r + w * s;
        if (cmp_words(cur, last, n) == 0) {
            last[n] += cur[n];
        } else {
            ++w;
            if (w != i) memcpy(r + w * s, cur, (size_t)s * 4);
        }
    }
    return w + 1;
}

/* Merge sorted unique run (b, mb) into table t (order n), summing counts. */
static int merge_into(sb_kn *kn, table_t *t, const uint32_t *b, uint64_t mb, int n) {
    const int s = n + 1;
    if (mb == 0) return SB_OK;
    uint64_t ma = t->m;
    uint32_t *out = kn_alloc(kn, (size_t)(ma + mb) * s * 4);
    if (!out) return SB_ENOMEM;
    const uint32_t *a = t->rec;
    uint64_t i = 0, j = 0, w = 0;
    while (i < ma && j < mb) {
        int c = cmp_words(a + i * s, b + j * s, n);
        if (c < 0) { memcpy(out + w * s, a + i * s, (size_t)s * 4); ++i; }
        else if (c > 0) { memcpy(out + w * s, b + j * s, (size_t)s * 4); ++j; }
        else {
            memcpy(out + w * s, a + i * s, (size_t)s * 4);
            uint64_t c2 = (uint64_t)out[w * s + n] + b[j * s + n];
            if (c2 > UINT32_MAX) { kn_release(kn, out, (size_t)(ma + mb) * s * 4); return SB_EFULL; }
            out[w * s + n] = (uint32_t)c2;
            ++i; ++j;
        }
        ++w;
    }
    if (i < ma) { memcpy(out + w * s, a + i * s, (size_t)(ma - i) * s * 4); w += ma - i; }
    if (j < mb) { memcpy(out + w * s, b + j * s, (size_t)(mb - j) * s * 4); w += mb - j; }
    /* shrink to fit */
    uint32_t *shr = realloc(out, (size_t)(w ? w : 1) * s * 4);
    if (shr) {
        kn->bytes -= (size_t)(ma + mb) * s * 4;
        kn->bytes += (size_t)(w ? w : 1) * s * 4;
        out = shr;
    }
    kn_release(kn, t->rec, (size_t)(ma ? ma : 1) * s * 4);
    if (ma == 0 && t->rec == NULL) { /* nothing was allocated */ }
    t->rec = out;
    t->m = w;
    return SB_OK;
}

/* Count the pending sentences into the tables. */
static int flush_chunk(sb_kn *kn) {
    const int N = kn->order;
    if (kn->ntok == 0) return SB_OK;
    /* How many records of each order: order N for positions i >= N-1, order i+1 for positions i < N-1. */
    uint64_t cnt[SB_KN_MAX_ORDER + 1] = {0};
    {
        uint64_t pos = 0;
        for (uint64_t k = 0; k < kn->ntok; ++k) {
            ++pos; /* 1-based position of this token in its sentence */
            int L = pos + 1 < (uint64_t)N ? (int)(pos + 1) : N;
            cnt[L]++;
            if (kn->tok[k] == ID_EOS) pos = 0;
        }
    }
    uint64_t *hist = malloc(sizeof(uint64_t) * 65536);
    if (!hist) return SB_ENOMEM;
    int rc = SB_OK;
    for (int L = 2; L <= N && rc == SB_OK; ++L) {
        if (cnt[L] == 0) continue;
        const int s = L + 1;
        size_t bytes = (size_t)cnt[L] * s * 4;
        uint32_t *buf = kn_alloc(kn, bytes);
        uint32_t *tmp = kn_alloc(kn, bytes);
        if (!buf || !tmp) { kn_release(kn, buf, bytes); kn_release(kn, tmp, bytes); rc = SB_ENOMEM; break; }
        uint64_t w = 0, pos = 0, start = 0;
        for (uint64_t k = 0; k < kn->ntok; ++k) {
            if (pos == 0) start = k;
            ++pos;
            int len = pos + 1 < (uint64_t)N ? (int)(pos + 1) : N;
            if (len == L) {
                uint32_t *r = buf + w * s;
                if (L < N || pos < (uint64_t)N) {
                    /* <s> then the first pos tokens (pos = L-1) */
                    r[0] = ID_BOS;
                    for (int j = 1; j < L; ++j) r[j] = kn->tok[start + j - 1];
                } else {
                    for (int j = 0; j < L; ++j) r[j] = kn->tok[k + 1 - L + j];
                }
                r[L] = 1;
                ++w;
            }
            if (kn->tok[k] == ID_EOS) pos = 0;
        }
        uint32_t *sorted = radix_sort(buf, tmp, w, s, L, hist);
        uint64_t u = unique_sum(sorted, w, L);
        table_t *t = (L == N) ? &kn->t[N] : &kn->prim[L];
        rc = merge_into(kn, t, sorted, u, L);
        kn_release(kn, buf, bytes);
        kn_release(kn, tmp, bytes);
    }
    free(hist);
    kn->ntok = 0;
    return rc;
}

int sb_kn_create(int order, uint64_t chunk_tokens, sb_kn **out) {
    *out = NULL;
    if (order < 2 || order > SB_KN_MAX_ORDER || chunk_tokens < 16) return SB_EINVAL;
    sb_kn *kn = calloc(1, sizeof(*kn));
    if (!kn) return SB_ENOMEM;
    kn->order = order;
    kn->chunk_tokens = chunk_tokens;
    *out = kn;
    return SB_OK;
}

static void free_table(sb_kn *kn, table_t *t, int n) {
    if (t->rec) kn_release(kn, t->rec, (size_t)(t->m ? t->m : 1) * (n + 1) * 4);
    if (t->sfx) kn_release(kn, t->sfx, (size_t)(t->m ? t->m : 1) * 4);
    if (t->prob) kn_release(kn, t->prob, (size_t)(t->m ? t->m : 1) * 4);
    if (t->bow) kn_release(kn, t->bow, (size_t)(t->m ? t->m : 1) * 4);
    memset(t, 0, sizeof(*t));
}

void sb_kn_free(sb_kn *kn) {
    if (!kn) return;
    for (int n = 1; n <= SB_KN_MAX_ORDER; ++n) {
        free_table(kn, &kn->t[n], n);
        free_table(kn, &kn->prim[n], n);
    }
    free(kn->tok);
    free(kn);
}

int sb_kn_add(sb_kn *kn, const uint32_t *ids, size_t n) {
    if (!kn || kn->counted) return SB_EINVAL;
    if (n == 0) return SB_OK;
    if (!ids || ids[n - 1] != ID_EOS) return SB_EINVAL;
    for (size_t i = 0; i < n; ++i) if (ids[i] < ID_EOS) return SB_EFORMAT;
    if (SB_GROW(kn->tok, kn->captok, kn->ntok + n, 4096)) return SB_ENOMEM;
    memcpy(kn->tok + kn->ntok, ids, n * 4);
    kn->ntok += n;
    if (kn->ntok >= kn->chunk_tokens) return flush_chunk(kn);
    return SB_OK;
}

/* Reverse-lexicographic (suffix order) comparison of two N-word windows. */
static int cmp_suffix_order(const uint32_t *a, const uint32_t *b, int N) {
    for (int i = N - 1; i >= 0; --i) if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Find the last window (padded with <s> on the left) in suffix order, and the raw counts of its suffixes
 * that sit on lmplz's stack at the end: orders 1..k (k = N-1, or up to the last <s> beyond position 0). */
static void find_last_window(sb_kn *kn) {
    const int N = kn->order;
    uint32_t best[SB_KN_MAX_ORDER], cur[SB_KN_MAX_ORDER];
    int have = 0;
    for (int L = 2; L <= N; ++L) {
        const table_t *t = (L == N) ? &kn->t[N] : &kn->prim[L];
        for (uint64_t i = 0; i < t->m; ++i) {
            const uint32_t *r = t->rec + i * (L + 1);
            for (int j = 0; j < N - L; ++j) cur[j] = ID_BOS;
            memcpy(cur + (N - L), r, (size_t)L * 4);
            if (!have || cmp_suffix_order(cur, best, N) > 0) { memcpy(best, cur, sizeof(cur)); have = 1; }
        }
    }
    kn->last_k = 0;
    if (!have) return;
    memcpy(kn->last_words, best, sizeof(best));
    int b = 0; /* position of the last <s> beyond position 0 */
    for (int j = N - 1; j >= 1; --j) if (best[j] == ID_BOS) { b = j; break; }
    int k = b ? N - b : N - 1;
    kn->last_k = k;
    for (int j = 1; j <= k; ++j) {
        const uint32_t *sfx = best + (N - j);
        uint64_t raw = 0;
        for (int L = 2; L <= N; ++L) {
            if (L < j) continue;
            const table_t *t = (L == N) ? &kn->t[N] : &kn->prim[L];
            for (uint64_t i = 0; i < t->m; ++i) {
                const uint32_t *r = t->rec + i * (L + 1);
                if (memcmp(r + (L - j), sfx, (size_t)j * 4) == 0) raw += r[L];
            }
        }
        kn->last_raw[j] = raw;
    }
}

int sb_kn_finish_counts(sb_kn *kn, uint32_t vocab_size) {
    if (!kn || kn->counted) return SB_EINVAL;
    if (vocab_size < 4) return SB_EINVAL;
    int rc = flush_chunk(kn);
    free(kn->tok);
    kn->tok = NULL;
    kn->captok = 0;
    if (rc) return rc;
    if (kn->t[kn->order].m == 0) return SB_EINVAL;
    find_last_window(kn);
    kn->vocab_size = vocab_size;
    kn->counted = 1;
    kn->adjusted_to = kn->order;
    return SB_OK;
}

/* Order n from order n+1: suffixes w2..w_{n+1} of every (n+1)-gram, grouped; a = number of distinct
 * left extensions; <s>-prefixed n-grams keep their raw count and come first (id 1 sorts before >= 2). */
int sb_kn_adjust(sb_kn *kn, int n) {
    if (!kn || !kn->counted || n != kn->adjusted_to - 1 || n < 1) return SB_EINVAL;
    table_t *hi = &kn->t[n + 1];
    const int hs = n + 2; /* stride of order n+1 */
    const int ss = n + 1; /* suffix record: n words + source index */
    uint64_t m = hi->m;
    if (m > UINT32_MAX) return SB_EFULL;
    size_t bytes = (size_t)m * ss * 4;
    uint32_t *buf = kn_alloc(kn, bytes), *tmp = kn_alloc(kn, bytes);
    uint64_t *hist = malloc(sizeof(uint64_t) * 65536);
    if (!buf || !tmp || !hist) {
        kn_release(kn, buf, bytes); kn_release(kn, tmp, bytes); free(hist);
        return SB_ENOMEM;
    }
    for (uint64_t i = 0; i < m; ++i) {
        memcpy(buf + i * ss, hi->rec + i * hs + 1, (size_t)n * 4);
        buf[i * ss + n] = (uint32_t)i;
    }
    uint32_t *sorted = radix_sort(buf, tmp, m, ss, n, hist);
    free(hist);
    /* distinct suffixes */
    uint64_t u = 0;
    for (uint64_t i = 0; i < m; ++i)
        if (i == 0 || cmp_words(sorted + i * ss, sorted + (i - 1) * ss, n) != 0) ++u;
    table_t *pr = &kn->prim[n];
    uint64_t head = (n == 1) ? 2 : pr->m; /* unigrams: <unk>, <s> first */
    uint64_t total = head + u;
    table_t *lo = &kn->t[n];
    lo->rec = kn_alloc(kn, (size_t)total * (n + 1) * 4);
    hi->sfx = kn_alloc(kn, (size_t)(m ? m : 1) * 4);
    if (!lo->rec || !hi->sfx) {
        kn_release(kn, buf, bytes); kn_release(kn, tmp, bytes);
        return SB_ENOMEM;
    }
    lo->m = total;
    const int ls = n + 1;
    if (n == 1) {
        lo->rec[0] = ID_UNK; lo->rec[1] = 0;
        lo->rec[2] = ID_BOS; lo->rec[3] = 0;
    } else if (pr->m) {
        memcpy(lo->rec, pr->rec, (size_t)pr->m * ls * 4);
    }
    uint64_t w = head - 1;
    int rc = SB_OK;
    for (uint64_t i = 0; i < m; ++i) {
        const uint32_t *r = sorted + i * ss;
        if (i == 0 || cmp_words(r, sorted + (i - 1) * ss, n) != 0) {
            ++w;
            memcpy(lo->rec + w * ls, r, (size_t)n * 4);
            lo->rec[w * ls + n] = 0;
            if (r[0] <= ID_BOS) rc = SB_EFORMAT; /* a suffix starting with <unk>/<s> cannot happen */
            if (n == 1 && r[0] != w) rc = SB_EINVAL; /* unigram ids must be dense: every id occurs */
        }
        lo->rec[w * ls + n] += 1;
        hi->sfx[r[n]] = (uint32_t)w;
    }
    kn_release(kn, buf, bytes);
    kn_release(kn, tmp, bytes);
    if (n == 1 && rc == SB_OK && total != kn->vocab_size) rc = SB_EINVAL;
    free_table(kn, pr, n);
    if (rc) return rc;
    kn->adjusted_to = n;
    return SB_OK;
}

int sb_kn_discounts(sb_kn *kn, const double *fallback, double *discounts, uint64_t *coc, int *bad_order) {
    if (!kn || kn->adjusted_to != 1) return SB_EINVAL;
    *bad_order = 0;
    for (int n = 1; n <= kn->order; ++n) {
        const table_t *t = &kn->t[n];
        uint64_t c[5] = {0};
        for (uint64_t i = 0; i < t->m; ++i) {
            uint32_t a = t->rec[i * (n + 1) + n];
            if (a >= 1 && a <= 4) c[a]++;
        }
        if (n <= kn->last_k) {
            /* the quirk: this order's suffix of the last window counts with its raw count */
            const uint32_t *key = kn->last_words + (kn->order - n);
            uint64_t lo = 0, hi = t->m;
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (cmp_words(t->rec + mid * (n + 1), key, n) < 0) lo = mid + 1; else hi = mid;
            }
            if (lo < t->m && cmp_words(t->rec + lo * (n + 1), key, n) == 0) {
                uint32_t a = t->rec[lo * (n + 1) + n];
                uint64_t raw = kn->last_raw[n];
                if (a >= 1 && a <= 4) c[a]--;
                if (raw >= 1 && raw <= 4) c[raw]++;
            }
        }
        for (int k = 0; k < 5; ++k) coc[(n - 1) * 5 + k] = c[k];
        int bad = (c[1] == 0 || c[2] == 0 || c[3] == 0);
        float d[4] = {0.f, 0.f, 0.f, 0.f};
        if (!bad) {
            /* Chen & Goodman eq. 26, in float as lmplz does */
            float y = (float)c[1] / ((float)c[1] + 2.0f * (float)c[2]);
            for (int k = 1; k <= 3; ++k) {
                d[k] = (float)k - (float)(k + 1) * y * (float)c[k + 1] / (float)c[k];
                if (!(d[k] >= 0.0f && d[k] <= (float)k)) bad = 1;
            }
        }
        if (bad) {
            if (!*bad_order) *bad_order = n;
            if (!fallback) return SB_KN_EDISCOUNT;
            for (int k = 1; k <= 3; ++k) d[k] = (float)fallback[k - 1];
        }
        for (int k = 0; k < 4; ++k) {
            kn->D[n][k] = (double)d[k];
            discounts[(n - 1) * 4 + k] = (double)d[k];
        }
    }
    kn->have_discounts = 1;
    kn->probs_done = 0;
    return SB_OK;
}

int sb_kn_probs(sb_kn *kn, int n) {
    if (!kn || !kn->have_discounts || n != kn->probs_done + 1 || n > kn->order) return SB_EINVAL;
    table_t *t = &kn->t[n];
    const int s = n + 1;
    const double *D = kn->D[n];
    t->prob = kn_alloc(kn, (size_t)(t->m ? t->m : 1) * 4);
    if (!t->prob) return SB_ENOMEM;
    if (n < kn->order) {
        t->bow = kn_alloc(kn, (size_t)(t->m ? t->m : 1) * 4);
        if (!t->bow) return SB_ENOMEM;
        for (uint64_t i = 0; i < t->m; ++i) t->bow[i] = NAN;
    }
    table_t *lo = (n >= 2) ? &kn->t[n - 1] : NULL;
    const int ls = n; /* stride of order n-1 */
    uint64_t ctx = 0; /* merge pointer into order n-1 */
    /* V = unigram types excluding <s> */
    const double uniform = 1.0 / (double)(kn->t[1].m - 1);
    uint64_t i = 0;
    while (i < t->m) {
        uint64_t j = i;
        double denom = 0.0;
        uint64_t nk[4] = {0};
        while (j < t->m && (j == i || cmp_words(t->rec + j * s, t->rec + i * s, n - 1) == 0)) {
            uint32_t a = t->rec[j * s + n];
            denom += (double)a;
            nk[a >= 3 ? 3 : a]++;
            ++j;
        }
        double gamma = 0.0;
        if (denom > 0.0) gamma = (D[1] * (double)nk[1] + D[2] * (double)nk[2] + D[3] * (double)nk[3]) / denom;
        if (n >= 2) {
            while (ctx < lo->m && cmp_words(lo->rec + ctx * ls, t->rec + i * s, n - 1) < 0) ++ctx;
            if (ctx >= lo->m || cmp_words(lo->rec + ctx * ls, t->rec + i * s, n - 1) != 0) return SB_EFORMAT;
            lo->bow[ctx] = (float)gamma;
        }
        for (uint64_t k = i; k < j; ++k) {
            uint32_t a = t->rec[k * s + n];
            double u = denom > 0.0 ? ((double)a - D[a >= 3 ? 3 : a]) / denom : 0.0;
            double lower = (n >= 2) ? (double)lo->prob[t->sfx[k]] : uniform;
            double p = u + gamma * lower;
            if (p > 1.0) p = 1.0;
            t->prob[k] = (float)p;
        }
        i = j;
    }
    if (n == 1) t->prob[ID_BOS] = 1.0f; /* lmplz writes <s> with log prob 0 */
    kn->probs_done = n;
    return SB_OK;
}

uint64_t sb_kn_size(const sb_kn *kn, int n) {
    if (!kn || n < 1 || n > kn->order) return 0;
    return kn->t[n].m;
}
uint64_t sb_kn_bytes(const sb_kn *kn) { return kn ? kn->bytes : 0; }
uint64_t sb_kn_peak_bytes(const sb_kn *kn) { return kn ? kn->peak : 0; }

/* Fixed-point log10 value with up to 7 decimals, trailing zeros stripped. Returns bytes written. */
static int fmt_float(char *o, double v) {
    if (v != v) { memcpy(o, "nan", 3); return 3; }
    if (v <= -99.0) { memcpy(o, "-99", 3); return 3; }
    char *p = o;
    long long scaled = llround(v * 1e7);
    if (scaled == 0) { *p++ = '0'; return (int)(p - o); }
    if (scaled < 0) { *p++ = '-'; scaled = -scaled; }
    long long ip = scaled / 10000000LL, fp = scaled % 10000000LL;
    char tmp[24];
    int k = 0;
    do { tmp[k++] = (char)('0' + ip % 10); ip /= 10; } while (ip);
    while (k) *p++ = tmp[--k];
    if (fp) {
        *p++ = '.';
        char d[7];
        for (int q = 6; q >= 0; --q) { d[q] = (char)('0' + fp % 10); fp /= 10; }
        int last = 6;
        while (last > 0 && d[last] == '0') --last;
        for (int q = 0; q <= last; ++q) *p++ = d[q];
    }
    return (int)(p - o);
}

static double logprob_of(const table_t *t, uint64_t i) {
    double p = (double)t->prob[i];
    if (!(p > 0.0)) return -99.0;
    double l = log10(p);
    return l > 0.0 ? 0.0 : l;
}
static double logbow_of(const table_t *t, uint64_t i) {
    if (!t->bow) return 0.0;
    float g = t->bow[i];
    if (g != g) return 0.0;
    if (!(g > 0.0f)) return -99.0;
    return log10((double)g);
}

int sb_kn_format(const sb_kn *kn, int n, uint64_t start, const char *vocab, const uint64_t *vocab_off,
                 char *buf, size_t cap, size_t *written, uint64_t *next) {
    if (!kn || n < 1 || n > kn->order || kn->probs_done < kn->order) return SB_EINVAL;
    const table_t *t = &kn->t[n];
    const int s = n + 1;
    size_t w = 0;
    uint64_t i = start;
    for (; i < t->m; ++i) {
        const uint32_t *r = t->rec + i * s;
        size_t need = 64;
        for (int k = 0; k < n; ++k) {
            if (r[k] >= kn->vocab_size) return SB_EINVAL;
            need += (size_t)(vocab_off[r[k] + 1] - vocab_off[r[k]]) + 1;
        }
        if (w + need > cap) break;
        w += (size_t)fmt_float(buf + w, logprob_of(t, i));
        buf[w++] = '\t';
        for (int k = 0; k < n; ++k) {
            if (k) buf[w++] = ' ';
            size_t len = (size_t)(vocab_off[r[k] + 1] - vocab_off[r[k]]);
            memcpy(buf + w, vocab + vocab_off[r[k]], len);
            w += len;
        }
        if (n < kn->order) {
            buf[w++] = '\t';
            w += (size_t)fmt_float(buf + w, logbow_of(t, i));
        }
        buf[w++] = '\n';
    }
    if (i == start && i < t->m) return SB_EFULL; /* buffer too small for one line */
    *written = w;
    *next = i;
    return SB_OK;
}
