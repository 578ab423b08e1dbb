/* phrase_write.c - see phrase_write.h. */
#include "tm/phrase_write.h"

#include <stdio.h>
#include <string.h>

size_t sb_ps_key_str(const sb_pscore *s, pkey k, int e, char *buf, size_t n) {
    const char *const *words = e ? s->eword : s->fword;
    const uint32_t *lens = e ? s->ewlen : s->fwlen;
    const uint64_t end = e ? s->eend : s->fend;
    size_t o = 0;
    for (int i = 0; i < s->maxw; i++) {
        uint64_t c = sb_ps_key_get(k, s->bits, i);
        if (!c || c == end) break;
        const char *w = words[c];
        size_t l = lens[c];
        if (o + l + 2 >= n) break;
        if (o) buf[o++] = ' ';
        memcpy(buf + o, w, l);
        o += l;
    }
    buf[o] = 0;
    return o;
}

FILE *sb_ps_open_part(const char *prefix, int t) {
    char name[8192];
    snprintf(name, sizeof name, "%s.%d", prefix, t);
    FILE *f = fopen(name, "w");
    if (f) setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

void sb_ps_write_pair(FILE *out, const sb_pscore *s, const char *fs, size_t fsl, const rec2 *r, double pfe, double pef,
                      double cf) {
    char line[20000];
    double c = r->c_ef;
    char *p = line;
    memcpy(p, fs, fsl); p += fsl;
    memcpy(p, " ||| ", 5); p += 5;
    p += sb_ps_key_str(s, r->tgt, 1, p, 8192);
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
    fwrite(line, 1, (size_t)(p - line), out);
}

void sb_ps_write_counts(FILE *out, const sb_pscore *s, pkey src, pkey tgt, uint64_t align, double count) {
    char sb[8192], tb[8192], ab[200];
    sb_ps_key_str(s, src, 0, sb, sizeof sb);
    sb_ps_key_str(s, tgt, 1, tb, sizeof tb);
    fprintf(out, "%s ||| %s ||| %s ||| %.17g\n", sb, tb, (sb_ps_align_str(align, ab), ab), count);
}

size_t sb_ps_format_g6(double v, char *out, size_t n) {
    char buf[64];
    size_t len = (size_t)(sb_ps_put_g6(buf, v) - buf);
    if (!n) return len;
    size_t k = len < n - 1 ? len : n - 1;
    memcpy(out, buf, k);
    out[k] = 0;
    return len;
}
