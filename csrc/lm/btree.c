/* btree.c - see btree.h: construction of the breadth-first byte array and the CPU batch query. */
#define _GNU_SOURCE
#include "lm/btree.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__)
#include <immintrin.h>
#define SB_BT_SIMD "avx2"
#elif defined(__SSE2__)
#include <emmintrin.h>
#define SB_BT_SIMD "sse2"
#else
#define SB_BT_SIMD "scalar"
#endif

#define ROOT_ENTRY 12u        /* float prob, float backoff, uint32 child */
#define MAX_MODEL_BYTES (1ULL << 34) /* relative offsets / 4 must fit in uint32 */
#define PAD_BYTES 512u        /* a node's key blocks may be read past the last key (count_less) */

struct sb_btree {
    uint8_t *data;
    uint64_t bytes;
    uint64_t alloc_bytes;
    int order;
    int K;
    uint32_t vocab;
    uint64_t trie_nodes[SB_BTREE_MAX_ORDER + 1];
    uint64_t stumps[SB_BTREE_MAX_ORDER + 1];
    uint64_t entries[SB_BTREE_MAX_ORDER + 1];
    int max_depth[SB_BTREE_MAX_ORDER + 1];
};

const char *sb_btree_simd(void) { return SB_BT_SIMD; }

/* ---------------------------------------------------------------- shape of a full B-tree */

static inline uint64_t node_bytes(uint64_t c, uint32_t K, uint32_t vs) {
    if (c < K) return c * (4u + vs);
    return (uint64_t)(K - 1) * (4u + vs) + 4ull * K;
}

/* The number of keys in child j of a node holding c >= K keys (0 = no such child). */
static inline uint64_t child_count(uint64_t c, uint32_t K, uint32_t j) {
    if (c < 2ull * K) return j == K - 1 ? c - (K - 1) : 0;
    uint64_t rest = c - (K - 1), b = rest / K, e = rest % K;
    return b + (j < e ? 1 : 0);
}

static uint64_t tree_bytes(uint64_t c, uint32_t K, uint32_t vs) {
    if (c == 0) return 0;
    if (c < K) return node_bytes(c, K, vs);
    uint64_t own = node_bytes(c, K, vs);
    if (c < 2ull * K) return own + tree_bytes(c - (K - 1), K, vs);
    uint64_t rest = c - (K - 1), b = rest / K, e = rest % K;
    return own + e * tree_bytes(b + 1, K, vs) + (K - e) * tree_bytes(b, K, vs);
}

static int tree_depth(uint64_t c, uint32_t K) {
    if (c == 0) return 0;
    if (c < K) return 1;
    if (c < 2ull * K) return 2;
    uint64_t rest = c - (K - 1), b = rest / K, e = rest % K;
    return 1 + tree_depth(e ? b + 1 : b, K);
}

/* ---------------------------------------------------------------- construction */

typedef struct {
    uint64_t lo;   /* first entry (global index into this order's table) */
    uint64_t c;    /* keys in the subtree */
    uint64_t off;  /* byte offset of the node */
} bt_job;

static inline void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put_f32(uint8_t *p, float v) { memcpy(p, &v, 4); }

/* Write the B-tree of one trie node breadth-first at byte offset `base`. Entries lo..lo+c-1 of the
 * order's table. child_abs[i] = absolute offset of entry i's child trie node (0 = none) or NULL. */
