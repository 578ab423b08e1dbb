/* phrase_score.c - see phrase_score.h. */
#define _GNU_SOURCE
#include "tm/phrase_score.h"
#include "tm/phrase_dict.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---------------------------------------------------------------- records */
/* A phrase is its word codes packed into 128 bits, first word in the most significant bits, 0 = no word.
 * Codes are 1-based ranks of the words in byte order, so key order = byte order of the phrase strings
 * (LC_ALL=C), and no phrase dictionary is needed at all (the fix Mediani §5 asks for: integer ids, not
 * fixed-width strings). */



static inline int cmp1(const rec1 *a, const rec1 *b) {
    int c = kcmp(a->tgt, b->tgt);
    if (c) return c;
    if ((c = kcmp(a->src, b->src))) return c;
    if (a->align != b->align) return a->align < b->align ? -1 : 1;
    return 0;
}
static inline int cmp2(const rec2 *a, const rec2 *b) {
    int c = kcmp(a->src, b->src);
    return c ? c : kcmp(a->tgt, b->tgt);
}

/* in-place quicksort (median of three, insertion sort below 16), instantiated per record type */
#define DEFINE_SORT(NAME, T, CMP)                                                        \
    static void NAME(T *a, size_t n) {                                                   \
        while (n > 16) {                                                                 \
            size_t m = n / 2;                                                            \
            T t;                                                                         \
            if (CMP(&a[m], &a[0]) < 0) { t = a[m]; a[m] = a[0]; a[0] = t; }              \
            if (CMP(&a[n - 1], &a[m]) < 0) { t = a[n - 1]; a[n - 1] = a[m]; a[m] = t;    \
                if (CMP(&a[m], &a[0]) < 0) { t = a[m]; a[m] = a[0]; a[0] = t; } }        \
            T p = a[m];                                                                  \
            size_t i = 0, j = n - 1;                                                     \
            for (;;) {                                                                   \
                while (CMP(&a[i], &p) < 0) i++;                                          \
                while (CMP(&p, &a[j]) < 0) j--;                                          \
                if (i >= j) break;                                                       \
                t = a[i]; a[i] = a[j]; a[j] = t;                                         \
                i++; j--;                                                                \
            }                                                                            \
            size_t left = j + 1;                                                         \
            if (left < n - left) { NAME(a, left); a += left; n -= left; }                \
            else { NAME(a + left, n - left); n = left; }                                 \
        }                                                                                \
        for (size_t i = 1; i < n; i++) {                                                 \
            T x = a[i];                                                                  \
            size_t j = i;                                                                \
            while (j > 0 && CMP(&x, &a[j - 1]) < 0) { a[j] = a[j - 1]; j--; }            \
            a[j] = x;                                                                    \
        }                                                                                \
    }
DEFINE_SORT(sort1, rec1, cmp1)
DEFINE_SORT(sort2, rec2, cmp2)

/* ---------------------------------------------------------------- small IO helpers */
static int write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return SB_EIO; }
        p += w; n -= (size_t)w;
    }
    return SB_OK;
}
static int pread_all(int fd, void *buf, size_t n, uint64_t off) {
    char *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) { if (errno == EINTR) continue; return SB_EIO; }
        if (r == 0) return SB_EIO;
        p += r; n -= (size_t)r; off += (uint64_t)r;
    }
    return SB_OK;
}

/* ---------------------------------------------------------------- lex table */

/* the lexical table: an sb_probing of lexent (probing.h), grown at 70% load; keys are mixed when stored (sb_mix64
 * is a bijection, 0 only for 0), so the bucket is key & mask */
static inline uint64_t lex_key(uint32_t f, uint32_t e) { return sb_mix64((((uint64_t)f << 32) | e) + 1); }
static const lexent *lex_find(const sb_probing *L, uint32_t f, uint32_t e) {
    return L->entries ? sb_probing_find(L, sizeof(lexent), SB_PROBING_MASK, lex_key(f, e)) : NULL;
}
/* the entry of (f, e), a new one (both weights -1) if absent; NULL when out of memory */
static lexent *lex_slot(sb_probing *L, uint32_t f, uint32_t e) {
    uint64_t key = lex_key(f, e);
    if (!L->entries || (L->size + 1) * 10 > L->buckets * 7) {
        int rc = L->entries ? sb_probing_resize(L, L->buckets * 2, sizeof(lexent), SB_PROBING_MASK, 0)
                            : sb_probing_init(L, 1024, sizeof(lexent), SB_PROBING_MASK, 0);
        if (rc) return NULL;
    }
    int found;
    lexent *le = sb_probing_slot(L, sizeof(lexent), key, sb_probing_ideal(L, key, SB_PROBING_MASK), L->buckets - 1,
                                 &found);
    if (le && !found) { le->key = key; le->ef = -1; le->fe = -1; L->size++; }
    return le;
}

/* ---------------------------------------------------------------- state */
static int runvec_push(runvec *rv, run_t r) {
    if (rv->n == rv->cap) {
        size_t nc = rv->cap ? rv->cap * 2 : 16;
        run_t *v = realloc(rv->v, nc * sizeof(run_t));
        if (!v) return SB_ENOMEM;
        rv->v = v; rv->cap = nc;
    }
    rv->v[rv->n++] = r;
    return SB_OK;
}
static int u64_push(u64vec *a, uint64_t x) {
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 1024;
        uint64_t *v = realloc(a->v, nc * sizeof(uint64_t));
        if (!v) return SB_ENOMEM;
        a->v = v; a->cap = nc;
    }
    a->v[a->n++] = x;
    return SB_OK;
}


static void mkname(char *out, size_t n, const char *dir, const char *what, int t) {
    snprintf(out, n, "%s/%s.%d", dir, what, t);
}

