/* pb/model.h - the phrase-based model every decoder here searches, scored as Moses/Moses2 score it
 * (shared/notes/moses-decoder-semantics.md): a phrase table (PhraseDictionaryMemory: 4 scores, table
 * limit by stand-alone score), a lexicalized reordering table (wbe-msd-bidirectional-fe-allff: 6
 * scores), word/phrase/unknown-word penalties, distortion, and a KenLM-exact probing LM (lmprobe.h).
 *
 * Loading: sb_pb_new with the LM and its vocabulary (target word ids = LM ids for LM words), then
 * feed the phrase table's text (whole lines, any chunking), sb_pb_finish_phrases (stand-alone
 * scores, table limit: pb/options.h), feed the reordering table, sb_pb_finish: the in-memory table
 * (pb/table_mem.h); or, instead of the feeding, sb_pb_load_binary: the binarized table (pb/bin_read.h). Either is
 * the model's phrase table behind one face (pb/table.h). Each sentence is prepared by
 * sb_pb_sentence_new (pb/lattice.h: translation options per span, pass-through options for unknown words, future
 * costs); the searches (pb/normal.h, ...) extend hypotheses with sb_pb_extend, so that every
 * decoder scores identically (pb/hyp.h). Feature values are natural logs in the fixed order SB_PB_F_*
 * (pb/options.h). */
#ifndef SMTBENCH_PB_MODEL_H
#define SMTBENCH_PB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"
#include "lm/lmprobe.h"
#include "pb/options.h"
#include "pb/table.h"
#include "pb/table_mem.h"
#include "pb/table_reader.h"
#include "pb/vocab.h"

/* CFFI-BEGIN */
typedef struct sb_pb_model sb_pb_model;
enum { SB_PB_MAX_WORDS = 256 };  /* longest sentence a search accepts */

/* weights: SB_PB_NFEAT values in SB_PB_F_* order. lm_vocab: the LM's words joined by '\n', in LM id
 * order (so target ids of LM words are LM ids). table_limit 0 = keep every target phrase. */
int sb_pb_new(const sb_lm *lm, const char *lm_vocab, size_t vocab_len, const double *weights,
              int table_limit, sb_pb_model **out);
void sb_pb_free(sb_pb_model *m);
/* Whole lines of a Moses phrase table ("src ||| tgt ||| p1 p2 p3 p4 [||| ...]"); first_line = the
 * line number of buf's first line. On SB_EFORMAT see sb_pb_error_line / sb_pb_error_message. */
int sb_pb_feed_phrases(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line);
int sb_pb_finish_phrases(sb_pb_model *m);
/* Whole lines of a reordering table ("src ||| tgt ||| 6 scores"); pairs not kept are skipped. */
int sb_pb_feed_reordering(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line);
int sb_pb_finish(sb_pb_model *m);
uint64_t sb_pb_error_line(const sb_pb_model *m);
const char *sb_pb_error_message(const sb_pb_model *m);
/* counts: [0] phrase-table lines, [1] source phrases, [2] options kept, [3] reordering lines,
 * [4] of them attached to a kept option, [5] kept options without reordering scores,
 * [6] longest source phrase, [7] bytes held */
void sb_pb_counts(const sb_pb_model *m, uint64_t *counts);
int sb_pb_set_weights(sb_pb_model *m, const double *weights);

/* The binarized phrase table (pb/bin_read.h) instead of the text tables: after sb_pb_new, instead of the feed/finish
 * calls. The file is memory-mapped and read on demand; the `cache` most frequent source phrases are decoded,
 * scored and kept at load (the static cache of the Moses2 paper, 4.3). SB_EIO / SB_EFORMAT (message set). */
int sb_pb_load_binary(sb_pb_model *m, const char *path, uint64_t cache);
/* CFFI-END */

/* ---- the model's insides: read by pb/lattice.c (sentences) and pb/hyp.c (hypotheses), not by the searches
 * (not for cffi) ---- */
struct sb_pb_model {
    sb_pb_scorer sc;     /* the LM, its vocabulary size and order, the weights, the table limit */
    uint32_t eos;
    sb_pb_vocab tgt_vocab;   /* the LM's words (their LM ids), then the phrase table's other target words */
    int phase;           /* 0 loading phrases, 1 loading reordering, 2 ready */
    sb_pb_reader rd;     /* the text tables' reader, the in-memory table its sink; its error is the model's */
    sb_pb_mem *mem;      /* the in-memory table the text tables are fed into (NULL once a binarized table is loaded) */
    sb_pb_table *pt;     /* the phrase table: mem's face, or the binarized table's */
};

/* what the searches read of the model */
const sb_lm *sb_pb_lm(const sb_pb_model *m);
const double *sb_pb_weights(const sb_pb_model *m);
uint32_t sb_pb_eos(const sb_pb_model *m);

#endif