static int write_tree(uint8_t *data, uint64_t base, uint64_t lo, uint64_t c, uint32_t K, uint32_t vs,
                      const uint32_t *keys, const float *probs, const float *backoffs,
                      const uint64_t *child_abs, bt_job *queue) {
    size_t head = 0, tail = 0;
    uint64_t cursor = base + node_bytes(c, K, vs);
    queue[tail++] = (bt_job){lo, c, base};
    while (head < tail) {
        bt_job job = queue[head++];
        uint8_t *p = data + job.off;
        uint32_t nk = job.c < K ? (uint32_t)job.c : K - 1;
        int internal = job.c >= K;
        uint8_t *vals = p + 4ull * nk + (internal ? 4ull * K : 0);
        uint64_t key_idx[SB_BTREE_MAX_K];
        if (!internal) {
            for (uint32_t j = 0; j < nk; j++) key_idx[j] = job.lo + j;
        } else {
            uint64_t pos = job.lo;
            uint8_t *children = p + 4ull * nk;
            for (uint32_t j = 0; j < K; j++) {
                uint64_t cc = child_count(job.c, K, j);
                if (job.c < 2ull * K) {
                    /* K-1 keys, then one leaf child with the rest (paper 4.1) */
                    if (j < K - 1) key_idx[j] = job.lo + j;
                    if (j == K - 1) pos = job.lo + (K - 1);
                }
                if (cc) {
                    uint64_t rel = (cursor - job.off) / 4;
                    put_u32(children + 4ull * j, (uint32_t)rel);
                    queue[tail++] = (bt_job){pos, cc, cursor};
                    cursor += node_bytes(cc, K, vs);
                    pos += cc;
                } else {
                    put_u32(children + 4ull * j, 0);
                }
                if (job.c >= 2ull * K && j < K - 1) key_idx[j] = pos++;
            }
        }
        for (uint32_t j = 0; j < nk; j++) {
            uint64_t i = key_idx[j];
            put_u32(p + 4ull * j, keys[i]);
            uint8_t *v = vals + (uint64_t)vs * j;
            put_f32(v, probs[i]);
            if (vs == 12) {
                put_f32(v + 4, backoffs[i]);
                uint64_t ch = child_abs ? child_abs[i] : 0;
                put_u32(v + 8, ch ? (uint32_t)((ch - job.off) / 4) : 0);
            }
        }
    }
    return cursor == base + tree_bytes(c, K, vs) ? SB_OK : SB_EFORMAT;
}

/* ---------------------------------------------------------------- sorted tables from ARPA order */

/* stable LSD radix sort of (key, row) pairs by key, 8 bits a pass over the key's significant bytes */
static int radix_sort(uint64_t *key, uint64_t *row, uint64_t n) {
    uint64_t top = 0;
    for (uint64_t i = 0; i < n; i++)
        top |= key[i];
    uint64_t *k2 = malloc((n ? n : 1) * sizeof(uint64_t)), *r2 = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!k2 || !r2) {
        free(k2);
        free(r2);
        return SB_ENOMEM;
    }
    uint64_t *ka = key, *ra = row, *kb = k2, *rb = r2;
    for (int shift = 0; shift < 64 && (top >> shift); shift += 8) {
        uint64_t pos[256] = {0};
        for (uint64_t i = 0; i < n; i++)
            pos[(ka[i] >> shift) & 255]++;
        uint64_t sum = 0;
        for (int b = 0; b < 256; b++) {
            uint64_t c = pos[b];
            pos[b] = sum;
            sum += c;
        }
        for (uint64_t i = 0; i < n; i++) {
            uint64_t at = pos[(ka[i] >> shift) & 255]++;
            kb[at] = ka[i];
            rb[at] = ra[i];
        }
        uint64_t *t = ka; ka = kb; kb = t;
        t = ra; ra = rb; rb = t;
    }
    if (ka != key) {
        memcpy(key, ka, n * sizeof(uint64_t));
        memcpy(row, ra, n * sizeof(uint64_t));
    }
    free(k2);
    free(r2);
    return SB_OK;
}

