/* hashprobe.c - see hashprobe.h. */
#define _GNU_SOURCE
#include "hash/hashprobe.h"
#include "util/probing.h"

#include <pthread.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* the project's one probing table (probing.h) in one of the layouts of hashprobe.h */
struct sb_hash {
    sb_probing tab;     /* KV, KV_LINE(_OVF): 16-byte {key, value} buckets; KEYS, SPLIT*: 8-byte keys */
    uint64_t *values;   /* SPLIT*: the value of the key in bucket b is values[b] */
    size_t values_bytes;
    int values_huge;
    int sizing;         /* SB_HASH_POW2 (probing.h's MASK policy) or SB_HASH_MOD (MOD) */
    int layout;
};

#define GOLDEN 0x9E3779B97F4A7C15ULL

/* Key j of the stream with this seed: counter-based, so any j can be regenerated. */
static inline uint64_t stream_key(uint64_t seed, uint64_t j) {
    uint64_t k = sb_mix64(seed + (j + 1) * GOLDEN);
    return k ? k : 1;
}
static inline uint64_t value_of(uint64_t key) { return sb_mix64(key ^ 0xA5A5A5A5DEADBEEFULL); }

/* Per-layout constants. Every function below takes the layout L as a compile-time constant (the batch loops are
 * instantiated once per layout and sizing), so each specialises to the plain loop of its layout. */
static inline int has_inline_value(int L) {
    return L == SB_HASH_KV || L == SB_HASH_KV_LINE || L == SB_HASH_KV_LINE_OVF;
}
static inline size_t stride_of(int L) { return has_inline_value(L) ? 16 : 8; }
static inline int is_split(int L) {
    return L == SB_HASH_SPLIT || L == SB_HASH_SPLIT_PF || L == SB_HASH_SPLIT_OVF || L == SB_HASH_SPLIT_OVF_PF;
}
/* the layouts with a per-line overflow mark (hashprobe.h): lookups compare whole lines */
static inline int is_ovf(int L) {
    return L == SB_HASH_SPLIT_OVF || L == SB_HASH_SPLIT_OVF_PF || L == SB_HASH_KV_LINE_OVF;
}
/* the queue also prefetches the value line */
static inline int prefetches_value(int L) { return L == SB_HASH_SPLIT_PF || L == SB_HASH_SPLIT_OVF_PF; }
/* buckets per 64-byte line where probing starts: 1 = at the ideal bucket itself */
static inline uint64_t group_of(int L) { return has_inline_value(L) ? (L == SB_HASH_KV ? 1 : 4) : is_split(L) ? 8 : 1; }
static inline size_t bucket_bytes(int L) { return L == SB_HASH_KEYS ? 8 : 16; }

static inline uint64_t *key_at(const sb_hash *t, int L, uint64_t b) {
    return sb_probing_bucket(&t->tab, stride_of(L), b);
}

static inline uint64_t ideal(const sb_hash *t, int L, uint64_t key, int pow2) {
    uint64_t b = pow2 ? sb_probing_ideal(&t->tab, key, SB_PROBING_MASK) : sb_probing_ideal(&t->tab, key, SB_PROBING_MOD);
    return group_of(L) > 1 ? b & ~(group_of(L) - 1) : b;
}

/* ---- the overflow mark (hashprobe.h): the order of the first two keys of a full line ---- */
static inline int line_marked(const uint64_t *line, int L) { return line[0] > line[stride_of(L) / 8]; }

/* Give the full line starting at bucket b the mark `mark` by swapping its first two entries (keys and values)
 * if their order says otherwise. */
static void set_mark(sb_hash *t, int L, uint64_t b, int mark) {
    uint64_t *k = key_at(t, L, b);
    const size_t w = stride_of(L) / 8;
    if (line_marked(k, L) == mark) return;
    uint64_t tmp = k[0];
    k[0] = k[w];
    k[w] = tmp;
    if (has_inline_value(L)) { tmp = k[1]; k[1] = k[w + 1]; k[w + 1] = tmp; }
    else { tmp = t->values[b]; t->values[b] = t->values[b + 1]; t->values[b + 1] = tmp; }
}