int sb_pscore_create(const sb_pscore_args *args, sb_pscore **out) {
    *out = NULL;
    if (!args || args->threads < 1 || args->threads > 256 || !args->tmpdir) return SB_EINVAL;
    if (args->memory_bytes < (1u << 20)) return SB_EINVAL;
    if (strlen(args->tmpdir) > 4000) return SB_EINVAL;
    sb_pscore *s = calloc(1, sizeof(*s));
    if (!s) return SB_ENOMEM;
    s->a = *args;
    strcpy(s->tmpdir, args->tmpdir);
    s->a.tmpdir = s->tmpdir;
    pthread_mutex_init(&s->mu, NULL);
    int T = args->threads;
    s->fd1 = malloc(T * sizeof(int)); s->fd2 = malloc(T * sizeof(int));
    s->end1 = calloc(T, sizeof(uint64_t)); s->end2 = calloc(T, sizeof(uint64_t));
    s->buf1 = calloc(T, sizeof(rec1 *)); s->n1 = calloc(T, sizeof(size_t));
    int rc = SB_OK;
    if (!s->fd1 || !s->fd2 || !s->end1 || !s->end2 || !s->buf1 || !s->n1) rc = SB_ENOMEM;
    if (!rc) for (int t = 0; t < T; t++) s->fd1[t] = s->fd2[t] = -1;
    if (!rc) rc = sb_dict_create(&s->aln);
    if (!rc) rc = sb_dict_create(&s->fw);
    if (!rc) rc = sb_dict_create(&s->ew);
    if (!rc) {
        char name[4200];
        for (int t = 0; t < T && !rc; t++) {
            mkname(name, sizeof name, s->tmpdir, "run1", t);
            s->fd1[t] = open(name, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
            mkname(name, sizeof name, s->tmpdir, "run2", t);
            s->fd2[t] = open(name, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
            if (s->fd1[t] < 0 || s->fd2[t] < 0) rc = SB_EIO;
        }
    }
    s->cap1 = (size_t)(args->memory_bytes / (uint64_t)T / sizeof(rec1));
    if (s->cap1 < 1024) s->cap1 = 1024;
    for (int t = 0; t < T && !rc; t++) {
        s->buf1[t] = malloc(s->cap1 * sizeof(rec1));
        if (!s->buf1[t]) rc = SB_ENOMEM;
    }
    s->st.buffer_bytes = (uint64_t)s->cap1 * sizeof(rec1) * (uint64_t)T;
    s->null_f = s->null_e = UINT32_MAX;
    if (rc) { sb_pscore_free(s); return rc; }
    *out = s;
    return SB_OK;
}

static void free_load_buffers(sb_pscore *s) {
    if (!s->buf1) return;
    for (int t = 0; t < s->a.threads; t++) { free(s->buf1[t]); s->buf1[t] = NULL; }
}

void sb_pscore_free(sb_pscore *s) {
    if (!s) return;
    char name[4200];
    for (int t = 0; t < s->a.threads; t++) {
        if (s->fd1 && s->fd1[t] >= 0) { close(s->fd1[t]); }
        if (s->fd2 && s->fd2[t] >= 0) { close(s->fd2[t]); }
        mkname(name, sizeof name, s->tmpdir, "run1", t); unlink(name);
        mkname(name, sizeof name, s->tmpdir, "run2", t); unlink(name);
    }
    free_load_buffers(s);
    free(s->buf1); free(s->n1);
    free(s->fd1); free(s->fd2); free(s->end1); free(s->end2);
    free(s->runs1.v); free(s->runs2.v); free(s->samples1.v); free(s->samples2.v);
    sb_dict_free(s->aln);
    free(s->fcode); free(s->ecode); free((void *)s->fword); free((void *)s->eword);
    sb_dict_free(s->fw); sb_dict_free(s->ew);
    sb_probing_release(&s->lex);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---------------------------------------------------------------- line reader (chunks) */
/* Next line (without '\n') or NULL at EOF; *rc set on error. The line is NUL-terminated in place. */
char *sb_ps_next_line(linereader *r, size_t *len, int *rc) {
    for (;;) {
        char *start = r->buf + r->pos;
        char *nl = memchr(start, '\n', r->len - r->pos);
        if (nl) { *nl = 0; *len = (size_t)(nl - start); r->pos = (size_t)(nl - r->buf) + 1; return start; }
        if (r->eof) {
            if (r->pos < r->len) {
                size_t n = r->len - r->pos;
                if (r->len == r->cap) {
                    char *b = realloc(r->buf, r->cap + 1);
                    if (!b) { *rc = SB_ENOMEM; return NULL; }
                    r->buf = b; r->cap++;
                    start = r->buf + r->pos;
                }
                start[n] = 0; r->pos = r->len; *len = n; return start;
            }
            return NULL;
        }
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos; r->pos = 0;
        if (r->len == r->cap) {
            char *b = realloc(r->buf, r->cap * 2);
            if (!b) { *rc = SB_ENOMEM; return NULL; }
            r->buf = b; r->cap *= 2;
        }
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0) { if (errno == EINTR) continue; *rc = SB_EIO; return NULL; }
        if (n == 0) r->eof = 1;
        r->len += (size_t)n;
    }
}


void sb_ps_seterr(char *err, size_t errlen, const char *msg) {
    if (err && errlen) snprintf(err, errlen, "%s", msg);
}

int sb_pscore_load_lex(sb_pscore *s, int which, int fd, uint64_t *err_line, char *err, size_t errlen) {
    if (which != SB_PSCORE_LEX_F2E && which != SB_PSCORE_LEX_E2F) return SB_EINVAL;
    linereader r = {fd, malloc(CHUNK), CHUNK, 0, 0, 0};
    if (!r.buf) return SB_ENOMEM;
    int rc = SB_OK;
    uint64_t lineno = 0, entries = 0;
    size_t len;
    char *line;
    while ((line = sb_ps_next_line(&r, &len, &rc))) {
        lineno++;
        if (lineno == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) { line += 3; len -= 3; }   /* a BOM */
        if (len && line[len - 1] == '\r') line[--len] = 0;   /* a CRLF's '\r' */
        size_t bad = sb_line_control(line, len);   /* the line rule (common.h) */
        if (bad != len) {
            char why[128];
            sb_line_control_msg((unsigned char)line[bad], why, sizeof why);
            sb_ps_seterr(err, errlen, why); rc = SB_EFORMAT; break;
        }
        char *w1 = strtok(line, " \t\r"), *w2 = strtok(NULL, " \t\r"), *w3 = strtok(NULL, " \t\r");
        if (!w1 && !w2) continue;   /* blank line */
        if (!w1 || !w2 || !w3 || strtok(NULL, " \t\r")) {
            sb_ps_seterr(err, errlen, "expected three fields `word word probability`"); rc = SB_EFORMAT; break;
        }
        char *endp;
        errno = 0;
        /* plain decimal only (strtod would also take hex floats, inf and nan, which no lex file holds) */
        int plain = w3[strspn(w3, "0123456789.eE+-")] == '\0';
        double p = strtod(w3, &endp);
        if (!plain || *endp || errno || !(p >= 0.0) || p > 1.0 + 1e-6) {
            sb_ps_seterr(err, errlen, "the probability is not a number in [0, 1]"); rc = SB_EFORMAT; break;
        }
        /* f2e: `e f w(e|f)`; e2f: `f e w(f|e)` */
        const char *fword = which == SB_PSCORE_LEX_F2E ? w2 : w1;
        const char *eword = which == SB_PSCORE_LEX_F2E ? w1 : w2;
        uint32_t fid, eid;
        if ((rc = sb_dict_intern(s->fw, fword, strlen(fword), &fid))) break;
        if ((rc = sb_dict_intern(s->ew, eword, strlen(eword), &eid))) break;
        lexent *le = lex_slot(&s->lex, fid, eid);
        if (!le) { rc = SB_ENOMEM; break; }
        if (which == SB_PSCORE_LEX_F2E) le->ef = p; else le->fe = p;
        entries++;
    }
    free(r.buf);
    if (!rc && entries == 0) {  /* every lexical weight would silently become LEX_MISSING */
        sb_ps_seterr(err, errlen, "empty lex file (no `word word probability` line)");
        rc = SB_EFORMAT;
        lineno = 0;
    }
    if (rc && err_line) *err_line = lineno;
    uint32_t id;
    if (sb_dict_find(s->fw, "NULL", 4, &id)) s->null_f = id;
    if (sb_dict_find(s->ew, "NULL", 4, &id)) s->null_e = id;
    return rc;
}

/* ---------------------------------------------------------------- load (step 1) */
typedef struct { char *buf; size_t len; uint64_t line0; } chunk_t;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    chunk_t *q; size_t cap, head, n;
    int done;          /* reader finished */
    int stop;          /* an error: everyone stops */
    int rc; uint64_t err_line; char err[256];
} loadq;

typedef struct {
    sb_pscore *s; loadq *q; int t;
    uint64_t lines;
} worker_t;

static void q_fail(loadq *q, int rc, uint64_t line, const char *msg) {
    pthread_mutex_lock(&q->mu);
    if (!q->rc || (line && line < q->err_line)) {
        q->rc = rc; q->err_line = line;
        snprintf(q->err, sizeof q->err, "%s", msg ? msg : "");
    }
    q->stop = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->mu);
}

