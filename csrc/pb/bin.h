/* pb/bin.h - a binarized phrase table, as the Moses2 paper's section 4.3-4.4 uses Moses' Probing phrase table
 * (Bogoychev 2014): built once from a Moses text phrase table (+ its lexicalized reordering table), memory-mapped,
 * source phrases found on demand through a probing hash of their (source-vocabulary) word ids; the target side
 * stored plain or compressed (LEB128 varint word ids; the scores stay 32-bit floats so decoding is exact); the
 * reordering scores stored inside each target entry ("integrated", section 4.4) or in a separate probing table
 * keyed by (source, target) queried per option ("separate"); a list of the source phrases by training
 * frequency (the table's source count) from which the model fills its static cache at load (section 4.3).
 *
 * File layout (little endian): a 256-byte header, then the source vocabulary (strings + probing hash), the target
 * vocabulary (strings in id order), the phrase records, the phrase hash (key, record offset), the cache list
 * (record offsets, most frequent source first), for "separate" the reordering records and their hash, and last a
 * provenance text (the source tables' names, sizes and fingerprints; the Python side checks them against the ini).
 * Format version 2: the header holds a checksum of itself and of the body. Loading maps the file, checks the header
 * (every count and offset against the file and the other sections, without overflow), verifies both checksums in one
 * sequential pass, then reads only the target vocabulary and the records the cache asks for; every later read is
 * bounded by its section (varints <= 5 bytes, word ids < the vocabulary, probes <= the slot count), so even a
 * crafted file with valid checksums gives SB_EFORMAT, never a read outside the map or a hang.
 * The model side (scores in isolation, table limit, the cache) is in pb/model.c (sb_pb_load_binary) and pb/options.c. */
#ifndef SMTBENCH_PB_BIN_H
#define SMTBENCH_PB_BIN_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_pb_binb sb_pb_binb;
enum { SB_PB_BIN_RO_NONE = 0, SB_PB_BIN_RO_INTEGRATED = 1, SB_PB_BIN_RO_SEPARATE = 2 };
int sb_pb_binb_new(sb_pb_binb **out);
void sb_pb_binb_free(sb_pb_binb *b);
/* whole lines of a Moses phrase table / reordering table, as sb_pb_feed_phrases / sb_pb_feed_reordering */
int sb_pb_binb_feed_phrases(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line);
int sb_pb_binb_feed_reordering(sb_pb_binb *b, const char *buf, size_t len, uint64_t first_line);
/* write the file (the caller renames it into place); ro_mode SB_PB_BIN_RO_* (NONE if no reordering was fed) */
int sb_pb_binb_write(sb_pb_binb *b, const char *path, int compressed, int ro_mode);
/* provenance text stored in the file (the source tables' identity; read back with sb_pb_bin_meta) */
int sb_pb_binb_set_meta(sb_pb_binb *b, const char *text, size_t len);
uint64_t sb_pb_binb_error_line(const sb_pb_binb *b);
const char *sb_pb_binb_error_message(const sb_pb_binb *b);
/* [0] phrase pairs, [1] source phrases, [2] reordering lines, [3] of them attached to a pair, [4] file bytes,
 * [5] longest source phrase */
void sb_pb_binb_counts(const sb_pb_binb *b, uint64_t *counts);
/* CFFI-END */

/* ---- reading (pb/model.c, pb/options.c, pb/lattice.c) ---- */
typedef struct sb_pb_bin sb_pb_bin;
typedef struct {
    int len;
    uint32_t ids[256];       /* the file's target word ids */
    float tm[4];
    int has_ro;
    float ro[6];
} sb_pb_bin_target;

/* SB_EIO, or SB_EFORMAT with a one-line reason in err: the header's counts and offsets are checked against the file
 * and each other, the header's and the body's checksums verified (one pass over the file) and the vocabularies'
 * string sections checked; the readers below still bound every read by its section */
int sb_pb_bin_open(const char *path, sb_pb_bin **out, char *err, size_t errlen);
void sb_pb_bin_close(sb_pb_bin *b);
int sb_pb_bin_max_len(const sb_pb_bin *b);
int sb_pb_bin_ro_mode(const sb_pb_bin *b);
int sb_pb_bin_compressed(const sb_pb_bin *b);
uint64_t sb_pb_bin_size(const sb_pb_bin *b);
const char *sb_pb_bin_meta(const sb_pb_bin *b, uint64_t *len);
/* source word id, or UINT32_MAX */
uint32_t sb_pb_bin_src_word(const sb_pb_bin *b, const char *w, size_t len);
/* the record of a source phrase: *nt its number of targets (0: not in the table), *p its target list; SB_EFORMAT if
 * the record is corrupt */
int sb_pb_bin_phrase(const sb_pb_bin *b, const uint32_t *ids, int n, const uint8_t **p, uint32_t *nt);
/* decode the next target of a list, advancing *p; SB_EFORMAT if it is corrupt */
int sb_pb_bin_target_next(const sb_pb_bin *b, const uint8_t **p, sb_pb_bin_target *t);
/* the separate reordering table: 1 and ro filled if (source, target) is in it, 0 if not, -1 corrupt */
int sb_pb_bin_reordering(const sb_pb_bin *b, const uint32_t *src, int ns, const uint32_t *tgt, int nt, float *ro);
/* target vocabulary: count and the strings, NUL-separated, in id order */
uint32_t sb_pb_bin_tgt_vocab(const sb_pb_bin *b, const char **strings);
/* the cache list: i-th most frequent source phrase -> its word ids (n) and target list */
uint64_t sb_pb_bin_ncache(const sb_pb_bin *b);
/* drop the mapping's resident pages (they stay in the page cache; a later lookup faults its page back in): after
 * the cache fill has read its records, which the decoder never reads again */
void sb_pb_bin_release(const sb_pb_bin *b);
int sb_pb_bin_cache_entry(const sb_pb_bin *b, uint64_t i, uint32_t *ids, int *n, const uint8_t **p, uint32_t *nt);

#endif
