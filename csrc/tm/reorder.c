/* reorder.c - see reorder.h. */
#define _GNU_SOURCE
#include "tm/reorder.h"
#include "tm/phrase_core.h"   /* sb_ps_write_all: the phrase scorer's IO helper */
#include "util/probing.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__GNUC__)   /* (and Clang): __builtin_ctzll */
#include <emmintrin.h>
#endif

#define RO_READ (1u << 20)      /* bytes a read asks for: ioutil.open_text's _READ, so blocks end where its do */
#define RO_OUT (1u << 20)       /* output buffer */
#define RO_FMT_T 64             /* totals below this print from a table of formatted values */
#define RO_BATCH 32            /* lines whose table probes are prefetched together */
#define RO_PREFETCH 16          /* records ahead that the sort and the writer fetch */

/* a pair's record in the arena (4-byte aligned): its counts, then its key's bytes -- what the sort and the writer
 * read, in one place (one random fetch a pair, not two) */
typedef struct {
    uint32_t len;               /* of the key */
    uint32_t c[6];              /* prev mono/swap/other, next mono/swap/other */
    char key[];
} ro_rec;

typedef struct {                /* the index's items: the hash (compared first) and where the record is */
    uint64_t hash;
    uint64_t off;
} ro_ent;

typedef struct { uint64_t k, off; } ro_sort;   /* a digit of the key of the record at off */

static inline ro_rec *rec_at(const char *arena, uint64_t off) { return (ro_rec *)(void *)(arena + off); }

struct sb_reorder {
    ro_ent *ent; size_t n, cap;
    int unsorted;               /* 0 while every key has come in the table's order (equal to or after the last):
                                 * the records are the table, no index is kept and no sort is needed */
    char *keys; size_t klen, kcap;
    sb_index ix;
    char *buf; size_t bcap;     /* the read buffer */
    ro_sort *order;             /* the records' offsets in the table's order (sb_reorder_sort; NULL: in order) */
    int sorted;                 /* sb_reorder_sort has run since the last count */
    sb_reorder_stats st;
};

int sb_reorder_create(sb_reorder **out) {
    sb_reorder *r = calloc(1, sizeof *r);
    if (!r) return SB_ENOMEM;
    *out = r;
    return SB_OK;
}

void sb_reorder_free(sb_reorder *r) {
    if (!r) return;
    free(r->ent); free(r->keys); free(r->buf); free(r->order);
    sb_index_free(&r->ix);
    free(r);
}

void sb_reorder_get_stats(const sb_reorder *r, sb_reorder_stats *st) {
    *st = r->st;
    st->pairs = r->n;
    st->streamed = !r->unsorted;
    st->arena_bytes = r->klen;
    st->table_bytes = r->cap * sizeof(ro_ent) + r->kcap + sb_index_slots(&r->ix) * sizeof(uint32_t);
}

/* ---------------------------------------------------------------- counting */
static int grow_index(sb_reorder *r) {
    uint64_t slots = sb_index_slots(&r->ix) ? sb_index_slots(&r->ix) * 2 : 1024;
    int rc = sb_index_reset(&r->ix, slots);
    if (rc) return rc;
    for (size_t i = 0; i < r->n; i++) sb_index_add(&r->ix, r->ent[i].hash, (uint32_t)i);
    return SB_OK;
}

/* a new record (counts 0) for key[0 .. len) (hash h) at the arena's end; NULL with *rc set on failure */
static ro_rec *add_record(sb_reorder *r, const char *key, size_t len, uint64_t h, int *rc) {
    if (r->n >= UINT32_MAX - 1 || len > UINT32_MAX) { *rc = SB_EFULL; return NULL; }
    size_t bytes = (sizeof(ro_rec) + len + 3) & ~(size_t)3;
    if (SB_GROW(r->ent, r->cap, r->n + 1, 1u << 16) || SB_GROW(r->keys, r->kcap, r->klen + bytes, 1u << 22)) {
        *rc = SB_ENOMEM;
        return NULL;
    }
    r->ent[r->n++] = (ro_ent){h, r->klen};
    ro_rec *x = rec_at(r->keys, r->klen);
    memset(x, 0, sizeof *x);
    x->len = (uint32_t)len;
    memcpy(x->key, key, len);
    r->klen += bytes;
    return x;
}

