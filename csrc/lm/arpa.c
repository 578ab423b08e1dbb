/* arpa.c - see arpa.h. */
#include "lm/arpa.h"
#include "util/probing.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_PRE = 0, ST_DATA, ST_SECTION, ST_END };

typedef struct {
    uint32_t *ids;
    float *prob;
    float *backoff;
    uint64_t capacity;
    uint64_t filled;
} order_buf;

struct sb_arpa {
    int state;
    int order;             /* number of `ngram N=` lines */
    int section;           /* current section order (1-based) while ST_SECTION */
    int need_buffers;
    int buffers_set;
    uint64_t lineno;
    uint64_t counts[SB_ARPA_MAX_ORDER + 1];
    order_buf bufs[SB_ARPA_MAX_ORDER + 1];
    /* vocabulary: arena of words, offsets, open-addressing table of id+1 */
    char *arena;
    size_t arena_len, arena_cap;
    uint64_t *word_off;    /* word i = arena[word_off[i] .. word_off[i+1]) */
    uint64_t *word_hash;
    uint32_t vocab_size, vocab_cap;
    sb_index vix;          /* of the words, by sb_str_hash (word_hash) */
    /* duplicate detection for the current section (n >= 2): (hash >> 32) << 32 | (row + 1).
     * Checks go through a small prefetch queue (Mokry's Alg. 3.2): an entry's slot is prefetched when
     * it is parsed and checked DUPQ entries later. */
    uint64_t *dtab;
    uint64_t dtab_mask;
    uint64_t dq_row[16], dq_hash[16], dq_line[16];
    int dq_head, dq_len;
    uint64_t error_line;
    char error[512];
};

static int fail(sb_arpa *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof(p->error), fmt, ap);
    va_end(ap);
    p->error_line = p->lineno;
    return SB_EFORMAT;
}

enum { DUPQ = 16 };

static void format_ngram(const sb_arpa *p, const uint32_t *ids, int n, char *out, size_t cap) {
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < n && o + 2 < cap; i++) {
        uint64_t a = p->word_off[ids[i]], b = p->word_off[ids[i] + 1];
        size_t len = (size_t)(b - a);
        if (o + len + 2 >= cap) len = cap - o - 2;
        if (i) out[o++] = ' ';
        memcpy(out + o, p->arena + a, len);
        o += len;
        out[o] = 0;
    }
}

/* check the oldest pending entry against the table, then insert it */
static int dup_check_one(sb_arpa *p) {
    const int n = p->section;
    const order_buf *b = &p->bufs[n];
    int i = p->dq_head;
    uint64_t row = p->dq_row[i], h = p->dq_hash[i], line = p->dq_line[i];
    p->dq_head = (i + 1) % DUPQ;
    p->dq_len--;
    const uint32_t *ids = b->ids + row * (uint64_t)n;
    uint64_t fp = h & 0xFFFFFFFF00000000ULL, slot = h & p->dtab_mask;
    for (;;) {
        uint64_t v = p->dtab[slot];
        if (!v) { p->dtab[slot] = fp | (row + 1); return SB_OK; }
        if ((v & 0xFFFFFFFF00000000ULL) == fp &&
            memcmp(b->ids + ((v & 0xFFFFFFFFULL) - 1) * n, ids, sizeof(uint32_t) * (size_t)n) == 0) {
            char text[256];
            format_ngram(p, ids, n, text, sizeof(text));
            uint64_t save = p->lineno;
            p->lineno = line;
            int rc = fail(p, "duplicate %d-gram '%s'", n, text);
            p->lineno = save;
            return rc;
        }
        slot = (slot + 1) & p->dtab_mask;
    }
}

static int dup_drain(sb_arpa *p) {
    while (p->dq_len) {
        int rc = dup_check_one(p);
        if (rc) { p->dq_len = 0; return rc; }
    }
    return SB_OK;
}

int sb_arpa_new(sb_arpa **out) {
    *out = calloc(1, sizeof(sb_arpa));
    return *out ? SB_OK : SB_ENOMEM;
}

