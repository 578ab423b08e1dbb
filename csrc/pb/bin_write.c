/* pb/bin_write.c - see bin_write.h: the binarizer, a sink of the text tables' reader (pb/table_reader.h) that
 * writes the file pb/bin_format.h lays out. */
#define _GNU_SOURCE
#include "pb/bin_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb/table_reader.h"
#include "util/probing.h"

#define NO_ID UINT32_MAX

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
    uint64_t i = sb_index_start(&b->src_ix, sb_pb_bin_hash_ids(ids, n, NULL, 0));
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
        sb_index_add(&b->src_ix, sb_pb_bin_hash_ids(b->src_words + b->src_off[k], b->src_len[k], NULL, 0), k);
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
    return sb_pb_bin_hash_ids(&src, 1, tgt, nt);
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
    sb_pb_bin_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SB_PB_BIN_MAGIC, 8);
    h.version = SB_PB_BIN_VERSION;
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
    uint8_t pad[SB_PB_BIN_HEADER_BYTES] = {0};
    wr(&w, pad, SB_PB_BIN_HEADER_BYTES);
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
        sb_pb_bin_vslot *vs = calloc(h.src_slots, sizeof *vs);
        if (!vs) { rc = SB_ENOMEM; goto out; }
        for (uint32_t i = 0; i < h.n_src_vocab; i++) {
            const char *s = sb_pb_vocab_str(&b->sv, i);
            uint64_t key = sb_pb_bin_hash_str(s, strlen(s)), j = key & (h.src_slots - 1);
            while (vs[j].key) j = (j + 1) & (h.src_slots - 1);
            vs[j] = (sb_pb_bin_vslot){key, i, soff[i]};
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
        for (int i = 0; i < b->src_len[s]; i++) sb_pb_bin_put_u32(&p, b->src_words[b->src_off[s] + i], compressed);
        sb_pb_bin_put_u32(&p, (uint32_t)(first[s + 1] - first[s]), compressed);
        wr(&w, buf, (size_t)(p - buf));
        for (uint64_t k = first[s]; k < first[s + 1]; k++) {
            const pair_t *pr = &b->pair[order[k]];
            p = buf;
            *p++ = (uint8_t)pr->tgt_len;
            *p++ = (uint8_t)(ro_mode == SB_PB_BIN_RO_INTEGRATED && pr->has_ro);
            if (!compressed) { *p++ = 0; *p++ = 0; }
            for (int i = 0; i < pr->tgt_len; i++) sb_pb_bin_put_u32(&p, b->tgt_words[pr->tgt_off + i], compressed);
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
        sb_pb_bin_slot *t = calloc(h.phr_slots, sizeof *t);
        if (!t) { rc = SB_ENOMEM; goto out; }
        for (uint32_t s = 0; s < b->n_src; s++) {
            uint64_t key = sb_pb_bin_hash_ids(b->src_words + b->src_off[s], b->src_len[s], NULL, 0);
            uint64_t j = key & (h.phr_slots - 1);
            while (t[j].key) j = (j + 1) & (h.phr_slots - 1);
            t[j] = (sb_pb_bin_slot){key, recoff[s]};
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
        sb_pb_bin_slot *t = calloc(h.ro_slots, sizeof *t);
        if (!t) { rc = SB_ENOMEM; goto out; }
        for (uint64_t k = 0; k < b->n_pair; k++) {
            const pair_t *pr = &b->pair[k];
            if (!pr->has_ro) continue;
            const uint32_t *src = b->src_words + b->src_off[pr->src], *tgt = b->tgt_words + pr->tgt_off;
            int ns = b->src_len[pr->src];
            uint64_t key = sb_pb_bin_hash_ids(src, ns, tgt, pr->tgt_len), j = key & (h.ro_slots - 1);
            while (t[j].key) j = (j + 1) & (h.ro_slots - 1);
            t[j] = (sb_pb_bin_slot){key, w.off};
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
        sb_pb_bin_sum sum = sb_pb_bin_sum_init(SB_PB_BIN_SUM_SEED);
        uint64_t pos = SB_PB_BIN_HEADER_BYTES;
        while (pos < h.file_size && !w.err) {
            size_t want = h.file_size - pos < ((uint64_t)1 << 20) ? (size_t)(h.file_size - pos) : (size_t)1 << 20;
            if (pread(fileno(f), blk, want, (off_t)pos) != (ssize_t)want) w.err = 1;
            sum = sb_pb_bin_sum_block(blk, want, sum);
            pos += want;
        }
        free(blk);
        h.body_sum = sb_pb_bin_sum_final(sum, h.file_size - SB_PB_BIN_HEADER_BYTES);
    } else w.err = 1;
    {
        uint8_t raw[SB_PB_BIN_HEADER_BYTES] = {0};   /* as written: the struct, then zero padding */
        memcpy(raw, &h, sizeof h);
        h.header_sum = sb_pb_bin_header_sum(raw);
    }
    if (!w.err && fseek(f, 0, SEEK_SET) == 0) wr(&w, &h, sizeof h); else w.err = 1;
out:
    free(soff); free(first); free(order); free(recoff); free(buf);
    if (fclose(f) != 0) w.err = 1;
    if (rc == SB_OK && w.err) rc = SB_EIO;
    if (rc == SB_OK) b->bytes = h.file_size;
    return rc;
}
