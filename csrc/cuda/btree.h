/* cuda/btree.h - gLM B-tree trie LM queries on an NVIDIA GPU (Bogoychev & Lopez 2016, sections 3.1.1, 4.2).
 *
 * The byte array built by csrc/lm/btree.c (see lm/btree.h for the layout) is copied to the device once;
 * each query is evaluated by one warp: at every B-tree node the warp reads the node's K-1 keys with
 * one coalesced load into shared memory, compares them all at once (one lane per key, __ballot_sync),
 * and follows the child or reads the value. K and the order are template parameters; only the
 * combinations listed by sb_cuda_btree_node_sizes / sb_cuda_btree_orders are compiled.
 * Built by `smtbench build-cuda` into libsmtbench_cuda.so and loaded with cffi's dlopen
 * (pylib/smtbench/cuda.py). Every function returns SB_OK (0) or a negative SB_E* code (util/common.h);
 * SB_ECUDA means a CUDA runtime call failed: sb_cuda_last_error names it.
 */
#ifndef SMTBENCH_CUDA_BTREE_H
#define SMTBENCH_CUDA_BTREE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CFFI-BEGIN */
typedef struct sb_cuda_btree sb_cuda_btree;
enum { SB_ECUDA = -20 };
/* Number of CUDA devices (0 with a reason in buf when there is none or no driver). */
int sb_cuda_device_count(int *count, char *buf, int cap);
/* Name of device 0 and its compute capability. */
int sb_cuda_device_name(char *buf, int cap, int *major, int *minor);
/* The compiled template values: node sizes K and orders N (any pair of them works). */
int sb_cuda_btree_node_sizes(int *out, int cap, int *n);
int sb_cuda_btree_orders(int *out, int cap, int *n);
/* Copy the model's byte array to device 0. SB_EINVAL: K or order not compiled, empty model.
 * On SB_ECUDA the CUDA error is written to err (cap bytes). */
int sb_cuda_btree_create(const uint8_t *data, uint64_t bytes, int order, int K, uint32_t vocab,
                         sb_cuda_btree **out, char *err, int cap);
void sb_cuda_btree_free(sb_cuda_btree *m);
/* Batch query (same rows and answers as sb_btree_query). kernel_ms: the kernel alone (CUDA events);
 * total_ms: queries host->device + kernel + answers device->host. out_len may be NULL. */
int sb_cuda_btree_query(sb_cuda_btree *m, const uint32_t *queries, uint64_t n, float *out_prob,
                        uint8_t *out_len, float *kernel_ms, float *total_ms);
/* The CUDA error behind this handle's last SB_ECUDA, copied into buf. */
int sb_cuda_last_error(const sb_cuda_btree *m, char *buf, int cap);
/* CFFI-END */

#ifdef __cplusplus
}
#endif
#endif