void sb_arpa_free(sb_arpa *p) {
    if (!p) return;
    free(p->arena);
    free(p->word_off);
    free(p->word_hash);
    sb_index_free(&p->vix);
    free(p->dtab);
    free(p);
}

int sb_arpa_order(const sb_arpa *p) { return p->order; }
uint64_t sb_arpa_count(const sb_arpa *p, int n) {
    return (n >= 1 && n <= p->order) ? p->counts[n] : 0;
}
uint64_t sb_arpa_filled(const sb_arpa *p, int n) {
    return (n >= 1 && n <= p->order) ? p->bufs[n].filled : 0;
}
uint64_t sb_arpa_error_line(const sb_arpa *p) { return p->error_line; }
const char *sb_arpa_error_message(const sb_arpa *p) { return p->error; }
uint32_t sb_arpa_vocab_size(const sb_arpa *p) { return p->vocab_size; }
uint64_t sb_arpa_vocab_bytes(const sb_arpa *p) { return p->arena_len + p->vocab_size; }

int sb_arpa_vocab_dump(const sb_arpa *p, char *out, uint64_t cap) {
    if (cap < sb_arpa_vocab_bytes(p)) return SB_EINVAL;
    uint64_t o = 0;
    for (uint32_t i = 0; i < p->vocab_size; i++) {
        uint64_t a = p->word_off[i], b = p->word_off[i + 1];
        memcpy(out + o, p->arena + a, b - a);
        o += b - a;
        out[o++] = '\n';
    }
    return SB_OK;
}

int sb_arpa_set_buffers(sb_arpa *p, int n, uint32_t *ids, float *prob, float *backoff, uint64_t capacity) {
    if (n < 1 || n > p->order) return SB_EINVAL;
    uint64_t need = p->counts[n] + (n == 1 ? 1 : 0);
    if (capacity < need || !ids || !prob || !backoff) return SB_EINVAL;
    p->bufs[n] = (order_buf){ids, prob, backoff, capacity, 0};
    int all = 1;
    for (int k = 1; k <= p->order; k++) all &= p->bufs[k].ids != NULL;
    if (all) { p->buffers_set = 1; p->need_buffers = 0; }
    return SB_OK;
}

/* ---- vocabulary ---- */
static int64_t vocab_find(const sb_arpa *p, const char *w, size_t n, uint64_t h) {
    uint64_t b = sb_index_start(&p->vix, h);
    for (uint32_t id; (id = sb_index_at(&p->vix, b)) != UINT32_MAX; b = sb_index_step(&p->vix, b)) {
        if (p->word_hash[id] == h) {
            uint64_t a = p->word_off[id], e = p->word_off[id + 1];
            if (e - a == n && memcmp(p->arena + a, w, n) == 0) return id;
        }
    }
    return -1;
}

static int vocab_add(sb_arpa *p, const char *w, size_t n, uint64_t h, uint32_t *id) {
    if (p->vocab_size + 1 >= p->vocab_cap) return SB_EFULL;
    if (SB_GROW(p->arena, p->arena_cap, p->arena_len + n, 1 << 16)) return SB_ENOMEM;
    memcpy(p->arena + p->arena_len, w, n);
    p->arena_len += n;
    uint32_t i = p->vocab_size++;
    p->word_off[i + 1] = p->arena_len;
    p->word_hash[i] = h;
    sb_index_add(&p->vix, h, i);
    *id = i;
    return SB_OK;
}

static int alloc_vocab(sb_arpa *p, uint64_t n_unigrams) {
    uint64_t cap = n_unigrams + 2;
    if (cap >= UINT32_MAX) return SB_EINVAL;
    uint64_t tab = 16;
    while (tab < 2 * cap) tab <<= 1;
    p->word_off = calloc(cap + 1, sizeof(uint64_t));
    p->word_hash = calloc(cap, sizeof(uint64_t));
    if (!p->word_off || !p->word_hash) return SB_ENOMEM;
    int rc = sb_index_reset(&p->vix, tab);
    if (rc != SB_OK) return rc;
    p->vocab_cap = (uint32_t)cap;
    return SB_OK;
}

