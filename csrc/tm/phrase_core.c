/* phrase_core.c - see phrase_core.h: the helpers every phase of the phrase scorer uses. */
#define _GNU_SOURCE
#include "tm/phrase_core.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int sb_ps_write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return SB_EIO; }
        p += w; n -= (size_t)w;
    }
    return SB_OK;
}
int sb_ps_pread_all(int fd, void *buf, size_t n, uint64_t off) {
    char *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) { if (errno == EINTR) continue; return SB_EIO; }
        if (r == 0) return SB_EIO;
        p += r; n -= (size_t)r; off += (uint64_t)r;
    }
    return SB_OK;
}

int sb_ps_runvec_push(runvec *rv, run_t r) {
    if (SB_GROW(rv->v, rv->cap, rv->n + 1, 16)) return SB_ENOMEM;
    rv->v[rv->n++] = r;
    return SB_OK;
}
int sb_ps_u64_push(u64vec *a, uint64_t x) {
    if (SB_GROW(a->v, a->cap, a->n + 1, 1024)) return SB_ENOMEM;
    a->v[a->n++] = x;
    return SB_OK;
}

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
        if (SB_GROW(r->buf, r->cap, r->len + 1, CHUNK)) { *rc = SB_ENOMEM; return NULL; }
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0) { if (errno == EINTR) continue; *rc = SB_EIO; return NULL; }
        if (n == 0) r->eof = 1;
        r->len += (size_t)n;
    }
}

void sb_ps_seterr(char *err, size_t errlen, const char *msg) {
    if (err && errlen) snprintf(err, errlen, "%s", msg);
}