/* Look up `key` from the line starting at bucket b (an overflow-mark layout). Occupied slots of a line are a prefix
 * (every probe of a line starts at its first slot; nothing is deleted): a hit, else an empty slot (a miss), else, at
 * the end of a full line, its mark: clear = a miss (no key of this line's or an earlier line's run was ever put past
 * it), set = the next line. Slot by slot with early exits, as sb_probing_find_from: a branch-free compare of the
 * whole line (mask, ctz) measured 2x slower on hits, the value load's address then waiting on the key line's data
 * instead of being issued speculatively on predicted branches. *stop = the slot the lookup ended at (the last slot of
 * an unmarked full line). */
static inline int probe_ovf(const sb_hash *t, int L, uint64_t key, uint64_t b, uint64_t *value, uint64_t *stop) {
    const unsigned G = (unsigned)group_of(L);
    const size_t w = stride_of(L) / 8;
#if defined(__AVX2__)
    if (is_split(L)) {
        /* a key line (8 keys) compared at once: a mask of the key and a mask of the empty slots, so where a miss's
         * scan would end costs no branch; the hit's value line was requested in the same queue step as its key
         * line (split-ovf-pf), so its address waiting on the compare costs no memory round trip */
        const __m256i kv = _mm256_set1_epi64x((long long)key), zero = _mm256_setzero_si256();
        for (;;) {
            const uint64_t *k = key_at(t, L, b);
            const __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)k);
            const __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(k + 4));
            const unsigned eq = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(lo, kv))) |
                                (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(hi, kv))) << 4;
            const unsigned em = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(lo, zero))) |
                                (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(hi, zero))) << 4;
            /* occupied slots are a prefix: a key is before the first empty slot or absent from the line */
            if (eq) {
                const unsigned i = (unsigned)__builtin_ctz(eq);
                *stop = b + i;
                *value = t->values[b + i];
                return 1;
            }
            if (em) { *stop = b + (unsigned)__builtin_ctz(em); *value = 0; return 0; }
            if (!line_marked(k, L)) { *stop = b + G - 1; *value = 0; return 0; }
            b += G;
            if (SB_UNLIKELY(b == t->tab.buckets)) b = 0;
        }
    }
#endif
    for (;;) {
        const uint64_t *k = key_at(t, L, b);
        for (unsigned i = 0; i < G; i++) {
            const uint64_t x = k[i * w];
            if (x == key) {
                *stop = b + i;
                *value = has_inline_value(L) ? k[i * w + 1] : t->values[b + i];
                return 1;
            }
            if (x == 0) { *stop = b + i; *value = 0; return 0; }
        }
        if (!line_marked(k, L)) { *stop = b + G - 1; *value = 0; return 0; }
        b += G;
        if (SB_UNLIKELY(b == t->tab.buckets)) b = 0;
    }
}

/* Probe from bucket b. Returns 1 and the value when found (KEYS: 0, it stores none); else 0. *stop = the bucket
 * probing ended at. */
static inline int probe(const sb_hash *t, int L, uint64_t key, uint64_t b, uint64_t *value, uint64_t *stop) {
#ifdef SB_SLOWDOWN_PROBE /* a deliberate slowdown for tests/test_counts.py: the count gate must catch it */
    for (volatile int w_ = 0; w_ < 4; w_++) {
    }
#endif
    if (is_ovf(L)) return probe_ovf(t, L, key, b, value, stop);
    const uint64_t *e = sb_probing_find_from(&t->tab, stride_of(L), key, b, stop);
    if (!e) { *value = 0; return 0; }
    *value = has_inline_value(L) ? e[1] : is_split(L) ? t->values[*stop] : 0;
    return 1;
}

