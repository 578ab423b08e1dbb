/* common.h - error codes, portable prefetch, small helpers shared by every kernel.
 *
 * Conventions for every kernel in csrc/:
 *  - C11, no mutable globals; all state lives in structs the caller owns.
 *  - Public functions return an int status: SB_OK (0) or a negative SB_E* code,
 *    which pylib/smtbench/native.py turns into a Python exception.
 *  - The declarations between the CFFI-BEGIN / CFFI-END markers of a header are fed
 *    verbatim to cffi's cdef(), so they must be plain declarations (no macros, no #if).
 */
#ifndef SMTBENCH_COMMON_H
#define SMTBENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* CFFI-BEGIN */
enum {
    SB_OK = 0,
    SB_EINVAL = -1,     /* an argument is out of range */
    SB_ENOMEM = -2,     /* an allocation failed */
    SB_EFULL = -3,      /* a fixed-capacity structure is full */
    SB_ETHREAD = -4,    /* pthread_create / join failed */
    SB_EFORMAT = -5,    /* malformed input data */
    SB_ENOTFOUND = -6,  /* a lookup that must succeed did not */
    SB_EIO = -7,        /* a read or write failed */
    SB_EUNSUPPORTED = -8 /* not built into this binary */
};
const char *sb_strerror(int code);
const char *sb_build_flags(void);
/* CFFI-END */

#if defined(__GNUC__) || defined(__clang__)
#define SB_PREFETCH(addr) __builtin_prefetch((const void *)(addr), 0, 3)
#define SB_LIKELY(x) __builtin_expect(!!(x), 1)
#define SB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SB_ALWAYS_INLINE inline __attribute__((always_inline))   /* a hot helper with more than one caller */
#else
#define SB_PREFETCH(addr) ((void)(addr))
#define SB_LIKELY(x) (x)
#define SB_UNLIKELY(x) (x)
#define SB_ALWAYS_INLINE inline
#endif

/* splitmix64: the seeded key stream used by every benchmark (reproducible across runs). */
static inline uint64_t sb_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A stateless 64-bit mixer (the finaliser of splitmix64). */
static inline uint64_t sb_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The line rule of every reader of line-parallel text (CONTRIBUTING.md "Text lines", pylib's ioutil.open_text): a
 * line ends at '\n', a CRLF's '\r' is removed by the caller; any other ASCII control byte but TAB (0x00-0x08,
 * 0x0b-0x1f, 0x7f: a lone '\r', a NUL, ...) is refused. The offset of the first such byte in p[0 .. len), or len. */
static inline size_t sb_line_control(const char *p, size_t len) {
    /* 8 bytes a step (a byte loop cost ~600 instructions an extract line): a word with no byte < 0x20 and none
     * equal to 0x7f holds no control byte; a word that may (a TAB, say) is decided byte by byte */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w, d;
        memcpy(&w, p + i, 8);
        d = w ^ (0x7fULL * ones);
        if (!(((w - 0x20ULL * ones) & ~w & highs) | ((d - ones) & ~d & highs))) continue;
        for (size_t k = i; k < i + 8; k++) {
            unsigned char c = (unsigned char)p[k];
            if ((c < 0x20 && c != '\t') || c == 0x7f) return k;
        }
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
    }
    return len;
}

/* The refusal's reason for control byte c, worded as ioutil.open_text words it (into buf, n bytes). */
void sb_line_control_msg(unsigned char c, char *buf, size_t n);

/* The length of the longest valid (strict) UTF-8 prefix of s[0 .. len): no overlong forms, no surrogates, nothing
 * past U+10FFFF; an ASCII fast path 8 bytes a step. Where it is < len, s[it] starts the first invalid sequence (the
 * byte Python's UnicodeDecodeError.start names: ioutil.open_text's "invalid UTF-8 (byte 0x.. at column N)"). */
size_t sb_utf8_valid_prefix(const char *s, size_t len);

