/* pb/bin_format.h - the binarized phrase table's file format, shared by its writer (pb/bin_write.h: smtbench tm
 * binarize) and its reader (pb/bin_read.h: the phrase table's binarized backend). A binarized table is what the
 * Moses2 paper's section 4.3-4.4 uses, Moses' Probing phrase table (Bogoychev 2014): built once from a Moses text
 * phrase table (+ its lexicalized reordering table), memory-mapped, source phrases found on demand through a probing
 * hash of their (source-vocabulary) word ids; the target side stored plain or compressed (LEB128 varint word ids; the
 * scores stay 32-bit floats so decoding is exact); the reordering scores stored inside each target entry
 * ("integrated", section 4.4) or in a separate probing table keyed by (source, target) queried per option
 * ("separate"); a list of the source phrases by training frequency (the table's source count) from which the reader
 * fills its static cache at load (section 4.3).
 *
 * File layout (little endian): a 256-byte header, then the source vocabulary (strings + probing hash), the target
 * vocabulary (strings in id order), the phrase records, the phrase hash (key, record offset), the cache list
 * (record offsets, most frequent source first), for "separate" the reordering records and their hash, and last a
 * provenance text (the source tables' names, sizes and fingerprints; the Python side checks them against the ini).
 * Records: [ns][src ids][ntgt] then per target [len][has_ro][2 pad bytes if plain][ids][tm 4 floats][ro 6 floats if
 * integrated and the pair has them], each source's record 4-aligned; separate reordering records: [ns][nt][pad 2]
 * [src ids][tgt ids][6 floats], plain u32 ids. Format version 2: the header holds a checksum of itself and of the
 * body. */
#ifndef SMTBENCH_PB_BIN_FORMAT_H
#define SMTBENCH_PB_BIN_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/common.h"
#include "util/probing.h"

/* CFFI-BEGIN */
/* where a binarized table keeps the reordering scores */
enum { SB_PB_BIN_RO_NONE = 0, SB_PB_BIN_RO_INTEGRATED = 1, SB_PB_BIN_RO_SEPARATE = 2 };
/* CFFI-END */

#define SB_PB_BIN_MAGIC "SBPTBIN1"   /* its 8 bytes open the file (no NUL) */
/* version 2: checksums of the header and of the body, and a provenance section (the source tables' identity) */
enum { SB_PB_BIN_VERSION = 2, SB_PB_BIN_HEADER_BYTES = 256 };

typedef struct {
    char magic[8];
    uint32_t version, compressed, ro_mode, max_len;
    uint32_t n_src_vocab, n_tgt_vocab;
    uint64_t n_src_phrases, n_pairs, n_ro;
    uint64_t src_slots, phr_slots, ro_slots;
    uint64_t off_src_strings, off_src_hash, off_tgt_strings, len_tgt_strings, off_records, off_phr_hash, off_cache,
        off_ro_records, off_ro_hash, file_size;
    uint64_t off_meta, len_meta;   /* provenance: UTF-8 text from the caller (sb_pb_binb_set_meta) */
    uint64_t body_sum;             /* checksum of bytes [SB_PB_BIN_HEADER_BYTES, file_size) */
    uint64_t header_sum;           /* checksum of the header bytes before this field */
} sb_pb_bin_header;
_Static_assert(sizeof(sb_pb_bin_header) <= SB_PB_BIN_HEADER_BYTES, "header too large");

typedef struct { uint64_t key, off; } sb_pb_bin_slot;            /* phrase and reordering hashes: key 0 = empty */
typedef struct { uint64_t key; uint32_t id, str; } sb_pb_bin_vslot;   /* source vocabulary */

/* A 64-bit checksum over 8-byte words in four interleaved lanes (word i goes to lane i % 4, so the multiplies of
 * the lanes overlap; a last partial word padded with zeros): every step is a bijection of its lane, so one changed
 * word always changes the result. Blocks of a multiple of 32 bytes chain (sum_block(b, sum_block(a, s)));
 * sum_final folds the lanes and the length. The body's seed is SB_PB_BIN_SUM_SEED, the header's that + 1. */
#define SB_PB_BIN_SUM_SEED 0x53425054424E3253ULL
typedef struct { uint64_t h[4]; } sb_pb_bin_sum;
sb_pb_bin_sum sb_pb_bin_sum_init(uint64_t seed);
sb_pb_bin_sum sb_pb_bin_sum_block(const uint8_t *p, size_t n, sb_pb_bin_sum s);
uint64_t sb_pb_bin_sum_final(sb_pb_bin_sum s, uint64_t n);
/* the checksum of the whole 256-byte header (padding included), its own field read as 0 */
uint64_t sb_pb_bin_header_sum(const uint8_t *raw);

/* the source vocabulary's hash of a word */
static inline uint64_t sb_pb_bin_hash_str(const char *s, size_t len) { return sb_str_hash(s, len) | 1; }
/* the hash of a source phrase a[0 .. n) (m = 0) or of a pair (a: source, b[0 .. m): target); never 0 */
static inline uint64_t sb_pb_bin_hash_ids(const uint32_t *a, int n, const uint32_t *b, int m) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n ^ ((uint64_t)m << 8);
    for (int i = 0; i < n; i++) h = sb_mix64(h ^ a[i]);
    for (int i = 0; i < m; i++) h = sb_mix64(h ^ ((uint64_t)b[i] << 1 | 1));
    return h | 1;
}

/* a word id at *p: 4 bytes plain, or a varint (compressed) */
static inline void sb_pb_bin_put_u32(uint8_t **p, uint32_t x, int compressed) {
    if (!compressed) { memcpy(*p, &x, 4); *p += 4; return; }
    while (x >= 0x80) { *(*p)++ = (uint8_t)(x | 0x80); x >>= 7; }
    *(*p)++ = (uint8_t)x;
}
/* a word id at *p, not reading at or past end: 0 if the bytes are not one (past the end, a varint longer than 5
 * bytes or above 2^32) */
static inline int sb_pb_bin_get_u32(const uint8_t **p, const uint8_t *end, int compressed, uint32_t *out) {
    const uint8_t *q = *p;
    if (!compressed) {
        if (end - q < 4) return 0;
        memcpy(out, q, 4);
        *p = q + 4;
        return 1;
    }
    uint32_t x = 0;
    for (int s = 0; s < 35; s += 7) {
        if (q >= end) return 0;
        uint8_t b = *q++;
        if (s == 28 && (b & 0x70)) return 0;
        x |= (uint32_t)(b & 0x7f) << s;
        if (!(b & 0x80)) { *out = x; *p = q; return 1; }
    }
    return 0;
}

#endif
