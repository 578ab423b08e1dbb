/* spellprobe.h - the slow-spell probe of the repeat protocol (pylib/smtbench/protocol.py).
 *
 * A fixed memory-latency measurement: one random cyclic permutation (Sattolo's algorithm, seeded) over a buffer of
 * 8-byte slots well beyond the last-level cache, walked by dependent loads (each load's address is the previous
 * load's value, so nothing overlaps: the time per step is the DRAM latency plus the TLB walk). The VM this project
 * runs on slows its memory down by 1.4-2x for minutes at a time; the probe, taken at a run's start (calibration)
 * and in every repeat, tells a repeat that ran in such a spell from one that did not.
 */
#ifndef SMTBENCH_SPELLPROBE_H
#define SMTBENCH_SPELLPROBE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_spell sb_spell;
/* A probe over `bytes` (>= 1 MiB, rounded down to whole 8-byte slots) filled from `seed`. */
int sb_spell_create(uint64_t bytes, uint64_t seed, sb_spell **out);
void sb_spell_free(sb_spell *p);
/* Walk `steps` dependent loads (>= 1) on from where the previous walk stopped (the first from slot 0), so that
 * consecutive walks read different lines; *ns_per_load = wall time / steps; *sink = the slot reached (so the walk
 * cannot be optimised away; also a checksum: the same seed, size and walks reach the same slot). */
int sb_spell_walk(sb_spell *p, uint64_t steps, double *ns_per_load, uint64_t *sink);
/* CFFI-END */

#endif