/* the entry of key[0 .. len) (hash h), a new one (counts 0) when absent; NULL with *rc set on failure */
static ro_rec *entry(sb_reorder *r, const char *key, size_t len, uint64_t h, int *rc) {
    if (SB_UNLIKELY(sb_index_crowded(&r->ix, 50)) && (*rc = grow_index(r))) return NULL;
    uint64_t b = sb_index_start(&r->ix, h);
    for (uint32_t i; (i = sb_index_at(&r->ix, b)) != UINT32_MAX; b = sb_index_step(&r->ix, b)) {
        if (r->ent[i].hash != h) continue;
        ro_rec *x = rec_at(r->keys, r->ent[i].off);
        if (x->len == len && memcmp(x->key, key, len) == 0) return x;
    }
    ro_rec *x = add_record(r, key, len, h, rc);
    if (x) sb_index_put(&r->ix, b, (uint32_t)(r->n - 1));
    return x;
}

/* the start of the leftmost " ||| " in p[from .. len), or len (Python's str.split finds them left to right) */
static inline size_t find_sep(const char *p, size_t len, size_t from) {
    size_t i = from + 1;   /* the first '|' of a separator starting at >= from */
    while (i + 3 < len) {
        const char *q = memchr(p + i, '|', len - 3 - i);
        if (!q) return len;
        i = (size_t)(q - p);
        if (p[i - 1] == ' ' && p[i + 1] == '|' && p[i + 2] == '|' && p[i + 3] == ' ') return i - 1;
        i++;
    }
    return len;
}

/* 0 mono, 1 swap, 2 other, -1 none */
static inline int orientation(const char *w, size_t n) {
    if (n == 4 && memcmp(w, "mono", 4) == 0) return 0;
    if (n == 4 && memcmp(w, "swap", 4) == 0) return 1;
    if (n == 5 && memcmp(w, "other", 5) == 0) return 2;
    return -1;
}

static const char *const MSG_FIELDS = "expected 'F ||| E ||| prev next'";
static const char *const MSG_ORIENT = "orientations must be two of mono/swap/other";

typedef struct { const char *key; size_t len; uint64_t hash; int o[2]; } ro_line;

/* one line (no '\n', no CRLF '\r') parsed into l: the key "F ||| E" and the two orientations; SB_EFORMAT with *msg */
/* the line p[0 .. len) whose second separator starts at s2 (len: it has none) parsed into l */
static SB_ALWAYS_INLINE int parse_after(const char *p, size_t len, size_t s2, ro_line *l, const char **msg) {
    if (s2 == len) { *msg = MSG_FIELDS; return SB_EFORMAT; }
    const char *o = p + s2 + 5, *oe = p + len;
    size_t ol = len - s2 - 5;
    if (ol >= 9 && ol <= 11) {   /* what the extractor writes: "<o> <o>", one space (and so no separator after) */
        size_t k = o[4] == ' ' ? 4 : o[5] == ' ' ? 5 : 0;
        if (k && (l->o[0] = orientation(o, k)) >= 0 && (l->o[1] = orientation(o + k + 1, ol - k - 1)) >= 0)
            goto found;
    }
    if (find_sep(p, len, s2 + 5) != len) { *msg = MSG_FIELDS; return SB_EFORMAT; }
    int nw = 0;
    while (o < oe) {
        while (o < oe && (*o == ' ' || *o == '\t')) o++;
        if (o == oe) break;
        const char *w = o;
        while (o < oe && *o != ' ' && *o != '\t') o++;
        if (nw == 2 || (l->o[nw++] = orientation(w, (size_t)(o - w))) < 0) { *msg = MSG_ORIENT; return SB_EFORMAT; }
    }
    if (nw != 2) { *msg = MSG_ORIENT; return SB_EFORMAT; }
found:
    l->key = p;
    l->len = s2;
    return SB_OK;
}

#if defined(__SSE2__) && defined(__GNUC__)   /* (and Clang): __builtin_ctzll */
/* find_sep over a line of < 64 bytes whose '|' bytes are the bits of bars */
static inline size_t find_sep_in(const char *p, size_t len, uint64_t bars, size_t from) {
    bars &= from + 1 < 64 ? ~(uint64_t)0 << (from + 1) : 0;
    for (; bars; bars &= bars - 1) {
        size_t q = (size_t)__builtin_ctzll(bars);
        if (q + 3 >= len) return len;
        if (p[q - 1] == ' ' && p[q + 1] == '|' && p[q + 2] == '|' && p[q + 3] == ' ') return q - 1;
    }
    return len;
}