/* Sort buffer t and append it as a run to thread t's step-1 file. */
static int spill1(sb_pscore *s, int t) {
    size_t n = s->n1[t];
    if (!n) return SB_OK;
    rec1 *b = s->buf1[t];
    sort1(b, n);
    int rc = write_all(s->fd1[t], b, n * sizeof(rec1));
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rc = runvec_push(&s->runs1, (run_t){t, s->end1[t], n});
    for (size_t i = 0; i < n && !rc; i += SAMPLE_EVERY) rc = u64_push(&s->samples1, b[i].tgt.hi);
    s->st.runs1++;
    s->st.run_bytes += n * sizeof(rec1);
    pthread_mutex_unlock(&s->mu);
    s->end1[t] += n;
    s->n1[t] = 0;
    return rc;
}

static inline double lexw(const sb_pscore *s, uint32_t f, uint32_t e, int ef) {
    if (f == UINT32_MAX || e == UINT32_MAX) return LEX_MISSING;
    const lexent *le = lex_find(&s->lex, f, e);
    if (!le) return LEX_MISSING;
    double v = ef ? le->ef : le->fe;
    return v < 0 ? LEX_MISSING : v;
}

static int cmp_by_str(const void *a, const void *b, void *ctx) {   /* GNU qsort_r: no global state */
    const sb_dict *d = ctx;
    return strcmp(sb_dict_str(d, *(const uint32_t *)a), sb_dict_str(d, *(const uint32_t *)b));
}
/* codes = 1-based ranks of the words in byte order */
static int make_codes(const sb_dict *d, uint32_t **code_of, const char ***word_of, uint64_t *nwords) {
    uint64_t n = sb_dict_size(d), maxid = sb_dict_max_id(d);
    uint32_t *ids = malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *code = calloc(maxid ? maxid : 1, sizeof(uint32_t));
    const char **word = malloc((n + 1) * sizeof(char *));
    if (!ids || !code || !word) { free(ids); free(code); free((void *)word); return SB_ENOMEM; }
    uint64_t k = 0;
    for (uint64_t id = 0; id < maxid; id++) if (sb_dict_has_id(d, (uint32_t)id)) ids[k++] = (uint32_t)id;
    qsort_r(ids, k, sizeof(uint32_t), cmp_by_str, (void *)d);
    word[0] = "";
    for (uint64_t r = 0; r < k; r++) { code[ids[r]] = (uint32_t)(r + 1); word[r + 1] = sb_dict_str(d, ids[r]); }
    free(ids);
    *code_of = code; *word_of = word; *nwords = k;
    return SB_OK;
}
int sb_ps_prepare_vocab(sb_pscore *s) {
    if (s->fcode) return SB_OK;
    uint64_t nf, ne;
    int rc = make_codes(s->fw, &s->fcode, &s->fword, &nf);
    if (!rc) rc = make_codes(s->ew, &s->ecode, &s->eword, &ne);
    if (rc) return rc;
    uint64_t v = (nf > ne ? nf : ne) + 1;
    int bits = 1;
    while (bits < 32 && (1ULL << bits) < v) bits++;
    s->bits = bits;
    s->maxw = 128 / bits > 8 ? 8 : 128 / bits;
    return SB_OK;
}
static inline void key_put(pkey *k, int bits, int i, uint64_t c) {
    int pos = 128 - bits * (i + 1);
    if (pos >= 64) k->hi |= c << (pos - 64);
    else if (pos + bits <= 64) k->lo |= c << pos;
    else { k->hi |= c >> (64 - pos); k->lo |= c << pos; }
}
static inline uint64_t key_get(pkey k, int bits, int i) {
    int pos = 128 - bits * (i + 1);
    uint64_t mask = (1ULL << bits) - 1, c;
    if (pos >= 64) c = k.hi >> (pos - 64);
    else if (pos + bits <= 64) c = k.lo >> pos;
    else c = (k.lo >> pos) | (k.hi << (64 - pos));
    return c & mask;
}
/* the phrase of a key, words joined by single spaces, into buf (NUL-terminated) */
const char *sb_ps_key_str(const sb_pscore *s, pkey k, const char **words, char *buf, size_t n) {
    size_t o = 0;
    for (int i = 0; i < s->maxw; i++) {
        uint64_t c = key_get(k, s->bits, i);
        if (!c) break;
        const char *w = words[c];
        size_t l = strlen(w);
        if (o + l + 2 >= n) break;
        if (o) buf[o++] = ' ';
        memcpy(buf + o, w, l);
        o += l;
    }
    buf[o] = 0;
    return buf;
}