static int valid_layout(int layout) {
    return layout == SB_HASH_KV || layout == SB_HASH_KEYS || layout == SB_HASH_KV_LINE || is_split(layout) ||
           is_ovf(layout);
}

int sb_hash_plan(uint64_t table_bytes, double load_factor, int sizing, int layout, uint64_t *buckets,
                 uint64_t *max_entries) {
    if (!(load_factor > 0.0 && load_factor < 1.0)) return SB_EINVAL;
    if (sizing != SB_HASH_POW2 && sizing != SB_HASH_MOD) return SB_EINVAL;
    if (!valid_layout(layout)) return SB_EINVAL;
    uint64_t b = table_bytes / bucket_bytes(layout);
    if (b < 2) return SB_EINVAL;
    if (sizing == SB_HASH_POW2) {
        uint64_t p = 1;
        while (p <= b / 2) p <<= 1;
        b = p;
    }
    if (is_ovf(layout)) b -= b % group_of(layout);  /* whole lines */
    if (b < 2) return SB_EINVAL;
    uint64_t m = (uint64_t)((double)b * load_factor);
    if (m >= b) m = b - 1;
    if (m == 0) return SB_EINVAL;
    *buckets = b;
    *max_entries = m;
    return SB_OK;
}

int sb_hash_create(uint64_t buckets, int sizing, int layout, int huge, sb_hash **out) {
    *out = NULL;
    if (buckets < 2 || (sizing != SB_HASH_POW2 && sizing != SB_HASH_MOD) || !valid_layout(layout)) return SB_EINVAL;
    if (is_ovf(layout) && (buckets % group_of(layout) != 0 || buckets < 2 * group_of(layout))) return SB_EINVAL;
    sb_hash *t = calloc(1, sizeof(*t));
    if (!t) return SB_ENOMEM;
    int rc = sb_probing_init(&t->tab, buckets, stride_of(layout),
                             sizing == SB_HASH_POW2 ? SB_PROBING_MASK : SB_PROBING_MOD, huge);
    if (rc != SB_OK) { free(t); return rc; }
    if (is_split(layout)) {
        t->values_bytes = (size_t)buckets * sizeof(uint64_t);
        t->values = sb_page_alloc(t->values_bytes, huge, &t->values_huge);
        if (!t->values) { sb_probing_release(&t->tab); free(t); return SB_ENOMEM; }
    }
    t->sizing = sizing;
    t->layout = layout;
    *out = t;
    return SB_OK;
}

void sb_hash_free(sb_hash *t) {
    if (!t) return;
    sb_probing_release(&t->tab);
    sb_huge_free(t->values, t->values_bytes);
    free(t);
}

uint64_t sb_hash_buckets(const sb_hash *t) { return t->tab.buckets; }
uint64_t sb_hash_entries(const sb_hash *t) { return t->tab.size; }
uint64_t sb_hash_bytes(const sb_hash *t) { return t->tab.bytes + t->values_bytes; }
int sb_hash_uses_huge_pages(const sb_hash *t) { return t->tab.huge; }

/* the value of the key in bucket b (SPLIT, KV, KV_LINE) */
static inline void set_value(sb_hash *t, int L, uint64_t b, uint64_t value) {
    if (has_inline_value(L)) key_at(t, L, b)[1] = value;
    else if (is_split(L)) t->values[b] = value;
}

/* Insert into an overflow-mark layout: overwrite a present key's value; else walk the lines from the ideal one,
 * marking every full line passed, and take the first empty slot; a line that this fills gets the clear mark. */