int sb_btree_sort_tables(int order, uint32_t vocab, const uint64_t *counts, const uint32_t *const *ids,
                         const float *const *prob, const float *const *backoff, float *uni_prob, float *uni_backoff,
                         uint32_t *parents, uint32_t *keys, float *probs, float *backoffs,
                         int *bad_order, uint64_t *bad_row, int *why) {
    *bad_order = 0;
    *bad_row = 0;
    *why = 0;
    if (order < 1 || order > SB_BTREE_MAX_ORDER || vocab == 0 || vocab >= (1u << 31))
        return SB_EINVAL;
    uint8_t *seen = calloc(vocab, 1);
    if (!seen)
        return SB_ENOMEM;
    for (uint64_t i = 0; i < counts[0]; i++) {
        uint32_t w = ids[0][i];
        if (w >= vocab || seen[w]) {
            free(seen);
            *bad_order = 1, *bad_row = i, *why = -2;
            return SB_EFORMAT;
        }
        seen[w] = 1;
        uni_prob[w] = prob[0][i];
        uni_backoff[w] = backoff[0][i];
    }
    free(seen);
    if (counts[0] != vocab) {
        *bad_order = 1, *bad_row = counts[0], *why = -2;
        return SB_EFORMAT;
    }
    uint64_t *sorted[SB_BTREE_MAX_ORDER] = {0};  /* order n's packed (parent << 32 | key), sorted: sorted[n - 2] */
    uint64_t *row = NULL, at = 0;
    int rc = SB_OK;
    for (int n = 2; n <= order && rc == SB_OK; n++) {
        uint64_t c = counts[n - 1];
        const uint32_t *g0 = ids[n - 1];
        uint64_t *packed = malloc((c ? c : 1) * sizeof(uint64_t));
        row = malloc((c ? c : 1) * sizeof(uint64_t));
        sorted[n - 2] = packed;
        if (!packed || !row) {
            rc = SB_ENOMEM;
            break;
        }
        for (uint64_t i = 0; i < c && rc == SB_OK; i++) {
            const uint32_t *g = g0 + i * (uint64_t)n;
            uint64_t r = g[n - 1];  /* the rank of the length-1 suffix: the unigram id */
            for (int len = 2; len < n; len++) {
                uint64_t q = r << 32 | g[n - len], cnt = counts[len - 1], lo = 0, hi = cnt;
                const uint64_t *t = sorted[len - 2];
                while (lo < hi) {
                    uint64_t mid = lo + (hi - lo) / 2;
                    if (t[mid] < q)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo >= cnt || t[lo] != q) {
                    *bad_order = n, *bad_row = i, *why = len;
                    rc = SB_EFORMAT;
                    break;
                }
                r = lo;
            }
            packed[i] = r << 32 | g[0];
            row[i] = i;
        }
        if (rc == SB_OK)
            rc = radix_sort(packed, row, c);
        for (uint64_t i = 0; rc == SB_OK && i < c; i++) {
            if (i && packed[i] == packed[i - 1]) {
                *bad_order = n, *bad_row = row[i], *why = -1;
                rc = SB_EFORMAT;
                break;
            }
            parents[at + i] = (uint32_t)(packed[i] >> 32);
            keys[at + i] = (uint32_t)packed[i];
            probs[at + i] = prob[n - 1][row[i]];
            backoffs[at + i] = backoff[n - 1][row[i]];
        }
        at += c;
        free(row);
        row = NULL;
    }
    free(row);
    for (int i = 0; i < SB_BTREE_MAX_ORDER; i++)
        free(sorted[i]);
    return rc;
}