/* The 64 bytes at p (all inside the block): bit k of each mask for byte k -- a '\n', a '|', a non-ASCII byte, a
 * control byte (TAB included) or DEL. */
static inline void scan64(const char *p, uint64_t *nl, uint64_t *bar, uint64_t *hi, uint64_t *ctl) {
    const __m128i vnl = _mm_set1_epi8('\n'), vbar = _mm_set1_epi8('|'), vsp = _mm_set1_epi8(0x20),
                  vdel = _mm_set1_epi8(0x7f);
    uint64_t a = 0, b = 0, h = 0, c = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        int sh = 16 * k;
        a |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vnl)) << sh;
        b |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vbar)) << sh;
        h |= (uint64_t)(unsigned)_mm_movemask_epi8(x) << sh;   /* (a signed compare below 0x20 holds these too) */
        c |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(x, vsp), _mm_cmpeq_epi8(x, vdel))) << sh;
    }
    *nl = a; *bar = b; *hi = h; *ctl = c & ~h;
}
#endif

/* The table's order of two keys: the LC_ALL=C order of their lines "F ||| E ||| ...", that is of the keys each
 * followed by " ||| " (Moses' lexical-reordering-score writes its table in this order from its sorted extract.o).
 * Keys so followed are prefix-free (neither F nor E holds the separator: the split is leftmost), so the order is
 * decided within those bytes whatever follows them. <0, 0 (the same key), >0. */
static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
    static const char sep[5] = {' ', '|', '|', '|', ' '};
    size_t m = an < bn ? an : bn;
    int c = memcmp(a, b, m);
    if (c || an == bn) return c;
    const char *l = an > bn ? a : b;   /* the longer; the shorter goes on with " ||| " and ends */
    size_t ln = an > bn ? an : bn;
    for (size_t i = m;; i++) {
        int x = i - m < 5 ? (unsigned char)sep[i - m] : -1;
        int y = i < ln ? (unsigned char)l[i] : i - ln < 5 ? (unsigned char)sep[i - ln] : -1;
        if (x != y) return (x < y) == (an < bn) ? -1 : 1;
        if (x < 0) return 0;
    }
}

static inline int bump(ro_rec *e, const int o[2]) {
    int a = o[0], b = 3 + o[1];
    if (SB_UNLIKELY(e->c[a] == UINT32_MAX || e->c[b] == UINT32_MAX)) return SB_EFULL;
    e->c[a]++;
    e->c[b]++;
    return SB_OK;
}

/* The index over the records so far (their hashes computed now), for counting by hash from here on. */
static int build_index(sb_reorder *r) {
    uint64_t slots = 1024;
    while (slots < 2 * ((uint64_t)r->n + 1)) slots *= 2;
    int rc = sb_index_reset(&r->ix, slots);
    if (rc) return rc;
    for (size_t i = 0; i < r->n; i++) {
        const ro_rec *x = rec_at(r->keys, r->ent[i].off);
        r->ent[i].hash = sb_bytes_hash(x->key, x->len);
        sb_index_add(&r->ix, r->ent[i].hash, (uint32_t)i);
    }
    r->unsorted = 1;
    return SB_OK;
}

/* Lines whose keys come in the table's order (a sorted extract.o, as train-model.perl hands it to
 * lexical-reordering-score): a key equal to the last record's counts there, a later one starts the next record; no
 * hash, no index, and the records are the table (no sort). The first key before the last record's ends this: the
 * index is built over the records so far and the rest, from ls[*done] on, is counted by hash. */
static int count_in_order(sb_reorder *r, const ro_line *ls, int n, int *done) {
    int rc = SB_OK;
    for (int j = 0; j < n; j++) {
        ro_rec *e = r->n ? rec_at(r->keys, r->ent[r->n - 1].off) : NULL;
        int c = e ? key_cmp(ls[j].key, ls[j].len, e->key, e->len) : 1;
        if (c < 0) { *done = j; return build_index(r); }
        if (c > 0 && !(e = add_record(r, ls[j].key, ls[j].len, 0, &rc))) return rc;
        if ((rc = bump(e, ls[j].o))) return rc;
    }
    *done = n;
    return SB_OK;
}