static int insert_ovf(sb_hash *t, int L, uint64_t key, uint64_t value, int pow2) {
    uint64_t b = ideal(t, L, key, pow2), v, stop;
    if (probe_ovf(t, L, key, b, &v, &stop)) { set_value(t, L, stop, value); return SB_OK; }
    if (t->tab.size >= t->tab.buckets - 1) return SB_EFULL;  /* the table would become 100% full */
    const uint64_t G = group_of(L);
    const size_t w = stride_of(L) / 8;
    for (;;) {
        uint64_t *k = key_at(t, L, b);
        for (uint64_t i = 0; i < G; i++) {
            if (k[i * w] != 0) continue;
            k[i * w] = key;
            set_value(t, L, b + i, value);
            t->tab.size++;
            if (i == G - 1) set_mark(t, L, b, 0);
            return SB_OK;
        }
        set_mark(t, L, b, 1);
        b += G;
        if (b == t->tab.buckets) b = 0;
    }
}

/* The marks of an overflow-mark table filled slot by slot (fill_random's lock-free fill probes as SPLIT/KV_LINE
 * do): every full line first gets the clear order, then every line between a key's ideal line and its own is
 * marked. Exact and idempotent: nothing moves across lines, and a key sits past a line only if its insertion found
 * that line full. */
static void ovf_mark_all(sb_hash *t, int L) {
    const int pow2 = t->sizing == SB_HASH_POW2;
    const uint64_t G = group_of(L), B = t->tab.buckets;
    const size_t w = stride_of(L) / 8;
    for (uint64_t b = 0; b < B; b += G)
        if (key_at(t, L, b)[(G - 1) * w] != 0) set_mark(t, L, b, 0);
    for (uint64_t b = 0; b < B; b += G) {
        const uint64_t *k = key_at(t, L, b);
        for (uint64_t i = 0; i < G && k[i * w] != 0; i++)
            for (uint64_t l = ideal(t, L, k[i * w], pow2); l != b; l = l + G == B ? 0 : l + G) set_mark(t, L, l, 1);
    }
}

int sb_hash_insert(sb_hash *t, const uint64_t *keys, const uint64_t *values, size_t n) {
    const int pow2 = t->sizing == SB_HASH_POW2, L = t->layout;
    for (size_t i = 0; i < n; i++) {
        if (keys[i] == 0) return SB_EINVAL;
        if (is_ovf(L)) {
            int rc = insert_ovf(t, L, keys[i], values[i], pow2);
            if (rc != SB_OK) return rc;
            continue;
        }
        int found;
        uint64_t *e = sb_probing_slot(&t->tab, stride_of(L), keys[i], ideal(t, L, keys[i], pow2),
                                      t->tab.buckets - 1, &found);
        if (!e) return SB_EFULL;  /* the table would become 100% full */
        e[0] = keys[i];
        set_value(t, L, (uint64_t)((char *)e - (char *)t->tab.entries) / stride_of(L), values[i]);
        t->tab.size += !found;
    }
    return SB_OK;
}

/* What the queue prefetches for a key whose probing starts at bucket b.
 * KV: the line of the ideal bucket and, when the expected probe run (about 5 entries = 80 bytes for a miss at load
 * 2/3) would cross into the next line, that one too; with 16-byte entries the second line is where most of the
 * remaining misses come from. KEYS (KenLM's 8-byte keys): the ideal bucket's line and always the next one (KenLM's
 * benchmark prefetches the first only); a miss's run, 5 slots on average at load 2/3 with a long tail, crosses into
 * it from most offsets. Measured at 1 GiB, one thread, misses, queue 16, six interleaved process pairs of the two
 * builds: 31.0 -> 29.3 ns median (paired ratio 1.06-1.09 in five, 0.98 in one); prefetching the next line only from
 * offsets where a 5-slot run would cross (24 bytes and on) gained nothing measurable. KV_LINE: the line probing
 * starts at. SPLIT: the key line. SPLIT_PF: the key line and, speculatively, the value line of the same buckets
 * (used only on a hit). SPLIT_OVF, SPLIT_OVF_PF: as SPLIT, SPLIT_PF. KV_LINE_OVF: its line and, as KV, the next one
 * (measured at 1 GiB, one thread: hits 22.9 -> 20.6 ns, as kv's 19.7; misses unchanged, 29). */