/* Split a phrase field into words (in place) and rebuild it with single spaces into out. */
static int split_words(char *p, char **words, size_t *wlen, int *nw, char *out, size_t *outlen) {
    int n = 0;
    size_t o = 0;
    char *save = NULL;
    for (char *w = strtok_r(p, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == MAXW) return SB_EFORMAT;
        size_t l = strlen(w);
        if (o) out[o++] = ' ';
        memcpy(out + o, w, l);
        wlen[n] = l;
        words[n++] = out + o;
        o += l;
    }
    out[o] = 0;
    *nw = n; *outlen = o;
    return n ? SB_OK : SB_EFORMAT;
}

/* inverse: the line is `E ||| F ||| ei-fi ...` (extract.inv); the record is the same as for extract */
int sb_ps_parse_line(sb_pscore *s, char *line, rec1 *r, const char **msg, char *msgbuf, size_t msglen, int inverse) {
    char *fields[5];
    int nf = 0;
    char *p = line;
    for (;;) {
        char *sep = strstr(p, "|||");
        if (nf == 4) { *msg = "too many ||| fields"; return SB_EFORMAT; }
        fields[nf++] = p;
        if (!sep) break;
        *sep = 0;
        p = sep + 3;
    }
    int want = s->a.weighted ? 4 : 3;
    if (nf != want) {
        *msg = s->a.weighted ? "expected `F ||| E ||| alignment ||| count`" : "expected `F ||| E ||| alignment`";
        return SB_EFORMAT;
    }
    char fbuf[8192], ebuf[8192];
    char *fwords[MAXW], *ewords[MAXW];
    size_t fwl[MAXW], ewl[MAXW];
    int nfw, new_;
    size_t fl, el;
    char *end;
    if (inverse) { char *x = fields[0]; fields[0] = fields[1]; fields[1] = x; }
    char *fs = sb_ps_trim(fields[0], &end), *es = sb_ps_trim(fields[1], &end);
    if ((size_t)(end - es) >= sizeof ebuf || strlen(fs) >= sizeof fbuf) { *msg = "phrase too long"; return SB_EFORMAT; }
    if (split_words(fs, fwords, fwl, &nfw, fbuf, &fl)) { *msg = "empty or over-long source phrase"; return SB_EFORMAT; }
    if (split_words(es, ewords, ewl, &new_, ebuf, &el)) { *msg = "empty or over-long target phrase"; return SB_EFORMAT; }
    if (nfw > s->maxw || new_ > s->maxw) {
        *msg = "phrase has more words than fit a key (at most 8, fewer for vocabularies over 2^16 words)";
        return SB_EFORMAT;
    }
    /* alignment */
    uint8_t lf[MAXL], le[MAXL];
    int nl = 0;
    uint64_t amask = 0;
    char *save = NULL;
    for (char *tok = strtok_r(fields[2], " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *dash = strchr(tok, '-');
        if (!dash || dash == tok || !dash[1]) { *msg = "bad alignment point (expected i-j)"; return SB_EFORMAT; }
        char *e1, *e2;
        long i = strtol(tok, &e1, 10), j = strtol(dash + 1, &e2, 10);
        if (inverse) { long x = i; i = j; j = x; }
        if (e1 != dash || *e2 || i < 0 || j < 0 || tok[0] == '-' || dash[1] == '-' || dash[1] == '+' || tok[0] == '+') {
            *msg = "bad alignment point (expected i-j)"; return SB_EFORMAT;
        }
        if (i >= nfw || j >= new_) { *msg = "alignment point outside the phrase pair"; return SB_EFORMAT; }
        if (nl == MAXL) { *msg = "too many alignment points"; return SB_EFORMAT; }
        lf[nl] = (uint8_t)i; le[nl] = (uint8_t)j; nl++;
        amask |= 1ULL << (i * 8 + j);
    }
    double count = 1.0;
    if (s->a.weighted) {
        char *cs = sb_ps_trim(fields[3], &end), *ce;
        errno = 0;
        count = strtod(cs, &ce);
        if (!*cs || *ce || errno || !(count > 0) || !isfinite(count)) { *msg = "bad count"; return SB_EFORMAT; }
    }
    /* lexical weights, Moses' definition (average over links, NULL for unaligned words) */
    uint32_t fid[MAXW], eid[MAXW];
    pkey ks = {0, 0}, kt = {0, 0};
    for (int i = 0; i < nfw; i++) {
        if (!sb_dict_find(s->fw, fwords[i], fwl[i], &fid[i])) {
            snprintf(msgbuf, msglen, "the source word '%.*s' is not in the lex tables", (int)(fwl[i] > 100 ? 100 : fwl[i]), fwords[i]);
            *msg = msgbuf;
            return SB_EFORMAT;
        }
        key_put(&ks, s->bits, i, s->fcode[fid[i]]);
    }
    for (int j = 0; j < new_; j++) {
        if (!sb_dict_find(s->ew, ewords[j], ewl[j], &eid[j])) {
            snprintf(msgbuf, msglen, "the target word '%.*s' is not in the lex tables", (int)(ewl[j] > 100 ? 100 : ewl[j]), ewords[j]);
            *msg = msgbuf;
            return SB_EFORMAT;
        }
        key_put(&kt, s->bits, j, s->ecode[eid[j]]);
    }
    double lex_ef = 1.0, lex_fe = 1.0;
    for (int j = 0; j < new_; j++) {
        double sum = 0; int c = 0;
        for (int k = 0; k < nl; k++) if (le[k] == j) { sum += lexw(s, fid[lf[k]], eid[j], 1); c++; }
        lex_ef *= c ? sum / c : lexw(s, s->null_f, eid[j], 1);
    }
    for (int i = 0; i < nfw; i++) {
        double sum = 0; int c = 0;
        for (int k = 0; k < nl; k++) if (lf[k] == i) { sum += lexw(s, fid[i], eid[le[k]], 0); c++; }
        lex_fe *= c ? sum / c : lexw(s, fid[i], s->null_e, 0);
    }
    r->src = ks; r->tgt = kt;
    r->align = amask;
    r->count = count; r->lex_ef = lex_ef; r->lex_fe = lex_fe;
    return SB_OK;
}

static void *load_worker(void *arg) {
    worker_t *w = arg;
    sb_pscore *s = w->s;
    loadq *q = w->q;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->n && !q->done && !q->stop) pthread_cond_wait(&q->not_empty, &q->mu);
        if (q->stop || (!q->n && q->done)) { pthread_mutex_unlock(&q->mu); break; }
        chunk_t c = q->q[q->head];
        q->head = (q->head + 1) % q->cap; q->n--;
        pthread_cond_signal(&q->not_full);
        pthread_mutex_unlock(&q->mu);

        uint64_t lineno = c.line0;
        char *p = c.buf, *end = c.buf + c.len;
        int rc = SB_OK;
        const char *msg = NULL;
        char msgbuf[192];
        while (p < end) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            char *le = nl ? nl : end;
            *le = 0;
            char *e;
            size_t ll = (size_t)(le - p);
            if (ll && p[ll - 1] == '\r') p[--ll] = 0;   /* a CRLF's '\r' */
            size_t bad = sb_line_control(p, ll);
            if (bad != ll) {   /* the line rule (common.h): a NUL would cut the line short, a '\r' split it */
                sb_line_control_msg((unsigned char)p[bad], msgbuf, sizeof msgbuf);
                rc = SB_EFORMAT; msg = msgbuf; break;
            }
            if (lineno == 1 && ll >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3;   /* a BOM at the file's start */
            char *t = sb_ps_trim(p, &e);
            if (*t) {
                if (s->n1[w->t] == s->cap1 && (rc = spill1(s, w->t))) { msg = "writing a run failed"; break; }
                rc = sb_ps_parse_line(s, t, &s->buf1[w->t][s->n1[w->t]], &msg, msgbuf, sizeof msgbuf, 0);
                if (rc) { if (!msg) msg = "out of memory"; break; }
                s->n1[w->t]++;
                w->lines++;
            }
            lineno++;
            p = le + 1;
        }
        free(c.buf);
        if (rc) { q_fail(q, rc, lineno, msg); break; }
    }
    return NULL;
}