/* Count a batch of parsed lines: in order while they come in order (count_in_order), else by hash. There, their
 * index slots, then the entries those hold, then the entries' keys are prefetched for the whole batch before any is
 * probed, so that the batch's cache misses overlap (one line at a time, the slot's and the entry's misses were 80% of
 * the counting's time on the 4.5 M-line corpus). Prefetches only: the probes themselves (entry()) run in line order
 * and see every insert before them. */
static int count_batch(sb_reorder *r, ro_line *ls, int n) {
    int rc, j0 = 0;
    r->sorted = 0;
    if (!r->unsorted && (rc = count_in_order(r, ls, n, &j0))) return rc;
    r->st.lines += (uint64_t)j0;
    ls += j0;
    n -= j0;
    if (!n) return SB_OK;
    for (int j = 0; j < n; j++) ls[j].hash = sb_bytes_hash(ls[j].key, ls[j].len);
    if (sb_index_slots(&r->ix)) {
        for (int j = 0; j < n; j++) SB_PREFETCH(&r->ix.slot[sb_index_start(&r->ix, ls[j].hash)]);
        for (int j = 0; j < n; j++) {
            uint32_t i = sb_index_at(&r->ix, sb_index_start(&r->ix, ls[j].hash));
            if (i != UINT32_MAX) SB_PREFETCH(&r->ent[i]);
        }
        for (int j = 0; j < n; j++) {
            uint32_t i = sb_index_at(&r->ix, sb_index_start(&r->ix, ls[j].hash));
            if (i != UINT32_MAX && r->ent[i].hash == ls[j].hash) SB_PREFETCH(r->keys + r->ent[i].off);   /* record */
        }
    }
    for (int j = 0; j < n; j++) {
        rc = SB_OK;
        ro_rec *e = entry(r, ls[j].key, ls[j].len, ls[j].hash, &rc);
        if (!e) return rc;
        if ((rc = bump(e, ls[j].o))) return rc;
    }
    r->st.lines += (uint64_t)n;
    return SB_OK;
}

static uint64_t count_nl(const char *b, size_t n) {
    uint64_t k = 0;
    for (const char *p = b, *e = b + n; (p = memchr(p, '\n', (size_t)(e - p))); p++) k++;
    return k;
}

/* The first byte of b[0 .. n) the line rule refuses (a control byte but TAB and LF; '\r' only right before '\n'),
 * or n: ioutil.open_text's search, after its "\r\n" -> "\n", of the whole block. */
static size_t first_control(const char *b, size_t n) {
    const unsigned char *p = (const unsigned char *)b;
    size_t i = 0;
    for (;;) {
        for (; i + 8 <= n; i += 8) {   /* a byte < 0x20 or 0x7f in the word: look closer */
            uint64_t w;
            memcpy(&w, p + i, 8);
            uint64_t lo = (w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL;
            uint64_t x = w ^ 0x7f7f7f7f7f7f7f7fULL;
            uint64_t del = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
            if (lo | del) break;
        }
        size_t end = i + 8 < n ? i + 8 : n;
        if (i >= n) return n;
        for (; i < end; i++) {
            unsigned c = p[i];
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
                if (c == '\r' && i + 1 < n && p[i + 1] == '\n') continue;
                return i;
            }
        }
    }
}

static void fail(uint64_t line, int kind, const char *msg, uint64_t *err_line, int *err_kind, char *err,
                 size_t errlen) {
    if (err_line) *err_line = line;
    if (err_kind) *err_kind = kind;
    if (err && errlen) snprintf(err, errlen, "%s", msg);
}

/* one block of whole lines (the last may lack its '\n'); *line0 = the number of its first line */
/* The block's line-rule fault as ioutil.open_text finds it (the first control byte of the whole block, else its
 * first invalid UTF-8), SB_EFORMAT; SB_OK where it has none. */