static inline void prefetch_bucket(const sb_hash *t, int L, uint64_t b) {
    const char *p = (const char *)key_at(t, L, b);
    SB_PREFETCH(p);
    if (L == SB_HASH_KV && ((uintptr_t)p & 63u) + 4 * 16 >= 64u) SB_PREFETCH(p + 64);
    if (L == SB_HASH_KEYS) SB_PREFETCH(p + 64);
    if (prefetches_value(L)) SB_PREFETCH(&t->values[b]);
    if (L == SB_HASH_KV_LINE_OVF) SB_PREFETCH(p + 64);  /* as KV: the next line, where an overflowing run goes */
}

/* The batch loop, plain (q == 0) or through a prefetch queue of size q (Mokry Alg. 3.2):
 * ADD(newKey): look up the key in the current slot, store newKey there, prefetch its ideal bucket,
 * advance. The queue keeps each in-flight key with its ideal bucket so the hash is computed once. */
typedef struct {
    uint64_t key;
    uint64_t bucket;
    size_t index;
} slot_t;

#define RUN_BATCH(T, L, KEY_AT, N, Q, POW2, ON_RESULT)                                        \
    do {                                                                                    \
        uint64_t v_, stop_;                                                                 \
        if ((Q) == 0) {                                                                     \
            for (size_t i_ = 0; i_ < (N); i_++) {                                           \
                uint64_t k_ = KEY_AT(i_);                                                   \
                int f_ = probe((T), (L), k_, ideal((T), (L), k_, (POW2)), &v_, &stop_);     \
                ON_RESULT(i_, k_, f_, v_, stop_);                                           \
            }                                                                               \
        } else {                                                                            \
            slot_t q_[SB_HASH_MAX_QUEUE];                                                   \
            size_t cur_ = 0, filled_ = 0;                                                   \
            for (size_t i_ = 0; i_ < (N); i_++) {                                           \
                if (filled_ == (size_t)(Q)) {                                               \
                    int f_ = probe((T), (L), q_[cur_].key, q_[cur_].bucket, &v_, &stop_);   \
                    ON_RESULT(q_[cur_].index, q_[cur_].key, f_, v_, stop_);                 \
                } else {                                                                    \
                    filled_++;                                                              \
                }                                                                           \
                uint64_t k_ = KEY_AT(i_);                                                   \
                q_[cur_].key = k_;                                                          \
                q_[cur_].bucket = ideal((T), (L), k_, (POW2));                              \
                q_[cur_].index = i_;                                                        \
                prefetch_bucket((T), (L), q_[cur_].bucket);                                 \
                if (++cur_ == (size_t)(Q)) cur_ = 0;                                        \
            }                                                                               \
            /* drain, oldest first */                                                       \
            size_t start_ = filled_ == (size_t)(Q) ? cur_ : 0;                              \
            for (size_t d_ = 0; d_ < filled_; d_++) {                                       \
                size_t s_ = (start_ + d_) % (size_t)(Q);                                    \
                int f_ = probe((T), (L), q_[s_].key, q_[s_].bucket, &v_, &stop_);           \
                ON_RESULT(q_[s_].index, q_[s_].key, f_, v_, stop_);                         \
            }                                                                               \
        }                                                                                   \
    } while (0)

/* Run BODY(L) with the layout as a compile-time constant. */
#define SB_HASH_FOR_LAYOUT(layout, BODY)                          \
    do {                                                          \
        switch (layout) {                                         \
        case SB_HASH_KV: BODY(SB_HASH_KV); break;                 \
        case SB_HASH_KEYS: BODY(SB_HASH_KEYS); break;             \
        case SB_HASH_KV_LINE: BODY(SB_HASH_KV_LINE); break;       \
        case SB_HASH_SPLIT: BODY(SB_HASH_SPLIT); break;           \
        case SB_HASH_SPLIT_OVF: BODY(SB_HASH_SPLIT_OVF); break;   \
        case SB_HASH_SPLIT_OVF_PF: BODY(SB_HASH_SPLIT_OVF_PF); break; \
        case SB_HASH_KV_LINE_OVF: BODY(SB_HASH_KV_LINE_OVF); break; \
        default: BODY(SB_HASH_SPLIT_PF); break;                   \
        }                                                         \
    } while (0)

