/* pb/bin_read.c - see bin_read.h: the binarized table's file (opened, checked, its records decoded) and the
 * phrase table's binarized backend over it (lookups, the static cache). */
#define _GNU_SOURCE
#include "pb/bin_read.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb/bin_format.h"
#include "pb/table_mem.h"
#include "pb/table_reader.h"

#define NO_ID UINT32_MAX

/* ---------------------------------------------------------------- the file */
typedef struct {
    const uint8_t *base, *rec_end;   /* rec_end: the end of the phrase records */
    size_t size;
    sb_pb_bin_header h;
    const sb_pb_bin_vslot *vs;
    const sb_pb_bin_slot *phr, *ro;
    const uint64_t *cache;
    uint64_t src_strings_len;
} bin_file;

/* one target of a record's list, decoded */
typedef struct {
    int len;
    uint32_t ids[256];       /* the file's target word ids */
    float tm[4];
    int has_ro;
    float ro[6];
} bin_target;

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
static const char *header_problem(const sb_pb_bin_header *h, uint64_t size) {
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
    const uint64_t vslot = sizeof(sb_pb_bin_vslot), slot = sizeof(sb_pb_bin_slot);
    if (h->off_src_strings != SB_PB_BIN_HEADER_BYTES || !span_ok(h->off_src_hash, h->src_slots, vslot, h->off_src_strings, size) ||
        !span_ok(h->off_tgt_strings, h->len_tgt_strings, 1, h->off_src_hash + h->src_slots * vslot, size) ||
        !span_ok(h->off_records, 0, 1, h->off_tgt_strings + h->len_tgt_strings, size) ||
        !span_ok(h->off_phr_hash, h->phr_slots, slot, h->off_records, size) ||
        !span_ok(h->off_cache, h->n_src_phrases, 8, h->off_phr_hash + h->phr_slots * slot, size))
        return "a section offset or count out of range";
    uint64_t end = h->off_cache + h->n_src_phrases * 8;
    if (h->ro_mode == SB_PB_BIN_RO_SEPARATE) {
        if (!span_ok(h->off_ro_records, 0, 1, end, size) || !span_ok(h->off_ro_hash, h->ro_slots, slot, h->off_ro_records, size))
            return "a reordering section offset or count out of range";
        end = h->off_ro_hash + h->ro_slots * slot;
    }
    if (!span_ok(h->off_meta, h->len_meta, 1, end, size) || h->off_meta + h->len_meta != size)
        return "the provenance section out of range";
    if (h->off_records == h->off_phr_hash && h->n_src_phrases) return "no phrase records";
    return NULL;
}

/* map and check the file into *b (zeroed by the caller): SB_OK, SB_EIO, SB_ENOMEM, or SB_EFORMAT with a one-line
 * reason in err */
static int file_open(bin_file *b, const char *path, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SB_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return SB_EIO; }
    if (!S_ISREG(st.st_mode)) { close(fd); return ofail(err, errlen, "not a regular file"); }
    if ((uint64_t)st.st_size < SB_PB_BIN_HEADER_BYTES) {
        close(fd);
        return ofail(err, errlen, "%lld bytes: shorter than a binarized table's header (%d bytes)", (long long)st.st_size,
                     SB_PB_BIN_HEADER_BYTES);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return SB_EIO;
    b->base = m;
    b->size = (size_t)st.st_size;
    memcpy(&b->h, m, sizeof b->h);
    const sb_pb_bin_header *h = &b->h;
    const char *why = NULL;
    int rc = SB_EFORMAT;
    if (memcmp(h->magic, SB_PB_BIN_MAGIC, 8)) { ofail(err, errlen, "not a binarized phrase table (smtbench tm binarize)"); goto bad; }
    if (h->version != SB_PB_BIN_VERSION) {
        ofail(err, errlen, "binarized table format version %u, this smtbench reads version %d (rebuild it with smtbench tm binarize)",
              h->version, SB_PB_BIN_VERSION);
        goto bad;
    }
    if (h->header_sum != sb_pb_bin_header_sum(b->base)) { ofail(err, errlen, "corrupted header (checksum mismatch)"); goto bad; }
    if ((why = header_problem(h, b->size))) { ofail(err, errlen, "corrupted header: %s", why); goto bad; }
    /* the body's checksum: one sequential pass (the pages are dropped again below, file_release) */
    madvise((void *)b->base, b->size, MADV_SEQUENTIAL);
    const uint64_t body = b->size - SB_PB_BIN_HEADER_BYTES;
    sb_pb_bin_sum sum = sb_pb_bin_sum_block(b->base + SB_PB_BIN_HEADER_BYTES, body, sb_pb_bin_sum_init(SB_PB_BIN_SUM_SEED));
    if (sb_pb_bin_sum_final(sum, body) != h->body_sum) {
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
    b->vs = (const sb_pb_bin_vslot *)(b->base + h->off_src_hash);
    b->phr = (const sb_pb_bin_slot *)(b->base + h->off_phr_hash);
    b->ro = h->ro_mode == SB_PB_BIN_RO_SEPARATE ? (const sb_pb_bin_slot *)(b->base + h->off_ro_hash) : NULL;
    b->cache = (const uint64_t *)(b->base + h->off_cache);
    b->rec_end = b->base + h->off_phr_hash;
    madvise((void *)b->base, b->size, MADV_RANDOM);
    return SB_OK;
bad:
    munmap((void *)b->base, b->size);
    b->base = NULL;
    return rc;
}

/* source word id, or NO_ID */
static uint32_t file_src_word(const bin_file *b, const char *w, size_t len) {
    uint64_t key = sb_pb_bin_hash_str(w, len), mask = b->h.src_slots - 1;
    const char *strs = (const char *)b->base + b->h.off_src_strings;
    /* at most every slot once (a table without an empty slot must not hang); the section ends with a NUL */
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const sb_pb_bin_vslot *v = &b->vs[j];
        if (!v->key) return NO_ID;
        if (v->key == key && v->str < b->src_strings_len && len < b->src_strings_len - v->str &&
            !strncmp(strs + v->str, w, len) && strs[v->str + len] == '\0')
            return v->id < b->h.n_src_vocab ? v->id : NO_ID;
    }
    return NO_ID;
}

