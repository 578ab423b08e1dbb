/* pb/model.c - see model.h: the model's phrase table (the text tables fed through the reader into the in-memory
 * table, or the binarized table), its target vocabulary, the weights and the counts. */
#include "pb/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pb/bin_read.h"

#define NO_WORD SB_PB_NO_WORD

const sb_lm *sb_pb_lm(const sb_pb_model *m) { return m->sc.lm; }
const double *sb_pb_weights(const sb_pb_model *m) { return m->sc.w; }
uint32_t sb_pb_eos(const sb_pb_model *m) { return m->eos; }
uint64_t sb_pb_error_line(const sb_pb_model *m) { return m->rd.err_line; }
const char *sb_pb_error_message(const sb_pb_model *m) { return m->rd.err; }


int sb_pb_set_weights(sb_pb_model *m, const double *weights) {
    for (int i = 0; i < SB_PB_NFEAT; i++)
        if (!isfinite(weights[i])) return SB_EINVAL;
    memcpy(m->sc.w, weights, sizeof m->sc.w);
    return SB_OK;
}

int sb_pb_new(const sb_lm *lm, const char *lm_vocab, size_t vocab_len, const double *weights,
              int table_limit, sb_pb_model **out) {
    *out = NULL;
    if (!lm || !lm_vocab || table_limit < 0) return SB_EINVAL;
    sb_pb_model *m = calloc(1, sizeof *m);
    if (!m) return SB_ENOMEM;
    m->sc.lm = lm;
    m->sc.order = sb_lm_order(lm);
    m->sc.table_limit = table_limit;
    if (sb_pb_set_weights(m, weights) != SB_OK) { free(m); return SB_EINVAL; }
    size_t i = 0;
    while (i < vocab_len) {
        size_t j = i;
        while (j < vocab_len && lm_vocab[j] != '\n') j++;
        uint32_t before = m->tgt_vocab.n;
        uint32_t id = sb_pb_vocab_intern(&m->tgt_vocab, lm_vocab + i, j - i);
        if (id == NO_WORD) { sb_pb_free(m); return SB_ENOMEM; }
        if (id != before) { sb_pb_free(m); return SB_EINVAL; } /* duplicate word in the LM vocabulary */
        i = j + 1;
    }
    m->sc.lm_vocab = m->tgt_vocab.n;
    if (sb_pb_mem_new(&m->mem) != SB_OK) { sb_pb_free(m); return SB_ENOMEM; }
    m->pt = sb_pb_mem_table(m->mem);
    m->rd = (sb_pb_reader){.src = sb_pb_mem_src_vocab(m->mem), .tgt = &m->tgt_vocab, .phrase = sb_pb_mem_phrase_record,
                           .reordering = sb_pb_mem_reordering_record, .sink = m->mem};
    m->eos = sb_pb_vocab_find(&m->tgt_vocab, "</s>", 4);
    if (m->eos == NO_WORD) { sb_pb_free(m); return SB_EINVAL; } /* an LM vocabulary has </s> */
    *out = m;
    return SB_OK;
}

void sb_pb_free(sb_pb_model *m) {
    if (!m) return;
    sb_pb_vocab_free(&m->tgt_vocab);
    sb_pb_table_free(m->pt);
    free(m);
}

int sb_pb_feed_phrases(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line) {
    if (m->phase != 0 || !m->mem) return SB_EINVAL;
    return sb_pb_read_phrases(&m->rd, buf, len, first_line);
}

int sb_pb_finish_phrases(sb_pb_model *m) {
    if (m->phase != 0 || !m->mem) return SB_EINVAL;
    int rc = sb_pb_mem_finish_phrases(m->mem, &m->sc);
    if (rc != SB_OK) return rc;
    m->phase = 1;
    return SB_OK;
}

int sb_pb_feed_reordering(sb_pb_model *m, const char *buf, size_t len, uint64_t first_line) {
    if (m->phase != 1) return SB_EINVAL;
    return sb_pb_read_reordering(&m->rd, buf, len, first_line);
}

int sb_pb_finish(sb_pb_model *m) {
    if (m->phase == 0) {
        int rc = sb_pb_finish_phrases(m);
        if (rc != SB_OK) return rc;
    }
    m->phase = 2;
    return SB_OK;
}

void sb_pb_counts(const sb_pb_model *m, uint64_t *c) {
    sb_pb_table_stats st;
    sb_pb_table_counts(m->pt, &st);
    c[0] = st.lines;
    c[1] = st.phrases;
    c[2] = st.options;
    c[3] = m->rd.ro_lines;
    c[4] = st.ro_attached;
    c[5] = st.options - st.ro_attached;
    c[6] = (uint64_t)m->pt->max_len;
    c[7] = sizeof *m + sb_pb_vocab_bytes(&m->tgt_vocab) + st.bytes;
}

int sb_pb_load_binary(sb_pb_model *m, const char *path, uint64_t cache) {
    if (m->phase != 0 || !m->mem || sb_pb_mem_lines(m->mem)) return SB_EINVAL;
    char why[200] = "";
    sb_pb_table *t;
    int rc = sb_pb_bin_open(path, &m->sc, &m->tgt_vocab, cache, &t, why, sizeof why);
    if (rc == SB_EFORMAT) return sb_pb_reader_fail(&m->rd, 0, "%s", why);
    if (rc) return rc;
    sb_pb_table_free(m->pt);   /* the in-memory table, empty */
    m->mem = NULL;
    m->pt = t;
    m->phase = 2;
    return SB_OK;
}