int sb_hash_find_batch(const sb_hash *t, const uint64_t *keys, size_t n, int queue_size,
                       uint64_t *values, uint8_t *found) {
    if (queue_size < 0 || queue_size > SB_HASH_MAX_QUEUE) return SB_EINVAL;
    const int pow2 = t->sizing == SB_HASH_POW2;
#define KEY_ARRAY(i) (keys[i])
#define STORE(idx, k, f, v, s) do { values[idx] = (v); found[idx] = (uint8_t)(f); (void)(k); (void)(s); } while (0)
#define FIND(L)                                                                                \
    do {                                                                                       \
        if (pow2) RUN_BATCH(t, (L), KEY_ARRAY, n, queue_size, 1, STORE);                       \
        else RUN_BATCH(t, (L), KEY_ARRAY, n, queue_size, 0, STORE);                            \
    } while (0)
    SB_HASH_FOR_LAYOUT(t->layout, FIND);
#undef FIND
#undef KEY_ARRAY
#undef STORE
    return SB_OK;
}

/* ---- threaded fill ---- */
typedef struct {
    sb_hash *t;
    uint64_t seed, begin, end;
    int status;
} fill_job;

static void *fill_worker(void *arg) {
    fill_job *job = arg;
    sb_hash *t = job->t;
    const int pow2 = t->sizing == SB_HASH_POW2;
    uint64_t added = 0;
    for (uint64_t j = job->begin; j < job->end; j++) {
        uint64_t key = stream_key(job->seed, j);
        const int L = t->layout;
        uint64_t b = ideal(t, L, key, pow2);
        for (;;) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(key_at(t, L, b), &expected, key, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                set_value(t, L, b, value_of(key));
                added++;
                break;
            }
            if (expected == key) break; /* duplicate key in the stream */
            if (++b == t->tab.buckets) b = 0;
        }
    }
    __atomic_fetch_add(&t->tab.size, added, __ATOMIC_RELAXED);
    job->status = SB_OK;
    return NULL;
}

int sb_hash_fill_random(sb_hash *t, uint64_t n_entries, uint64_t seed, int threads) {
    if (threads < 1 || threads > 1024) return SB_EINVAL;
    if (t->tab.size + n_entries >= t->tab.buckets) return SB_EFULL;
    fill_job *jobs = calloc((size_t)threads, sizeof(*jobs));
    if (!jobs) return SB_ENOMEM;
    for (int i = 0; i < threads; i++)
        jobs[i] = (fill_job){t, seed, n_entries * (uint64_t)i / (uint64_t)threads,
                             n_entries * (uint64_t)(i + 1) / (uint64_t)threads, SB_OK};
    int rc = sb_run_threads(threads, fill_worker, jobs, sizeof *jobs);
    free(jobs);
    if (rc == SB_OK && is_ovf(t->layout)) ovf_mark_all(t, t->layout);
    return rc;
}

/* ---- the benchmark ---- */
typedef struct {
    const sb_hash *t;
    const sb_hash_bench_args *a;
    pthread_barrier_t *barrier;
    uint64_t begin, end;        /* slice of the global query stream */
    uint64_t *keys;             /* pre-generated keys of this slice */
    uint64_t start_ns, end_ns, cpu_start_ns, cpu_end_ns, checksum, found;
    int thread_index;
} bench_job;

