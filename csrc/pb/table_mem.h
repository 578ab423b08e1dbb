/* pb/table_mem.h - the phrase table's in-memory backend (Moses2's PhraseTableMemory; its face: pb/table.h): source
 * phrases (ids of its own source vocabulary) found through one probing index, each with its options (best
 * stand-alone score first, cut by the table limit) and their target words (ids of the model's target vocabulary).
 * Filled either as the sink of the text tables' reader (pb/table_reader.h: phrase lines, then
 * sb_pb_mem_finish_phrases scores, sorts and cuts them, then reordering lines attach their scores to the kept
 * options) or phrase by phrase with options already made (sb_pb_mem_add: a binarized table's static cache). */
#ifndef SMTBENCH_PB_TABLE_MEM_H
#define SMTBENCH_PB_TABLE_MEM_H

#include <stdint.h>

#include "util/common.h"
#include "pb/options.h"
#include "pb/table.h"
#include "pb/table_reader.h"
#include "pb/vocab.h"

typedef struct sb_pb_mem sb_pb_mem;

int sb_pb_mem_new(sb_pb_mem **out);
/* its face (sb_pb_table_free frees the table) */
sb_pb_table *sb_pb_mem_table(sb_pb_mem *t);
/* the source vocabulary the reader interns phrase lines' source words into */
sb_pb_vocab *sb_pb_mem_src_vocab(sb_pb_mem *t);
/* the reader's handlers (rd->sink: the table): a phrase line's pair becomes an option (scored at
 * sb_pb_mem_finish_phrases), a reordering line's scores attach to every kept copy of its pair */
int sb_pb_mem_phrase_record(sb_pb_reader *rd, const sb_pb_record *rec);
int sb_pb_mem_reordering_record(sb_pb_reader *rd, const sb_pb_record *rec);
/* after the phrase lines: every option's stand-alone scores (sc), each phrase's options sorted and cut */
int sb_pb_mem_finish_phrases(sb_pb_mem *t, const sb_pb_scorer *sc);
/* phrase lines read */
uint64_t sb_pb_mem_lines(const sb_pb_mem *t);
/* 1 with hit = its options if ids[0 .. n) is a source phrase of the table, else 0 (hit->n = 0) */
int sb_pb_mem_find(const sb_pb_mem *t, const uint32_t *ids, int n, sb_pb_hit *hit);
/* the source phrase ids[0 .. n) with the options opt[0 .. count) (made, sorted and cut; the target words of
 * opt[k] at words + opt[k].tgt_off), its longest phrase unchanged: SB_OK or SB_ENOMEM */
int sb_pb_mem_add(sb_pb_mem *t, const uint32_t *ids, int n, const sb_pb_option *opt, int count, const uint32_t *words);

#endif