int sb_btree_build(int order, int K, const uint64_t *counts, const float *uni_probs,
                   const float *uni_backoffs, const uint32_t *parents, const uint32_t *keys,
                   const float *probs, const float *backoffs, sb_btree **out) {
    if (!out || !counts || !uni_probs || !uni_backoffs) return SB_EINVAL;
    *out = NULL;
    if (order < 1 || order > SB_BTREE_MAX_ORDER) return SB_EINVAL;
    if (K < SB_BTREE_MIN_K || K > SB_BTREE_MAX_K) return SB_EINVAL;
    if (counts[0] == 0 || counts[0] >= (1ull << 31)) return SB_EINVAL;
    uint64_t total_hi = 0;
    for (int n = 2; n <= order; n++) total_hi += counts[n - 1];
    if (total_hi && (!parents || !keys || !probs || !backoffs)) return SB_EINVAL;
    const uint32_t uK = (uint32_t)K;
    const uint32_t vocab = (uint32_t)counts[0];

    sb_btree *t = calloc(1, sizeof(*t));
    if (!t) return SB_ENOMEM;
    t->order = order;
    t->K = K;
    t->vocab = vocab;
    t->entries[1] = vocab;

    int rc = SB_OK;
    /* child_abs[n] for n = 1..order-1: absolute offset of each entry's child trie node */
    uint64_t *child_abs[SB_BTREE_MAX_ORDER + 1] = {0};
    bt_job *queue = NULL;
    uint64_t max_group = 0;

    /* pass 1: validate, lay out every trie node (level by level, in parent order) */
    uint64_t cursor = (uint64_t)vocab * ROOT_ENTRY;
    uint64_t start = 0; /* first entry of order n in the concatenated arrays */
    for (int n = 2; n <= order && rc == SB_OK; n++) {
        uint64_t cnt = counts[n - 1], prev = counts[n - 2];
        uint32_t vs = n < order ? 12u : 4u;
        child_abs[n - 1] = calloc(prev ? prev : 1, sizeof(uint64_t));
        if (!child_abs[n - 1]) { rc = SB_ENOMEM; break; }
        t->entries[n] = cnt;
        uint64_t i = 0;
        while (i < cnt) {
            uint32_t par = parents[start + i];
            if (par >= prev) { rc = SB_EFORMAT; break; }
            uint64_t j = i;
            while (j < cnt && parents[start + j] == par) {
                if (keys[start + j] >= vocab) { rc = SB_EFORMAT; break; }
                if (j > i && keys[start + j] <= keys[start + j - 1]) { rc = SB_EINVAL; break; }
                j++;
            }
            if (rc != SB_OK) break;
            if (j < cnt && parents[start + j] < par) { rc = SB_EINVAL; break; }
            uint64_t c = j - i;
            child_abs[n - 1][par] = cursor;
            cursor += 4 + tree_bytes(c, uK, vs);
            if (cursor >= MAX_MODEL_BYTES) { rc = SB_EUNSUPPORTED; break; }
            if (c > max_group) max_group = c;
            t->trie_nodes[n]++;
            if (c < uK) t->stumps[n]++;
            int d = tree_depth(c, uK);
            if (d > t->max_depth[n]) t->max_depth[n] = d;
            i = j;
        }
        start += cnt;
    }
    if (rc == SB_OK) {
        t->bytes = cursor;
        t->alloc_bytes = cursor + PAD_BYTES;
        int huge = 0;
        t->data = sb_huge_alloc(t->alloc_bytes, &huge);
        queue = malloc((max_group + 1) * sizeof(*queue));
        if (!t->data || !queue) rc = SB_ENOMEM;
    }
    if (rc == SB_OK) {
        /* pass 2: write. Root: direct-indexed unigrams, child offsets relative to the root (offset 0). */
        for (uint32_t w = 0; w < vocab; w++) {
            uint8_t *e = t->data + (uint64_t)w * ROOT_ENTRY;
            put_f32(e, uni_probs[w]);
            put_f32(e + 4, uni_backoffs[w]);
            uint64_t ch = order > 1 ? child_abs[1][w] : 0;
            put_u32(e + 8, (uint32_t)(ch / 4));
        }
        start = 0;
        for (int n = 2; n <= order && rc == SB_OK; n++) {
            uint64_t cnt = counts[n - 1];
            uint32_t vs = n < order ? 12u : 4u;
            const uint64_t *kids = n < order ? child_abs[n] : NULL;
            uint64_t i = 0;
            while (i < cnt && rc == SB_OK) {
                uint32_t par = parents[start + i];
                uint64_t j = i;
                while (j < cnt && parents[start + j] == par) j++;
                uint64_t off = child_abs[n - 1][par];
                put_u32(t->data + off, (uint32_t)(j - i));
                /* kids is indexed by the global rank within order n: shift the base pointers */
                rc = write_tree(t->data, off + 4, i, j - i, uK, vs, keys + start, probs + start,
                                backoffs + start, kids, queue);
                i = j;
            }
            start += cnt;
        }
    }
    for (int n = 0; n <= SB_BTREE_MAX_ORDER; n++) free(child_abs[n]);
    free(queue);
    if (rc != SB_OK) {
        sb_btree_free(t);
        return rc;
    }
    *out = t;
    return SB_OK;
}

void sb_btree_free(sb_btree *t) {
    if (!t) return;
    sb_huge_free(t->data, t->alloc_bytes);
    free(t);
}

uint64_t sb_btree_bytes(const sb_btree *t) { return t->bytes; }
const uint8_t *sb_btree_data(const sb_btree *t) { return t->data; }

int sb_btree_stats(const sb_btree *t, int n, uint64_t *trie_nodes, uint64_t *stumps, int *max_depth,
                   uint64_t *entries) {
    if (!t || n < 1 || n > t->order) return SB_EINVAL;
    if (trie_nodes) *trie_nodes = n == 1 ? 1 : t->trie_nodes[n];
    if (stumps) *stumps = n == 1 ? 0 : t->stumps[n];
    if (max_depth) *max_depth = n == 1 ? 0 : t->max_depth[n];
    if (entries) *entries = t->entries[n];
    return SB_OK;
}

/* ---------------------------------------------------------------- query */

static inline uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline float get_f32(const uint8_t *p) { float v; memcpy(&v, p, 4); return v; }

