/* pb/bin.c - see bin.h. */
#define _GNU_SOURCE
#include "pb/bin.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb/table_reader.h"
#include "util/probing.h"

#define NO_ID UINT32_MAX
static const char MAGIC[8] = {'S', 'B', 'P', 'T', 'B', 'I', 'N', '1'};
/* version 2: checksums of the header and of the body, and a provenance section (the source tables' identity) */
enum { VERSION = 2, HEADER_BYTES = 256, F_COMPRESSED = 1 };

typedef struct {
    char magic[8];
    uint32_t version, compressed, ro_mode, max_len;
    uint32_t n_src_vocab, n_tgt_vocab;
    uint64_t n_src_phrases, n_pairs, n_ro;
    uint64_t src_slots, phr_slots, ro_slots;
    uint64_t off_src_strings, off_src_hash, off_tgt_strings, len_tgt_strings, off_records, off_phr_hash, off_cache,
        off_ro_records, off_ro_hash, file_size;
    uint64_t off_meta, len_meta;   /* provenance: UTF-8 text from the caller (sb_pb_binb_set_meta) */
    uint64_t body_sum;             /* checksum of bytes [HEADER_BYTES, file_size) */
    uint64_t header_sum;           /* checksum of the header bytes before this field */
} header_t;
_Static_assert(sizeof(header_t) <= HEADER_BYTES, "header too large");

/* a 64-bit checksum over 8-byte words in four interleaved lanes (word i goes to lane i % 4, so the multiplies of
 * the lanes overlap; a last partial word padded with zeros): every step is a bijection of its lane, so one changed
 * word always changes the result. Blocks of a multiple of 32 bytes chain (sum_block(b, sum_block(a, s))); sum_final
 * folds the lanes and the length. */
#define SUM_SEED 0x53425054424E3253ULL
typedef struct { uint64_t h[4]; } sum_t;
static inline uint64_t sum_step(uint64_t h, uint64_t w) {
    h ^= w;
    return (h << 29 | h >> 35) * 0x9E3779B97F4A7C15ULL;
}
static sum_t sum_init(uint64_t seed) {
    sum_t s = {{seed, seed ^ 0x1111111111111111ULL, seed ^ 0x2222222222222222ULL, seed ^ 0x3333333333333333ULL}};
    return s;
}
static sum_t sum_block(const uint8_t *p, size_t n, sum_t s) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, 32);
        for (int k = 0; k < 4; k++) s.h[k] = sum_step(s.h[k], w[k]);
    }
    for (int k = 0; i < n; k++, i += 8) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        s.h[k] = sum_step(s.h[k], w);
    }
    return s;
}
static uint64_t sum_final(sum_t s, uint64_t n) {
    uint64_t h = s.h[0] ^ (s.h[1] << 16 | s.h[1] >> 48) ^ (s.h[2] << 32 | s.h[2] >> 32) ^ (s.h[3] << 48 | s.h[3] >> 16);
    return sb_mix64(h ^ n) | 1;
}
/* the checksum of the whole 256-byte header (padding included), its own field read as 0 */
static uint64_t header_checksum(const uint8_t *raw) {
    uint8_t b[HEADER_BYTES];
    memcpy(b, raw, HEADER_BYTES);
    memset(b + offsetof(header_t, header_sum), 0, sizeof(uint64_t));
    return sum_final(sum_block(b, HEADER_BYTES, sum_init(SUM_SEED + 1)), HEADER_BYTES);
}

typedef struct { uint64_t key, off; } slot_t;   /* phrase and reordering hashes: key 0 = empty */
typedef struct { uint64_t key; uint32_t id, str; } vslot_t;   /* source vocabulary */

static uint64_t hash_str(const char *s, size_t len) { return sb_str_hash(s, len) | 1; }

static uint64_t hash_ids(const uint32_t *a, int n, const uint32_t *b, int m) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n ^ ((uint64_t)m << 8);
    for (int i = 0; i < n; i++) h = sb_mix64(h ^ a[i]);
    for (int i = 0; i < m; i++) h = sb_mix64(h ^ ((uint64_t)b[i] << 1 | 1));
    return h | 1;
}

/* ---------------------------------------------------------------- varints */
static inline void put_u32(uint8_t **p, uint32_t x, int compressed) {
    if (!compressed) { memcpy(*p, &x, 4); *p += 4; return; }
    while (x >= 0x80) { *(*p)++ = (uint8_t)(x | 0x80); x >>= 7; }
    *(*p)++ = (uint8_t)x;
}
/* a word id at *p, not reading at or past end: 0 if the bytes are not one (past the end, a varint longer than 5
 * bytes or above 2^32) */
static inline int get_u32(const uint8_t **p, const uint8_t *end, int compressed, uint32_t *out) {
    const uint8_t *q = *p;
    if (!compressed) {
        if (end - q < 4) return 0;
        memcpy(out, q, 4);
        *p = q + 4;
        return 1;
    }
    uint32_t x = 0;
    for (int s = 0; s < 35; s += 7) {
        if (q >= end) return 0;
        uint8_t b = *q++;
        if (s == 28 && (b & 0x70)) return 0;
        x |= (uint32_t)(b & 0x7f) << s;
        if (!(b & 0x80)) { *out = x; *p = q; return 1; }
    }
    return 0;
}