static int block_fault(const char *b, size_t n, uint64_t line0, uint64_t *err_line, int *err_kind, char *err,
                       size_t errlen) {
    char why[160];
    size_t bad = first_control(b, n);
    if (bad != n) {
        sb_line_control_msg((unsigned char)b[bad], why, sizeof why);
        fail(line0 + count_nl(b, bad), SB_REORDER_ERR_LINE, why, err_line, err_kind, err, errlen);
        return SB_EFORMAT;
    }
    size_t ok = sb_utf8_valid_prefix(b, n);
    if (ok != n) {
        const char *ls = memrchr(b, '\n', ok);
        size_t col = ok - (ls ? (size_t)(ls - b) + 1 : 0) + 1;
        snprintf(why, sizeof why, "invalid UTF-8 (byte 0x%02x at column %zu)", (unsigned char)b[ok], col);
        fail(line0 + count_nl(b, ok), SB_REORDER_ERR_LINE, why, err_line, err_kind, err, errlen);
        return SB_EFORMAT;
    }
    return SB_OK;
}

enum { SUSPECT_CTRL = 1, SUSPECT_HIGH = 2 };

/* What p[0 .. len) holds besides printable ASCII: SUSPECT_CTRL (a control byte, TAB included, or DEL), SUSPECT_HIGH
 * (a non-ASCII byte), 0 for neither; the line is then checked closely for what it holds. 8 bytes a step (the
 * control test's borrows can flag a byte only above a byte that is one: no miss, and no false alarm on its own). */
static inline int suspect(const char *p, size_t len) {
    uint64_t hi = 0, ctl = 0, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, p + i, 8);
        uint64_t x = w ^ 0x7f7f7f7f7f7f7f7fULL;
        hi |= w;
        ctl |= ((w - 0x2020202020202020ULL) & ~w) | ((x - 0x0101010101010101ULL) & ~x);
    }
    if (i < len) {
        w = 0x2020202020202020ULL;   /* spaces past the end */
        memcpy(&w, p + i, len - i);
        uint64_t x = w ^ 0x7f7f7f7f7f7f7f7fULL;
        hi |= w;
        ctl |= ((w - 0x2020202020202020ULL) & ~w) | ((x - 0x0101010101010101ULL) & ~x);
    }
    return (ctl & 0x8080808080808080ULL ? SUSPECT_CTRL : 0) | (hi & 0x8080808080808080ULL ? SUSPECT_HIGH : 0);
}

/* One block of whole lines (the last may lack its '\n'); *line0 = the number of its first line. A line is checked
 * by the line rule as it is read (most lines are printable ASCII: one word-wise test); at the first fault of any
 * kind the whole block is searched as open_text searches it, so that a control byte anywhere in the block is named
 * before invalid UTF-8, and both before a malformed line. */
static int count_block(sb_reorder *r, const char *b, size_t n, int first, uint64_t *line0, uint64_t *err_line,
                       int *err_kind, char *err, size_t errlen) {
    if (first && n >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0) { b += 3; n -= 3; }
    uint64_t line = *line0;
    size_t i = 0;
    ro_line ls[RO_BATCH];
    int nb = 0, rc = SB_OK;
    while (i < n) {
        const char *p = b + i;
        size_t len = 0, next = 0, s2 = 0;
        int read = 0;   /* the line's end, next start and second separator found by the byte masks */
#if defined(__SSE2__) && defined(__GNUC__)   /* (and Clang): __builtin_ctzll */
        /* A line of < 64 bytes with 64 bytes of the block from its start and no control byte (most lines): its end,
         * separators and non-ASCII bytes from one pass of byte masks; the others below, as they are. The same
         * checks in the same order, so the same faults. */
        if (n - i >= 64) {
            uint64_t mnl, mbar, mhi, mctl;
            scan64(p, &mnl, &mbar, &mhi, &mctl);
            len = mnl ? (size_t)__builtin_ctzll(mnl) : 0;
            uint64_t in = ((uint64_t)1 << len) - 1;
            if (mnl && !(mctl & in)) {
                if ((mhi & in) && sb_utf8_valid_prefix(p, len) != len) {
                    rc = block_fault(b, n, *line0, err_line, err_kind, err, errlen);
                    return rc ? rc : SB_EINVAL;
                }
                mbar &= in;
                size_t s1 = find_sep_in(p, len, mbar, 0);
                s2 = s1 < len ? find_sep_in(p, len, mbar, s1 + 5) : len;
                next = i + len + 1;
                read = 1;
            }
        }
#endif
        if (!read) {
            const char *nl = memchr(p, '\n', n - i);
            size_t end = nl ? (size_t)(nl - b) : n;
            len = end - i;
            next = end + 1;
            int sus = suspect(p, len);
            if (SB_UNLIKELY(sus)) {
                if (nl && len && p[len - 1] == '\r') len--;   /* a CRLF's '\r' */
                if (((sus & SUSPECT_CTRL) && first_control(p, len) != len) ||
                    ((sus & SUSPECT_HIGH) && sb_utf8_valid_prefix(p, len) != len)) {
                    rc = block_fault(b, n, *line0, err_line, err_kind, err, errlen);
                    return rc ? rc : SB_EINVAL;   /* (block_fault finds what this line holds) */
                }
            }
            size_t s1 = find_sep(p, len, 0);
            s2 = s1 < len ? find_sep(p, len, s1 + 5) : len;
        }
        const char *msg = NULL;
        if (parse_after(p, len, s2, &ls[nb], &msg)) {
            if ((rc = block_fault(b, n, *line0, err_line, err_kind, err, errlen))) return rc;
            fail(line, SB_REORDER_ERR_FORMAT, msg, err_line, err_kind, err, errlen);
            return SB_EFORMAT;
        }
        if (++nb == RO_BATCH) {
            if ((rc = count_batch(r, ls, nb))) return rc;
            nb = 0;
        }
        line++;
        i = next;
    }
    if ((rc = count_batch(r, ls, nb))) return rc;
    *line0 = line;
    return SB_OK;
}