/* ---- line helpers ---- */
static inline int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int is_blank(const char *s, const char *e) {
    for (; s < e; s++)
        if (!is_space(*s)) return 0;
    return 1;
}

/* does [s,e) equal lit after trimming trailing whitespace? */
static int line_is(const char *s, const char *e, const char *lit) {
    while (e > s && is_space(e[-1])) e--;
    size_t n = strlen(lit);
    return (size_t)(e - s) == n && memcmp(s, lit, n) == 0;
}

static int parse_float(sb_arpa *p, const char *s, const char *e, float *out, const char *what) {
    char tmp[64];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof(tmp)) return fail(p, "bad number for %s: '%.*s'", what, (int)(n > 40 ? 40 : n), s);
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    double d = strtod(tmp, &end);
    if (end != tmp + n || isnan(d)) return fail(p, "bad number for %s: '%s'", what, tmp);
    *out = (float)d;
    return SB_OK;
}

static int start_section(sb_arpa *p, int n) {
    free(p->dtab);
    p->dtab = NULL;
    p->section = n;
    p->state = ST_SECTION;
    if (n == 1) return alloc_vocab(p, p->counts[1]);
    uint64_t tab = 16;
    while (tab < p->counts[n] + p->counts[n] / 2 + 1) tab <<= 1;
    if (p->counts[n] >= UINT32_MAX - 1) return SB_EINVAL;
    p->dq_head = p->dq_len = 0;
    p->dtab = calloc(tab, sizeof(uint64_t));
    if (!p->dtab) return SB_ENOMEM;
    p->dtab_mask = tab - 1;
    return SB_OK;
}

/* the section that just ended: counts must agree; add <unk> after the unigrams if absent */
static int end_section(sb_arpa *p) {
    int n = p->section;
    order_buf *b = &p->bufs[n];
    int drc = dup_drain(p);
    if (drc) return drc;
    if (b->filled != p->counts[n])
        return fail(p, "the \\data\\ header says %llu %d-grams but the section has %llu",
                    (unsigned long long)p->counts[n], n, (unsigned long long)b->filled);
    if (n == 1) {
        static const char unk[] = "<unk>";
        uint64_t h = sb_str_hash(unk, 5);
        if (vocab_find(p, unk, 5, h) < 0) {
            uint32_t id;
            int rc = vocab_add(p, unk, 5, h, &id);
            if (rc) return rc;
            b->ids[b->filled] = id;
            b->prob[b->filled] = -100.0f;
            b->backoff[b->filled] = 0.0f;
            b->filled++;
        }
    }
    free(p->dtab);
    p->dtab = NULL;
    return SB_OK;
}

