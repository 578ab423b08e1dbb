/* pb/bin_write.h - the binarizer (smtbench tm binarize): reads a Moses text phrase table (+ its lexicalized
 * reordering table) through the one text-table reader (pb/table_reader.h, this its sink) and writes the binarized
 * table pb/bin_format.h lays out; the reading side is pb/bin_read.h. The same input always gives the same bytes. */
#ifndef SMTBENCH_PB_BIN_WRITE_H
#define SMTBENCH_PB_BIN_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"
#include "pb/bin_format.h"

/* CFFI-BEGIN */
typedef struct sb_pb_binb sb_pb_binb;
int sb_pb_binb_new(sb_pb_binb **out);
void sb_pb_binb_free(sb_pb_binb *b);
/* whole lines of a Moses phrase table / reordering table, as sb_pb_feed_phrases / sb_pb_feed_reordering */
int sb_pb_binb_feed_phrases(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line);
int sb_pb_binb_feed_reordering(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line);
/* write the file (the caller renames it into place); ro_mode SB_PB_BIN_RO_* (NONE if no reordering was fed) */
int sb_pb_binb_write(sb_pb_binb *b, const char *path, int compressed, int ro_mode);
/* provenance text stored in the file (the source tables' identity; the Python side reads it back) */
int sb_pb_binb_set_meta(sb_pb_binb *b, const char *text, size_t len);
uint64_t sb_pb_binb_error_line(const sb_pb_binb *b);
const char *sb_pb_binb_error_message(const sb_pb_binb *b);
/* [0] phrase pairs, [1] source phrases, [2] reordering lines, [3] of them attached to a pair, [4] file bytes,
 * [5] longest source phrase */
void sb_pb_binb_counts(const sb_pb_binb *b, uint64_t *counts);
/* CFFI-END */

#endif