int sb_reorder_count(sb_reorder *r, int fd, uint64_t *err_line, int *err_kind, char *err, size_t errlen) {
    uint64_t t0 = sb_now_ns(), line0 = 1;
    size_t carry = 0;
    int first = 1, eof = 0, rc = SB_OK;
    if (err_line) *err_line = 0;
    while (!eof) {
        if (SB_GROW(r->buf, r->bcap, carry + RO_READ + 1, RO_READ + 1)) { rc = SB_ENOMEM; break; }
        size_t got = 0;
        while (got < RO_READ) {   /* a full read as a regular file's read1(1 MiB) gives it (a pipe's come short) */
            ssize_t k = read(fd, r->buf + carry + got, RO_READ - got);
            if (k < 0) { if (errno == EINTR) continue; rc = SB_EIO; break; }
            if (k == 0) { eof = 1; break; }
            got += (size_t)k;
        }
        if (rc) break;
        size_t have = carry + got, cut;
        if (eof) cut = have;
        else {
            const char *nl = memrchr(r->buf, '\n', have);
            if (!nl) { carry = have; continue; }   /* a line longer than a read: joined, as open_text joins it */
            cut = (size_t)(nl - r->buf) + 1;
        }
        if (cut && (rc = count_block(r, r->buf, cut, first, &line0, err_line, err_kind, err, errlen))) break;
        if (cut) first = 0;
        carry = have - cut;
        memmove(r->buf, r->buf + cut, carry);
    }
    r->st.ns_count += sb_now_ns() - t0;
    return rc;
}

int sb_reorder_count_text(sb_reorder *r, const char *text, size_t len, uint64_t *line, uint64_t *err_line,
                          int *err_kind, char *err, size_t errlen) {
    uint64_t t0 = sb_now_ns();
    if (err_line) *err_line = 0;
    int rc = len ? count_block(r, text, len, 0, line, err_line, err_kind, err, errlen) : SB_OK;
    r->st.ns_count += sb_now_ns() - t0;
    return rc;
}

/* ---------------------------------------------------------------- sorting */
/* bytes [8d, 8d + 8) of entry i's key followed by " ||| " (the table's order: key_cmp), big-endian, zero past
 * its end (keys hold no NUL, and so followed no key is a prefix of another) */
static inline uint64_t digit(const sb_reorder *r, uint64_t off, size_t d) {
    const ro_rec *e = rec_at(r->keys, off);
    size_t at = d * 8;
    unsigned char b[8] = {0};
    if (at + 8 <= e->len) memcpy(b, e->key + at, 8);
    else if (at < (size_t)e->len + 5) {
        static const char sep[5] = {' ', '|', '|', '|', ' '};
        for (size_t j = 0, i = at; j < 8 && i < (size_t)e->len + 5; j++, i++)
            b[j] = (unsigned char)(i < e->len ? e->key[i] : sep[i - e->len]);
    } else return 0;
    uint64_t k = 0;
    for (int j = 0; j < 8; j++) k = k << 8 | b[j];
    return k;
}