/* ---------------------------------------------------------------- builder */
typedef struct {
    uint32_t src, tgt_off;
    uint16_t tgt_len;
    uint8_t has_ro;
    float tm[4], ro[6];
    uint64_t next_copy;   /* the next line repeating this pair (index + 1), or 0 */
} pair_t;

struct sb_pb_binb {
    sb_pb_vocab sv, tv;
    sb_pb_reader rd;     /* the text tables' reader, this builder its sink; its error is the builder's */
    uint32_t *src_words; uint64_t n_src_words, cap_src_words;
    uint64_t *src_off;   /* per source phrase: offset into src_words; length in src_len */
    uint8_t *src_len;
    uint64_t *src_freq;
    uint32_t n_src, cap_src;
    sb_index src_ix;     /* of the source phrases */
    uint32_t *tgt_words; uint64_t n_tgt_words, cap_tgt_words;
    pair_t *pair; uint64_t n_pair, cap_pair;
    sb_index pair_ix;    /* of the pairs, by (source, target); built before the reordering table */
    uint64_t ro_attached, bytes;
    int max_len;
    char *meta; size_t meta_len;
};

static int phrase_record(sb_pb_reader *rd, const sb_pb_record *rec);
static int reordering_record(sb_pb_reader *rd, const sb_pb_record *rec);

int sb_pb_binb_new(sb_pb_binb **out) {
    *out = NULL;
    sb_pb_binb *b = calloc(1, sizeof *b);
    if (!b) return SB_ENOMEM;
    b->rd = (sb_pb_reader){.src = &b->sv, .tgt = &b->tv, .phrase = phrase_record, .reordering = reordering_record,
                           .sink = b, .want_counts = 1};
    *out = b;
    return SB_OK;
}

void sb_pb_binb_free(sb_pb_binb *b) {
    if (!b) return;
    sb_pb_vocab_free(&b->sv);
    sb_pb_vocab_free(&b->tv);
    free(b->src_words); free(b->src_off); free(b->src_len); free(b->src_freq); sb_index_free(&b->src_ix);
    free(b->tgt_words); free(b->pair); sb_index_free(&b->pair_ix); free(b->meta);
    free(b);
}

int sb_pb_binb_set_meta(sb_pb_binb *b, const char *text, size_t len) {
    char *m = malloc(len ? len : 1);
    if (!m) return SB_ENOMEM;
    memcpy(m, text, len);
    free(b->meta);
    b->meta = m;
    b->meta_len = len;
    return SB_OK;
}

uint64_t sb_pb_binb_error_line(const sb_pb_binb *b) { return b->rd.err_line; }
const char *sb_pb_binb_error_message(const sb_pb_binb *b) { return b->rd.err; }
void sb_pb_binb_counts(const sb_pb_binb *b, uint64_t *c) {
    c[0] = b->n_pair; c[1] = b->n_src; c[2] = b->rd.ro_lines; c[3] = b->ro_attached; c[4] = b->bytes;
    c[5] = (uint64_t)b->max_len;
}

static int grow(void **a, uint64_t *cap, uint64_t need, size_t elem) {
    if (need <= *cap) return SB_OK;
    uint64_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *p = realloc(*a, c * elem);
    if (!p) return SB_ENOMEM;
    *a = p;
    *cap = c;
    return SB_OK;
}

/* the source phrase ids[0 .. n), or NO_ID with *end = the empty slot the probe ended at */
static uint32_t src_probe(const sb_pb_binb *b, const uint32_t *ids, int n, uint64_t *end) {
    uint64_t i = sb_index_start(&b->src_ix, hash_ids(ids, n, NULL, 0));
    for (uint32_t x; (x = sb_index_at(&b->src_ix, i)) != UINT32_MAX; i = sb_index_step(&b->src_ix, i))
        if (b->src_len[x] == n && !memcmp(b->src_words + b->src_off[x], ids, (size_t)n * 4)) return (uint32_t)x;
    *end = i;
    return NO_ID;
}

static uint32_t src_find(const sb_pb_binb *b, const uint32_t *ids, int n) {
    uint64_t end;
    return sb_index_slots(&b->src_ix) ? src_probe(b, ids, n, &end) : NO_ID;
}

static int src_rehash(sb_pb_binb *b, uint64_t slots) {
    int rc = sb_index_reset(&b->src_ix, slots);
    if (rc != SB_OK) return rc;
    for (uint32_t k = 0; k < b->n_src; k++)
        sb_index_add(&b->src_ix, hash_ids(b->src_words + b->src_off[k], b->src_len[k], NULL, 0), k);
    return SB_OK;
}

