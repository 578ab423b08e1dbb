// cuda/btree.cu - see btree.h. One warp per query; K and the order are template parameters.
// The byte layout is the one written by csrc/lm/btree.c (documented in csrc/lm/btree.h).
#include "btree.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Error codes of csrc/util/common.h (kept in sync by tests/test_cuda.py).
constexpr int SB_OK = 0, SB_EINVAL = -1, SB_ENOMEM = -2;
constexpr uint32_t NONE = 0xFFFFFFFFu;
constexpr uint32_t ROOT_ENTRY = 12;  // float prob, float backoff, uint32 child
constexpr int WARPS_PER_BLOCK = 4;
constexpr int MAX_KEYS = 64;         // shared-memory keys per warp (K-1 <= 63)

// The compiled template values. Keep in sync with $defs/glm_btree in workflow/schemas/config.schema.yaml.
#define SB_CUDA_NODE_SIZES(X, N) X(5, N) X(7, N) X(15, N) X(23, N) X(31, N) X(33, N) X(47, N) X(59, N)
#define SB_CUDA_ORDERS(Y) Y(2) Y(3) Y(4) Y(5) Y(6)
constexpr int kNodeSizes[] = {5, 7, 15, 23, 31, 33, 47, 59};
constexpr int kOrders[] = {2, 3, 4, 5, 6};

__device__ __forceinline__ uint32_t ld32(const uint8_t *base, uint64_t off) {
    return __ldg(reinterpret_cast<const uint32_t *>(base + off));
}
__device__ __forceinline__ float ldf(const uint8_t *base, uint64_t off) {
    return __int_as_float(static_cast<int>(ld32(base, off)));
}

__host__ __device__ constexpr uint64_t child_count(uint64_t c, uint32_t K, uint32_t j) {
    return c < 2ull * K ? (j == K - 1 ? c - (K - 1) : 0)
                        : (c - (K - 1)) / K + ((j < (c - (K - 1)) % K) ? 1 : 0);
}

// Search the B-tree of one trie node (header at `node`) for `key` with the whole warp.
// Found: *val = the value's offset, *at = the B-tree node holding it (child offsets are relative to it).
// VS = value bytes (12, or 4 at the top order).
template <int K, int VS>
__device__ __forceinline__ bool warp_find(const uint8_t *base, uint64_t node, uint32_t key, uint32_t *keys,
                                          uint64_t *val, uint64_t *at) {
    const uint32_t lane = threadIdx.x & 31;
    uint64_t count = ld32(base, node);
    node += 4;
    for (;;) {
        const uint32_t nk = count < K ? static_cast<uint32_t>(count) : K - 1;
        // coalesced read of the node's keys into shared memory
        for (uint32_t i = lane; i < nk; i += 32) keys[i] = ld32(base, node + 4ull * i);
        __syncwarp();
        // one parallel compare step: how many keys are < key, and is one equal
        uint32_t less = 0;
        bool eq = false;
#pragma unroll
        for (uint32_t i0 = 0; i0 < K - 1; i0 += 32) {
            const uint32_t i = i0 + lane;
            const bool valid = i < nk;
            const uint32_t k = valid ? keys[i] : NONE;
            less += __popc(__ballot_sync(0xFFFFFFFFu, valid && k < key));
            eq = __any_sync(0xFFFFFFFFu, valid && k == key) || eq;
        }
        __syncwarp();
        const bool internal = count >= K;
        if (eq) {
            *at = node;
            *val = node + 4ull * nk + (internal ? 4ull * K : 0) + static_cast<uint64_t>(VS) * less;
            return true;
        }
        if (!internal) return false;
        const uint32_t rel = ld32(base, node + 4ull * nk + 4ull * less);
        if (!rel) return false;
        count = child_count(count, K, less);
        node += 4ull * rel;
    }
}