/* Population count of a 64-bit compare mask without a libgcc call on baseline x86-64 (no POPCNT). */
static inline uint32_t mask_bits(uint64_t m) {
#if defined(__POPCNT__)
    return (uint32_t)__builtin_popcountll(m);
#else
    m = m - ((m >> 1) & 0x5555555555555555ULL);
    m = (m & 0x3333333333333333ULL) + ((m >> 2) & 0x3333333333333333ULL);
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (uint32_t)((m * 0x0101010101010101ULL) >> 56);
#endif
}

/* SIMD lanes of one key block of this binary's K-ary compare. */
#if defined(__AVX2__)
#define BT_LANES 8u
#elif defined(__SSE2__)
#define BT_LANES 4u
#else
#define BT_LANES 1u
#endif

/* How many of the nk sorted keys at p are < key: K-ary search, all compares of a node at once. Every node is
 * compared as nb whole blocks of BT_LANES keys (nb = the blocks of a full node's K-1 keys, the same for every
 * node), the lanes past nk masked off afterwards, so neither the block loop nor the mask depends on the node
 * (no data-dependent branch; reads past a small node stay inside the model's padding). Word ids are < 2^31,
 * so signed SIMD compares are exact. */
static inline __attribute__((always_inline)) uint32_t count_less(const uint8_t *p, uint32_t nk, uint32_t key, uint32_t nb) {
    uint64_t m = 0;
#if defined(__AVX2__) /* (an AVX-512 compare of 16 keys was tried: no faster on this machine's EPYC) */
    const __m256i kv = _mm256_set1_epi32((int)key);
    for (uint32_t b = 0; b < nb; b++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32ull * b));
        m |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(kv, x))) << (8u * b);
    }
#elif defined(__SSE2__)
    const __m128i kv = _mm_set1_epi32((int)key);
    for (uint32_t b = 0; b < nb; b++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16ull * b));
        m |= (uint64_t)(unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(kv, x))) << (4u * b);
    }
#else
    for (uint32_t b = 0; b < nb; b++) m |= (uint64_t)(get_u32(p + 4ull * b) < key) << b;
#endif
    return mask_bits(m & ((1ull << nk) - 1u)); /* nk <= K - 1 <= 63 */
}

typedef struct {
    const uint32_t *q;
    uint64_t idx;
    uint64_t node;   /* byte offset: of a trie node's header when count == 0, else of a B-tree node */
    uint64_t count;
    float prob, bo;
    uint32_t m;      /* context words */
    uint32_t d;      /* context word being searched */
    uint32_t key;    /* q[d] */
    uint32_t len;    /* matched n-gram length */
    uint32_t phase;  /* 0 = longest match, 1 = back-offs */
} bt_query;

typedef struct {
    const uint8_t *base;
    uint32_t K, N, vocab;
    uint32_t nb;       /* key blocks compared per node (count_less) */
    uint64_t kmagic;   /* 2^64 / K + 1: child counts by multiplication (child_count_fast) */
    /* SB_BTREE_STREAM_REUSE: rec[i*(N-1)+d] = back-off of the entry at depth d of row i's longest-match
     * walk (d = 0: its unigram), rec_n[i] = how many were recorded; pend[i] = 1 when row i's back-offs
     * are to be taken from row i-1's record instead of a second walk (then ctx_m[i] = its context words,
     * match_len[i] = its matched length, out_prob[i] its probability until the final pass). */
    const uint32_t *queries;
    float *rec;
    uint8_t *rec_n, *pend, *ctx_m, *match_len;
} bt_ctx;

/* The number of keys in child j of a B-tree node holding c >= K keys, without a division: q = rest / K as the
 * high half of rest * (2^64 / K + 1), exact for every rest < 2^32 (Lemire, Kaser & Kurz 2019); a trie node
 * holds fewer than 2^31 keys (word ids < 2^31). Written as selects, not branches. */
static inline uint64_t child_count_fast(uint64_t c, uint32_t K, uint64_t kmagic, uint32_t j) {
    uint64_t rest = c - (K - 1);
    uint64_t b = (uint64_t)(((unsigned __int128)rest * kmagic) >> 64), e = rest - b * K;
    uint64_t spread = b + (j < e);
    uint64_t single = j == K - 1 ? rest : 0; /* K <= c < 2K: one last child */
    return c < 2ull * K ? single : spread;
}

/* Row i's context continues row i-1's walk: c1 = the previous word and c_k = its c_{k-1}. Then the
 * back-off walk of row i (c1, c2, ..) visits exactly the entries of row i-1's longest-match walk. */