static int src_intern(sb_pb_binb *b, const uint32_t *ids, int n, uint32_t *out) {
    uint64_t end = 0;
    uint32_t k = sb_index_slots(&b->src_ix) ? src_probe(b, ids, n, &end) : NO_ID;
    if (k != NO_ID) { *out = k; return SB_OK; }
    if (sb_index_crowded(&b->src_ix, 50)) {
        uint64_t slots = sb_index_slots(&b->src_ix);
        if (src_rehash(b, slots ? slots * 2 : 4096)) return SB_ENOMEM;
        src_probe(b, ids, n, &end);
    }
    if (b->n_src == b->cap_src) {
        uint32_t cap = b->cap_src ? b->cap_src * 2 : 4096;
        uint64_t *o = realloc(b->src_off, cap * sizeof *o);
        if (!o) return SB_ENOMEM;
        b->src_off = o;
        uint8_t *l = realloc(b->src_len, cap);
        if (!l) return SB_ENOMEM;
        b->src_len = l;
        uint64_t *f = realloc(b->src_freq, cap * sizeof *f);
        if (!f) return SB_ENOMEM;
        b->src_freq = f;
        b->cap_src = cap;
    }
    if (grow((void **)&b->src_words, &b->cap_src_words, b->n_src_words + (uint64_t)n, 4)) return SB_ENOMEM;
    memcpy(b->src_words + b->n_src_words, ids, (size_t)n * 4);
    k = b->n_src++;
    b->src_off[k] = b->n_src_words;
    b->src_len[k] = (uint8_t)n;
    b->src_freq[k] = 0;
    b->n_src_words += (uint64_t)n;
    sb_index_put(&b->src_ix, end, k);
    *out = k;
    return SB_OK;
}

static int phrase_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_binb *b = rd->sink;
    pair_t pr;
    memset(&pr, 0, sizeof pr);
    memcpy(pr.tm, rec->scores, sizeof pr.tm);
    int rc, nt = rec->nt;
    if ((rc = src_intern(b, rec->src, rec->ns, &pr.src))) return rc;
    /* the source phrase's training count (Moses' counts field: target, source, pair) ranks the cache */
    uint64_t freq = rec->src_count ? rec->src_count : 1;
    if (freq > b->src_freq[pr.src]) b->src_freq[pr.src] = freq;
    if (grow((void **)&b->tgt_words, &b->cap_tgt_words, b->n_tgt_words + (uint64_t)nt, 4)) return SB_ENOMEM;
    if (b->n_tgt_words + (uint64_t)nt > UINT32_MAX) return sb_pb_reader_fail(rd, rec->line, "phrase table too large");
    memcpy(b->tgt_words + b->n_tgt_words, rec->tgt, (size_t)nt * 4);
    pr.tgt_off = (uint32_t)b->n_tgt_words;
    pr.tgt_len = (uint16_t)nt;
    b->n_tgt_words += (uint64_t)nt;
    if (grow((void **)&b->pair, &b->cap_pair, b->n_pair + 1, sizeof *b->pair)) return SB_ENOMEM;
    b->pair[b->n_pair++] = pr;
    if (rec->ns > b->max_len) b->max_len = rec->ns;
    return SB_OK;
}

int sb_pb_binb_feed_phrases(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line) {
    if (sb_index_slots(&b->pair_ix)) return SB_EINVAL;  /* phrases first, then the reordering table */
    return sb_pb_read_phrases(&b->rd, buf, len, first_line);
}

static uint64_t pair_hash(const sb_pb_binb *b, uint32_t src, const uint32_t *tgt, int nt) {
    return hash_ids(&src, 1, tgt, nt);
}

/* the first pair (src, tgt[0 .. nt)), or -1 with *end = the empty slot the probe ended at */
static int64_t pair_probe(const sb_pb_binb *b, uint32_t src, const uint32_t *tgt, int nt, uint64_t *end) {
    uint64_t i = sb_index_start(&b->pair_ix, pair_hash(b, src, tgt, nt));
    for (uint32_t k; (k = sb_index_at(&b->pair_ix, i)) != UINT32_MAX; i = sb_index_step(&b->pair_ix, i)) {
        const pair_t *q = &b->pair[k];
        if (q->src == src && q->tgt_len == nt && !memcmp(b->tgt_words + q->tgt_off, tgt, (size_t)nt * 4)) return k;
    }
    *end = i;
    return -1;
}

static int pair_index(sb_pb_binb *b) {
    if (b->n_pair >= UINT32_MAX) return SB_EFULL;
    uint64_t slots = 1024;
    while (slots < b->n_pair * 2) slots *= 2;
    int rc = sb_index_reset(&b->pair_ix, slots);
    if (rc != SB_OK) return rc;
    for (uint64_t k = 0; k < b->n_pair; k++) {
        const pair_t *p = &b->pair[k];
        uint64_t end;
        int64_t first = pair_probe(b, p->src, b->tgt_words + p->tgt_off, p->tgt_len, &end);
        if (first < 0) sb_index_put(&b->pair_ix, end, (uint32_t)k);
        else {   /* a repeated pair: chained to its first line, so every copy gets the reordering scores (Moses2) */
            pair_t *q = &b->pair[first];
            while (q->next_copy) q = &b->pair[q->next_copy - 1];
            q->next_copy = k + 1;
        }
    }
    return SB_OK;
}

