/* extract.h - Moses phrase extraction (phrase-extract/extract-main.cpp semantics, as pylib/smtbench/tm/extract.py
 * writes it): every phrase pair consistent with a sentence pair's word alignment, E spans of at most max_len words,
 * the F side extended over unaligned boundary words; the extract line `F ||| E ||| f-e ...`, optionally the inverse
 * line `E ||| F ||| e-f ...` and the wbe-msd orientation line `F ||| E ||| prev next`.
 *
 * Input comes in blocks of whole lines already read by the line rule (pylib's ioutil.open_text): three buffers of
 * '\n'-terminated lines (source F, target E, alignment), line-parallel. Words are split at runs of ASCII space and
 * TAB only (ioutil.words, CONTRIBUTING.md "Text lines"), so the output is byte for byte the Python extractor's.
 * With flag 4 the same pass counts the lexical tables' events (tm/extract.py lexical_counts: c(f,e), c(f), c(e)
 * over the alignment points, an unaligned word against NULL), written by sb_extract_lex_format. A sentence the kernel does not
 * take on itself (an alignment token that is not ASCII `digits-digits` or whose numbers exceed 2^30, a point
 * outside the sentence pair) stops the block there: the caller runs its reference path on that sentence (which
 * raises the one-line error or, for exotic digits Python accepts, writes the lines) and resumes after it. */
#ifndef SMTBENCH_EXTRACT_H
#define SMTBENCH_EXTRACT_H

#include "util/common.h"

/* CFFI-BEGIN */
typedef struct {
    /* outputs, appended to (the caller takes data[k][0 .. len[k]) and resets len[k] to 0):
     * 0 = extract, 1 = extract.inv (flag 1), 2 = orientations (flag 2) */
    char *data[3];
    size_t len[3];
    size_t cap[3];
    int64_t pairs;      /* phrase pairs emitted, summed over calls */
    /* where a call stopped: pos[k] = the byte offset in stream k (0 src, 1 tgt, 2 align) after the last line
     * consumed; stop = the index (from 0, in the block) of the sentence that stopped it, or -1 when the block
     * ended; bad_stream = the stream of a refused control byte (SB_EFORMAT), bad_col its byte column */
    size_t pos[3];
    int64_t next;       /* index of the next sentence to read */
    int64_t stop;
    int bad_stream;
    int64_t bad_col;
    /* per-sentence scratch (owned) */
    int32_t *scratch;
    size_t scratch_cap;
    void *lex;          /* the lexical counts (flag 4; owned, opaque) */
    void *score;        /* flag 16: the phrase scorer (sb_pscore, tm/phrase_runs.h) the pairs go to, as records */
    int score_t;        /* flag 16: its buffer (thread) the records go to */
} sb_extract_state;

/* Extract sentences from st->next on (byte offsets st->pos) until the block (len[k] bytes of stream k) ends or a
 * sentence needs the reference path (st->stop = its index, st->pos past it; SB_OK either way). flags: 1 = write
 * the inverse lines, 2 = the orientation lines, 4 = count the lexical events (a sentence left to the reference
 * path is not counted: see sb_extract_lex_points), 8 = no extract line (with neither 1 nor 2: no phrase pair
 * at all, the lexical counts only), 16 = each pair
 * into the phrase scorer st->score as a record (sb_ps_add_pair: no extract line is written; its vocabulary is the
 * lex tables', sb_pscore_begin_pairs, so every word of the corpus has a code; a word without one: SB_EINVAL).
 * SB_EFORMAT: a control byte (sb_line_control) in a line, or the
 * streams are not line-parallel (bad_stream names the stream that ended early / holds the byte); SB_ENOMEM. */
int sb_extract_block(sb_extract_state *st, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                     const char *aln, size_t aln_len, int max_len, int flags);
/* Counts one sentence pair's lexical events from points the caller parsed (pf[i]-pe[i], F position first): the
 * sentences sb_extract_block leaves to the reference path. SB_EINVAL: a point outside the pair; SB_ENOMEM. */
int sb_extract_lex_points(sb_extract_state *st, const char *src, size_t src_len, const char *tgt, size_t tgt_len,
                          const int32_t *pf, const int32_t *pe, int32_t np);
/* Appends a lexical table's whole text to output 0 (the caller takes it as it takes a block's extract lines):
 * which 0 = lex.f2e (`e f p(e|f)` lines), 1 = lex.e2f (`f e p(f|e)`), both in the order of (f, e) by bytes, p with
 * 7 decimals - lexical_counts + write_lex's bytes. SB_EINVAL (which), SB_ENOMEM. Nothing counted: nothing appended. */
int sb_extract_lex_format(sb_extract_state *st, int which);
/* Frees the outputs, scratch and lexical counts (the struct may be reused after zeroing). */
void sb_extract_free(sb_extract_state *st);
/* CFFI-END */

#endif