int sb_pscore_load_extract(sb_pscore *s, int fd, uint64_t *err_line, char *err, size_t errlen) {
    int T = s->a.threads;
    if (!s->buf1[0]) return SB_EINVAL;   /* finish() already ran */
    int prc = sb_ps_prepare_vocab(s);
    if (prc) return prc;
    uint64_t t0 = sb_now_ns();
    loadq q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.not_empty, NULL);
    pthread_cond_init(&q.not_full, NULL);
    q.cap = (size_t)(2 * T + 2);
    q.q = calloc(q.cap, sizeof(chunk_t));
    worker_t *ws = calloc(T, sizeof(worker_t));
    pthread_t *th = calloc(T, sizeof(pthread_t));
    int rc = SB_OK, started = 0;
    if (!q.q || !ws || !th) rc = SB_ENOMEM;
    for (int t = 0; t < T && !rc; t++) {
        ws[t] = (worker_t){s, &q, t, 0};
        if (pthread_create(&th[t], NULL, load_worker, &ws[t])) rc = SB_ETHREAD; else started++;
    }
    /* reader: chunks ending at a newline */
    char *carry = NULL; size_t carry_len = 0;
    uint64_t line0 = 1;
    int eof = 0;
    while (!rc && !eof) {
        size_t cap = CHUNK + carry_len;
        char *buf = malloc(cap + 1);
        if (!buf) { rc = SB_ENOMEM; break; }
        if (carry_len) memcpy(buf, carry, carry_len);
        size_t len = carry_len;
        free(carry); carry = NULL; carry_len = 0;
        while (len < cap) {
            ssize_t n = read(fd, buf + len, cap - len);
            if (n < 0) { if (errno == EINTR) continue; rc = SB_EIO; break; }
            if (n == 0) { eof = 1; break; }
            len += (size_t)n;
        }
        if (rc) { free(buf); break; }
        size_t cut = len;
        if (!eof) {
            char *nl = memrchr(buf, '\n', len);
            if (!nl) { carry = buf; carry_len = len; continue; }   /* a line longer than the chunk: grow */
            cut = (size_t)(nl - buf) + 1;
            carry_len = len - cut;
            if (carry_len) {
                carry = malloc(carry_len);
                if (!carry) { free(buf); rc = SB_ENOMEM; break; }
                memcpy(carry, buf + cut, carry_len);
            }
        }
        if (cut == 0) { free(buf); continue; }
        buf[cut] = 0;
        uint64_t nlines = 0;
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + cut - p))); p++) nlines++;
        if (cut && buf[cut - 1] != '\n') nlines++;
        pthread_mutex_lock(&q.mu);
        while (q.n == q.cap && !q.stop) pthread_cond_wait(&q.not_full, &q.mu);
        if (q.stop) { pthread_mutex_unlock(&q.mu); free(buf); break; }
        q.q[(q.head + q.n) % q.cap] = (chunk_t){buf, cut, line0};
        q.n++;
        pthread_cond_signal(&q.not_empty);
        pthread_mutex_unlock(&q.mu);
        line0 += nlines;
    }
    free(carry);
    pthread_mutex_lock(&q.mu);
    q.done = 1;
    if (rc) q.stop = 1;
    pthread_cond_broadcast(&q.not_empty);
    pthread_mutex_unlock(&q.mu);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    /* drain chunks left in the queue after a stop */
    while (q.n) { free(q.q[q.head].buf); q.head = (q.head + 1) % q.cap; q.n--; }
    if (!rc && q.rc) {
        rc = q.rc;
        if (err_line) *err_line = q.err_line;
        sb_ps_seterr(err, errlen, q.err);
    }
    for (int t = 0; t < T; t++) s->st.lines += ws ? ws[t].lines : 0;
    pthread_mutex_destroy(&q.mu);
    pthread_cond_destroy(&q.not_empty);
    pthread_cond_destroy(&q.not_full);
    free(q.q); free(ws); free(th);
    s->st.ns_load += sb_now_ns() - t0;
    return rc;
}

/* ---------------------------------------------------------------- merging */
typedef struct {
    int fd; uint64_t next, end;      /* record indices in the file */
    char *buf; size_t nbuf, pos, cap, recsz;
} cursor;

static int cur_fill(cursor *c) {
    uint64_t left = c->end - c->next;
    size_t n = left < c->cap ? (size_t)left : c->cap;
    c->pos = 0; c->nbuf = n;
    if (!n) return SB_OK;
    int rc = pread_all(c->fd, c->buf, n * c->recsz, c->next * c->recsz);
    c->next += n;
    return rc;
}
static inline const void *cur_peek(const cursor *c) { return c->buf + c->pos * c->recsz; }