static int parse_entry(sb_arpa *p, const char *s, const char *e) {
    const int n = p->section;
    order_buf *b = &p->bufs[n];
    if (b->filled >= p->counts[n])
        return fail(p, "more %d-grams than the \\data\\ header's count of %llu", n,
                    (unsigned long long)p->counts[n]);
    /* tokens: prob, n words, optional backoff */
    const char *tok[SB_ARPA_MAX_ORDER + 3];
    const char *tend[SB_ARPA_MAX_ORDER + 3];
    int nt = 0;
    const char *c = s;
    while (c < e) {
        while (c < e && is_space(*c)) c++;
        if (c >= e) break;
        if (nt == n + 2) return fail(p, "a %d-gram line with more than %d words (wrong order?)", n, n);
        tok[nt] = c;
        while (c < e && !is_space(*c)) c++;
        tend[nt++] = c;
    }
    if (nt < n + 1)
        return fail(p, "a %d-gram line with %d word%s (wrong order?)", n, nt > 0 ? nt - 1 : 0, nt == 2 ? "" : "s");
    float prob, backoff = 0.0f;
    int rc = parse_float(p, tok[0], tend[0], &prob, "the log10 probability");
    if (rc) return rc;
    if (prob > 0.0f) return fail(p, "positive log10 probability %g", (double)prob);
    if (nt == n + 2) {
        rc = parse_float(p, tok[n + 1], tend[n + 1], &backoff, "the back-off");
        if (rc) return rc;
        if (!isfinite(backoff)) return fail(p, "non-finite back-off");
        if (n == p->order && backoff != 0.0f)
            return fail(p, "a back-off on the highest order (%d-gram)", n);
    }
    uint64_t row = b->filled;
    uint32_t *ids = b->ids + row * (uint64_t)n;
    for (int i = 0; i < n; i++) {
        const char *w = tok[1 + i];
        size_t len = (size_t)(tend[1 + i] - w);
        if (len == 5 && memcmp(w, "<UNK>", 5) == 0) w = "<unk>";
        uint64_t h = sb_str_hash(w, len);
        int64_t id = vocab_find(p, w, len, h);
        if (n == 1) {
            if (id >= 0) return fail(p, "duplicate unigram '%.*s'", (int)len, w);
            uint32_t nid;
            rc = vocab_add(p, w, len, h, &nid);
            if (rc) return rc;
            id = nid;
        } else if (id < 0) {
            if (len == 5 && memcmp(w, "<unk>", 5) == 0) {
                /* <unk> is appended when the unigram section ends, so it is always found */
                return fail(p, "internal: <unk> missing");
            }
            return fail(p, "word '%.*s' of a %d-gram is not a unigram", (int)(len > 80 ? 80 : len), w, n);
        }
        ids[i] = (uint32_t)id;
    }
    if (n >= 2) {
        if (p->dq_len == DUPQ && (rc = dup_check_one(p))) return rc;
        uint64_t h = sb_ids_hash(ids, (size_t)n);
        SB_PREFETCH(&p->dtab[h & p->dtab_mask]);
        int t = (p->dq_head + p->dq_len) % DUPQ;
        p->dq_row[t] = row;
        p->dq_hash[t] = h;
        p->dq_line[t] = p->lineno;
        p->dq_len++;
    }
    b->prob[row] = prob;
    b->backoff[row] = backoff;
    b->filled = row + 1;
    return SB_OK;
}

static int parse_count_line(sb_arpa *p, const char *s, const char *e) {
    /* ngram N=count */
    while (s < e && is_space(*s)) s++;
    if (e - s < 6 || memcmp(s, "ngram", 5) != 0 || !is_space(s[5]))
        return fail(p, "expected 'ngram N=count' in the \\data\\ block");
    s += 5;
    while (s < e && is_space(*s)) s++;
    char *end;
    char tmp[64];
    size_t n = (size_t)(e - s);
    if (n >= sizeof(tmp)) n = sizeof(tmp) - 1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    if (tmp[0] < '0' || tmp[0] > '9') return fail(p, "bad 'ngram N=count' line");
    long order = strtol(tmp, &end, 10);
    if (*end != '=' || end[1] < '0' || end[1] > '9') return fail(p, "bad 'ngram N=count' line");
    unsigned long long count = strtoull(end + 1, &end, 10);
    if (!is_blank(end, tmp + n)) return fail(p, "bad 'ngram N=count' line");
    if (order != p->order + 1) return fail(p, "expected 'ngram %d=...', got order %ld", p->order + 1, order);
    if (order > SB_ARPA_MAX_ORDER) return fail(p, "order %ld is above the supported %d", order, SB_ARPA_MAX_ORDER);
    p->order = (int)order;
    p->counts[order] = count;
    return SB_OK;
}

/* "\N-grams:" -> N, else 0 */
static int section_header(const char *s, const char *e) {
    while (e > s && is_space(e[-1])) e--;
    if (e - s < 9 || s[0] != '\\') return 0;
    const char *c = s + 1;
    int n = 0;
    while (c < e && *c >= '0' && *c <= '9') { n = n * 10 + (*c - '0'); c++; if (n > 1000) return 0; }
    if (c == s + 1) return 0;
    if ((size_t)(e - c) != 7 || memcmp(c, "-grams:", 7) != 0) return 0;
    return n;
}