static inline int stream_successor(const bt_ctx *cx, uint64_t i, uint32_t m) {
    if (i == 0 || m < 1) return 0;
    const uint32_t *a = cx->queries + (i - 1) * cx->N, *b = cx->queries + i * cx->N;
    for (uint32_t k = 1; k <= m; k++)
        if (b[k] != a[k - 1]) return 0;
    return 1;
}

/* Back-off phase start: charge b(c1) if needed, descend into c1's children. Returns 1 when done. */
static inline int begin_backoff(const bt_ctx *cx, bt_query *s) {
    if (s->len == s->m + 1) return 1;
    if (cx->rec && stream_successor(cx, s->idx, s->m)) {
        cx->pend[s->idx] = 1;
        cx->ctx_m[s->idx] = (uint8_t)s->m;
        cx->match_len[s->idx] = (uint8_t)s->len;
        return 1;
    }
    const uint8_t *e = cx->base + (uint64_t)s->q[1] * ROOT_ENTRY;
    float bo1 = s->bo + get_f32(e + 4);
    s->bo = s->len <= 1 ? bo1 : s->bo;
    uint32_t ch = get_u32(e + 8);
    s->node = 4ull * ch;
    s->count = 0;
    s->d = 2;
    s->key = s->m >= 2 ? s->q[2] : 0;
    s->phase = 1;
    return (s->m < 2) | (ch == 0);
}

/* Start a query. Returns 1 when already done, 0 to continue, -1 on a bad word id. The context length is
 * counted over all N-1 slots (a fixed trip count) and the ids checked together. */
static inline __attribute__((always_inline)) int q_start(const bt_ctx *cx, bt_query *s, const uint32_t *q,
                                                        uint64_t idx) {
    s->q = q;
    s->idx = idx;
    uint32_t m = 0, alive = 1, bad = q[0] >= cx->vocab;
    for (uint32_t k = 1; k < cx->N; k++) {
        alive &= q[k] != SB_BTREE_NONE;
        m += alive;
        bad |= alive & (q[k] >= cx->vocab);
    }
    if (SB_UNLIKELY(bad)) return -1;
    s->m = m;
    s->bo = 0.0f;
    s->len = 1;
    s->phase = 0;
    const uint8_t *e = cx->base + (uint64_t)q[0] * ROOT_ENTRY;
    s->prob = get_f32(e);
    if (cx->rec) {
        cx->rec[idx * (cx->N - 1)] = get_f32(e + 4);
        cx->rec_n[idx] = 1;
        cx->pend[idx] = 0;
    }
    uint32_t ch = get_u32(e + 8);
    s->node = 4ull * ch;
    s->count = 0;
    s->d = 1;
    s->key = m >= 1 ? q[1] : 0;
    if ((m >= 1) & (ch != 0)) return 0;
    return begin_backoff(cx, s);
}

/* One B-tree node visit. Returns 1 when the query is done. The node's shape (leaf or internal, fresh trie
 * node or not), the value size and the phase's bookkeeping are selects; what branches is the outcome (found,
 * descend, miss) and the end of a walk. */
static inline __attribute__((always_inline)) int q_step(const bt_ctx *cx, bt_query *s, const uint32_t nb) {
    const uint8_t *base = cx->base;
    const uint32_t K = cx->K;
    uint64_t node = s->node, c = s->count;
    const uint32_t hdr = get_u32(base + node);
    const uint64_t fresh = c == 0; /* a trie node's header: its key count, then its root B-tree node */
    c |= hdr & (0 - fresh);        /* selects as arithmetic: the compiler would make branches of ?: */
    node += fresh << 2;
    const uint8_t *p = base + node;
    const uint32_t d = s->d, key = s->key;
    const int leaf = c < K;
    const uint32_t nk = leaf ? (uint32_t)c : K - 1;
    const uint32_t j = count_less(p, nk, key, nb);
    const int hit = (j < nk) & (get_u32(p + 4ull * j) == key);
    const uint8_t *after = p + 4ull * nk; /* children (internal) or values (leaf) */
    if (!hit) {
        const uint32_t rel = get_u32(after + 4ull * j) & (0u - (uint32_t)!leaf);
        if (rel) {
            s->count = child_count_fast(c, K, cx->kmagic, j);
            s->node = node + 4ull * rel;
            return 0;
        }
        return s->phase ? 1 : begin_backoff(cx, s);
    }
    const uint32_t phase = s->phase;
    const int top = (phase == 0) & (d + 1 >= cx->N); /* order-N entries: {prob} only */
    const uint32_t vs = 12u - 8u * (uint32_t)top;
    const uint8_t *val = after + ((4ull * K) & (0 - (uint64_t)!leaf)) + (uint64_t)vs * j;
    const float pv = get_f32(val);
    const float bv = get_f32(val + 4);   /* past a top-order value: read, not used */
    const uint32_t ch = get_u32(val + 8) & ((uint32_t)top - 1u);
    if (phase == 0) {
        s->prob = pv;
        s->len = d + 1;
        if (cx->rec && !top) {
            cx->rec[s->idx * (cx->N - 1) + (uint64_t)d] = bv;
            cx->rec_n[s->idx] = (uint8_t)(d + 1);
        }
    } else {
        const float bo2 = s->bo + bv;
        s->bo = d >= s->len ? bo2 : s->bo;
    }
    if ((d < s->m) & (ch != 0)) {
        s->node = node + 4ull * ch;
        s->count = 0;
        s->d = d + 1;
        s->key = s->q[d + 1];
        return 0;
    }
    return phase ? 1 : begin_backoff(cx, s);
}

