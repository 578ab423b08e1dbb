/* cgregion.c - callgrind client requests around the measured region (see cgregion.h). */
#include "util/cgregion.h"

#if !defined(SB_NO_CALLGRIND) && defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define SB_HAVE_CALLGRIND 1
#endif
#endif

int sb_cg_available(void) {
#ifdef SB_HAVE_CALLGRIND
    return 1;
#else
    return 0;
#endif
}

int sb_cg_running(void) {
#ifdef SB_HAVE_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

int sb_cg_begin(const uint8_t *evict, size_t bytes, uint64_t *sink) {
#ifdef SB_HAVE_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
#endif
    uint64_t sum = 0;
    if (evict)
        for (size_t i = 0; i < bytes; i += 64) sum += ((const volatile uint8_t *)evict)[i];
    *sink = sum;
#ifdef SB_HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
    return SB_OK;
}

int sb_cg_end(const char *name) {
#ifdef SB_HAVE_CALLGRIND
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(name);
#else
    (void)name;
#endif
    return SB_OK;
}
