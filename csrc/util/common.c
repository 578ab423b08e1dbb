#define _GNU_SOURCE
#include "util/common.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef SB_CFLAGS
#define SB_CFLAGS "unknown"
#endif

void sb_line_control_msg(unsigned char c, char *buf, size_t n) {
    if (c == '\r')
        snprintf(buf, n, "a carriage return (\\r) inside the line (a line ends at \\n; a \\r only right before it)");
    else if (c == 0) snprintf(buf, n, "a NUL byte inside the line");
    else snprintf(buf, n, "the control character 0x%02x inside the line", c);
}

/* see common.h */
size_t sb_utf8_valid_prefix(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (i + 8 <= len) {   /* ASCII fast path: on to the word's first non-ASCII byte */
            uint64_t w;
            memcpy(&w, p + i, 8);
            w &= 0x8080808080808080ULL;
            if (!w) { i += 8; continue; }
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            i += (size_t)__builtin_ctzll(w) / 8;
#endif
        }
        unsigned c = p[i];
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) {   /* two bytes (Latin letters with accents): the common case */
            if (len - i < 2 || (p[i + 1] & 0xC0) != 0x80) return i;
            i += 2;
            continue;
        }
        int n;
        unsigned lo = 0x80, hi = 0xBF;
        if (c == 0xE0) { n = 2; lo = 0xA0; }
        else if (c == 0xED) { n = 2; hi = 0x9F; }   /* no surrogates */
        else if (c >= 0xE1 && c <= 0xEF) n = 2;
        else if (c == 0xF0) { n = 3; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) n = 3;
        else if (c == 0xF4) { n = 3; hi = 0x8F; }
        else return i;
        if (len - i <= (size_t)n) return i;
        if (p[i + 1] < lo || p[i + 1] > hi) return i;
        for (int k = 2; k <= n; k++) if (p[i + (size_t)k] < 0x80 || p[i + (size_t)k] > 0xBF) return i;
        i += (size_t)n + 1;
    }
    return len;
}

const char *sb_strerror(int code) {
    switch (code) {
    case SB_OK: return "ok";
    case SB_EINVAL: return "invalid argument";
    case SB_ENOMEM: return "out of memory";
    case SB_EFULL: return "table is full";
    case SB_ETHREAD: return "thread creation or join failed";
    case SB_EFORMAT: return "malformed input";
    case SB_ENOTFOUND: return "not found";
    case SB_EIO: return "I/O error";
    case SB_EUNSUPPORTED: return "not supported by this build";
    default: return "unknown error";
    }
}

const char *sb_build_flags(void) { return SB_CFLAGS; }

void *sb_page_alloc(size_t bytes, int want_huge, int *used_huge) {
    if (used_huge) *used_huge = 0;
    if (bytes == 0) return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    if (!want_huge) {
        madvise(p, bytes, MADV_NOHUGEPAGE); /* also when the system default is 'always' */
    } else if (bytes >= (2u << 20) && madvise(p, bytes, MADV_HUGEPAGE) == 0 && used_huge) {
        *used_huge = 1;
    }
#endif
    return p;
}

void *sb_huge_alloc(size_t bytes, int *used_huge) { return sb_page_alloc(bytes, 1, used_huge); }

void sb_huge_free(void *ptr, size_t bytes) {
    if (ptr) munmap(ptr, bytes);
}

uint64_t sb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t sb_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int sb_pin_to_cpu(int cpu) {
#ifdef __linux__
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0) return SB_EUNSUPPORTED;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(cpu % n), &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? SB_OK : SB_EUNSUPPORTED;
#else
    (void)cpu;
    return SB_EUNSUPPORTED;
#endif
}

int sb_run_threads(int n, void *(*fn)(void *), void *jobs, size_t job_size) {
    if (n <= 0) return SB_OK;
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    if (!tids) return SB_ENOMEM;
    int rc = SB_OK, started = 0;
    for (int i = 0; i < n; i++) {
        if (pthread_create(&tids[i], NULL, fn, (char *)jobs + (size_t)i * job_size) != 0) { rc = SB_ETHREAD; break; }
        started++;
    }
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    free(tids);
    return rc;
}

void *sb_arena_alloc(sb_arena *a, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    if (!bytes) bytes = 16;
    while (a->cur < a->n) {
        if (a->used + bytes <= a->size[a->cur]) {
            void *p = a->chunk[a->cur] + a->used;
            a->used += bytes;
            return p;
        }
        a->cur++;
        a->used = 0;
    }
    if (a->n == a->cap) {   /* two arrays of one capacity */
        size_t cc = (size_t)a->cap, cz = cc;
        if (SB_GROW(a->chunk, cc, cc + 1, 16) || SB_GROW(a->size, cz, cz + 1, 16)) return NULL;
        a->cap = (int)cc;
    }
    size_t sz = (size_t)1 << 20;
    while (sz < bytes) sz *= 2;
    char *p = aligned_alloc(16, sz);
    if (!p) return NULL;
    a->chunk[a->n] = p;
    a->size[a->n] = sz;
    a->cur = a->n++;
    a->used = bytes;
    return p;
}

void sb_arena_reset(sb_arena *a) {
    a->cur = 0;
    a->used = 0;
}

void sb_arena_free(sb_arena *a) {
    for (int i = 0; i < a->n; i++) free(a->chunk[i]);
    free(a->chunk);
    free(a->size);
    memset(a, 0, sizeof *a);
}

uint64_t sb_arena_bytes(const sb_arena *a) {
    uint64_t t = 0;
    for (int i = 0; i < a->n; i++) t += a->size[i];
    return t;
}

int sb_grow(void *pptr, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap) return SB_OK;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2) return SB_ENOMEM;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem) return SB_ENOMEM;
    void *old;
    memcpy(&old, pptr, sizeof old);   /* the caller's pointer, whatever its type (object pointers are alike here) */
    void *p = realloc(old, c * elem);
    if (!p) return SB_ENOMEM;
    memcpy(pptr, &p, sizeof p);
    *cap = c;
    return SB_OK;
}
