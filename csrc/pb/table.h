/* pb/table.h - the phrase table's one face (Moses2's PhraseTable): what preparing a sentence (pb/lattice.c) asks of
 * a table, whichever backend holds it - the in-memory table the text tables are read into (pb/table_mem.h,
 * Moses2's Memory) or the memory-mapped binarized table (pb/bin_read.h, Moses2's ProbingPT). A backend embeds
 * sb_pb_table as its first member and points ops at its own functions; the callers see only the calls below.
 *
 * A lookup gives the options of one source phrase, sorted best stand-alone score first and cut by the table limit:
 * either the table's own (they live as long as the table, their target words in sb_pb_table_words) or decoded for
 * this sentence into the caller's sb_pb_found (their target words in its words). */
#ifndef SMTBENCH_PB_TABLE_H
#define SMTBENCH_PB_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/common.h"
#include "pb/options.h"

/* Per-sentence context of the lookups: the profile's current component (NULL: no profile) and the counters a
 * binarized table keeps (lookups, of them found in its static cache, separate reordering lookups). */
typedef struct {
    _Atomic int *phase;
    uint64_t lookups, cache_hits, ro_lookups;
} sb_pb_sent_ctx;

/* What a sentence's lookups gather (all zero to start; sb_pb_found_free): options a backend decoded for this
 * sentence, in growing arrays (an option's tgt_off indexes words), a backend's scratch, and the context (may be
 * NULL). */
typedef struct {
    sb_pb_option *opt; uint64_t n, cap;
    uint32_t *words; uint64_t nw, capw;
    sb_pb_rawopt *tmp; uint64_t captmp;
    sb_pb_sent_ctx *ctx;
} sb_pb_found;

/* One lookup's answer: n options (0: the phrase has none), the table's own at opt, or (opt NULL) the found ones at
 * found->opt + first (an index: the array may still move while the sentence is looked up). */
typedef struct {
    const sb_pb_option *opt;
    uint64_t first;
    int n;
} sb_pb_hit;

/* What a table holds, for sb_pb_counts: text lines read, source phrases and options in memory (a binarized table:
 * its static cache), of the options those with reordering scores, bytes held. */
typedef struct {
    uint64_t lines, phrases, options, ro_attached, bytes;
} sb_pb_table_stats;

typedef struct sb_pb_table sb_pb_table;
typedef struct {
    uint32_t (*src_word)(const sb_pb_table *t, const char *w, size_t len);
    int (*lookup)(const sb_pb_table *t, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit);
    const uint32_t *(*words)(const sb_pb_table *t);
    void (*stats)(const sb_pb_table *t, sb_pb_table_stats *st);
    void (*free)(sb_pb_table *t);
} sb_pb_table_ops;

struct sb_pb_table {
    const sb_pb_table_ops *ops;
    int max_len;             /* the longest source phrase: no longer span is looked up */
};

/* the source word id of w[0 .. len), or SB_PB_NO_WORD (no phrase of the table holds it) */
uint32_t sb_pb_table_src_word(const sb_pb_table *t, const char *w, size_t len);
/* the options of the source phrase ids[0 .. n) (1 <= n <= max_len): SB_OK, SB_ENOMEM, or SB_EFORMAT (a corrupt
 * binarized record) */
int sb_pb_table_lookup(const sb_pb_table *t, const uint32_t *ids, int n, sb_pb_found *found, sb_pb_hit *hit);
/* the target words of the table's own options (an option's tgt_off indexes them) */
const uint32_t *sb_pb_table_words(const sb_pb_table *t);
void sb_pb_table_counts(const sb_pb_table *t, sb_pb_table_stats *st);
void sb_pb_table_free(sb_pb_table *t);
/* frees the arrays of f and zeroes it */
void sb_pb_found_free(sb_pb_found *f);
/* room for `more` options and `more_words` target words in f: SB_OK or SB_ENOMEM */
int sb_pb_found_reserve(sb_pb_found *f, uint64_t more, uint64_t more_words);

#endif