static inline uint64_t query_key(const sb_hash_bench_args *a, uint64_t j) {
    if (a->mode == SB_LOOKUP_LINE) return sb_mix64(a->query_seed + (j + 1) * GOLDEN); /* a bucket seed */
    if (a->mode == SB_LOOKUP_HIT) {
        uint64_t r = sb_mix64(a->query_seed + (j + 1) * GOLDEN);
        uint64_t idx = (uint64_t)(((unsigned __int128)r * a->filled) >> 64);
        return stream_key(a->fill_seed, idx);
    }
    return stream_key(a->query_seed ^ 0x5DEECE66DULL, j);
}

static void *bench_worker(void *arg) {
    bench_job *job = arg;
    const sb_hash *t = job->t;
    const sb_hash_bench_args *a = job->a;
    const int pow2 = t->sizing == SB_HASH_POW2;
    const size_t n = (size_t)(job->end - job->begin);
    if (a->pin) sb_pin_to_cpu(job->thread_index);
    for (size_t i = 0; i < n; i++) job->keys[i] = query_key(a, job->begin + i);
    /* burn-in: untimed lookups from beyond the end of the stream, so the caches hold nothing useful */
    uint64_t sink = 0, v, stop;
    for (uint64_t i = 0; i < a->burnin; i++) {
        uint64_t k = query_key(a, a->lookups + job->begin + i);
        sink += probe(t, t->layout, k, ideal(t, t->layout, k, pow2), &v, &stop) ? v : stop;
    }
    uint64_t checksum = sink * 0, found = 0;
    pthread_barrier_wait(job->barrier);
    job->start_ns = sb_now_ns();
    job->cpu_start_ns = sb_thread_cpu_ns();
    const uint64_t *keys = job->keys;
#define KEY_ARRAY(i) (keys[i])
/* a hit folds its value (KEYS stores none: recomputed from the key, as fill_random made it), a miss its key */
#define FOLD(idx, k_, f, v_, s_)                                                               \
    do {                                                                                       \
        (void)(idx); (void)(s_);                                                               \
        checksum += (f) ? (L_ == SB_HASH_KEYS ? value_of(k_) : (v_)) : (k_);                   \
        found += (uint64_t)(f);                                                                \
    } while (0)
#define LOOKUPS(L)                                                                             \
    do {                                                                                       \
        const int L_ = (L);                                                                    \
        if (pow2) RUN_BATCH(t, (L), KEY_ARRAY, n, a->queue_size, 1, FOLD);                     \
        else RUN_BATCH(t, (L), KEY_ARRAY, n, a->queue_size, 0, FOLD);                          \
    } while (0)
    if (a->mode == SB_LOOKUP_LINE) {
        /* independent random reads: the out-of-order core overlaps them by itself */
        const size_t stride = stride_of(t->layout);
        for (size_t i = 0; i < n; i++) {
            checksum += *(const uint64_t *)sb_probing_bucket(
                &t->tab, stride, (uint64_t)(((unsigned __int128)keys[i] * t->tab.buckets) >> 64));
        }
        found = n;
    } else {
        SB_HASH_FOR_LAYOUT(t->layout, LOOKUPS);
    }
#undef KEY_ARRAY
#undef FOLD
#undef LOOKUPS
    job->cpu_end_ns = sb_thread_cpu_ns();
    job->end_ns = sb_now_ns();
    job->checksum = checksum;
    job->found = found;
    return NULL;
}

