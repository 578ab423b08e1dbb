/* phrase_baseline.c - the Moses-style baseline of Mediani et al.'s Table 1 (see phrase_score.h): the scorer that
 * reads one direction's sorted extract (GNU sort does the sorting) and writes the half phrase table, and
 * consolidate, which joins the two halves as Moses' consolidate does. The kernel is phrase_score.c; the baseline
 * shares its parser (phrase_runs.c) and its output formats (phrase_write.c). */
#define _GNU_SOURCE
#include "tm/phrase_baseline.h"
#include "tm/phrase_runs.h"
#include "tm/phrase_write.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the Moses-style baseline's scorer */
typedef struct { uint64_t mask; double count; } alcount;
typedef struct { pkey src, tgt; uint64_t align; double c_pair, lex; } halfpair;

static int write_half_group(sb_pscore *s, FILE *out, halfpair *g, size_t n) {
    double c_first = 0;
    for (size_t i = 0; i < n; i++) c_first += g[i].c_pair;
    char line[20000];
    for (size_t i = 0; i < n; i++) {
        char *p = line;
        p += sb_ps_key_str(s, g[i].src, 0, p, 8192);
        memcpy(p, " ||| ", 5); p += 5;
        p += sb_ps_key_str(s, g[i].tgt, 1, p, 8192);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_align_str(g[i].align, p);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_g6(p, g[i].lex);
        memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_count(p, c_first); *p++ = ' ';
        p = sb_ps_put_count(p, g[i].c_pair); *p++ = '\n';
        if (fwrite(line, 1, (size_t)(p - line), out) != (size_t)(p - line)) return SB_EIO;
    }
    return SB_OK;
}

int sb_pscore_stream_half(sb_pscore *s, int in_fd, int out_fd, int inverse, uint64_t *err_line, char *err,
                          size_t errlen) {
    int rc = sb_ps_prepare_vocab(s);
    if (rc) return rc;
    int fd2 = dup(out_fd);
    FILE *out = fd2 >= 0 ? fdopen(fd2, "w") : NULL;
    if (!out) { if (fd2 >= 0) close(fd2); return SB_EIO; }
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    linereader lr = {in_fd, malloc(CHUNK), CHUNK, 0, 0, 0};
    alcount *al = NULL; size_t nal = 0, capal = 0;
    halfpair *g = NULL; size_t ng = 0, capg = 0;
    if (!lr.buf) { fclose(out); return SB_ENOMEM; }
    uint64_t lineno = 0;
    size_t len;
    char *line;
    rec1 r, cur;
    int have = 0;
    const char *msg = NULL;
    char msgbuf[192];
    /* close the current pair: most frequent alignment (ties: Moses' rule for this run's direction), its lex */
    #define CLOSE_PAIR() do {                                                                    \
        size_t b = 0; double cp = 0;                                                             \
        for (size_t k = 0; k < nal; k++) {                                                       \
            cp += al[k].count;                                                                   \
            if (k && (al[k].count > al[b].count ||                                               \
                      (al[k].count == al[b].count && sb_ps_align_cmp_moses(al[k].mask, al[b].mask, inverse) > 0))) b = k; \
        }                                                                                        \
        double lef = 0, lfe = 0;   /* the chosen alignment's (as our scorer: lex in the merge) */   \
        sb_ps_lex_weights(s, cur.src, cur.tgt, al[b].mask, inverse ? 2 : 1, &lef, &lfe);          \
        if (SB_GROW(g, capg, ng + 1, 256)) { rc = SB_ENOMEM; break; }                            \
        g[ng++] = (halfpair){cur.src, cur.tgt, al[b].mask, cp, inverse ? lfe : lef};             \
        nal = 0;                                                                                 \
    } while (0)
    while ((line = sb_ps_next_line(&lr, &len, &rc))) {
        lineno++;
        char *e;
        if (lineno == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) { line += 3; len -= 3; }   /* a BOM */
        if (len && line[len - 1] == '\r') line[--len] = 0;   /* a CRLF's '\r' */
        size_t bad = sb_line_control(line, len);   /* the line rule (common.h) */
        if (bad != len) {
            sb_line_control_msg((unsigned char)line[bad], msgbuf, sizeof msgbuf);
            rc = SB_EFORMAT; msg = msgbuf; break;
        }
        char *t = sb_ps_trim(line, &e);
        if (!*t) continue;
        if ((rc = sb_ps_parse_line(s, t, &r, &msg, msgbuf, sizeof msgbuf, inverse))) break;
        pkey first = inverse ? r.tgt : r.src, cfirst = inverse ? cur.tgt : cur.src;
        if (have && (!keq(r.src, cur.src) || !keq(r.tgt, cur.tgt))) {
            CLOSE_PAIR();
            if (rc) break;
            if (!keq(first, cfirst)) {
                if ((rc = write_half_group(s, out, g, ng))) break;
                ng = 0;
            }
        }
        cur = r; have = 1;
        if (nal && al[nal - 1].mask == r.align) { al[nal - 1].count += r.count; continue; }
        if (SB_GROW(al, capal, nal + 1, 16)) { rc = SB_ENOMEM; break; }
        al[nal++] = (alcount){r.align, r.count};
    }
    if (!rc && have) {
        do { CLOSE_PAIR(); } while (0);
        if (!rc) rc = write_half_group(s, out, g, ng);
    }
    #undef CLOSE_PAIR
    if (rc == SB_EFORMAT) { if (err_line) *err_line = lineno; sb_ps_seterr(err, errlen, msg ? msg : "malformed line"); }
    if (fclose(out) && !rc) rc = SB_EIO;
    free(lr.buf); free(al); free(g);
    return rc;
}

