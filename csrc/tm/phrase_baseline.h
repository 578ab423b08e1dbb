/* phrase_baseline.h - the Moses-style baseline of Mediani et al.'s Table 1 (phrase_baseline.c), on the kernel's
 * scorer state and lex tables (phrase_core.h, loaded by phrase_runs.h's sb_pscore_load_lex). */
#ifndef SMTBENCH_PHRASE_BASELINE_H
#define SMTBENCH_PHRASE_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "tm/phrase_core.h"

/* CFFI-BEGIN */
/* The Moses-style baseline's single-threaded pieces (the lex tables loaded into s first):
 * score a *sorted* extract (inverse = 0) or extract.inv (inverse = 1) from in_fd into a half table
 * `F ||| E ||| align ||| lex ||| count(first) count(pair)` on out_fd (F first in both directions, so the
 * inverse half lines up with the direct one once sorted), and join the two sorted halves into the table. */
int sb_pscore_stream_half(sb_pscore *s, int in_fd, int out_fd, int inverse, uint64_t *err_line, char *err,
                          size_t errlen);
int sb_pscore_consolidate(int direct_fd, int inverse_fd, int out_fd, uint64_t *err_line, char *err, size_t errlen);
/* CFFI-END */

#endif