static void sort_by_digit(ro_sort *a, ro_sort *t, size_t n) {
    if (n < 64) {
        for (size_t i = 1; i < n; i++) {
            ro_sort x = a[i];
            size_t j = i;
            while (j > 0 && x.k < a[j - 1].k) { a[j] = a[j - 1]; j--; }
            a[j] = x;
        }
        return;
    }
    size_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) cnt[b][(a[i].k >> (8 * b)) & 0xff]++;
    ro_sort *src = a, *dst = t;
    for (int b = 0; b < 8; b++) {
        size_t *c = cnt[b], sum = 0;
        if (c[(src[0].k >> (8 * b)) & 0xff] == n) continue;   /* every key has this byte: nothing moves */
        for (int x = 0; x < 256; x++) { size_t v = c[x]; c[x] = sum; sum += v; }
        for (size_t i = 0; i < n; i++) dst[c[(src[i].k >> (8 * b)) & 0xff]++] = src[i];
        ro_sort *s = src; src = dst; dst = s;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

/* a[0 .. n) sorted by their keys from byte 8d on (their first 8d bytes are equal); t: scratch of n. A range whose
 * keys all tie on a digit goes on to the next digit in this frame (two keys sharing a megabyte-long prefix must
 * not recurse once per 8 bytes); the recursion is into proper sub-ranges only. */
static void sort_keys(const sb_reorder *r, ro_sort *a, ro_sort *t, size_t n, size_t d) {
    if (n < 2) return;
    for (;; d++) {
        for (size_t i = 0; i < n; i++) {   /* records in key order, not in memory order: each fetched ahead */
            if (i + RO_PREFETCH < n) SB_PREFETCH(r->keys + a[i + RO_PREFETCH].off + sizeof(ro_rec) + d * 8);
            a[i].k = digit(r, a[i].off, d);
        }
        sort_by_digit(a, t, n);
        if (a[0].k != a[n - 1].k || a[0].k == 0) break;   /* (all 0: every key ended -- not for distinct keys) */
    }
    for (size_t s = 0; s < n;) {
        size_t e = s + 1;
        while (e < n && a[e].k == a[s].k) e++;
        if (e - s > 1) sort_keys(r, a + s, t + s, e - s, d + 1);   /* distinct keys: some go on past 8(d + 1) */
        s = e;
    }
}

/* ---------------------------------------------------------------- writing */
typedef struct { char s[24]; unsigned char len; } ro_fmt;

/* Python's format(v, '.6g'): C's %.6g (both exact, ties to even), a NaN as "nan" */
static size_t fmt_g(char *o, double v) {
    if (isnan(v)) { memcpy(o, "nan", 3); return 3; }
    return (size_t)snprintf(o, 24, "%.6g", v);
}

static inline char *put_val(char *o, uint32_t c, uint64_t t, double s, ro_fmt *tab) {
    if (t < RO_FMT_T) {
        ro_fmt *f = &tab[t * RO_FMT_T + c];
        if (SB_UNLIKELY(!f->len)) f->len = (unsigned char)fmt_g(f->s, ((double)c + s) / ((double)t + 3 * s));
        memcpy(o, f->s, 16);   /* fixed size copy: the printed length is at most 12 here */
        return o + f->len;
    }
    return o + fmt_g(o, ((double)c + s) / ((double)t + 3 * s));
}

/* where a part's lines go: a file (fd >= 0; out its buffer, flushed when full) or memory (fd < 0; out grown) */
typedef struct { int fd; char *out; size_t k, cap; uint64_t written; } ro_sink;

/* room for need more bytes at out + k */
static int sink_room(ro_sink *o, size_t need) {
    if (o->k + need <= o->cap) return SB_OK;
    if (o->fd >= 0 && o->k) {
        int rc = sb_ps_write_all(o->fd, o->out, o->k);
        if (rc) return rc;
        o->written += o->k;
        o->k = 0;
    }
    return SB_GROW(o->out, o->cap, o->k + need, RO_OUT);   /* (a file's buffer grows for a key longer than it) */
}

/* lines [lo, hi) of the table into o */
static int format_part(const sb_reorder *r, size_t lo, size_t hi, double s, ro_fmt *tab, ro_sink *o) {
    const ro_sort *a = r->order;
    int rc = SB_OK;
    for (size_t j = lo; j < hi; j++) {
        if (a && j + RO_PREFETCH < hi) {   /* (in order, the records are read one after another) */
            SB_PREFETCH(r->keys + a[j + RO_PREFETCH].off);
            SB_PREFETCH(r->keys + a[j + RO_PREFETCH].off + 64);
        }
        const ro_rec *e = rec_at(r->keys, a ? a[j].off : r->ent[j].off);
        if ((rc = sink_room(o, (size_t)e->len + 5 + 6 * 24 + 1 + 16))) return rc;   /* (+16: put_val's copy) */
        char *p = o->out + o->k;
        memcpy(p, e->key, e->len);
        p += e->len;
        memcpy(p, " ||| ", 5); p += 5;
        uint64_t tp = (uint64_t)e->c[0] + e->c[1] + e->c[2], tn = (uint64_t)e->c[3] + e->c[4] + e->c[5];
        for (int x = 0; x < 3; x++) { p = put_val(p, e->c[x], tp, s, tab); *p++ = ' '; }
        for (int x = 3; x < 6; x++) { p = put_val(p, e->c[x], tn, s, tab); *p++ = x == 5 ? '\n' : ' '; }
        o->k = (size_t)(p - o->out);
    }
    return SB_OK;
}

int sb_reorder_sort(sb_reorder *r) {
    if (r->sorted) return SB_OK;
    uint64_t t0 = sb_now_ns();
    size_t n = r->n;
    free(r->order);
    r->order = NULL;
    r->st.sort_bytes = 0;
    if (r->unsorted) {   /* (records in the table's order need no order) */
        ro_sort *a = malloc((n ? n : 1) * sizeof *a), *t = malloc((n ? n : 1) * sizeof *t);
        if (!a || !t) { free(a); free(t); return SB_ENOMEM; }
        r->st.sort_bytes = 2 * n * sizeof *a;
        for (size_t i = 0; i < n; i++) a[i].off = r->ent[i].off;
        sort_keys(r, a, t, n, 0);
        free(t);
        r->order = a;
    }
    r->sorted = 1;
    r->st.ns_sort += sb_now_ns() - t0;
    return SB_OK;
}

static void part_range(const sb_reorder *r, int part, int parts, size_t *lo, size_t *hi) {
    *lo = r->n * (size_t)part / (size_t)parts;
    *hi = r->n * (size_t)(part + 1) / (size_t)parts;
}

int sb_reorder_format(const sb_reorder *r, double smoothing, size_t lo, size_t hi, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (!(smoothing >= 0) || lo > hi || hi > r->n || !r->sorted) return SB_EINVAL;
    ro_fmt *tab = calloc((size_t)RO_FMT_T * RO_FMT_T, sizeof *tab);   /* (one a call: calls may run at once) */
    if (!tab) return SB_ENOMEM;
    ro_sink o = {-1, NULL, 0, 0, 0};
    int rc = format_part(r, lo, hi, smoothing, tab, &o);
    free(tab);
    if (rc) { free(o.out); return rc; }
    *text = o.out;
    *len = o.k;
    return SB_OK;
}

void sb_reorder_text_free(char *text) { free(text); }

int sb_reorder_write(sb_reorder *r, double smoothing, const char *const *paths, int parts) {
    if (!(smoothing >= 0) || parts < 1 || !paths) return SB_EINVAL;
    int rc = sb_reorder_sort(r);
    if (rc) return rc;
    uint64_t t1 = sb_now_ns();
    ro_fmt *tab = calloc((size_t)RO_FMT_T * RO_FMT_T, sizeof *tab);
    ro_sink o = {-1, malloc(RO_OUT), 0, RO_OUT, 0};
    if (!tab || !o.out) rc = SB_ENOMEM;
    for (int p = 0; p < parts && !rc; p++) {
        if ((o.fd = open(paths[p], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) { rc = SB_EIO; break; }
        size_t lo, hi;
        part_range(r, p, parts, &lo, &hi);
        o.k = 0;
        rc = format_part(r, lo, hi, smoothing, tab, &o);
        if (!rc && o.k) { rc = sb_ps_write_all(o.fd, o.out, o.k); o.written += o.k; }
        if (close(o.fd) && !rc) rc = SB_EIO;
    }
    r->st.out_bytes += o.written;
    r->st.ns_write += sb_now_ns() - t1;
    free(o.out); free(tab);
    return rc;
}
