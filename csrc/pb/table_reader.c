/* pb/table_reader.c - see table_reader.h. */
#include "pb/table_reader.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_LN (-100.0)   /* Moses' FloorScore: ln(0) and anything below becomes -100 */

typedef struct { const char *p; size_t len; } field_t;

int sb_pb_reader_fail(sb_pb_reader *rd, uint64_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rd->err_line = line;
    vsnprintf(rd->err, sizeof rd->err, fmt, ap);
    va_end(ap);
    return SB_EFORMAT;
}

/* Split a line at " ||| " into at most max fields; returns the count. */
static int split_fields(const char *line, size_t len, field_t *f, int max) {
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i + 5 <= len && n < max - 1; i++) {
        if (line[i] == ' ' && memcmp(line + i, " ||| ", 5) == 0) {
            f[n].p = line + start;
            f[n].len = i - start;
            n++;
            start = i + 5;
            i += 4;
        }
    }
    if (n < max) {
        size_t end = len;
        /* a trailing " |||" (no blank after it) closes the last field */
        if (end - start >= 4 && memcmp(line + end - 4, " |||", 4) == 0) end -= 4;
        f[n].p = line + start;
        f[n].len = end - start;
        n++;
    }
    return n;
}

static int parse_scores(const char *p, size_t len, float *out, int want, int *got) {
    char buf[64];
    int n = 0;
    for (size_t i = 0, t; sb_pb_next_token(p, len, &i, &t);) {
        if (n == want) {   /* too many: count them all, for the message */
            int c = n + 1;
            for (size_t u; sb_pb_next_token(p, len, &i, &u);) c++;
            *got = c;
            return -1;
        }
        if (i - t >= sizeof buf) { *got = n; return -2; }   /* no number is that long */
        memcpy(buf, p + t, i - t);
        buf[i - t] = '\0';
        char *end;
        errno = 0;
        double x = strtod(buf, &end);
        if (*end != '\0' || errno == ERANGE || !isfinite(x) || x < 0) { *got = n; return -2; }
        double l = x > 0 ? log(x) : FLOOR_LN;
        out[n++] = (float)(l < FLOOR_LN ? FLOOR_LN : l);
    }
    *got = n;
    return n == want ? 0 : -1;
}

typedef int (*line_fn)(sb_pb_reader *rd, const char *line, size_t len, uint64_t lineno);

/* fn on each non-blank line; a line holding a control byte (a NUL, a '\r' not before its '\n': the line rule of
 * common.h) or invalid UTF-8 (checked here, at load, so decoding never meets it) is refused */
static int each_line(sb_pb_reader *rd, const char *buf, size_t len, uint64_t first_line, line_fn fn) {
    size_t i = 0;
    uint64_t lineno = first_line;
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t l = end - i;
        if (l && buf[i + l - 1] == '\r') l--;
        size_t bad = sb_line_control(buf + i, l);   /* the line rule: a lone '\r', a NUL, ... refused */
        if (bad != l) {
            char why[128];
            sb_line_control_msg((unsigned char)buf[i + bad], why, sizeof why);
            return sb_pb_reader_fail(rd, lineno, "%s", why);
        }
        size_t ok = sb_utf8_valid_prefix(buf + i, l);
        if (ok != l)
            return sb_pb_reader_fail(rd, lineno, "invalid UTF-8 (byte 0x%02x at column %zu)",
                                     (unsigned char)buf[i + ok], ok + 1);
        int only_blank = 1;
        for (size_t k = 0; k < l; k++) if (!sb_pb_is_blank(buf[i + k])) { only_blank = 0; break; }
        if (!only_blank) {
            int rc = fn(rd, buf + i, l, lineno);
            if (rc != SB_OK) return rc;
        }
        i = end + 1;
        lineno++;
    }
    return SB_OK;
}

/* the source count of Moses' counts field "target source pair" (0: none) */
static uint64_t source_count(const field_t *f) {
    const char *p = f->p, *e = f->p + f->len;
    int k = 0;
    while (p < e && k < 2) {
        while (p < e && *p == ' ') p++;
        char *q;
        double v = strtod(p, &q);
        if (q == p) break;
        if (++k == 2 && v > 0) return (uint64_t)v;
        p = q;
    }
    return 0;
}

