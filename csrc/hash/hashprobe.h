/* hashprobe.h - a KenLM-style linear-probing hash table and its prefetch queue
 * (Mokry 2016, section 3.1, Algorithm 3.2).
 *
 * Keys are 64-bit, key 0 is the empty sentinel; keys are expected to be hashes already, as in KenLM's probing
 * tables. The ideal bucket of a key is key & (buckets-1) (SB_HASH_POW2) or key % buckets (SB_HASH_MOD, KenLM's
 * default). The table is probing.h's, in one of four memory layouts (the bytes per bucket are 16 except KEYS):
 *   SB_HASH_KV       16-byte {key, value} entries, probing from the ideal bucket (Mokry's table; paper-faithful)
 *   SB_HASH_KEYS     8-byte keys only, probing from the ideal bucket: the protocol of KenLM's
 *                    util/probing_hash_table_benchmark_main.cc (no values; a hit's value is recomputed from the key)
 *   SB_HASH_KV_LINE  16-byte {key, value} entries, probing from the first bucket of the ideal bucket's 64-byte line
 *                    (4 entries): a lookup reads one line unless that line's run continues past it
 *   SB_HASH_SPLIT    8-byte keys in one array, values in another, probing from the first key of the ideal key line
 *                    (8 keys); the value line is read only on a hit (the queue prefetches the key line only)
 *   SB_HASH_SPLIT_PF SB_HASH_SPLIT whose queue also prefetches the value line, speculatively (wasted on a miss)
 *   SB_HASH_SPLIT_OVF    SB_HASH_SPLIT with a per-line overflow mark ("an insertion probed past this line"): a lookup
 *                        stops at its key line when that holds an empty slot or is full with its mark clear,
 *                        so most misses read one line (instead of running on into the next)
 *   SB_HASH_SPLIT_OVF_PF SB_HASH_SPLIT_OVF whose queue also prefetches the value line (speculatively)
 *   SB_HASH_KV_LINE_OVF  SB_HASH_KV_LINE (16-byte entries, 4 a line) with the same overflow mark; its queue
 *                        prefetches the line and the next, as SB_HASH_KV's does
 * The mark costs no memory and no extra line: it is the order of the first two keys of a line. It matters only
 * for a full line (an insertion probes past a line only when every slot of it is taken, and nothing is ever
 * deleted), whose keys are distinct, so key[0] > key[1] means "marked" and key[0] < key[1] "clear" (the classic
 * implicit-data-structure trick of encoding a bit in the order of two distinct keys, Munro & Suwanda 1980); a
 * lookup compares every key of the line anyway, so their order is free. Keys stay full 64-bit (no bit stolen,
 * no slot reserved: same buckets, same load factor, same checksum as every other layout). These layouts need
 * a bucket count that is a multiple of the line's slots (8 keys, or 4 entries).
 */
#ifndef SMTBENCH_HASHPROBE_H
#define SMTBENCH_HASHPROBE_H
#include "util/common.h"

/* CFFI-BEGIN */
typedef struct sb_hash sb_hash;
enum { SB_HASH_POW2 = 0, SB_HASH_MOD = 1 };
/* SB_LOOKUP_LINE is no hash lookup: one 8-byte read of a random bucket per query, independent of the
 * others - the rate at which this machine serves random cache lines (its memory-level parallelism
 * floor), for comparison with lookups that touch one or two lines each. */
enum { SB_LOOKUP_HIT = 0, SB_LOOKUP_MISS = 1, SB_LOOKUP_LINE = 2 };
enum { SB_HASH_MAX_QUEUE = 64 };

enum { SB_HASH_KV = 0, SB_HASH_KEYS = 1, SB_HASH_KV_LINE = 2, SB_HASH_SPLIT = 3, SB_HASH_SPLIT_PF = 4,
       SB_HASH_SPLIT_OVF = 5, SB_HASH_SPLIT_OVF_PF = 6, SB_HASH_KV_LINE_OVF = 7 };

/* Size a table: how many buckets of the layout fit in table_bytes, and how many entries at load_factor (the
 * overflow-mark layouts: a whole number of lines). */
int sb_hash_plan(uint64_t table_bytes, double load_factor, int sizing, int layout,
                 uint64_t *buckets, uint64_t *max_entries);
/* huge: 1 = ask for transparent huge pages (madvise), 0 = plain pages */
int sb_hash_create(uint64_t buckets, int sizing, int layout, int huge, sb_hash **out);
void sb_hash_free(sb_hash *t);
uint64_t sb_hash_buckets(const sb_hash *t);
uint64_t sb_hash_entries(const sb_hash *t);
uint64_t sb_hash_bytes(const sb_hash *t);
int sb_hash_uses_huge_pages(const sb_hash *t);

/* Insert or overwrite. SB_EINVAL for key 0, SB_EFULL when the table would become 100% full. */
int sb_hash_insert(sb_hash *t, const uint64_t *keys, const uint64_t *values, size_t n);
/* Batch lookup: queue_size 0 = plain lookups, 1..64 = through a prefetch queue of that size.
 * values[i] / found[i] receive the result for keys[i] (value 0 when absent). */
int sb_hash_find_batch(const sb_hash *t, const uint64_t *keys, size_t n, int queue_size,
                       uint64_t *values, uint8_t *found);

/* Fill with n_entries pseudo-random keys of the seeded stream (value = mix(key)), in threads. */
int sb_hash_fill_random(sb_hash *t, uint64_t n_entries, uint64_t seed, int threads);

typedef struct {
    uint64_t fill_seed;      /* seed given to sb_hash_fill_random */
    uint64_t filled;         /* n_entries given to sb_hash_fill_random */
    uint64_t query_seed;     /* seed of the query stream */
    uint64_t lookups;        /* total lookups, split evenly over the threads */
    uint64_t burnin;         /* extra untimed lookups per thread before the clock starts */
    int mode;                /* SB_LOOKUP_HIT or SB_LOOKUP_MISS */
    int queue_size;          /* 0 = plain */
    int threads;
    int pin;                 /* pin thread i to cpu i */
} sb_hash_bench_args;

typedef struct {
    uint64_t wall_ns;        /* first thread start to last thread end */
    uint64_t max_thread_ns;  /* slowest thread's own timed loop */
    uint64_t cpu_ns;         /* CPU time of the timed loops (CLOCK_THREAD_CPUTIME_ID of each thread, summed): on one
                              * thread the clock KenLM's benchmark reads (its CPUTime(), its one-thread process's
                              * CLOCK_PROCESS_CPUTIME_ID) over the same region */
    uint64_t checksum;       /* wrapping sum over every query of (value if found, else the key): equal for every
                              * layout, queue size and thread count */
    uint64_t found;          /* queries that found their key */
} sb_hash_bench_result;

int sb_hash_bench(const sb_hash *t, const sb_hash_bench_args *args, sb_hash_bench_result *res);

/* Untimed: mean buckets probed and mean distinct 64-byte lines touched per query of the stream (the first
 * min(lookups, 1M) queries; hit or miss mode; the split layouts' value line counts on a hit; the
 * overflow-mark layouts compare whole lines: their probes count the slots up to where the lookup ended). */
int sb_hash_probe_stats(const sb_hash *t, const sb_hash_bench_args *args, double *mean_probes,
                        double *mean_lines);
/* CFFI-END */

#endif
