/* phrase_runs.h - step 1 of the phrase scorer (phrase_score.h): the lex tables, the words' byte-order codes, and the
 * extract lines parsed in `threads` workers into 48-byte records, sorted runs of which go to disk. */
#ifndef SMTBENCH_PHRASE_RUNS_H
#define SMTBENCH_PHRASE_RUNS_H
#include "tm/phrase_core.h"

/* CFFI-BEGIN */
/* Load a lex file from fd (read to EOF, not closed). which = SB_PSCORE_LEX_F2E (`e f w(e|f)`) or _E2F
 * (`f e w(f|e)`). On SB_EFORMAT, *err_line is the 1-based line and err holds what is wrong. */
int sb_pscore_load_lex(sb_pscore *s, int which, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Load extract lines from fd in `threads` workers (may be called for several inputs in turn). */
int sb_pscore_load_extract(sb_pscore *s, int fd, uint64_t *err_line, char *err, size_t errlen);
/* Phrase pairs fed as they are made (tm extract --phrase-table: sb_extract_block's flag 16, no extract line between):
 * the words' codes made from the lex tables (loaded first); *maxw = the words a side a key holds. SB_EINVAL after
 * finish. */
int sb_pscore_begin_pairs(sb_pscore *s, int *maxw);
/* Extract lines from memory (buf[0 .. len), whole lines, the last ending in '\n'; cut in place) into thread t's
 * buffer, as sb_pscore_load_extract parses them: the lines the extractor's reference path made for a sentence. On
 * SB_EFORMAT *err_line is the 1-based line in buf. */
int sb_pscore_load_text(sb_pscore *s, int t, char *buf, size_t len, uint64_t *err_line, char *err, size_t errlen);
/* CFFI-END */

/* The code of word w[0 .. len) of side e (0: source, 1: target); 0 when the lex tables do not hold it. */
uint32_t sb_ps_word_code(const sb_pscore *s, int e, const char *w, size_t len);
/* One phrase pair as the record its extract line would parse to (count 1) into thread t's buffer (a full one is
 * spilled first): the codes of its nf source and ne target words, its alignment (bit f*8+e). One caller a scorer at
 * a time. SB_EINVAL: a side longer than a key holds. */
int sb_ps_add_pair(sb_pscore *s, int t, const uint32_t *fc, int nf, const uint32_t *ec, int ne, uint64_t align);

/* The words' codes (1-based ranks in byte order) and the key width, once the lex tables are in (idempotent). */
int sb_ps_prepare_vocab(sb_pscore *s);
/* One extract line (NUL-terminated, cut in place) into r: keys, alignment and count.
 * inverse: the line is `E ||| F ||| ei-fi ...` (extract.inv); the record is the same as for extract. SB_EFORMAT
 * with *msg (possibly msgbuf) saying what is wrong. */
int sb_ps_parse_line(sb_pscore *s, char *line, rec1 *r, const char **msg, char *msgbuf, size_t msglen, int inverse);
/* The lexical weights of phrase pair (src, tgt) under alignment m (bit f*8+e), Moses' definition: lex(e|f) = the
 * product over target words of the mean w(e|f) over the words aligned to it (w(e|NULL) if none), lex(f|e) likewise;
 * an alignment is a set, as Moses' score reads it (its points summed in increasing position). want: 1 lex(e|f),
 * 2 lex(f|e), 3 both. */
void sb_ps_lex_weights(const sb_pscore *s, pkey src, pkey tgt, uint64_t m, int want, double *lex_ef, double *lex_fe);
/* At the end of a load that wrote no run: every thread's buffer sorted (equal records combined, as runs are
 * written, unless weighted); if together they hold at most `limit` bytes they stay where they are as the step-1
 * runs, read in place by the merge (shrunk to their records; *in_mem = 1: the caller frees the buffers after it),
 * otherwise they are written as runs. *bytes: their size. */
int sb_ps_keep1(sb_pscore *s, uint64_t limit, uint64_t *bytes, int *in_mem);
/* Sort thread t's buffer and append it as a run to its step-1 file (with samples of its targets). */
int sb_ps_spill1(sb_pscore *s, int t);

#endif
