/* phrase_dict.h - a thread-safe string -> dense integer id dictionary (internal to phrase_score.c).
 *
 * 64 shards, each with its own mutex, an sb_index (probing.h) of local indices, 64-bit hashes and a chunked
 * arena of NUL-terminated strings (never moved, so sb_dict_str pointers stay valid). id = local*64 + shard.
 * Interning takes the shard lock; sb_dict_find / sb_dict_str take none (use them only while nobody inserts,
 * or on strings already interned).
 */
#ifndef SMTBENCH_PHRASE_DICT_H
#define SMTBENCH_PHRASE_DICT_H
#include "util/common.h"

typedef struct sb_dict sb_dict;
int sb_dict_create(sb_dict **out);
void sb_dict_free(sb_dict *d);
int sb_dict_intern(sb_dict *d, const char *s, size_t len, uint32_t *id);
int sb_dict_find(const sb_dict *d, const char *s, size_t len, uint32_t *id); /* 1 found, 0 not */
const char *sb_dict_str(const sb_dict *d, uint32_t id);
uint64_t sb_dict_size(const sb_dict *d);
uint64_t sb_dict_max_id(const sb_dict *d);   /* every id is < this */
int sb_dict_has_id(const sb_dict *d, uint32_t id);
uint64_t sb_dict_bytes(const sb_dict *d);
#endif