static int reordering_record(sb_pb_reader *rd, const sb_pb_record *rec) {
    sb_pb_binb *b = rd->sink;
    uint32_t src = src_find(b, rec->src, rec->ns);
    if (src == NO_ID) return SB_OK;
    uint64_t end;
    int64_t first = pair_probe(b, src, rec->tgt, rec->nt, &end);
    if (first < 0) return SB_OK;
    pair_t *q = &b->pair[first];
    if (q->has_ro) return sb_pb_reader_fail(rd, rec->line, "the pair appears twice in the reordering table");
    for (;;) {
        memcpy(q->ro, rec->scores, sizeof q->ro);
        q->has_ro = 1;
        b->ro_attached++;
        if (!q->next_copy) break;
        q = &b->pair[q->next_copy - 1];
    }
    return SB_OK;
}

int sb_pb_binb_feed_reordering(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line) {
    if (!sb_index_slots(&b->pair_ix)) {
        int rc = pair_index(b);
        if (rc) return rc;
    }
    return sb_pb_read_reordering(&b->rd, buf, len, first_line);
}

/* ---- writing ---- */
typedef struct { FILE *f; uint64_t off; int err; } wr_t;

static void wr(wr_t *w, const void *p, size_t n) {
    if (w->err) return;
    if (n && fwrite(p, 1, n, w->f) != n) w->err = 1;
    w->off += n;
}
static void wr_align(wr_t *w, size_t a) {
    static const uint8_t zero[16] = {0};
    size_t pad = (size_t)((a - w->off % a) % a);
    wr(w, zero, pad);
}

typedef struct { uint64_t freq; uint32_t src; } rank_t;
static int by_freq(const void *x, const void *y) {
    const rank_t *a = x, *b = y;
    if (a->freq != b->freq) return a->freq > b->freq ? -1 : 1;
    return a->src < b->src ? -1 : (a->src > b->src);
}