/* binary search in run r (in file fd): first index whose key >= k (key = tgt for rec1, src for rec2) */
static int lower_bound(int fd, run_t r, size_t recsz, uint64_t k, uint64_t *out) {
    uint64_t lo = 0, hi = r.n;
    char tmp[128];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int rc = pread_all(fd, tmp, recsz, (r.off + mid) * recsz);
        if (rc) return rc;
        uint64_t key = recsz == sizeof(rec1) ? ((rec1 *)tmp)->tgt.hi : ((rec2 *)tmp)->src.hi;
        if (key < k) lo = mid + 1; else hi = mid;
    }
    *out = r.off + lo;
    return SB_OK;
}

typedef struct {
    cursor *c; int n;     /* cursors */
    int *heap; int hn;    /* indices into c */
    int type;             /* 1 or 2 */
} merger;

static inline int mless(const merger *m, int a, int b) {
    const void *x = cur_peek(&m->c[a]), *y = cur_peek(&m->c[b]);
    return m->type == 1 ? cmp1(x, y) < 0 : cmp2(x, y) < 0;
}
static void sift_down(merger *m, int i) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, b = i;
        if (l < m->hn && mless(m, m->heap[l], m->heap[b])) b = l;
        if (r < m->hn && mless(m, m->heap[r], m->heap[b])) b = r;
        if (b == i) return;
        int t = m->heap[i]; m->heap[i] = m->heap[b]; m->heap[b] = t;
        i = b;
    }
}
/* Set up a merge of the slices [lo_key, hi_key) of every run. */
static int merger_init(merger *m, int type, runvec *runs, int *fds, uint64_t lo_key, uint64_t hi_key,
                       int hi_inf, size_t buf_recs) {
    memset(m, 0, sizeof *m);
    m->type = type;
    size_t recsz = type == 1 ? sizeof(rec1) : sizeof(rec2);
    m->c = calloc(runs->n ? runs->n : 1, sizeof(cursor));
    m->heap = calloc(runs->n ? runs->n : 1, sizeof(int));
    if (!m->c || !m->heap) return SB_ENOMEM;
    for (size_t i = 0; i < runs->n; i++) {
        run_t r = runs->v[i];
        uint64_t a, b;
        int rc;
        if ((rc = lower_bound(fds[r.file], r, recsz, lo_key, &a))) return rc;
        if (hi_inf) b = r.off + r.n;
        else if ((rc = lower_bound(fds[r.file], r, recsz, hi_key, &b))) return rc;
        if (a >= b) continue;
        cursor *c = &m->c[m->n];
        *c = (cursor){fds[r.file], a, b, malloc(buf_recs * recsz), 0, 0, buf_recs, recsz};
        if (!c->buf) return SB_ENOMEM;
        m->n++;
        if ((rc = cur_fill(c))) return rc;
        m->heap[m->hn++] = m->n - 1;
    }
    for (int i = m->hn / 2 - 1; i >= 0; i--) sift_down(m, i);
    return SB_OK;
}
static void merger_free(merger *m) {
    for (int i = 0; i < m->n; i++) free(m->c[i].buf);
    free(m->c); free(m->heap);
}
/* Copy the smallest record to out; returns 1, 0 at the end, or a negative error. */
static int merger_pop(merger *m, void *out) {
    if (!m->hn) return 0;
    cursor *c = &m->c[m->heap[0]];
    memcpy(out, cur_peek(c), c->recsz);
    if (++c->pos == c->nbuf) {
        int rc = cur_fill(c);
        if (rc) return rc;
        if (!c->nbuf) { m->heap[0] = m->heap[--m->hn]; }
    }
    if (m->hn) sift_down(m, 0);
    return 1;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
/* T+1 range bounds (on the key's high word) from samples: bounds[0] = 0, bounds[T] unused (infinite) */
static void make_bounds(u64vec *smp, int T, uint64_t *bounds) {
    if (smp->n > 1) qsort(smp->v, smp->n, sizeof(uint64_t), cmp_u64);
    bounds[0] = 0;
    for (int t = 1; t < T; t++) {
        uint64_t b = smp->n ? smp->v[(size_t)t * smp->n / (size_t)T] : 0;
        bounds[t] = b < bounds[t - 1] ? bounds[t - 1] : b;
    }
    bounds[T] = UINT64_MAX;
}

/* ---------------------------------------------------------------- step 3: merge by target */
typedef struct {
    sb_pscore *s; int t; uint64_t lo, hi; int hi_inf; size_t merge_recs;
    FILE *out;                        /* counts_only output */
    rec2 *buf2; size_t n2, cap2;      /* step-3 run buffer */
    rec2 *grp; size_t ng, capg;       /* one target's pairs */
    uint64_t pairs, nk[5], lines;
    int rc;
} m1_t;

static int spill2(m1_t *w) {
    sb_pscore *s = w->s;
    if (!w->n2) return SB_OK;
    sort2(w->buf2, w->n2);
    int rc = write_all(s->fd2[w->t], w->buf2, w->n2 * sizeof(rec2));
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rc = runvec_push(&s->runs2, (run_t){w->t, s->end2[w->t], w->n2});
    for (size_t i = 0; i < w->n2 && !rc; i += SAMPLE_EVERY) rc = u64_push(&s->samples2, w->buf2[i].src.hi);
    s->st.runs2++;
    s->st.run_bytes += w->n2 * sizeof(rec2);
    pthread_mutex_unlock(&s->mu);
    s->end2[w->t] += w->n2;
    w->n2 = 0;
    return rc;
}

static int flush_target(m1_t *w) {
    if (!w->ng) return SB_OK;
    double ce = 0;
    for (size_t i = 0; i < w->ng; i++) ce += w->grp[i].c_ef;
    for (size_t i = 0; i < w->ng; i++) {
        rec2 r = w->grp[i];
        r.c_e = ce; r.n1e = (uint32_t)w->ng;
        double c = r.c_ef;
        for (int k = 1; k <= 4; k++) if (fabs(c - k) < 1e-9) w->nk[k]++;
        if (w->n2 == w->cap2) { int rc = spill2(w); if (rc) return rc; }
        w->buf2[w->n2++] = r;
    }
    w->pairs += w->ng;
    w->ng = 0;
    return SB_OK;
}

static void *merge1_worker(void *arg) {
    m1_t *w = arg;
    sb_pscore *s = w->s;
    merger m;
    int rc = merger_init(&m, 1, &s->runs1, s->fd1, w->lo, w->hi, w->hi_inf, w->merge_recs);
    char sb[8192], tb[8192], ab[200];
    rec1 r, cur;
    memset(&cur, 0, sizeof cur);
    int have = 0;
    double c_ef = 0, c_al = 0, best_c = -1, best_ci = -1;
    volatile double best_lef = 0, best_lfe = 0;
    uint64_t best_al = 0, best_ali = 0;
    /* close the current alignment run of the current pair */
    #define CLOSE_ALIGN() do {                                                                    \
        if (s->a.counts_only) {                                                                   \
            fprintf(w->out, "%s ||| %s ||| %s ||| %.17g\n", sb_ps_key_str(s, cur.src, s->fword, sb, sizeof sb), \
                    sb_ps_key_str(s, cur.tgt, s->eword, tb, sizeof tb), (sb_ps_align_str(cur.align, ab), ab), c_al); \
            w->lines++;                                                                           \
        }                                                                                         \
        /* direct run's winner: printed alignment and lex(e|f); inverse run's winner: lex(f|e) */   \
        if (c_al > best_c || (c_al == best_c && sb_ps_align_cmp_moses(cur.align, best_al, 0) > 0)) {    \
            best_c = c_al; best_al = cur.align; best_lef = cur.lex_ef;                            \
        }                                                                                         \
        if (c_al > best_ci || (c_al == best_ci && sb_ps_align_cmp_moses(cur.align, best_ali, 1) > 0)) { \
            best_ci = c_al; best_ali = cur.align; best_lfe = cur.lex_fe;                          \
        }                                                                                         \
    } while (0)
    #define CLOSE_PAIR() do {                                                                     \
        CLOSE_ALIGN();                                                                            \
        if (!s->a.counts_only) {                                                                  \
            if (w->ng == w->capg) {                                                               \
                size_t nc = w->capg ? w->capg * 2 : 256;                                          \
                rec2 *g = realloc(w->grp, nc * sizeof(rec2));                                     \
                if (!g) { rc = SB_ENOMEM; break; }                                                \
                w->grp = g; w->capg = nc;                                                         \
            }                                                                                     \
            w->grp[w->ng++] = (rec2){cur.src, cur.tgt, best_al, 0, 0, c_ef, 0, best_lef, best_lfe}; \
        } else w->pairs++;                                                                        \
    } while (0)
    while (!rc) {
        int got = merger_pop(&m, &r);
        if (got < 0) { rc = got; break; }
        if (!got) break;
        if (!have) { cur = r; have = 1; c_ef = 0; c_al = 0; best_c = best_ci = -1; }
        else if (!keq(r.tgt, cur.tgt) || !keq(r.src, cur.src)) {
            CLOSE_PAIR();
            if (rc) break;
            if (!keq(r.tgt, cur.tgt) && !s->a.counts_only && (rc = flush_target(w))) break;
            cur = r; c_ef = 0; c_al = 0; best_c = best_ci = -1;
        } else if (r.align != cur.align) {
            CLOSE_ALIGN();
            cur = r; c_al = 0;
        }
        c_ef += r.count; c_al += r.count;
    }
    if (!rc && have) {
        do { CLOSE_PAIR(); } while (0);
        if (!rc && !s->a.counts_only) rc = flush_target(w);
    }
    #undef CLOSE_ALIGN
    #undef CLOSE_PAIR
    if (!rc && !s->a.counts_only) rc = spill2(w);
    if (!rc && w->out && ferror(w->out)) rc = SB_EIO;
    merger_free(&m);
    w->rc = rc;
    return NULL;
}

