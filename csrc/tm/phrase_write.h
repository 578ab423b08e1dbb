/* phrase_write.h - the phrase scorer's output (steps 3 and 5 of phrase_score.h, and the Moses-style baseline): Moses'
 * phrase-table line, the partial-counts line, the part files, and the number and alignment formats they are
 * written in (inline: the baseline must not pay a call the kernel does not). */
#ifndef SMTBENCH_PHRASE_WRITE_H
#define SMTBENCH_PHRASE_WRITE_H
#include "tm/phrase_core.h"

/* CFFI-BEGIN */
/* v as the tables print a score (sb_ps_put_g6: printf's %.6g) into out (NUL-terminated, n >= 32); returns its length.
 * For the tests, which hold the fast formatter to printf. */
size_t sb_ps_format_g6(double v, char *out, size_t n);
/* CFFI-END */

/* an alignment's string form (E order, then F order, as Moses' extract writes it) at p; returns its end. The set
 * bits of m (bit f*8+e) are moved to bit e*8+f, then visited in order (a point each, not 64 tests). */
static inline char *sb_ps_align_str(uint64_t m, char *p) {
    uint64_t t = 0;
    for (uint64_t x = m; x; x &= x - 1) {
        int b = __builtin_ctzll(x);
        t |= 1ULL << ((b & 7) * 8 + (b >> 3));
    }
    char *start = p;
    for (; t; t &= t - 1) {
        int b = __builtin_ctzll(t);
        if (p != start) *p++ = ' ';
        *p++ = (char)('0' + (b & 7)); *p++ = '-'; *p++ = (char)('0' + (b >> 3));
    }
    *p = 0;
    return p;
}
/* fast number output: integers as such, scores as printf's %.6g (6 significant digits, the same bytes) */
static inline char *sb_ps_put_u64(char *p, uint64_t v) {
    char t[24];
    int n = 0;
    do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) *p++ = t[--n];
    return p;
}
static inline char *sb_ps_put_count(char *p, double v) {
    if (v >= 0 && v < 1e15 && (double)(uint64_t)v == v) return sb_ps_put_u64(p, (uint64_t)v);   /* (no floor call) */
    return p + sprintf(p, "%.10g", v);
}
/* 10^k as pow(10.0, k) gives it, without the call: exact for 0 <= k <= 22 (pow's error bound, < 1 ULP, leaves it no
 * other double), pow beyond */
static inline double sb_ps_pow10(int k) {
    static const double exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                                     1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return k >= 0 && k <= 22 ? exact[k] : pow(10.0, k);
}
static inline char *sb_ps_put_g6(char *p, double v) {
    if (!(v > 0) || !isfinite(v) || v < 1e-300) return p + sprintf(p, "%.6g", v);
    /* the decimal exponent e: 6 digits m = round(v * 10^(5-e)) in [10^5, 10^6) - one e satisfies it; the binary
     * exponent's floor(log10(2^(b-1))) starts at most one below it (log10 itself cost a call a number), and one
     * more step covers m rounding up to 10^6. b is frexp's exponent, read from the bits (v is normal here). */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int b = (int)((bits >> 52) & 0x7ff) - 1022;
    /* floor((b-1) log10 2) in integers ((n * 78913) >> 18 is floor(n log10 2) for 0 <= n <= 1650, and n log10 2 is
     * no integer for n != 0): floor() was a call in the portable build */
    int n2 = b - 1;
    int e = n2 >= 0 ? (int)(((int64_t)n2 * 78913) >> 18) : -(int)(((int64_t)-n2 * 78913) >> 18) - 1;
    /* x is v * 10^(5-e) to a few units of its last bit (< 1e-9 for x < 10^7): a fraction this near .5 may round
     * either way (an exact tie, 1/1024 = 0.0009765625, printf takes to even; 9.999995e-39 just below its tie decides
     * e itself) - printf decides those. Elsewhere x + 0.5 truncated is llround(x): x + 0.5 can round only where the
     * fraction is within x's last bits of .5, which is a near tie. */
    uint64_t m = 0;
    int near_tie = 0;
    for (int tries = 0; tries < 4; tries++) {
        double x = v * sb_ps_pow10(5 - e);
        if (!(x < 1e15)) { m = UINT64_MAX; break; }
        uint64_t ip = (uint64_t)x;
        m = (uint64_t)(x + 0.5);
        near_tie |= fabs(x - (double)ip - 0.5) < 1e-7;
        if (m >= 1000000) e++;
        else if (m < 100000) e--;
        else break;
    }
    if (m >= 1000000 || m < 100000 || near_tie) return p + sprintf(p, "%.6g", v);
    static const char two[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";
    char d[16];   /* 6 digits, room for the fixed-size copies below */
    uint32_t mm = (uint32_t)m, hi = mm / 10000, lo = mm % 10000;
    memcpy(d, two + 2 * hi, 2); memcpy(d + 2, two + 2 * (lo / 100), 2); memcpy(d + 4, two + 2 * (lo % 100), 2);
    /* below, digits are copied as fixed 6 (or 5) bytes and p advanced by the count: the callers' buffers hold a whole
     * line with room to spare (a copy of a variable length was a library call) */
    int nd = 6;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    if (e < -4 || e >= 6) {
        *p++ = d[0];
        if (nd > 1) { *p++ = '.'; memcpy(p, d + 1, 5); p += nd - 1; }
        *p++ = 'e'; *p++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae < 10) *p++ = '0';
        p = sb_ps_put_u64(p, (uint64_t)ae);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++) *p++ = i < nd ? d[i] : '0';
        if (nd > e + 1) { *p++ = '.'; memcpy(p, d + e + 1, 5); p += nd - e - 1; }
    } else {
        *p++ = '0'; *p++ = '.';
        memcpy(p, "000", 3); p += -e - 1;   /* e >= -4 here */
        memcpy(p, d, 6); p += nd;
    }
    return p;
}

/* the phrase of a key of side e (0: source, 1: target), words joined by single spaces, into buf (NUL-terminated;
 * words that would not fit n bytes are left out); returns its length */
size_t sb_ps_key_str(const sb_pscore *s, pkey k, int e, char *buf, size_t n);
/* part file `<prefix>.<t>` for writing (1 MiB buffer), NULL when it cannot be opened */
FILE *sb_ps_open_part(const char *prefix, int t);
/* One phrase-table line, Moses' format: `F ||| E ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| alignment |||
 * c(e) c(f) c(e,f)`, F being fs[0 .. fsl), the rest r's (c(e,f) = r->c_ef, c(e) = r->c_e) and the scores given. */
void sb_ps_write_pair(FILE *out, const sb_pscore *s, const char *fs, size_t fsl, const rec2 *r, double pfe, double pef,
                      double cf);
/* One partial-counts line `F ||| E ||| alignment ||| count` (counts_only; count as %.17g). */
void sb_ps_write_counts(FILE *out, const sb_pscore *s, pkey src, pkey tgt, uint64_t align, double count);

#endif