int sb_pb_binb_write(sb_pb_binb *b, const char *path, int compressed, int ro_mode) {
    if (ro_mode < 0 || ro_mode > 2 || (ro_mode && !sb_index_slots(&b->pair_ix))) return SB_EINVAL;
    header_t h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, 8);
    h.version = VERSION;
    h.compressed = compressed != 0;
    h.ro_mode = (uint32_t)ro_mode;
    h.max_len = (uint32_t)b->max_len;
    h.n_src_vocab = b->sv.n;
    h.n_tgt_vocab = b->tv.n;
    h.n_src_phrases = b->n_src;
    h.n_pairs = b->n_pair;
    FILE *f = fopen(path, "w+b");   /* read back for the checksum */
    if (!f) return SB_EIO;
    wr_t w = {f, 0, 0};
    uint8_t pad[HEADER_BYTES] = {0};
    wr(&w, pad, HEADER_BYTES);
    int rc = SB_OK;
    /* source vocabulary: strings, then the probing hash */
    uint32_t *soff = malloc((size_t)(h.n_src_vocab ? h.n_src_vocab : 1) * 4);
    /* pairs grouped by source phrase (stable: line order within a source) */
    uint64_t *first = calloc((size_t)b->n_src + 1, sizeof *first);
    uint64_t *order = malloc((size_t)(b->n_pair ? b->n_pair : 1) * sizeof *order);
    uint64_t *recoff = malloc((size_t)(b->n_src ? b->n_src : 1) * sizeof *recoff);
    uint8_t *buf = malloc(1 << 16);
    if (!soff || !first || !order || !recoff || !buf) { rc = SB_ENOMEM; goto out; }
    h.off_src_strings = w.off;
    for (uint32_t i = 0; i < h.n_src_vocab; i++) {
        const char *s = sb_pb_vocab_str(&b->sv, i);
        soff[i] = (uint32_t)(w.off - h.off_src_strings);
        wr(&w, s, strlen(s) + 1);
    }
    wr_align(&w, 16);
    h.src_slots = 1024;
    while (h.src_slots < (uint64_t)h.n_src_vocab * 2) h.src_slots *= 2;
    {
        vslot_t *vs = calloc(h.src_slots, sizeof *vs);
        if (!vs) { rc = SB_ENOMEM; goto out; }
        for (uint32_t i = 0; i < h.n_src_vocab; i++) {
            const char *s = sb_pb_vocab_str(&b->sv, i);
            uint64_t key = hash_str(s, strlen(s)), j = key & (h.src_slots - 1);
            while (vs[j].key) j = (j + 1) & (h.src_slots - 1);
            vs[j] = (vslot_t){key, i, soff[i]};
        }
        h.off_src_hash = w.off;
        wr(&w, vs, h.src_slots * sizeof *vs);
        free(vs);
    }
    h.off_tgt_strings = w.off;
    for (uint32_t i = 0; i < h.n_tgt_vocab; i++) {
        const char *s = sb_pb_vocab_str(&b->tv, i);
        wr(&w, s, strlen(s) + 1);
    }
    h.len_tgt_strings = w.off - h.off_tgt_strings;
    wr_align(&w, 16);
    for (uint64_t k = 0; k < b->n_pair; k++) first[b->pair[k].src + 1]++;
    for (uint32_t s = 0; s < b->n_src; s++) first[s + 1] += first[s];
    {
        uint64_t *fill = malloc((size_t)(b->n_src ? b->n_src : 1) * sizeof *fill);
        if (!fill) { rc = SB_ENOMEM; goto out; }
        memcpy(fill, first, (size_t)b->n_src * sizeof *fill);
        for (uint64_t k = 0; k < b->n_pair; k++) order[fill[b->pair[k].src]++] = k;
        free(fill);
    }
    /* records: [ns][src ids][ntgt] then per target [len][has_ro][ids][tm 4 floats][ro 6 floats if integrated+has] */
    h.off_records = w.off;
    for (uint32_t s = 0; s < b->n_src; s++) {
        wr_align(&w, 4);
        recoff[s] = w.off;
        uint8_t *p = buf;
        *p++ = b->src_len[s];
        for (int i = 0; i < b->src_len[s]; i++) put_u32(&p, b->src_words[b->src_off[s] + i], compressed);
        put_u32(&p, (uint32_t)(first[s + 1] - first[s]), compressed);
        wr(&w, buf, (size_t)(p - buf));
        for (uint64_t k = first[s]; k < first[s + 1]; k++) {
            const pair_t *pr = &b->pair[order[k]];
            p = buf;
            *p++ = (uint8_t)pr->tgt_len;
            *p++ = (uint8_t)(ro_mode == SB_PB_BIN_RO_INTEGRATED && pr->has_ro);
            if (!compressed) { *p++ = 0; *p++ = 0; }
            for (int i = 0; i < pr->tgt_len; i++) put_u32(&p, b->tgt_words[pr->tgt_off + i], compressed);
            memcpy(p, pr->tm, 16);
            p += 16;
            if (ro_mode == SB_PB_BIN_RO_INTEGRATED && pr->has_ro) { memcpy(p, pr->ro, 24); p += 24; }
            wr(&w, buf, (size_t)(p - buf));
        }
    }
    wr_align(&w, 16);
    h.phr_slots = 1024;
    while (h.phr_slots < h.n_src_phrases * 2) h.phr_slots *= 2;
    {
        slot_t *t = calloc(h.phr_slots, sizeof *t);
        if (!t) { rc = SB_ENOMEM; goto out; }
        for (uint32_t s = 0; s < b->n_src; s++) {
            uint64_t key = hash_ids(b->src_words + b->src_off[s], b->src_len[s], NULL, 0), j = key & (h.phr_slots - 1);
            while (t[j].key) j = (j + 1) & (h.phr_slots - 1);
            t[j] = (slot_t){key, recoff[s]};
        }
        h.off_phr_hash = w.off;
        wr(&w, t, h.phr_slots * sizeof *t);
        free(t);
    }
    {
        rank_t *r = malloc((size_t)(b->n_src ? b->n_src : 1) * sizeof *r);
        if (!r) { rc = SB_ENOMEM; goto out; }
        for (uint32_t s = 0; s < b->n_src; s++) r[s] = (rank_t){b->src_freq[s], s};
        qsort(r, b->n_src, sizeof *r, by_freq);
        h.off_cache = w.off;
        for (uint32_t s = 0; s < b->n_src; s++) wr(&w, &recoff[r[s].src], 8);
        free(r);
    }
    if (ro_mode == SB_PB_BIN_RO_SEPARATE) {
        /* reordering records: [ns][nt][pad 2][src ids][tgt ids][6 floats], plain u32 ids */
        h.off_ro_records = w.off;
        uint64_t n_ro = 0;
        for (uint64_t k = 0; k < b->n_pair; k++) n_ro += b->pair[k].has_ro;
        h.n_ro = n_ro;
        h.ro_slots = 1024;
        while (h.ro_slots < n_ro * 2) h.ro_slots *= 2;
        slot_t *t = calloc(h.ro_slots, sizeof *t);
        if (!t) { rc = SB_ENOMEM; goto out; }
        for (uint64_t k = 0; k < b->n_pair; k++) {
            const pair_t *pr = &b->pair[k];
            if (!pr->has_ro) continue;
            const uint32_t *src = b->src_words + b->src_off[pr->src], *tgt = b->tgt_words + pr->tgt_off;
            int ns = b->src_len[pr->src];
            uint64_t key = hash_ids(src, ns, tgt, pr->tgt_len), j = key & (h.ro_slots - 1);
            while (t[j].key) j = (j + 1) & (h.ro_slots - 1);
            t[j] = (slot_t){key, w.off};
            uint8_t hd[4] = {(uint8_t)ns, (uint8_t)pr->tgt_len, 0, 0};
            wr(&w, hd, 4);
            wr(&w, src, (size_t)ns * 4);
            wr(&w, tgt, (size_t)pr->tgt_len * 4);
            wr(&w, pr->ro, 24);
        }
        wr_align(&w, 16);
        h.off_ro_hash = w.off;
        wr(&w, t, h.ro_slots * sizeof *t);
        free(t);
    }
    wr_align(&w, 16);
    h.off_meta = w.off;
    h.len_meta = b->meta_len;
    wr(&w, b->meta, b->meta_len);
    h.file_size = w.off;
    /* the body's checksum, read back from the file (in the page cache) */
    if (!w.err && fflush(f) == 0) {
        uint8_t *blk = malloc((size_t)1 << 20);   /* a multiple of 8: the blocks chain like one pass */
        if (!blk) { rc = SB_ENOMEM; goto out; }
        sum_t sum = sum_init(SUM_SEED);
        uint64_t pos = HEADER_BYTES;
        while (pos < h.file_size && !w.err) {
            size_t want = h.file_size - pos < ((uint64_t)1 << 20) ? (size_t)(h.file_size - pos) : (size_t)1 << 20;
            if (pread(fileno(f), blk, want, (off_t)pos) != (ssize_t)want) w.err = 1;
            sum = sum_block(blk, want, sum);
            pos += want;
        }
        free(blk);
        h.body_sum = sum_final(sum, h.file_size - HEADER_BYTES);
    } else w.err = 1;
    {
        uint8_t raw[HEADER_BYTES] = {0};   /* as written: the struct, then zero padding */
        memcpy(raw, &h, sizeof h);
        h.header_sum = header_checksum(raw);
    }
    if (!w.err && fseek(f, 0, SEEK_SET) == 0) wr(&w, &h, sizeof h); else w.err = 1;