/* the record at off: its source ids must be ids[0..n); then *p = the target count's position. -1: corrupt */
static int record_matches(const bin_file *b, uint64_t off, const uint32_t *ids, int n, const uint8_t **p) {
    if (off < b->h.off_records || off >= b->h.off_phr_hash) return -1;
    const uint8_t *q = b->base + off;
    if (*q++ != n) return 0;
    for (int i = 0; i < n; i++) {
        uint32_t x;
        if (!sb_pb_bin_get_u32(&q, b->rec_end, (int)b->h.compressed, &x)) return -1;
        if (x != ids[i]) return 0;
    }
    *p = q;
    return 1;
}

/* the record of a source phrase: *nt its number of targets (0: not in the table), *p its target list; SB_EFORMAT if
 * the record is corrupt */
static int file_phrase(const bin_file *b, const uint32_t *ids, int n, const uint8_t **p, uint32_t *nt) {
    uint64_t key = sb_pb_bin_hash_ids(ids, n, NULL, 0), mask = b->h.phr_slots - 1;
    *nt = 0;
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const sb_pb_bin_slot *s = &b->phr[j];
        if (!s->key) return SB_OK;
        const uint8_t *q;
        if (s->key != key) continue;
        int r = record_matches(b, s->off, ids, n, &q);
        if (r < 0) return SB_EFORMAT;
        if (r) {
            if (!sb_pb_bin_get_u32(&q, b->rec_end, (int)b->h.compressed, nt) || *nt == 0 || *nt > b->h.n_pairs) return SB_EFORMAT;
            *p = q;
            return SB_OK;
        }
    }
    return SB_OK;
}

/* decode the next target of a list, advancing *p; SB_EFORMAT if it is corrupt */
static int file_target_next(const bin_file *b, const uint8_t **p, bin_target *t) {
    const uint8_t *q = *p, *end = b->rec_end;
    const int c = (int)b->h.compressed;
    if (end - q < 2 + (c ? 0 : 2)) return SB_EFORMAT;
    t->len = *q++;
    t->has_ro = *q++;
    if (t->len == 0 || t->has_ro > 1 || (t->has_ro && b->h.ro_mode != SB_PB_BIN_RO_INTEGRATED)) return SB_EFORMAT;
    if (!c) q += 2;
    for (int i = 0; i < t->len; i++)
        if (!sb_pb_bin_get_u32(&q, end, c, &t->ids[i]) || t->ids[i] >= b->h.n_tgt_vocab) return SB_EFORMAT;
    if (end - q < 16 + (t->has_ro ? 24 : 0)) return SB_EFORMAT;
    memcpy(t->tm, q, 16);
    q += 16;
    if (t->has_ro) { memcpy(t->ro, q, 24); q += 24; }
    *p = q;
    return SB_OK;
}

