/* pb/table_reader.h - the one reader of Moses' text tables, feeding a record sink.
 *
 * Phrase table lines "src ||| tgt ||| p1 p2 p3 p4 [||| alignment [||| counts ...]]" and lexicalized reordering
 * table lines "src ||| tgt ||| 6 scores" are checked here (a NUL byte, invalid UTF-8, missing fields, a phrase
 * too long or empty, a score count or a score that is not a probability: SB_EFORMAT with the line number and a
 * one-line reason), their words turned into ids of the reader's vocabularies and their scores into natural logs
 * floored at -100 (Moses' FloorScore); each good line is handed to the sink as a record. Two sinks implement it:
 * the in-memory phrase table (table_mem.c: options in memory) and the binarizer (bin_write.c: the file's records),
 * so both read a table the same way, with the same messages. */
#ifndef SMTBENCH_PB_TABLE_READER_H
#define SMTBENCH_PB_TABLE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"
#include "pb/vocab.h"

/* CFFI-BEGIN */
enum {
    SB_PB_MAX_PHRASE = 20,  /* longest source phrase (Moses' default maximum phrase length) */
    SB_PB_READER_MAX_TARGET = 255  /* longest target phrase */
};
/* CFFI-END */

typedef struct {
    const uint32_t *src; int ns;   /* source word ids (1 .. SB_PB_MAX_PHRASE of them) */
    const uint32_t *tgt; int nt;   /* target word ids (1 .. SB_PB_READER_MAX_TARGET) */
    const float *scores;           /* 4 (phrase line) or 6 (reordering line): ln, floored at -100 */
    uint64_t src_count;            /* phrase line, with want_counts: the counts field's source count (0: none) */
    uint64_t line;
} sb_pb_record;

typedef struct sb_pb_reader sb_pb_reader;
/* a sink's handler: SB_OK, an error code, or sb_pb_reader_fail's SB_EFORMAT */
typedef int (*sb_pb_record_fn)(sb_pb_reader *rd, const sb_pb_record *r);
struct sb_pb_reader {
    sb_pb_vocab *src, *tgt;          /* phrase lines intern their words; a reordering line with a word not in
                                      * them (or a source phrase too long) is skipped */
    sb_pb_record_fn phrase, reordering;
    void *sink;                      /* the handlers' own state */
    int want_counts;                 /* parse the phrase lines' counts field (src_count) */
    uint64_t ro_lines;               /* well-formed reordering lines read */
    uint64_t err_line;               /* of the last SB_EFORMAT (0: not a line's) */
    char err[512];
};

/* whole lines (any chunking; '\r\n' endings; blank lines skipped), the first numbered first_line */
int sb_pb_read_phrases(sb_pb_reader *rd, const char *buf, size_t len, uint64_t first_line);
int sb_pb_read_reordering(sb_pb_reader *rd, const char *buf, size_t len, uint64_t first_line);
/* set the error (line 0: not a line's; fmt printf-style) and return SB_EFORMAT */
int sb_pb_reader_fail(sb_pb_reader *rd, uint64_t line, const char *fmt, ...);

#endif