out:
    free(soff); free(first); free(order); free(recoff); free(buf);
    if (fclose(f) != 0) w.err = 1;
    if (rc == SB_OK && w.err) rc = SB_EIO;
    if (rc == SB_OK) b->bytes = h.file_size;
    return rc;
}

/* ---------------------------------------------------------------- reading */
struct sb_pb_bin {
    const uint8_t *base, *rec_end;   /* rec_end: the end of the phrase records */
    size_t size;
    header_t h;
    const vslot_t *vs;
    const slot_t *phr, *ro;
    const uint64_t *cache;
    uint64_t src_strings_len;
};

static int ofail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return SB_EFORMAT;
}

/* [off, off + count * elem) lies within [lo, hi), computed without overflow */
static int span_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t lo, uint64_t hi) {
    if (off < lo || off > hi) return 0;
    return elem == 0 || count <= (hi - off) / elem;
}
static int pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* the header's counts and offsets against the file and each other; every section in order, none overlapping */
static const char *header_problem(const header_t *h, uint64_t size) {
    if (h->file_size != size) return "its size differs from the size its header records (truncated or extended)";
    if (h->compressed > 1 || h->ro_mode > 2) return "unknown storage flags in the header";
    if (h->max_len > SB_PB_MAX_PHRASE || (h->n_src_phrases && h->max_len < 1)) return "longest source phrase out of range";
    if ((h->off_src_hash | h->off_phr_hash | h->off_cache | h->off_ro_hash) % 8) return "a misaligned section";
    if (!pow2(h->src_slots) || !pow2(h->phr_slots) || (h->ro_mode == SB_PB_BIN_RO_SEPARATE && !pow2(h->ro_slots)))
        return "a hash size is not a power of two";
    if (h->n_src_vocab >= h->src_slots || h->n_src_phrases >= h->phr_slots ||
        (h->ro_mode == SB_PB_BIN_RO_SEPARATE && h->n_ro >= h->ro_slots))
        return "more entries than hash slots";
    if (h->n_src_phrases > h->n_pairs) return "more source phrases than phrase pairs";
    if (h->off_src_strings != HEADER_BYTES || !span_ok(h->off_src_hash, h->src_slots, sizeof(vslot_t), h->off_src_strings, size) ||
        !span_ok(h->off_tgt_strings, h->len_tgt_strings, 1, h->off_src_hash + h->src_slots * sizeof(vslot_t), size) ||
        !span_ok(h->off_records, 0, 1, h->off_tgt_strings + h->len_tgt_strings, size) ||
        !span_ok(h->off_phr_hash, h->phr_slots, sizeof(slot_t), h->off_records, size) ||
        !span_ok(h->off_cache, h->n_src_phrases, 8, h->off_phr_hash + h->phr_slots * sizeof(slot_t), size))
        return "a section offset or count out of range";
    uint64_t end = h->off_cache + h->n_src_phrases * 8;
    if (h->ro_mode == SB_PB_BIN_RO_SEPARATE) {
        if (!span_ok(h->off_ro_records, 0, 1, end, size) || !span_ok(h->off_ro_hash, h->ro_slots, sizeof(slot_t), h->off_ro_records, size))
            return "a reordering section offset or count out of range";
        end = h->off_ro_hash + h->ro_slots * sizeof(slot_t);
    }
    if (!span_ok(h->off_meta, h->len_meta, 1, end, size) || h->off_meta + h->len_meta != size)
        return "the provenance section out of range";
    if (h->off_records == h->off_phr_hash && h->n_src_phrases) return "no phrase records";
    return NULL;
}

