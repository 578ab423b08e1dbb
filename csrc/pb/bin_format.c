/* pb/bin_format.c - see bin_format.h: the checksums of a binarized table. */
#include "pb/bin_format.h"

static inline uint64_t sum_step(uint64_t h, uint64_t w) {
    h ^= w;
    return (h << 29 | h >> 35) * 0x9E3779B97F4A7C15ULL;
}

sb_pb_bin_sum sb_pb_bin_sum_init(uint64_t seed) {
    sb_pb_bin_sum s = {{seed, seed ^ 0x1111111111111111ULL, seed ^ 0x2222222222222222ULL, seed ^ 0x3333333333333333ULL}};
    return s;
}

sb_pb_bin_sum sb_pb_bin_sum_block(const uint8_t *p, size_t n, sb_pb_bin_sum s) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, 32);
        for (int k = 0; k < 4; k++) s.h[k] = sum_step(s.h[k], w[k]);
    }
    for (int k = 0; i < n; k++, i += 8) {
        uint64_t w = 0;
        memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        s.h[k] = sum_step(s.h[k], w);
    }
    return s;
}

uint64_t sb_pb_bin_sum_final(sb_pb_bin_sum s, uint64_t n) {
    uint64_t h = s.h[0] ^ (s.h[1] << 16 | s.h[1] >> 48) ^ (s.h[2] << 32 | s.h[2] >> 32) ^ (s.h[3] << 48 | s.h[3] >> 16);
    return sb_mix64(h ^ n) | 1;
}

uint64_t sb_pb_bin_header_sum(const uint8_t *raw) {
    uint8_t b[SB_PB_BIN_HEADER_BYTES];
    memcpy(b, raw, SB_PB_BIN_HEADER_BYTES);
    memset(b + offsetof(sb_pb_bin_header, header_sum), 0, sizeof(uint64_t));
    return sb_pb_bin_sum_final(sb_pb_bin_sum_block(b, SB_PB_BIN_HEADER_BYTES, sb_pb_bin_sum_init(SB_PB_BIN_SUM_SEED + 1)),
                               SB_PB_BIN_HEADER_BYTES);
}