int sb_hash_bench(const sb_hash *t, const sb_hash_bench_args *a, sb_hash_bench_result *res) {
    memset(res, 0, sizeof(*res));
    if (a->queue_size < 0 || a->queue_size > SB_HASH_MAX_QUEUE) return SB_EINVAL;
    if (a->threads < 1 || a->threads > 1024) return SB_EINVAL;
    if (a->mode != SB_LOOKUP_HIT && a->mode != SB_LOOKUP_MISS && a->mode != SB_LOOKUP_LINE) return SB_EINVAL;
    if (a->mode == SB_LOOKUP_LINE && a->queue_size != 0) return SB_EINVAL;
    if (a->lookups < (uint64_t)a->threads) return SB_EINVAL;
    if (a->mode == SB_LOOKUP_HIT && a->filled == 0) return SB_EINVAL;
    const int T = a->threads;
    bench_job *jobs = calloc((size_t)T, sizeof(*jobs));
    pthread_t *tids = calloc((size_t)T, sizeof(*tids));
    pthread_barrier_t barrier;
    if (!jobs || !tids) { free(jobs); free(tids); return SB_ENOMEM; }
    int rc = SB_OK;
    for (int i = 0; i < T; i++) {
        jobs[i].begin = a->lookups * (uint64_t)i / (uint64_t)T;
        jobs[i].end = a->lookups * (uint64_t)(i + 1) / (uint64_t)T;
        jobs[i].keys = malloc(sizeof(uint64_t) * (size_t)(jobs[i].end - jobs[i].begin));
        if (!jobs[i].keys) rc = SB_ENOMEM;
    }
    if (rc == SB_OK && pthread_barrier_init(&barrier, NULL, (unsigned)T) != 0) rc = SB_ETHREAD;
    int started = 0;
    if (rc == SB_OK) {
        for (int i = 0; i < T; i++) {
            jobs[i].t = t;
            jobs[i].a = a;
            jobs[i].barrier = &barrier;
            jobs[i].thread_index = i;
            if (pthread_create(&tids[i], NULL, bench_worker, &jobs[i]) != 0) { rc = SB_ETHREAD; break; }
            started++;
        }
        if (rc != SB_OK) {
            /* threads already started wait at the barrier forever: cannot happen cleanly; abort loudly */
            abort();
        }
        for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
        pthread_barrier_destroy(&barrier);
        uint64_t first = UINT64_MAX, last = 0;
        for (int i = 0; i < T; i++) {
            if (jobs[i].start_ns < first) first = jobs[i].start_ns;
            if (jobs[i].end_ns > last) last = jobs[i].end_ns;
            uint64_t own = jobs[i].end_ns - jobs[i].start_ns;
            if (own > res->max_thread_ns) res->max_thread_ns = own;
            res->cpu_ns += jobs[i].cpu_end_ns - jobs[i].cpu_start_ns;
            res->checksum += jobs[i].checksum;
            res->found += jobs[i].found;
        }
        res->wall_ns = last - first;
    }
    for (int i = 0; i < T; i++) free(jobs[i].keys);
    free(jobs);
    free(tids);
    return rc;
}

int sb_hash_probe_stats(const sb_hash *t, const sb_hash_bench_args *a, double *mean_probes,
                        double *mean_lines) {
    if (a->mode != SB_LOOKUP_HIT && a->mode != SB_LOOKUP_MISS) return SB_EINVAL;
    if (a->mode == SB_LOOKUP_HIT && a->filled == 0) return SB_EINVAL;
    const int pow2 = t->sizing == SB_HASH_POW2;
    const uint64_t n = a->lookups < 1000000 ? a->lookups : 1000000;
    if (n == 0) return SB_EINVAL;
    const int L = t->layout;
    const size_t stride = stride_of(L);
    uint64_t probes = 0, lines = 0;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t key = query_key(a, j), b = ideal(t, L, key, pow2), v, stop;
        int f = probe(t, L, key, b, &v, &stop);
        uint64_t len = (stop >= b ? stop - b : stop + t->tab.buckets - b) + 1;
        uintptr_t base = (uintptr_t)t->tab.entries;
        uintptr_t first = (base + b * stride) >> 6;
        uintptr_t last = (base + ((b + len - 1) % t->tab.buckets) * stride) >> 6;
        probes += len;
        lines += stop >= b ? (uint64_t)(last - first + 1)
                           : (uint64_t)(((base + (t->tab.buckets - 1) * stride) >> 6) - first + 1) +
                                 (uint64_t)(last - (base >> 6) + 1);
        if (f && is_split(L)) lines++;  /* the value line */
    }
    *mean_probes = (double)probes / (double)n;
    *mean_lines = (double)lines / (double)n;
    return SB_OK;
}