typedef struct {
    const bt_ctx *cx;
    const uint32_t *queries;
    uint64_t lo, hi;
    int interleave;
    float *out_prob;
    uint8_t *out_len;
    int rc;
} bt_job_q;

static inline void q_finish(bt_job_q *job, const bt_query *s) {
    job->out_prob[s->idx] = s->prob + s->bo;
    if (job->out_len) job->out_len[s->idx] = (uint8_t)s->len;
}

static inline __attribute__((always_inline)) void q_prefetch(const bt_ctx *cx, const bt_query *s) {
    /* a fresh trie node: its header and first keys (most trie nodes are small B-stumps, section 5.2);
     * an inner B-tree node: its K-1 keys and its children (the fourth line: a select, not a branch) */
    const uint8_t *p = cx->base + s->node;
    SB_PREFETCH(p);
    SB_PREFETCH(p + 64);
    SB_PREFETCH(p + 128);
    SB_PREFETCH(p + (192u & (0u - (uint32_t)(s->count >= cx->K))));
}

/* The batch loop, specialised below on the number of key blocks per node (a constant: the block loop unrolls). */
static inline __attribute__((always_inline)) void run_range_nb(bt_job_q *job, const uint32_t nb) {
    const bt_ctx *cx = job->cx;
    const uint64_t N = cx->N;
    if (job->interleave <= 1) {
        bt_query s;
        for (uint64_t i = job->lo; i < job->hi; i++) {
            int r = q_start(cx, &s, job->queries + i * N, i);
            if (r < 0) { job->rc = SB_EINVAL; return; }
            while (!r) r = q_step(cx, &s, nb);
            q_finish(job, &s);
        }
        return;
    }
    /* the live queries are slots[0 .. live-1]: a finished query's slot takes the next query, or, when the batch is
     * used up, the last live slot (no per-slot 'active' test in the sweep) */
    bt_query slots[SB_BTREE_MAX_INTERLEAVE];
    const int G = job->interleave;
    uint64_t next = job->lo;
    int live = 0;
    while (live < G && next < job->hi) {
        bt_query *s = &slots[live];
        int r = q_start(cx, s, job->queries + next * N, next);
        next++;
        if (r < 0) { job->rc = SB_EINVAL; return; }
        if (r) { q_finish(job, s); continue; }
        q_prefetch(cx, s);
        live++;
    }
    bt_query *end = slots + live;
    while (end != slots) {
        for (bt_query *s = slots; s < end;) {
            if (!q_step(cx, s, nb)) {
                q_prefetch(cx, s);
                s++;
                continue;
            }
            q_finish(job, s);
            for (;;) {
                if (next >= job->hi) { *s = *--end; break; }
                int r = q_start(cx, s, job->queries + next * N, next);
                next++;
                if (r < 0) { job->rc = SB_EINVAL; return; }
                if (r) { q_finish(job, s); continue; }
                q_prefetch(cx, s);
                s++;
                break;
            }
        }
    }
}