/* the separate reordering table: 1 and ro filled if (source, target) is in it, 0 if not, -1 corrupt */
static int file_reordering(const bin_file *b, const uint32_t *src, int ns, const uint32_t *tgt, int nt, float *ro) {
    if (!b->ro) return 0;
    uint64_t key = sb_pb_bin_hash_ids(src, ns, tgt, nt), mask = b->h.ro_slots - 1;
    for (uint64_t j = key & mask, k = 0; k <= mask; j = (j + 1) & mask, k++) {
        const sb_pb_bin_slot *s = &b->ro[j];
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

/* the cache list's i-th most frequent source phrase: its word ids (n) and target list */
static int file_cache_entry(const bin_file *b, uint64_t i, uint32_t *ids, int *n, const uint8_t **p, uint32_t *nt) {
    uint64_t off = b->cache[i];
    if (off < b->h.off_records || off >= b->h.off_phr_hash) return SB_EFORMAT;
    const uint8_t *q = b->base + off;
    const int c = (int)b->h.compressed;
    *n = *q++;
    if (*n < 1 || *n > (int)b->h.max_len) return SB_EFORMAT;
    for (int k = 0; k < *n; k++)
        if (!sb_pb_bin_get_u32(&q, b->rec_end, c, &ids[k]) || ids[k] >= b->h.n_src_vocab) return SB_EFORMAT;
    if (!sb_pb_bin_get_u32(&q, b->rec_end, c, nt) || *nt == 0 || *nt > b->h.n_pairs) return SB_EFORMAT;
    *p = q;
    return SB_OK;
}

/* drop the mapping's resident pages (they stay in the page cache; a later lookup faults its page back in): after
 * the cache fill has read its records, which the decoder never reads again */
static void file_release(const bin_file *b) { madvise((void *)b->base, b->size, MADV_DONTNEED); }

/* ---------------------------------------------------------------- the backend */
typedef struct {
    sb_pb_table base;        /* the face; base.max_len: the file's longest source phrase */
    bin_file f;
    const sb_pb_scorer *sc;  /* the model's: the stand-alone scores and the table limit of every lookup */
    uint32_t *tmap;          /* the file's target ids -> the model's */
    sb_pb_mem *cache;        /* the static cache: the most frequent source phrases, their options made at load */
} bin_table;

/* the options of a source phrase read from the file (not in the cache): decoded, their target ids mapped through
 * tmap, scored, sorted and cut by the table limit into `found` (hit: their first index and count) */
static int decode_span(const bin_table *t, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit) {
    const bin_file *bin = &t->f;
    sb_pb_sent_ctx *ctx = found->ctx;
    const uint8_t *p;
    uint32_t nt;
    hit->opt = NULL;
    hit->first = 0;
    hit->n = 0;
    int rc = file_phrase(bin, ids, n, &p, &nt);
    if (rc || !nt) return rc;
    if (nt > found->captmp) {
        sb_pb_rawopt *tmp = realloc(found->tmp, (size_t)nt * sizeof *tmp);
        if (!tmp) return SB_ENOMEM;
        found->tmp = tmp;
        found->captmp = nt;
    }
    const int separate = bin->h.ro_mode == SB_PB_BIN_RO_SEPARATE;
    bin_target tg;
    for (uint32_t k = 0; k < nt; k++) {
        if ((rc = file_target_next(bin, &p, &tg))) return rc;
        if ((rc = sb_pb_found_reserve(found, 0, (uint64_t)tg.len))) return rc;
        sb_pb_rawopt *r = &found->tmp[k];
        memset(r, 0, sizeof *r);
        r->seq = k;
        r->o.tgt_off = (uint32_t)found->nw;
        r->o.tgt_len = (uint16_t)tg.len;
        for (int i = 0; i < tg.len; i++) found->words[found->nw + (uint64_t)i] = t->tmap[tg.ids[i]];
        memcpy(r->o.tm, tg.tm, sizeof tg.tm);
        if (separate) {
            if (ctx) { sb_pb_phase(ctx->phase, SB_PB_PH_RO); ctx->ro_lookups++; }
            tg.has_ro = file_reordering(bin, ids, n, tg.ids, tg.len, tg.ro);
            if (tg.has_ro < 0) return SB_EFORMAT;
            if (ctx) sb_pb_phase(ctx->phase, SB_PB_PH_PT);
        }
        if (tg.has_ro) { memcpy(r->o.ro, tg.ro, sizeof tg.ro); r->o.has_ro = 1; }
        sb_pb_option_scores(t->sc, &r->o, found->words + found->nw);
        found->nw += (uint64_t)tg.len;
    }
    qsort(found->tmp, nt, sizeof *found->tmp, sb_pb_cmp_raw);
    uint32_t keep = t->sc->table_limit && nt > (uint32_t)t->sc->table_limit ? (uint32_t)t->sc->table_limit : nt;
    if ((rc = sb_pb_found_reserve(found, keep, 0))) return rc;
    hit->first = found->n;
    for (uint32_t k = 0; k < keep; k++) found->opt[found->n++] = found->tmp[k].o;
    hit->n = (int)keep;
    return SB_OK;
}

static int bin_lookup(const sb_pb_table *base, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit) {
    const bin_table *t = (const bin_table *)base;
    if (found->ctx) found->ctx->lookups++;
    if (sb_pb_mem_find(t->cache, ids, n, hit)) {
        if (found->ctx) found->ctx->cache_hits++;
        return SB_OK;
    }
    return decode_span(t, ids, n, found, hit);
}

static uint32_t bin_src_word(const sb_pb_table *base, const char *w, size_t len) {
    return file_src_word(&((const bin_table *)base)->f, w, len);
}

static const uint32_t *bin_words(const sb_pb_table *base) {
    return sb_pb_table_words(sb_pb_mem_table(((const bin_table *)base)->cache));
}

static void bin_stats(const sb_pb_table *base, sb_pb_table_stats *st) {
    const bin_table *t = (const bin_table *)base;
    sb_pb_table_counts(sb_pb_mem_table(t->cache), st);
    st->bytes += sizeof *t + (uint64_t)t->f.h.n_tgt_vocab * sizeof *t->tmap;
}

static void bin_free(sb_pb_table *base) {
    bin_table *t = (bin_table *)base;
    if (t->f.base) munmap((void *)t->f.base, t->f.size);
    free(t->tmap);
    sb_pb_table_free(t->cache ? sb_pb_mem_table(t->cache) : NULL);
    free(t);
}

static const sb_pb_table_ops bin_ops = {bin_src_word, bin_lookup, bin_words, bin_stats, bin_free};

/* the static cache: the `cache` most frequent source phrases, decoded, scored and cut as every lookup would */
static int fill_cache(bin_table *t, uint64_t cache, char *err, size_t errlen) {
    if (cache > t->f.h.n_src_phrases) cache = t->f.h.n_src_phrases;
    sb_pb_found L = {0};
    int rc = SB_OK;
    for (uint64_t i = 0; i < cache && rc == SB_OK; i++) {
        uint32_t ids[SB_PB_MAX_PHRASE + 1], nt;
        int n;
        const uint8_t *p;
        if (i && i % 512 == 0) file_release(&t->f);  /* the records read so far are not needed again */
        if ((rc = file_cache_entry(&t->f, i, ids, &n, &p, &nt))) { ofail(err, errlen, "corrupted phrase record"); break; }
        L.n = 0;
        L.nw = 0;
        sb_pb_hit hit;
        if ((rc = decode_span(t, ids, n, &L, &hit))) {
            if (rc == SB_EFORMAT) ofail(err, errlen, "corrupted phrase record");
            break;
        }
        rc = sb_pb_mem_add(t->cache, ids, n, L.opt + hit.first, hit.n, L.words);
    }
    sb_pb_found_free(&L);
    return rc;
}

int sb_pb_bin_open(const char *path, const sb_pb_scorer *sc, sb_pb_vocab *tgt, uint64_t cache, sb_pb_table **out,
                   char *err, size_t errlen) {
    *out = NULL;
    bin_table *t = calloc(1, sizeof *t);
    if (!t) return SB_ENOMEM;
    t->base.ops = &bin_ops;
    t->sc = sc;
    int rc = file_open(&t->f, path, err, errlen);
    if (rc) { free(t); return rc; }
    t->base.max_len = (int)t->f.h.max_len;
    if ((rc = sb_pb_mem_new(&t->cache))) goto bad;
    /* the file's target vocabulary -> the model's target ids (LM ids for LM words) */
    const char *str = (const char *)t->f.base + t->f.h.off_tgt_strings;
    uint32_t nv = t->f.h.n_tgt_vocab;
    t->tmap = malloc((size_t)(nv ? nv : 1) * sizeof *t->tmap);
    if (!t->tmap) { rc = SB_ENOMEM; goto bad; }
    for (uint32_t i = 0; i < nv; i++) {
        size_t l = strlen(str);
        uint32_t id = sb_pb_vocab_intern(tgt, str, l);
        if (id == SB_PB_NO_WORD) { rc = SB_ENOMEM; goto bad; }
        t->tmap[i] = id;
        str += l + 1;
    }
    if ((rc = fill_cache(t, cache, err, errlen))) goto bad;
    file_release(&t->f);
    *out = &t->base;
    return SB_OK;
bad:
    bin_free(&t->base);
    return rc;
}