/* consolidate: join the direct half (F ||| E ||| align ||| lex(e|f) ||| c(f) c(e,f)) with the sorted
 * inverse half (F ||| E ||| align ||| lex(f|e) ||| c(e) c(e,f)) line by line into the phrase table. */
static int split5(char *line, char **f) {
    int n = 0;
    char *p = line;
    for (;;) {
        char *sep = strstr(p, " ||| ");
        if (n == 5) return -1;
        f[n++] = p;
        if (!sep) break;
        *sep = 0;
        p = sep + 5;
    }
    return n;
}

int sb_pscore_consolidate(int direct_fd, int inverse_fd, int out_fd, uint64_t *err_line, char *err, size_t errlen) {
    int fd2 = dup(out_fd);
    FILE *out = fd2 >= 0 ? fdopen(fd2, "w") : NULL;
    if (!out) { if (fd2 >= 0) close(fd2); return SB_EIO; }
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    linereader a = {direct_fd, malloc(CHUNK), CHUNK, 0, 0, 0}, b = {inverse_fd, malloc(CHUNK), CHUNK, 0, 0, 0};
    int rc = (a.buf && b.buf) ? SB_OK : SB_ENOMEM;
    uint64_t lineno = 0;
    char outl[20000];
    while (!rc) {
        size_t la, lb;
        char *x = sb_ps_next_line(&a, &la, &rc);
        if (rc) break;
        char *y = sb_ps_next_line(&b, &lb, &rc);
        if (rc) break;
        if (!x && !y) break;
        lineno++;
        char *fa[5], *fb[5];
        if (!x || !y || split5(x, fa) != 5 || split5(y, fb) != 5 || strcmp(fa[0], fb[0]) || strcmp(fa[1], fb[1])) {
            sb_ps_seterr(err, errlen, "the two halves are out of step"); rc = SB_EFORMAT; break;
        }
        double lex_ef = strtod(fa[3], NULL), lex_fe = strtod(fb[3], NULL);
        char *q;
        double cf = strtod(fa[4], &q), cef = strtod(q, NULL), ce = strtod(fb[4], NULL);
        char *p = outl;
        size_t l0 = strlen(fa[0]), l1 = strlen(fa[1]), l2 = strlen(fa[2]);
        if (l0 + l1 + l2 + 200 > sizeof outl) { sb_ps_seterr(err, errlen, "line too long"); rc = SB_EFORMAT; break; }
        memcpy(p, fa[0], l0); p += l0; memcpy(p, " ||| ", 5); p += 5;
        memcpy(p, fa[1], l1); p += l1; memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_g6(p, cef / ce); *p++ = ' ';
        p = sb_ps_put_g6(p, lex_fe); *p++ = ' ';
        p = sb_ps_put_g6(p, cef / cf); *p++ = ' ';
        p = sb_ps_put_g6(p, lex_ef);
        memcpy(p, " ||| ", 5); p += 5;
        memcpy(p, fa[2], l2); p += l2; memcpy(p, " ||| ", 5); p += 5;
        p = sb_ps_put_count(p, ce); *p++ = ' ';
        p = sb_ps_put_count(p, cf); *p++ = ' ';
        p = sb_ps_put_count(p, cef); *p++ = '\n';
        if (fwrite(outl, 1, (size_t)(p - outl), out) != (size_t)(p - outl)) { rc = SB_EIO; break; }
    }
    if (rc == SB_EFORMAT && err_line) *err_line = lineno;
    if (fclose(out) && !rc) rc = SB_EIO;
    free(a.buf); free(b.buf);
    return rc;
}
