/* cgregion.h - the measured region of `smtbench count` (pylib/smtbench/counts.py).
 *
 * Callgrind's client requests (valgrind/callgrind.h) around a kernel call: the counts run under
 * `valgrind --tool=callgrind --instr-atstart=no`, so nothing is instrumented (Python, numpy, loading a model)
 * until sb_cg_begin, which switches instrumentation on and zeroes the counters; sb_cg_end switches it off again
 * and dumps the region's counts to a file of their own.
 * Outside valgrind the requests are a few no-op instructions. Where the build has no valgrind headers (or is built
 * with -DSB_NO_CALLGRIND) they compile to nothing and sb_cg_available says 0.
 */
#ifndef SMTBENCH_CGREGION_H
#define SMTBENCH_CGREGION_H
#include "util/common.h"

/* CFFI-BEGIN */
/* 1 where this build issues callgrind's client requests, 0 where it was built without valgrind/callgrind.h. */
int sb_cg_available(void);
/* 1 when running under valgrind (RUNNING_ON_VALGRIND), 0 otherwise (always 0 without the headers). */
int sb_cg_running(void);
/* Begin a measured region: start instrumenting (CALLGRIND_START_INSTRUMENTATION), read one byte of every 64 of
 * `evict` (`bytes` long, larger than the simulated last-level cache, or NULL/0 to skip) so that every region starts
 * with the simulated caches holding none of the kernel's data whatever ran before it, then zero the counters
 * (CALLGRIND_ZERO_STATS). *sink = the sum of the bytes read. Returns SB_OK. */
int sb_cg_begin(const uint8_t *evict, size_t bytes, uint64_t *sink);
/* End the region: stop instrumenting (CALLGRIND_STOP_INSTRUMENTATION) and dump the counters to their own file
 * (CALLGRIND_DUMP_STATS_AT(name): its "desc: Trigger: Client Request: <name>" line names the region). */
int sb_cg_end(const char *name);
/* CFFI-END */

#endif