static void run_range(bt_job_q *job) {
    switch (job->cx->nb) {
    case 1: run_range_nb(job, 1); break;
    case 2: run_range_nb(job, 2); break;
    case 3: run_range_nb(job, 3); break;
    case 4: run_range_nb(job, 4); break;
    case 5: run_range_nb(job, 5); break;
    case 6: run_range_nb(job, 6); break;
    case 7: run_range_nb(job, 7); break;
    case 8: run_range_nb(job, 8); break;
    default: run_range_nb(job, job->cx->nb); break;
    }
}

static void *query_worker(void *arg) {
    run_range((bt_job_q *)arg);
    return NULL;
}

static int query_threads(const bt_ctx *cxp, const uint32_t *queries, uint64_t n, int interleave, int threads,
                         float *out_prob, uint8_t *out_len);

int sb_btree_query(const sb_btree *t, const uint32_t *queries, uint64_t n, int interleave, int threads,
                   float *out_prob, uint8_t *out_len) {
    return sb_btree_query_ex(t, queries, n, interleave, threads, 0, out_prob, out_len);
}

/* The back-offs of rows marked pending, from their predecessor's record, in the order of the walk. */
static void stream_backoffs(const bt_ctx *cx, uint64_t n, float *out_prob) {
    const uint64_t w = cx->N - 1;
    for (uint64_t i = 1; i < n; i++) {
        if (!cx->pend[i]) continue;
        const float *r = cx->rec + (i - 1) * w;
        const int have = cx->rec_n[i - 1], m = cx->ctx_m[i];
        float bo = 0.0f;
        for (int k = cx->match_len[i]; k <= m && k <= have; k++) bo += r[k - 1];
        out_prob[i] += bo;
    }
}

int sb_btree_query_ex(const sb_btree *t, const uint32_t *queries, uint64_t n, int interleave, int threads,
                      int flags, float *out_prob, uint8_t *out_len) {
    if (!t || !queries || !out_prob) return SB_EINVAL;
    if (n == 0) return SB_EINVAL;
    if (interleave < 0 || interleave > SB_BTREE_MAX_INTERLEAVE) return SB_EINVAL;
    if (threads < 1 || threads > 1024) return SB_EINVAL;
    if (flags & ~SB_BTREE_STREAM_REUSE) return SB_EINVAL;
    bt_ctx cx = {t->data, (uint32_t)t->K, (uint32_t)t->order, t->vocab,
                 ((uint32_t)t->K - 1 + BT_LANES - 1) / BT_LANES, UINT64_MAX / (uint64_t)t->K + 1,
                 queries, NULL, NULL, NULL, NULL, NULL};
    uint8_t *scratch = NULL;
    if ((flags & SB_BTREE_STREAM_REUSE) && t->order > 1) {
        const uint64_t w = (uint64_t)t->order - 1;
        cx.rec = malloc(n * w * sizeof(float));
        scratch = malloc(4 * n);
        if (!cx.rec || !scratch) { free(cx.rec); free(scratch); return SB_ENOMEM; }
        cx.rec_n = scratch;
        cx.pend = scratch + n;
        cx.ctx_m = scratch + 2 * n;
        cx.match_len = scratch + 3 * n;
    }
    if ((uint64_t)threads > n) threads = (int)n;
    int rc = query_threads(&cx, queries, n, interleave, threads, out_prob, out_len);
    if (rc == SB_OK && cx.rec) stream_backoffs(&cx, n, out_prob);
    free(cx.rec);
    free(scratch);
    return rc;
}

static int query_threads(const bt_ctx *cxp, const uint32_t *queries, uint64_t n, int interleave, int threads,
                         float *out_prob, uint8_t *out_len) {
    const bt_ctx cx = *cxp;
    if (threads == 1) {
        bt_job_q job = {&cx, queries, 0, n, interleave, out_prob, out_len, SB_OK};
        run_range(&job);
        return job.rc;
    }
    bt_job_q *jobs = calloc((size_t)threads, sizeof(*jobs));
    if (!jobs) return SB_ENOMEM;
    for (int i = 0; i < threads; i++)
        jobs[i] = (bt_job_q){&cx, queries, n * (uint64_t)i / (uint64_t)threads,
                             n * (uint64_t)(i + 1) / (uint64_t)threads, interleave, out_prob, out_len, SB_OK};
    int rc = sb_run_threads(threads, query_worker, jobs, sizeof *jobs);
    for (int i = 0; i < threads && rc == SB_OK; i++) rc = jobs[i].rc;
    free(jobs);
    return rc;
}
