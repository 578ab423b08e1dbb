/* phrase_write.h - the phrase scorer's output (steps 3 and 5 of phrase_score.h, and the Moses-style baseline): Moses'
 * phrase-table line, the partial-counts line, the part files, and the number and alignment formats they are
 * written in (inline: the baseline must not pay a call the kernel does not). */
#ifndef SMTBENCH_PHRASE_WRITE_H
#define SMTBENCH_PHRASE_WRITE_H
#include "tm/phrase_core.h"

/* an alignment's string form (E order, then F order, as Moses' extract writes it) at p; returns its end */
static inline char *sb_ps_align_str(uint64_t m, char *p) {
    char *start = p;
    for (int e = 0; e < 8; e++)
        for (int f = 0; f < 8; f++)
            if (m >> (f * 8 + e) & 1) {
                if (p != start) *p++ = ' ';
                *p++ = (char)('0' + f); *p++ = '-'; *p++ = (char)('0' + e);
            }
    *p = 0;
    return p;
}
/* fast number output: integers as such, scores as printf's %.6g (6 significant digits) */
static inline char *sb_ps_put_u64(char *p, uint64_t v) {
    char t[24];
    int n = 0;
    do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = t[--n];
    return p;
}
static inline char *sb_ps_put_count(char *p, double v) {
    if (v >= 0 && v < 1e15 && v == floor(v)) return sb_ps_put_u64(p, (uint64_t)v);
    return p + sprintf(p, "%.10g", v);
}
static inline char *sb_ps_put_g6(char *p, double v) {
    if (!(v > 0) || !isfinite(v) || v < 1e-300) return p + sprintf(p, "%.6g", v);
    int e = (int)floor(log10(v));
    uint64_t m = 0;
    for (int tries = 0; tries < 3; tries++) {
        m = (uint64_t)llround(v * pow(10.0, 5 - e));
        if (m >= 1000000) e++;
        else if (m < 100000) e--;
        else break;
    }
    if (m >= 1000000 || m < 100000) return p + sprintf(p, "%.6g", v);
    char d[6];
    for (int i = 5; i >= 0; i--) { d[i] = (char)('0' + m % 10); m /= 10; }
    int nd = 6;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    if (e < -4 || e >= 6) {
        *p++ = d[0];
        if (nd > 1) { *p++ = '.'; memcpy(p, d + 1, (size_t)nd - 1); p += nd - 1; }
        *p++ = 'e'; *p++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae < 10) *p++ = '0';
        p = sb_ps_put_u64(p, (uint64_t)ae);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++) *p++ = i < nd ? d[i] : '0';
        if (nd > e + 1) { *p++ = '.'; memcpy(p, d + e + 1, (size_t)(nd - e - 1)); p += nd - e - 1; }
    } else {
        *p++ = '0'; *p++ = '.';
        for (int i = 0; i < -e - 1; i++) *p++ = '0';
        memcpy(p, d, (size_t)nd); p += nd;
    }
    return p;
}

/* the phrase of a key, words joined by single spaces, into buf (NUL-terminated) */
const char *sb_ps_key_str(const sb_pscore *s, pkey k, const char **words, char *buf, size_t n);
/* part file `<prefix>.<t>` for writing (1 MiB buffer), NULL when it cannot be opened */
FILE *sb_ps_open_part(const char *prefix, int t);
/* One phrase-table line, Moses' format: `F ||| E ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| alignment |||
 * c(e) c(f) c(e,f)`, F being fs[0 .. fsl), the rest r's (c(e,f) = r->c_ef, c(e) = r->c_e) and the scores given. */
void sb_ps_write_pair(FILE *out, const sb_pscore *s, const char *fs, size_t fsl, const rec2 *r, double pfe, double pef,
                      double cf);
/* One partial-counts line `F ||| E ||| alignment ||| count` (counts_only; count as %.17g). */
void sb_ps_write_counts(FILE *out, const sb_pscore *s, pkey src, pkey tgt, uint64_t align, double count);

#endif