template <int K, int N>
__global__ void __launch_bounds__(32 * WARPS_PER_BLOCK)
query_kernel(const uint8_t *__restrict__ base, const uint32_t *__restrict__ queries, uint64_t n,
             float *__restrict__ out_prob, uint8_t *__restrict__ out_len) {
    __shared__ uint32_t skeys[WARPS_PER_BLOCK][MAX_KEYS];
    const int warp = threadIdx.x >> 5;
    uint32_t *keys = skeys[warp];
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * WARPS_PER_BLOCK;
    for (uint64_t qi = static_cast<uint64_t>(blockIdx.x) * WARPS_PER_BLOCK + warp; qi < n; qi += stride) {
        uint32_t q[N];
#pragma unroll
        for (int j = 0; j < N; j++) q[j] = __ldg(queries + qi * N + j);
        int m = 0;
#pragma unroll
        for (int j = 1; j < N; j++)
            if (m == j - 1 && q[j] != NONE) m = j;
        // longest match (Eq. 2): the unigram from the root array, then the reversed context in the trie
        uint64_t e = static_cast<uint64_t>(q[0]) * ROOT_ENTRY;
        float prob = ldf(base, e);
        int len = 1;
        uint64_t child = 4ull * ld32(base, e + 8);  // relative to the root at offset 0
#pragma unroll
        for (int d = 1; d < N; d++) {
            if (d > m || !child) break;
            uint64_t val, at;
            const bool found = (d + 1 < N) ? warp_find<K, 12>(base, child, q[d], keys, &val, &at)
                                           : warp_find<K, 4>(base, child, q[d], keys, &val, &at);
            if (!found) break;
            prob = ldf(base, val);
            len = d + 1;
            if (d + 1 < N) {
                const uint32_t rel = ld32(base, val + 8);
                child = rel ? at + 4ull * rel : 0;
            }
        }
        // back-offs of the contexts longer than the match: back to the root once, walk c1, c2, ...
        float bo = 0.0f;
        if (len < m + 1) {
            e = static_cast<uint64_t>(q[1]) * ROOT_ENTRY;
            if (len <= 1) bo += ldf(base, e + 4);
            child = 4ull * ld32(base, e + 8);
#pragma unroll
            for (int d = 2; d < N; d++) {
                if (d > m || !child) break;
                uint64_t val, at;
                if (!warp_find<K, 12>(base, child, q[d], keys, &val, &at)) break;
                if (d >= len) bo += ldf(base, val + 4);
                const uint32_t rel = ld32(base, val + 8);
                child = rel ? at + 4ull * rel : 0;
            }
        }
        if ((threadIdx.x & 31) == 0) {
            out_prob[qi] = prob + bo;
            if (out_len) out_len[qi] = static_cast<uint8_t>(len);
        }
    }
}

typedef void (*kernel_fn)(const uint8_t *, const uint32_t *, uint64_t, float *, uint8_t *);

#define SB_KENTRY(KK, NN) {KK, NN, &query_kernel<KK, NN>},
#define SB_KROW(NN) SB_CUDA_NODE_SIZES(SB_KENTRY, NN)
struct kernel_entry {
    int K, N;
    kernel_fn fn;
};
const kernel_entry kKernels[] = {SB_CUDA_ORDERS(SB_KROW)};

kernel_fn find_kernel(int K, int N) {
    for (const auto &k : kKernels)
        if (k.K == K && k.N == N) return k.fn;
    return nullptr;
}

void copy_msg(char *buf, int cap, const char *msg) {
    if (buf && cap > 0) std::snprintf(buf, static_cast<size_t>(cap), "%s", msg);
}

}  // namespace

struct sb_cuda_btree {
    uint8_t *d_model;
    uint64_t bytes;
    int order, K;
    uint32_t vocab;
    kernel_fn fn;
    uint32_t *d_queries;
    float *d_prob;
    uint8_t *d_len;
    uint64_t capacity;  // queries the device buffers hold
    cudaEvent_t ev[4];
    cudaError_t last;
};

static int fail(sb_cuda_btree *m, cudaError_t err) {
    m->last = err;
    return SB_ECUDA;
}

extern "C" int sb_cuda_device_count(int *count, char *buf, int cap) {
    if (!count) return SB_EINVAL;
    *count = 0;
    cudaError_t err = cudaGetDeviceCount(count);
    if (err != cudaSuccess) {
        *count = 0;
        copy_msg(buf, cap, cudaGetErrorString(err));
        cudaGetLastError();
        return SB_OK;
    }
    if (*count == 0) copy_msg(buf, cap, "the CUDA runtime lists no device");
    return SB_OK;
}

extern "C" int sb_cuda_device_name(char *buf, int cap, int *major, int *minor) {
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) {
        copy_msg(buf, cap, cudaGetErrorString(err));
        return SB_ECUDA;
    }
    copy_msg(buf, cap, prop.name);
    if (major) *major = prop.major;
    if (minor) *minor = prop.minor;
    return SB_OK;
}

extern "C" int sb_cuda_btree_node_sizes(int *out, int cap, int *n) {
    const int total = static_cast<int>(sizeof(kNodeSizes) / sizeof(kNodeSizes[0]));
    if (!n || (cap > 0 && !out)) return SB_EINVAL;
    for (int i = 0; i < total && i < cap; i++) out[i] = kNodeSizes[i];
    *n = total;
    return SB_OK;
}

extern "C" int sb_cuda_btree_orders(int *out, int cap, int *n) {
    const int total = static_cast<int>(sizeof(kOrders) / sizeof(kOrders[0]));
    if (!n || (cap > 0 && !out)) return SB_EINVAL;
    for (int i = 0; i < total && i < cap; i++) out[i] = kOrders[i];
    *n = total;
    return SB_OK;
}