/* ---------------------------------------------------------------- step 5: merge by source, write */
typedef struct {
    sb_pscore *s; int t; uint64_t lo, hi; int hi_inf; size_t merge_recs;
    double N, D[4];
    FILE *out;
    rec2 *grp; size_t ng, capg;
    uint64_t lines;
    int rc;
} m2_t;

static void write_source(m2_t *w) {
    sb_pscore *s = w->s;
    double cf = 0;
    for (size_t i = 0; i < w->ng; i++) cf += w->grp[i].c_ef;
    double n1f = (double)w->ng;
    char fs[8192], line[20000];
    sb_ps_key_str(s, w->grp[0].src, s->fword, fs, sizeof fs);
    size_t fsl = strlen(fs);
    for (size_t i = 0; i < w->ng; i++) {
        const rec2 *r = &w->grp[i];
        double c = r->c_ef, pfe, pef;
        if (s->a.smoothing == SB_PSCORE_SMOOTH_KN) {
            double D = c < 2 ? w->D[1] : c < 3 ? w->D[2] : w->D[3];
            if (D > c) D = c - 0.01;
            double n1e = (double)r->n1e;
            pef = (c - D + D * n1f * n1e / w->N) / cf;
            pfe = (c - D + D * n1e * n1f / w->N) / r->c_e;
        } else {
            pef = c / cf;
            pfe = c / r->c_e;
        }
        char *p = line;
        memcpy(p, fs, fsl); p += fsl;
        memcpy(p, " ||| ", 5); p += 5;
        sb_ps_key_str(s, r->tgt, s->eword, p, 8192); p += strlen(p);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_g6(p, pfe); *p++ = ' ';
        p = sb_ps_put_g6(p, r->lex_fe); *p++ = ' ';
        p = sb_ps_put_g6(p, pef); *p++ = ' ';
        p = sb_ps_put_g6(p, r->lex_ef);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_align_str(r->align, p);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_count(p, r->c_e); *p++ = ' ';
        p = sb_ps_put_count(p, cf); *p++ = ' ';
        p = sb_ps_put_count(p, c); *p++ = '\n';
        fwrite(line, 1, (size_t)(p - line), w->out);
    }
    w->lines += w->ng;
    w->ng = 0;
}

static void *merge2_worker(void *arg) {
    m2_t *w = arg;
    sb_pscore *s = w->s;
    merger m;
    int rc = merger_init(&m, 2, &s->runs2, s->fd2, w->lo, w->hi, w->hi_inf, w->merge_recs);
    rec2 r;
    while (!rc) {
        int got = merger_pop(&m, &r);
        if (got < 0) { rc = got; break; }
        if (!got) break;
        if (w->ng && !keq(r.src, w->grp[0].src)) write_source(w);
        if (w->ng == w->capg) {
            size_t nc = w->capg ? w->capg * 2 : 256;
            rec2 *g = realloc(w->grp, nc * sizeof(rec2));
            if (!g) { rc = SB_ENOMEM; break; }
            w->grp = g; w->capg = nc;
        }
        w->grp[w->ng++] = r;
    }
    if (!rc && w->ng) write_source(w);
    if (!rc && ferror(w->out)) rc = SB_EIO;
    merger_free(&m);
    w->rc = rc;
    return NULL;
}