int sb_pb_bin_open(const char *path, sb_pb_bin **out, char *err, size_t errlen) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SB_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return SB_EIO; }
    if (!S_ISREG(st.st_mode)) { close(fd); return ofail(err, errlen, "not a regular file"); }
    if ((uint64_t)st.st_size < HEADER_BYTES) {
        close(fd);
        return ofail(err, errlen, "%lld bytes: shorter than a binarized table's header (%d bytes)", (long long)st.st_size, HEADER_BYTES);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return SB_EIO;
    sb_pb_bin *b = calloc(1, sizeof *b);
    if (!b) { munmap(m, (size_t)st.st_size); return SB_ENOMEM; }
    b->base = m;
    b->size = (size_t)st.st_size;
    memcpy(&b->h, m, sizeof b->h);
    const header_t *h = &b->h;
    const char *why = NULL;
    int rc = SB_EFORMAT;
    if (memcmp(h->magic, MAGIC, 8)) { ofail(err, errlen, "not a binarized phrase table (smtbench tm binarize)"); goto bad; }
    if (h->version != VERSION) {
        ofail(err, errlen, "binarized table format version %u, this smtbench reads version %d (rebuild it with smtbench tm binarize)",
              h->version, VERSION);
        goto bad;
    }
    if (h->header_sum != header_checksum(b->base)) { ofail(err, errlen, "corrupted header (checksum mismatch)"); goto bad; }
    if ((why = header_problem(h, b->size))) { ofail(err, errlen, "corrupted header: %s", why); goto bad; }
    /* the body's checksum: one sequential pass (the pages are dropped again below, sb_pb_bin_release) */
    madvise((void *)b->base, b->size, MADV_SEQUENTIAL);
    if (sum_final(sum_block(b->base + HEADER_BYTES, b->size - HEADER_BYTES, sum_init(SUM_SEED)), b->size - HEADER_BYTES) !=
        h->body_sum) {
        ofail(err, errlen, "corrupted contents (checksum mismatch: a damaged or partly written file)");
        goto bad;
    }
    /* the string sections end with a NUL and hold exactly their vocabulary's words */
    const uint8_t *ts = b->base + h->off_tgt_strings;
    uint64_t nul = 0;
    for (uint64_t i = 0; i < h->len_tgt_strings; i++) nul += ts[i] == 0;
    b->src_strings_len = h->off_src_hash - h->off_src_strings;
    if (nul != h->n_tgt_vocab || (h->len_tgt_strings && ts[h->len_tgt_strings - 1]) ||
        (h->n_src_vocab && (!b->src_strings_len || memchr(b->base + h->off_src_strings, 0, b->src_strings_len) == NULL))) {
        ofail(err, errlen, "corrupted vocabulary");
        goto bad;
    }
    b->vs = (const vslot_t *)(b->base + h->off_src_hash);
    b->phr = (const slot_t *)(b->base + h->off_phr_hash);
    b->ro = h->ro_mode == SB_PB_BIN_RO_SEPARATE ? (const slot_t *)(b->base + h->off_ro_hash) : NULL;
    b->cache = (const uint64_t *)(b->base + h->off_cache);
    b->rec_end = b->base + h->off_phr_hash;
    madvise((void *)b->base, b->size, MADV_RANDOM);
    *out = b;
    return SB_OK;
bad:
    sb_pb_bin_close(b);
    return rc;
}

void sb_pb_bin_close(sb_pb_bin *b) {
    if (!b) return;
    munmap((void *)b->base, b->size);
    free(b);
}

int sb_pb_bin_max_len(const sb_pb_bin *b) { return (int)b->h.max_len; }
int sb_pb_bin_ro_mode(const sb_pb_bin *b) { return (int)b->h.ro_mode; }
int sb_pb_bin_compressed(const sb_pb_bin *b) { return (int)b->h.compressed; }
uint64_t sb_pb_bin_size(const sb_pb_bin *b) { return b->size; }

const char *sb_pb_bin_meta(const sb_pb_bin *b, uint64_t *len) {
    *len = b->h.len_meta;
    return (const char *)b->base + b->h.off_meta;
}

uint32_t sb_pb_bin_src_word(const sb_pb_bin *b, const char *w, size_t len) {
    uint64_t key = hash_str(w, len), mask = b->h.src_slots - 1;
    const char *strs = (const char *)b->base + b->h.off_src_strings;
    /* at most every slot once (a table without an empty slot must not hang); the section ends with a NUL */
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const vslot_t *v = &b->vs[j];
        if (!v->key) return NO_ID;
        if (v->key == key && v->str < b->src_strings_len && len < b->src_strings_len - v->str &&
            !strncmp(strs + v->str, w, len) && strs[v->str + len] == '\0')
            return v->id < b->h.n_src_vocab ? v->id : NO_ID;
    }
    return NO_ID;
}

