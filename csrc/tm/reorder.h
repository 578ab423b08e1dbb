/* reorder.h - the lexicalized reordering table (wbe-msd-bidirectional-fe) from orientation lines, as
 * pylib/smtbench/tm/reordering.py (the reference path) and Moses' `lexical-reordering-score extract.o 0.5 ...
 * --model "wbe msd wbe-msd-bidirectional-fe"` write it.
 *
 * Input: extract.o lines `F ||| E ||| prev next` (prev, next each mono, swap or other), read from an fd to EOF by
 * the project's line rule exactly as ioutil.open_text reads them: blocks of whole lines from 1 MiB reads, a BOM at the
 * file's start dropped, a CRLF's '\r' removed; a block holding a control byte (a lone '\r', a NUL, ... : common.h's
 * sb_line_control) is refused at that byte's line before any other fault of the block, then invalid UTF-8 at its
 * line and column, then the first malformed line. A line splits at " ||| " as Python's str.split does (leftmost,
 * non-overlapping): exactly three parts, else "expected 'F ||| E ||| prev next'"; the third part's words (space and
 * TAB separated) must be two of mono/swap/other, else "orientations must be two of mono/swap/other".
 *
 * The table's order: its lines' bytes (LC_ALL=C sort, the reference's sorted(key=pair_key)), which is the order of
 * the keys each followed by " ||| " -- so "a ||| b c" comes before "a ||| b" -- and the order in which Moses'
 * lexical-reordering-score writes its table from its sorted input.
 * Counting: one record per distinct pair in one growing arena -- six 32-bit counts, then the bytes of its key
 * "F ||| E" (the line up to its second separator: the split is leftmost, so distinct pairs have distinct keys). While
 * the lines come in the table's order (a sorted extract.o, as train-model.perl hands it to lexical-reordering-score),
 * a line's key is compared with the last record's only (the same: counted there; later: a new record) and the
 * records are the table: no index, no hash, no sort. From the first key out of order on (and for unsorted input from
 * its second line), an sb_index (probing.h) over 16-byte items (sb_bytes_hash of the key, the record's offset) finds
 * the records. Memory: ~30 bytes and the key a record, 16 an item, 4-8 bytes of index a slot (load <= 1/2): ~0.37 GB
 * for the 4.5 M-line corpus (3.1 M pairs), where the Python dict of tuples of str and lists took 1.6 GB. The sort
 * and the writer read only the records (one random fetch a pair).
 * Writing: unless the records came in order, the entries sorted in the table's order: an MSD radix sort on 8-byte
 * big-endian digits of the key and its " ||| " (an LSD pass per byte within a level, ties recursed to the next 8
 * bytes), then each line "F ||| E ||| p0 p1 p2 n0 n1 n2\n" with p_i = (c_i + s) / (total_prev + 3 s) printed as Python's
 * format(v, '.6g') prints it (C's %.6g, "nan" for a NaN whatever its sign), for small counts from a table filled
 * once per write. The sorted table is cut into `parts` files of about equal entry counts, which concatenated in order
 * are the table (sb_reorder_write: a plain table, one part); or formatted in memory a range of lines at a time
 * (sb_reorder_format), which a .gz table's writer deflates as it goes, its parts on as many threads, with no file
 * between (writing the plain parts and compressing them from the files cost ~0.2 s more on the full corpus). */
#ifndef SMTBENCH_REORDER_H
#define SMTBENCH_REORDER_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_reorder sb_reorder;
enum { SB_REORDER_ERR_LINE = 1, SB_REORDER_ERR_FORMAT = 2 };

typedef struct {
    uint64_t lines;          /* orientation lines counted */
    uint64_t pairs;          /* distinct (F, E) pairs */
    uint64_t arena_bytes;    /* bytes of the pairs' records (counts and key) */
    uint64_t table_bytes;    /* memory held by the table: entries, key arena, index (allocated capacity) */
    uint64_t sort_bytes;     /* the sort's two arrays (while writing; 0 when the records came in order) */
    uint64_t out_bytes;      /* bytes of table written */
    uint64_t ns_count, ns_sort, ns_write;
    uint64_t streamed;       /* 1: every line came in the table's order (sorted input): counted without the index,
                              * written without a sort */
} sb_reorder_stats;

int sb_reorder_create(sb_reorder **out);
void sb_reorder_free(sb_reorder *r);
/* Count the orientation lines of fd (read to EOF, not closed); may be called for several files in turn. On
 * SB_EFORMAT: *err_line (1-based) and *err_kind (SB_REORDER_ERR_LINE: the line rule or UTF-8, worded as
 * ioutil.open_text words it; SB_REORDER_ERR_FORMAT: a malformed line, worded as tm/reordering.py words it), err the
 * words. The counts of a failed call are not to be written. */
int sb_reorder_count(sb_reorder *r, int fd, uint64_t *err_line, int *err_kind, char *err, size_t errlen);
/* Count the orientation lines of text[0 .. len), whole lines (the last may lack its '\n'), as a block of a file is
 * counted (no BOM is special here): the extractor's own lines, handed over without a file between (tm extract
 * --reordering-table). *line: the number of the block's first line, advanced past it. Errors as sb_reorder_count. */
int sb_reorder_count_text(sb_reorder *r, const char *text, size_t len, uint64_t *line, uint64_t *err_line,
                          int *err_kind, char *err, size_t errlen);
/* Sort the pairs and write the table, smoothing s (>= 0, not NaN), into the files paths[0 .. parts) (created or
 * truncated): about n / parts entries each, in order. */
int sb_reorder_write(sb_reorder *r, double smoothing, const char *const *paths, int parts);
/* The table in memory, for a caller that compresses it (no file between): sb_reorder_sort once after counting (a
 * no-op for records that came in order), then sb_reorder_format for ranges [lo, hi) of its lines (0 <= lo <= hi <=
 * pairs; several may be formatted at once, on other threads): *text, *len their bytes, freed with
 * sb_reorder_text_free. The lines of part p of sb_reorder_write's k parts: [pairs * p / k, pairs * (p + 1) / k). */
int sb_reorder_sort(sb_reorder *r);
int sb_reorder_format(const sb_reorder *r, double smoothing, size_t lo, size_t hi, char **text, size_t *len);
void sb_reorder_text_free(char *text);
void sb_reorder_get_stats(const sb_reorder *r, sb_reorder_stats *st);
/* CFFI-END */

#endif