static FILE *open_part(const char *prefix, int t) {
    char name[8192];
    snprintf(name, sizeof name, "%s.%d", prefix, t);
    FILE *f = fopen(name, "w");
    if (f) setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

int sb_pscore_finish(sb_pscore *s, const char *out_prefix, char *err, size_t errlen) {
    int T = s->a.threads, rc = SB_OK;
    if (!s->buf1[0]) return SB_EINVAL;
    uint64_t t0 = sb_now_ns();
    if ((rc = sb_ps_prepare_vocab(s))) return rc;
    for (int t = 0; t < T && !rc; t++) rc = spill1(s, t);
    free_load_buffers(s);
    if (rc) { sb_ps_seterr(err, errlen, "writing a sorted run failed"); return rc; }
    s->st.src_phrases = s->fcode ? sb_dict_size(s->fw) : 0;   /* (words, with the key design) */
    s->st.tgt_phrases = s->ecode ? sb_dict_size(s->ew) : 0;
    s->st.alignments = 0;
    s->st.dict_bytes = sb_dict_bytes(s->aln) +
                       sb_dict_bytes(s->fw) + sb_dict_bytes(s->ew) +
                       s->lex.buckets * sizeof(lexent);
    /* budget in steps 2-3: half for merge buffers, half for the new runs */
    uint64_t half = s->a.memory_bytes / 2;
    size_t nr = s->runs1.n ? s->runs1.n : 1;
    size_t mrecs = (size_t)(half / (uint64_t)T / nr / sizeof(rec1));
    if (mrecs < MIN_MERGE_RECS) mrecs = MIN_MERGE_RECS;
    size_t cap2 = (size_t)(half / (uint64_t)T / sizeof(rec2));
    if (cap2 < 1024) cap2 = 1024;
    uint64_t used = (uint64_t)mrecs * sizeof(rec1) * nr * T + (uint64_t)cap2 * sizeof(rec2) * T;
    if (used > s->st.buffer_bytes) s->st.buffer_bytes = used;

    uint64_t *bounds = malloc((T + 1) * sizeof(uint64_t));
    m1_t *w1 = calloc(T, sizeof(m1_t));
    if (!bounds || !w1) rc = SB_ENOMEM;
    if (!rc) make_bounds(&s->samples1, T, bounds);
    for (int t = 0; t < T && !rc; t++) {
        w1[t] = (m1_t){.s = s, .t = t, .lo = bounds[t], .hi = bounds[t + 1], .hi_inf = t == T - 1,
                       .merge_recs = mrecs, .cap2 = cap2};
        if (s->a.counts_only) {
            if (!(w1[t].out = open_part(out_prefix, t))) { rc = SB_EIO; break; }
        } else if (!(w1[t].buf2 = malloc(cap2 * sizeof(rec2)))) { rc = SB_ENOMEM; break; }
    }
    if (!rc) rc = sb_run_threads(T, merge1_worker, w1, sizeof *w1);
    uint64_t nk[5] = {0};
    for (int t = 0; t < T && w1; t++) {
        if (!rc && w1[t].rc) rc = w1[t].rc;
        s->st.pairs += w1[t].pairs;
        s->st.out_lines += w1[t].lines;
        for (int k = 1; k <= 4; k++) nk[k] += w1[t].nk[k];
        if (w1[t].out && fclose(w1[t].out) && !rc) rc = SB_EIO;
        free(w1[t].buf2); free(w1[t].grp);
    }
    free(w1);
    s->st.n1 = nk[1]; s->st.n2 = nk[2]; s->st.n3 = nk[3]; s->st.n4 = nk[4];
    s->st.ns_merge1 = sb_now_ns() - t0;
    if (rc) sb_ps_seterr(err, errlen, "merging by target failed");

    if (!rc && !s->a.counts_only) {
        uint64_t t1 = sb_now_ns();
        double D[4] = {0, 0, 0, 0};
        if (s->a.smoothing == SB_PSCORE_SMOOTH_KN) {
            double n1 = (double)nk[1], n2 = (double)nk[2], n3 = (double)nk[3], n4 = (double)nk[4];
            double Y = (n1 + 2 * n2) > 0 ? n1 / (n1 + 2 * n2) : 0;
            D[1] = n1 > 0 ? 1 - 2 * Y * n2 / n1 : 0;
            D[2] = n2 > 0 ? 2 - 3 * Y * n3 / n2 : 0;
            D[3] = n3 > 0 ? 3 - 4 * Y * n4 / n3 : 0;
            if (D[1] > 0.9) D[1] = 0.9;
            if (D[2] > 1.9) D[2] = 1.9;
            if (D[3] > 2.9) D[3] = 2.9;
            for (int k = 1; k <= 3; k++) if (D[k] < 0) D[k] = 0;
        }
        s->st.kn_d1 = D[1]; s->st.kn_d2 = D[2]; s->st.kn_d3 = D[3];
        nr = s->runs2.n ? s->runs2.n : 1;
        mrecs = (size_t)(s->a.memory_bytes / (uint64_t)T / nr / sizeof(rec2));
        if (mrecs < MIN_MERGE_RECS) mrecs = MIN_MERGE_RECS;
        m2_t *w2 = calloc(T, sizeof(m2_t));
        if (!w2) rc = SB_ENOMEM;
        if (!rc) make_bounds(&s->samples2, T, bounds);
        for (int t = 0; t < T && !rc; t++) {
            w2[t] = (m2_t){.s = s, .t = t, .lo = bounds[t], .hi = bounds[t + 1], .hi_inf = t == T - 1,
                           .merge_recs = mrecs, .N = (double)s->st.pairs,
                           .D = {0, D[1], D[2], D[3]}};
            if (!(w2[t].out = open_part(out_prefix, t))) rc = SB_EIO;
        }
        if (!rc) rc = sb_run_threads(T, merge2_worker, w2, sizeof *w2);
        for (int t = 0; t < T && w2; t++) {
            if (!rc && w2[t].rc) rc = w2[t].rc;
            s->st.out_lines += w2[t].lines;
            if (w2[t].out && fclose(w2[t].out) && !rc) rc = SB_EIO;
            free(w2[t].grp);
        }
        free(w2);
        s->st.ns_merge2 = sb_now_ns() - t1;
        if (rc) sb_ps_seterr(err, errlen, "merging by source / writing the table failed");
    }
    free(bounds);
    return rc;
}

void sb_pscore_get_stats(const sb_pscore *s, sb_pscore_stats *st) { *st = s->st; }