static int process_line(sb_arpa *p, const char *s, const char *e, int *stop) {
    p->lineno++;
    switch (p->state) {
    case ST_PRE:
        if (is_blank(s, e) || *s == '#') return SB_OK;
        if (line_is(s, e, "\\data\\")) { p->state = ST_DATA; return SB_OK; }
        return fail(p, "expected the \\data\\ header");
    case ST_DATA: {
        if (is_blank(s, e)) return SB_OK;
        int n = section_header(s, e);
        if (n) {
            if (p->order == 0) return fail(p, "the \\data\\ block lists no n-gram counts");
            if (n != 1) return fail(p, "expected \\1-grams: first, got \\%d-grams:", n);
            if (!p->buffers_set) {
                /* hand control back so the caller can allocate; this line is re-read */
                p->lineno--;
                p->need_buffers = 1;
                *stop = 1;
                return SB_OK;
            }
            return start_section(p, 1);
        }
        if (line_is(s, e, "\\end\\")) return fail(p, "\\end\\ before any n-gram section");
        return parse_count_line(p, s, e);
    }
    case ST_SECTION: {
        if (*s == '\\') {
            int n = section_header(s, e);
            int rc;
            if (n) {
                if ((rc = end_section(p))) return rc;
                if (n != p->section + 1) return fail(p, "expected \\%d-grams:, got \\%d-grams:", p->section + 1, n);
                if (n > p->order) return fail(p, "\\%d-grams: section but the \\data\\ header lists order %d", n, p->order);
                return start_section(p, n);
            }
            if (line_is(s, e, "\\end\\")) {
                if ((rc = end_section(p))) return rc;
                if (p->section != p->order)
                    return fail(p, "\\end\\ after the %d-grams but the \\data\\ header lists order %d", p->section, p->order);
                p->state = ST_END;
                return SB_OK;
            }
            if ((rc = dup_drain(p))) return rc;
            return fail(p, "unexpected line starting with a backslash");
        }
        if (is_blank(s, e)) return SB_OK;
        int rc = parse_entry(p, s, e);
        if (rc == SB_EFORMAT && p->dq_len) {
            /* an earlier duplicate still in the check queue is the first error in file order */
            char msg[sizeof(p->error)];
            uint64_t line = p->error_line;
            memcpy(msg, p->error, sizeof(msg));
            if (dup_drain(p) == SB_OK) { memcpy(p->error, msg, sizeof(msg)); p->error_line = line; }
        }
        return rc;
    }
    case ST_END:
        if (is_blank(s, e)) return SB_OK;
        return fail(p, "text after \\end\\");
    }
    return SB_EINVAL;
}

int sb_arpa_feed(sb_arpa *p, const char *buf, size_t len, size_t *consumed, int *need_buffers) {
    size_t i = 0;
    *need_buffers = 0;
    if (p->need_buffers && !p->buffers_set) { *consumed = 0; *need_buffers = 1; return SB_OK; }
    while (i < len) {
        const char *s = buf + i;
        const char *nl = memchr(s, '\n', len - i);
        const char *e = nl ? nl : buf + len;
        int stop = 0;
        int rc = process_line(p, s, e, &stop);
        if (rc) { *consumed = i; return rc; }
        if (stop) { *consumed = i; *need_buffers = 1; return SB_OK; }
        i = (size_t)(e - buf) + (nl ? 1 : 0);
    }
    *consumed = i;
    return SB_OK;
}

int sb_arpa_finish(sb_arpa *p) {
    p->lineno++;
    switch (p->state) {
    case ST_PRE: return fail(p, "missing the \\data\\ header (end of file)");
    case ST_DATA: return fail(p, "end of file inside the \\data\\ block (no n-gram sections)");
    case ST_SECTION: {
        int rc = dup_drain(p);
        if (rc) return rc;
        return fail(p, "end of file before \\end\\ (in the %d-gram section)", p->section);
    }
    default: p->lineno--; return SB_OK;
    }
}
