/* pb/bin_read.h - the phrase table's binarized backend (Moses2's ProbingPT; its face: pb/table.h), over a file
 * pb/bin_write.h wrote (the layout: pb/bin_format.h). Opening maps the file, checks the header (every count and
 * offset against the file and the other sections, without overflow), verifies both checksums in one sequential pass,
 * then reads only the target vocabulary and the records the static cache asks for (the Moses2 paper, 4.3: the most
 * frequent source phrases, their options made at load and kept in an in-memory table, pb/table_mem.h). A lookup that
 * misses the cache finds the phrase's record through the file's probing hash and makes its options for the sentence
 * (decoded, scored, sorted, cut by the table limit; with "separate" reordering, one reordering lookup per option).
 * Every read is bounded by its section (varints <= 5 bytes, word ids < the vocabulary, probes <= the slot count), so
 * even a crafted file with valid checksums gives SB_EFORMAT, never a read outside the map or a hang. */
#ifndef SMTBENCH_PB_BIN_READ_H
#define SMTBENCH_PB_BIN_READ_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"
#include "pb/options.h"
#include "pb/table.h"
#include "pb/vocab.h"

/* The binarized table at path as a phrase table (*out; sb_pb_table_free frees it): the file's target words
 * interned into tgt (the model's target vocabulary, its LM words first), options scored with sc (the model's: the
 * table keeps pointing to it), the `cache` most frequent source phrases made at load. SB_EIO, SB_ENOMEM, or
 * SB_EFORMAT with a one-line reason in err. */
int sb_pb_bin_open(const char *path, const sb_pb_scorer *sc, sb_pb_vocab *tgt, uint64_t cache, sb_pb_table **out,
                   char *err, size_t errlen);

#endif