static int phrase_line(sb_pb_reader *rd, const char *line, size_t len, uint64_t lineno) {
    field_t f[5];
    int nf = split_fields(line, len, f, 5);
    if (nf < 3) return sb_pb_reader_fail(rd, lineno, "expected 'source ||| target ||| 4 scores [||| ...]'");
    uint32_t ids[SB_PB_MAX_PHRASE + 1], tids[SB_PB_READER_MAX_TARGET + 1];
    int ns = sb_pb_tokens(rd->src, f[0].p, f[0].len, 1, ids, SB_PB_MAX_PHRASE);
    if (ns == -1) return sb_pb_reader_fail(rd, lineno, "source phrase longer than 20 words (Moses' maximum)");
    if (ns == -2) return SB_ENOMEM;
    if (ns == 0) return sb_pb_reader_fail(rd, lineno, "empty source phrase");
    float tm[4];
    int got, rc = parse_scores(f[2].p, f[2].len, tm, 4, &got);
    if (rc == -2) return sb_pb_reader_fail(rd, lineno, "scores must be probabilities (finite numbers >= 0)");
    if (rc == -1)
        return sb_pb_reader_fail(rd, lineno, "expected 4 scores (PhraseDictionaryMemory num-features=4), found %d", got);
    int nt = sb_pb_tokens(rd->tgt, f[1].p, f[1].len, 1, tids, SB_PB_READER_MAX_TARGET);
    if (nt == -1) return sb_pb_reader_fail(rd, lineno, "target phrase longer than 255 words");
    if (nt == -2) return SB_ENOMEM;
    if (nt == 0) return sb_pb_reader_fail(rd, lineno, "empty target phrase");
    sb_pb_record r = {ids, ns, tids, nt, tm, rd->want_counts && nf >= 5 ? source_count(&f[4]) : 0, lineno};
    return rd->phrase(rd, &r);
}

static int reordering_line(sb_pb_reader *rd, const char *line, size_t len, uint64_t lineno) {
    field_t f[4];
    int nf = split_fields(line, len, f, 4);
    if (nf < 3) return sb_pb_reader_fail(rd, lineno, "expected 'source ||| target ||| 6 scores'");
    float ro[6];
    int got, rc = parse_scores(f[2].p, f[2].len, ro, 6, &got);
    if (rc == -2) return sb_pb_reader_fail(rd, lineno, "scores must be probabilities (finite numbers >= 0)");
    if (rc == -1)
        return sb_pb_reader_fail(rd, lineno, "expected 6 scores (wbe-msd-bidirectional-fe-allff), found %d", got);
    rd->ro_lines++;
    uint32_t ids[SB_PB_MAX_PHRASE + 1], tids[SB_PB_READER_MAX_TARGET + 1];
    int ns = sb_pb_tokens(rd->src, f[0].p, f[0].len, 0, ids, SB_PB_MAX_PHRASE);
    if (ns == 0) return sb_pb_reader_fail(rd, lineno, "empty source phrase");
    if (ns < 0) return SB_OK;  /* not a source phrase of the table */
    int nt = sb_pb_tokens(rd->tgt, f[1].p, f[1].len, 0, tids, SB_PB_READER_MAX_TARGET);
    if (nt == 0) return sb_pb_reader_fail(rd, lineno, "empty target phrase");
    if (nt < 0) return SB_OK;
    sb_pb_record r = {ids, ns, tids, nt, ro, 0, lineno};
    return rd->reordering(rd, &r);
}

int sb_pb_read_phrases(sb_pb_reader *rd, const char *buf, size_t len, uint64_t first_line) {
    return each_line(rd, buf, len, first_line, phrase_line);
}

int sb_pb_read_reordering(sb_pb_reader *rd, const char *buf, size_t len, uint64_t first_line) {
    return each_line(rd, buf, len, first_line, reordering_line);
}