/* The next token of a NUL-terminated line split at spaces and TABs (and '\r' where with_cr), in place, as
 * strtok_r(.., " \t" or " \t\r", save) splits it: leading separators skipped, the separator after the token
 * overwritten with NUL, *save left after it; NULL when none is left (*len: the token's length). A loop of our own
 * rather than libc's strtok_r: the SIMD strspn/strcspn under it cost more than the scan on words this short, and
 * their instruction counts follow the C library's version and the line's alignment (CONTRIBUTING 'Counts'). */
static inline char *sb_token(char **save, int with_cr, size_t *len) {
    /* the bytes that end a token, as a class table (bit 1: NUL, ' ', TAB; bit 2: '\r'): one load and test a byte */
    static const unsigned char cls[256] = {[0] = 1, [' '] = 1, ['\t'] = 1, ['\r'] = 2};
    const unsigned char stop = with_cr ? 3 : 1;
    char *p = *save;
    while (*p && (cls[(unsigned char)*p] & stop)) p++;
    if (!*p) { *save = p; *len = 0; return NULL; }
    char *t = p;
    while (!(cls[(unsigned char)*p] & stop)) p++;
    *len = (size_t)(p - t);
    if (*p) *p++ = 0;
    *save = p;
    return t;
}

/* Large zeroed allocation: mmap + MADV_HUGEPAGE where available (KenLM's HugeMalloc idea).
 * Returns NULL on failure. Free with sb_huge_free(ptr, bytes). */
void *sb_huge_alloc(size_t bytes, int *used_huge);
/* The same, asking for huge pages only if want_huge (0: plain 4 KiB pages, for comparison). */
void *sb_page_alloc(size_t bytes, int want_huge, int *used_huge);
void sb_huge_free(void *ptr, size_t bytes);

/* Monotonic clock in nanoseconds. */
uint64_t sb_now_ns(void);
/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user + system) in nanoseconds. */
uint64_t sb_thread_cpu_ns(void);

/* Pin the calling thread to cpu (cpu % online cpus). Returns SB_OK or SB_EUNSUPPORTED. */
int sb_pin_to_cpu(int cpu);

/* Run fn on n jobs (jobs + i * job_size, i < n), one thread each, and join them all. Returns SB_OK, SB_ENOMEM,
 * or SB_ETHREAD when a thread could not be created (the ones that were are joined first; the caller then must not
 * trust the jobs' results). The jobs report their own errors in their structs. */
int sb_run_threads(int n, void *(*fn)(void *), void *jobs, size_t job_size);

/* The one growth rule of the C tree: an array that grows by doubling.
 *
 *     if (SB_GROW(v->item, v->cap, v->n + 1, 16)) return SB_ENOMEM;
 *     v->item[v->n++] = x;
 *
 * sb_grow makes the array at *pptr (elem bytes an element, *cap elements allocated; pptr is the address of the
 * array's pointer, of any object pointer type) hold at least `need` elements: a first allocation of `first` elements,
 * then twice the capacity, each doubled until `need` fit; realloc keeps the contents. SB_OK, or SB_ENOMEM (also where
 * the size would overflow) with the array and *cap as they were. SB_GROW is sb_grow for the array p with the size_t
 * capacity cap (both lvalues, evaluated more than once), free when the array already fits. */
int sb_grow(void *pptr, size_t *cap, size_t need, size_t elem, size_t first);
#define SB_GROW(p, cap, need, first) \
    ((size_t)(need) <= (cap) ? SB_OK : sb_grow(&(p), &(cap), (size_t)(need), sizeof *(p), (first)))

/* A growing bump allocator (the Moses2 paper's memory pool, section 4.1): memory is never released object by
 * object, the whole arena is reset (kept for re-use) or freed. Allocations are 16-byte aligned. */
typedef struct {
    char **chunk;
    size_t *size;
    int n, cap, cur;     /* chunks allocated; the one being filled */
    size_t used;         /* bytes used in chunk[cur] */
} sb_arena;
void *sb_arena_alloc(sb_arena *a, size_t bytes);
void sb_arena_reset(sb_arena *a);
void sb_arena_free(sb_arena *a);
uint64_t sb_arena_bytes(const sb_arena *a);

#endif