extern "C" int sb_cuda_btree_create(const uint8_t *data, uint64_t bytes, int order, int K, uint32_t vocab,
                                    sb_cuda_btree **out, char *err, int cap) {
    if (!out || !data || bytes == 0 || vocab == 0) return SB_EINVAL;
    *out = nullptr;
    kernel_fn fn = find_kernel(K, order);
    if (!fn) {
        copy_msg(err, cap, "node size / order not compiled into this library");
        return SB_EINVAL;
    }
    sb_cuda_btree *m = static_cast<sb_cuda_btree *>(std::calloc(1, sizeof(sb_cuda_btree)));
    if (!m) return SB_ENOMEM;
    m->bytes = bytes;
    m->order = order;
    m->K = K;
    m->vocab = vocab;
    m->fn = fn;
    cudaError_t e = cudaMalloc(&m->d_model, bytes + 256);  // padding as on the CPU
    if (e == cudaSuccess) e = cudaMemset(m->d_model + bytes, 0, 256);
    if (e == cudaSuccess) e = cudaMemcpy(m->d_model, data, bytes, cudaMemcpyHostToDevice);
    for (int i = 0; i < 4 && e == cudaSuccess; i++) e = cudaEventCreate(&m->ev[i]);
    if (e != cudaSuccess) {
        copy_msg(err, cap, cudaGetErrorString(e));
        sb_cuda_btree_free(m);
        return e == cudaErrorMemoryAllocation ? SB_ENOMEM : SB_ECUDA;
    }
    *out = m;
    return SB_OK;
}

extern "C" void sb_cuda_btree_free(sb_cuda_btree *m) {
    if (!m) return;
    cudaFree(m->d_model);
    cudaFree(m->d_queries);
    cudaFree(m->d_prob);
    cudaFree(m->d_len);
    for (int i = 0; i < 4; i++)
        if (m->ev[i]) cudaEventDestroy(m->ev[i]);
    std::free(m);
}

extern "C" int sb_cuda_btree_query(sb_cuda_btree *m, const uint32_t *queries, uint64_t n, float *out_prob,
                                   uint8_t *out_len, float *kernel_ms, float *total_ms) {
    if (!m || !queries || !out_prob || n == 0) return SB_EINVAL;
    // word ids are checked on the host: a bad id would read outside the model on the device
    const uint64_t cells = n * static_cast<uint64_t>(m->order);
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t *q = queries + i * m->order;
        if (q[0] >= m->vocab) return SB_EINVAL;
        for (int j = 1; j < m->order && q[j] != NONE; j++)
            if (q[j] >= m->vocab) return SB_EINVAL;
    }
    cudaError_t e = cudaSuccess;
    if (n > m->capacity) {
        cudaFree(m->d_queries);
        cudaFree(m->d_prob);
        cudaFree(m->d_len);
        m->d_queries = nullptr;
        m->d_prob = nullptr;
        m->d_len = nullptr;
        m->capacity = 0;
        e = cudaMalloc(&m->d_queries, cells * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaMalloc(&m->d_prob, n * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc(&m->d_len, n);
        if (e != cudaSuccess) return fail(m, e);
        m->capacity = n;
    }
    const uint64_t blocks_needed = (n + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    const unsigned grid = static_cast<unsigned>(blocks_needed < (1u << 20) ? blocks_needed : (1u << 20));
    e = cudaEventRecord(m->ev[0]);
    if (e == cudaSuccess)
        e = cudaMemcpy(m->d_queries, queries, cells * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaEventRecord(m->ev[1]);
    if (e != cudaSuccess) return fail(m, e);
    m->fn<<<grid, 32 * WARPS_PER_BLOCK>>>(m->d_model, m->d_queries, n, m->d_prob, out_len ? m->d_len : nullptr);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaEventRecord(m->ev[2]);
    if (e == cudaSuccess) e = cudaMemcpy(out_prob, m->d_prob, n * sizeof(float), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && out_len) e = cudaMemcpy(out_len, m->d_len, n, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaEventRecord(m->ev[3]);
    if (e == cudaSuccess) e = cudaEventSynchronize(m->ev[3]);
    if (e != cudaSuccess) return fail(m, e);
    float k = 0, t = 0;
    cudaEventElapsedTime(&k, m->ev[1], m->ev[2]);
    cudaEventElapsedTime(&t, m->ev[0], m->ev[3]);
    if (kernel_ms) *kernel_ms = k;
    if (total_ms) *total_ms = t;
    return SB_OK;
}

extern "C" int sb_cuda_last_error(const sb_cuda_btree *m, char *buf, int cap) {
    if (!m) return SB_EINVAL;
    copy_msg(buf, cap, m->last == cudaSuccess ? "no error" : cudaGetErrorString(m->last));
    return SB_OK;
}