/* the record at off: its source ids must be ids[0..n); then *p = the target count's position. -1: corrupt */
static int record_matches(const sb_pb_bin *b, uint64_t off, const uint32_t *ids, int n, const uint8_t **p) {
    if (off < b->h.off_records || off >= b->h.off_phr_hash) return -1;
    const uint8_t *q = b->base + off;
    if (*q++ != n) return 0;
    for (int i = 0; i < n; i++) {
        uint32_t x;
        if (!get_u32(&q, b->rec_end, (int)b->h.compressed, &x)) return -1;
        if (x != ids[i]) return 0;
    }
    *p = q;
    return 1;
}

int sb_pb_bin_phrase(const sb_pb_bin *b, const uint32_t *ids, int n, const uint8_t **p, uint32_t *nt) {
    uint64_t key = hash_ids(ids, n, NULL, 0), mask = b->h.phr_slots - 1;
    *nt = 0;
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const slot_t *s = &b->phr[j];
        if (!s->key) return SB_OK;
        const uint8_t *q;
        if (s->key != key) continue;
        int r = record_matches(b, s->off, ids, n, &q);
        if (r < 0) return SB_EFORMAT;
        if (r) {
            if (!get_u32(&q, b->rec_end, (int)b->h.compressed, nt) || *nt == 0 || *nt > b->h.n_pairs) return SB_EFORMAT;
            *p = q;
            return SB_OK;
        }
    }
    return SB_OK;
}

int sb_pb_bin_target_next(const sb_pb_bin *b, const uint8_t **p, sb_pb_bin_target *t) {
    const uint8_t *q = *p, *end = b->rec_end;
    const int c = (int)b->h.compressed;
    if (end - q < 2 + (c ? 0 : 2)) return SB_EFORMAT;
    t->len = *q++;
    t->has_ro = *q++;
    if (t->len == 0 || t->has_ro > 1 || (t->has_ro && b->h.ro_mode != SB_PB_BIN_RO_INTEGRATED)) return SB_EFORMAT;
    if (!c) q += 2;
    for (int i = 0; i < t->len; i++)
        if (!get_u32(&q, end, c, &t->ids[i]) || t->ids[i] >= b->h.n_tgt_vocab) return SB_EFORMAT;
    if (end - q < 16 + (t->has_ro ? 24 : 0)) return SB_EFORMAT;
    memcpy(t->tm, q, 16);
    q += 16;
    if (t->has_ro) { memcpy(t->ro, q, 24); q += 24; }
    *p = q;
    return SB_OK;
}

int sb_pb_bin_reordering(const sb_pb_bin *b, const uint32_t *src, int ns, const uint32_t *tgt, int nt, float *ro) {
    if (!b->ro) return 0;
    uint64_t key = hash_ids(src, ns, tgt, nt), mask = b->h.ro_slots - 1;
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const slot_t *s = &b->ro[j];
        if (!s->key) return 0;
        if (s->key != key) continue;
        uint64_t need = 4 + (uint64_t)(ns + nt) * 4 + 24;
        if (s->off < b->h.off_ro_records || s->off > b->h.off_ro_hash || b->h.off_ro_hash - s->off < need) return -1;
        const uint8_t *q = b->base + s->off;
        if (q[0] != ns || q[1] != nt || memcmp(q + 4, src, (size_t)ns * 4) ||
            memcmp(q + 4 + (size_t)ns * 4, tgt, (size_t)nt * 4)) continue;
        memcpy(ro, q + 4 + (size_t)(ns + nt) * 4, 24);
        return 1;
    }
    return 0;
}

uint32_t sb_pb_bin_tgt_vocab(const sb_pb_bin *b, const char **strings) {
    *strings = (const char *)b->base + b->h.off_tgt_strings;
    return b->h.n_tgt_vocab;
}

uint64_t sb_pb_bin_ncache(const sb_pb_bin *b) { return b->h.n_src_phrases; }

int sb_pb_bin_cache_entry(const sb_pb_bin *b, uint64_t i, uint32_t *ids, int *n, const uint8_t **p, uint32_t *nt) {
    uint64_t off = b->cache[i];
    if (off < b->h.off_records || off >= b->h.off_phr_hash) return SB_EFORMAT;
    const uint8_t *q = b->base + off;
    const int c = (int)b->h.compressed;
    *n = *q++;
    if (*n < 1 || *n > (int)b->h.max_len) return SB_EFORMAT;
    for (int k = 0; k < *n; k++)
        if (!get_u32(&q, b->rec_end, c, &ids[k]) || ids[k] >= b->h.n_src_vocab) return SB_EFORMAT;
    if (!get_u32(&q, b->rec_end, c, nt) || *nt == 0 || *nt > b->h.n_pairs) return SB_EFORMAT;
    *p = q;
    return SB_OK;
}

void sb_pb_bin_release(const sb_pb_bin *b) { madvise((void *)b->base, b->size, MADV_DONTNEED); }
