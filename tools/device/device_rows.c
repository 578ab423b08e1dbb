/* tools/device/device_rows.c - the kernels of issue 43's device rows driven without Python's cffi (the device machine
 * has Python 3.12 but no cffi and no package index): a small C program over csrc/, built on the device by
 * tools/device-rows.sh (and here by its --dry mode and tests/test_device_rows.py).
 *
 *   device_rows decode --lm LM.arpa --phrases PT --reordering RT --weights w1,...,w15 [--table-limit N]
 *                      [--distortion-limit D] [--beam-threshold B] --pop-limit P -s S --threads T [--scores F]
 *       Moses2's cube pruning (csrc/pb/cube.c, the options `smtbench decode cube` gives it: coverage-end stacks, one
 *       queue per stack, LM scored when an item is made) over stdin's lines on T threads (csrc/pb/threads.c), the
 *       1-best text of each line on stdout in input order, its model score (%.17g) a line in F. The model is
 *       loaded as smtbench.decode.model.PhraseModel loads it (ARPA -> probing LM, text tables fed whole), so a
 *       process run is timed as `smtbench decode cube` and Moses2 are: whole input minus first line.
 *   device_rows glm --lm LM.arpa --text TEXT [--node-size K] [--min-queries N] [--repeats R] [--threads T] [--gpu]
 *       gLM's B-tree (csrc/lm/btree.c) over the model, the n-gram queries of TEXT (each word and </s> with its
 *       context back to <s>, smtbench.lm.btree.make_queries) tiled to >= N; the CPU batch at 1 and T threads
 *       (SB_BTREE_DEFAULT_INTERLEAVE) and, with --gpu (built with -DSB_WITH_CUDA and csrc/cuda/btree.cu), the
 *       CUDA kernel alone
 *       and with its copies, one JSON row a point and repeat on stdout; the GPU's answers must equal the CPU's
 *       bit for bit (else exit 3).
 *
 * Errors: one line on stderr naming the file and line or the option, exit 2 (usage) or 1. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lm/arpa.h"
#include "lm/btree.h"
#include "lm/lmprobe.h"
#include "pb/threads.h"
#include "pb/vocab.h"
#include "util/common.h"
#ifdef SB_WITH_CUDA
#include "cuda/btree.h"
#endif

typedef struct {
    int order;
    uint64_t counts[SB_ARPA_MAX_ORDER];
    uint32_t *ids[SB_ARPA_MAX_ORDER];
    float *prob[SB_ARPA_MAX_ORDER];
    float *bo[SB_ARPA_MAX_ORDER];
    char *vocab;          /* words joined by '\n' */
    uint64_t vocab_len;
    uint32_t nvocab;
    char **words;         /* nvocab pointers into a copy of vocab, NUL-terminated */
    char *words_buf;
} arpa_model;

static int fail(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "device_rows: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

/* the whole file in memory (NUL-terminated); NULL and a message on failure */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail("%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            fclose(f);
            fail("%s: %s", path, "out of memory");
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fail("%s: %s", path, "read error");
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static void arpa_free(arpa_model *m) {
    for (int n = 0; n < SB_ARPA_MAX_ORDER; n++) {
        free(m->ids[n]);
        free(m->prob[n]);
        free(m->bo[n]);
    }
    free(m->vocab);
    free(m->words);
    free(m->words_buf);
}

/* smtbench.lm.arpa.read_arpa in C (plain text: tools/device-rows.sh unpacks the kit's .xz with python3) */
static int arpa_load(const char *path, arpa_model *m) {
    memset(m, 0, sizeof *m);
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return 1;
    sb_arpa *p;
    int rc = sb_arpa_new(&p);
    size_t off = 0;
    char where[64];
    while (rc == SB_OK && off < len) {
        size_t consumed = 0;
        int need = 0;
        rc = sb_arpa_feed(p, text + off, len - off, &consumed, &need);
        off += consumed;
        if (rc == SB_OK && need) {
            m->order = sb_arpa_order(p);
            for (int n = 1; n <= m->order && rc == SB_OK; n++) {
                uint64_t c = sb_arpa_count(p, n), cap = n == 1 ? c + 1 : c;
                m->ids[n - 1] = malloc((cap ? cap : 1) * n * sizeof(uint32_t));
                m->prob[n - 1] = malloc((cap ? cap : 1) * sizeof(float));
                m->bo[n - 1] = calloc(cap ? cap : 1, sizeof(float));
                if (!m->ids[n - 1] || !m->prob[n - 1] || !m->bo[n - 1])
                    rc = SB_ENOMEM;
                else
                    rc = sb_arpa_set_buffers(p, n, m->ids[n - 1], m->prob[n - 1], m->bo[n - 1], cap);
            }
        } else if (rc == SB_OK && consumed == 0) {
            break;
        }
    }
    if (rc == SB_OK)
        rc = sb_arpa_finish(p);
    free(text);
    if (rc != SB_OK) {
        if (rc == SB_EFORMAT) {
            snprintf(where, sizeof where, "%llu", (unsigned long long)sb_arpa_error_line(p));
            fprintf(stderr, "device_rows: %s:%s: %s\n", path, where, sb_arpa_error_message(p));
        } else {
            fail("%s: %s", path, sb_strerror(rc));
        }
        sb_arpa_free(p);
        return 1;
    }
    m->order = sb_arpa_order(p);
    for (int n = 1; n <= m->order; n++)
        m->counts[n - 1] = sb_arpa_filled(p, n);
    m->nvocab = sb_arpa_vocab_size(p);
    m->vocab_len = sb_arpa_vocab_bytes(p);
    m->vocab = malloc(m->vocab_len + 1);
    m->words_buf = malloc(m->vocab_len + 1);
    m->words = malloc((m->nvocab + 1) * sizeof(char *));
    if (!m->vocab || !m->words_buf || !m->words || sb_arpa_vocab_dump(p, m->vocab, m->vocab_len + 1) != SB_OK) {
        sb_arpa_free(p);
        return fail("%s: %s", path, "out of memory");
    }
    sb_arpa_free(p);
    memcpy(m->words_buf, m->vocab, m->vocab_len + 1);
    uint32_t w = 0;
    char *s = m->words_buf;
    for (uint64_t i = 0; i < m->vocab_len && w < m->nvocab; i++) {
        if (m->words_buf[i] == '\n') {
            m->words_buf[i] = 0;
            m->words[w++] = s;
            s = m->words_buf + i + 1;
        }
    }
    if (w < m->nvocab)
        m->words[w++] = s;
    if (w != m->nvocab)
        return fail("%s: %s", path, "vocabulary dump disagrees with its size");
    if (m->vocab_len && m->vocab[m->vocab_len - 1] == '\n')
        m->vocab_len--;  /* joined by '\n', as PhraseModel passes it */
    return 0;
}

static int64_t word_id(const arpa_model *m, const char *w) {
    for (uint32_t i = 0; i < m->nvocab; i++)
        if (strcmp(m->words[i], w) == 0)
            return i;
    return -1;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static const char *opt(int argc, char **argv, const char *name, const char *dflt) {
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return dflt;
}

static int flag(int argc, char **argv, const char *name) {
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

/* an integer option in [lo, hi]; -1 and a message otherwise */
static long long int_opt(int argc, char **argv, const char *name, const char *dflt, long long lo, long long hi) {
    const char *v = opt(argc, argv, name, dflt);
    if (!v) {
        fail("%s: %s", name, "required");
        return -1;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi) {
        fprintf(stderr, "device_rows: %s %s: must be an integer in %lld..%lld\n", name, v, lo, hi);
        return -1;
    }
    return x;
}

/* ------------------------------------------------------------------------------------------------- decode */

static int load_lm(const arpa_model *a, sb_lm **out) {
    double mult = 1.5;
    for (;;) {
        sb_lm *lm;
        int rc = sb_lm_new(a->order, a->counts, mult, 0, &lm);
        if (rc)
            return rc;
        uint64_t bad;
        for (int n = 1; n <= a->order && rc == SB_OK; n++)
            rc = sb_lm_load_order(lm, n, a->ids[n - 1], a->prob[n - 1], a->bo[n - 1], a->counts[n - 1], &bad);
        if (rc == SB_EFULL) {
            sb_lm_free(lm);
            mult *= 1.5;
            continue;
        }
        if (rc == SB_OK) {
            int64_t bos = word_id(a, "<s>"), eos = word_id(a, "</s>"), unk = word_id(a, "<unk>");
            rc = bos < 0 || eos < 0 || unk < 0 ? SB_EFORMAT : sb_lm_set_specials(lm, bos, eos, unk);
        }
        if (rc) {
            sb_lm_free(lm);
            return rc;
        }
        *out = lm;
        return SB_OK;
    }
}

static int feed_table(sb_pb_model *pm, const char *path, int reordering) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return 1;
    int rc = reordering ? sb_pb_feed_reordering(pm, text, len, 1) : sb_pb_feed_phrases(pm, text, len, 1);
    free(text);
    if (rc == SB_EFORMAT) {
        fprintf(stderr, "device_rows: %s:%llu: %s\n", path, (unsigned long long)sb_pb_error_line(pm),
                sb_pb_error_message(pm));
        return 1;
    }
    if (rc)
        return fail("%s: %s", path, sb_strerror(rc));
    return 0;
}

static int take_one(sb_pb_mt *mt, FILE *scores) {
    sb_pb_result *r;
    uint64_t ns;
    sb_pb_counters counters;
    int rc = sb_pb_mt_take(mt, &r, &counters, NULL, &ns);
    if (rc != SB_OK)
        return fail("%s: %s", "decoding", sb_strerror(rc));
    int n = sb_pb_result_size(r);
    fputs(n ? sb_pb_result_text(r, 0, 0) : "", stdout);
    fputc('\n', stdout);
    if (scores)
        fprintf(scores, "%.17g\n", n ? sb_pb_result_search_score(r, 0) : 0.0);
    sb_pb_result_free(r);
    return 0;
}

static int cmd_decode(int argc, char **argv) {
    const char *lm_path = opt(argc, argv, "--lm", NULL), *pt = opt(argc, argv, "--phrases", NULL);
    const char *rt = opt(argc, argv, "--reordering", NULL), *wtext = opt(argc, argv, "--weights", NULL);
    const char *scores_path = opt(argc, argv, "--scores", NULL);
    if (!lm_path || !pt || !wtext)
        return fail("%s%s", "decode needs --lm, --phrases and --weights (w1,...,w15 in csrc/pb/options.h's order)", "");
    double w[SB_PB_NFEAT];
    const char *s = wtext;
    for (int i = 0; i < SB_PB_NFEAT; i++) {
        char *end;
        w[i] = strtod(s, &end);
        if (end == s || !isfinite(w[i]) || (i + 1 < SB_PB_NFEAT ? *end != ',' : *end != 0)) {
            fprintf(stderr, "device_rows: --weights %s: %d comma-separated finite numbers expected\n", wtext,
                    SB_PB_NFEAT);
            return 2;
        }
        s = end + 1;
    }
    long long limit = int_opt(argc, argv, "--table-limit", "20", 0, 1000000);
    long long dl = int_opt(argc, argv, "--distortion-limit", "6", -1, SB_PB_MAX_WORDS - 1);
    long long pop = int_opt(argc, argv, "--pop-limit", "1000", 1, 10000000);
    long long stack = int_opt(argc, argv, "-s", "200", 1, 1000000);
    long long threads = int_opt(argc, argv, "--threads", "1", 1, 256);
    if (limit < 0 || dl < -1 || pop < 0 || stack < 0 || threads < 0)
        return 2;
    char *end;
    const char *bt = opt(argc, argv, "--beam-threshold", "1e-5");
    double beam = strtod(bt, &end);
    if (*end || end == bt || !(beam >= 0 && beam <= 1)) {
        fprintf(stderr, "device_rows: --beam-threshold %s: a probability ratio in [0, 1]\n", bt);
        return 2;
    }
    arpa_model a;
    if (arpa_load(lm_path, &a)) {
        arpa_free(&a);
        return 1;
    }
    sb_lm *lm = NULL;
    sb_pb_model *pm = NULL;
    sb_pb_mt *mt = NULL;
    int rc = load_lm(&a, &lm), ret = 1;
    if (rc) {
        fail("%s: the probing LM: %s", lm_path, sb_strerror(rc));
        goto done;
    }
    rc = sb_pb_new(lm, a.vocab, a.vocab_len, w, (int)limit, &pm);
    if (rc) {
        fail("%s: %s", "phrase model", sb_strerror(rc));
        goto done;
    }
    if (feed_table(pm, pt, 0))
        goto done;
    if ((rc = sb_pb_finish_phrases(pm))) {
        fail("%s: %s", pt, sb_strerror(rc));
        goto done;
    }
    if (rt && feed_table(pm, rt, 1))
        goto done;
    if ((rc = sb_pb_finish(pm))) {
        fail("%s: %s", rt ? rt : pt, sb_strerror(rc));
        goto done;
    }
    sb_pb_cube_opts co;
    memset(&co, 0, sizeof co);
    co.pop_limit = (int)pop;
    co.stack_size = (int)stack;
    co.beam_width = beam > 0 ? log(beam) : -INFINITY;
    co.distortion_limit = (int)dl;
    co.stacks = SB_PB_STACKS_COVERAGE_END;
    co.queues = SB_PB_QUEUES_CARDINALITY;
    co.queue_size = 8;
    sb_pb_mt_opts mo = {.threads = (int)threads, .pooled = 1};
    if ((rc = sb_pb_mt_new(pm, SB_PB_SEARCH_CUBE, &co, &mo, &mt))) {
        fail("%s: %s", "starting the decoding threads", sb_strerror(rc));
        goto done;
    }
    FILE *scores = scores_path ? fopen(scores_path, "w") : NULL;
    if (scores_path && !scores) {
        fail("%s: %s", scores_path, strerror(errno));
        goto done;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int in_flight = 0, bad = 0;
    while (!bad && (n = getline(&line, &cap, stdin)) >= 0) {
        if (n && line[n - 1] == '\n')
            n--;
        while ((rc = sb_pb_mt_submit(mt, line, (size_t)n)) == SB_EFULL) {
            if (take_one(mt, scores)) {
                bad = 1;
                break;
            }
            in_flight--;
        }
        if (!bad && rc) {
            fail("%s: %s", "<stdin>", sb_strerror(rc));
            bad = 1;
        }
        in_flight++;
    }
    free(line);
    while (!bad && in_flight-- > 0)
        bad = take_one(mt, scores);
    if (scores && fclose(scores))
        bad = fail("%s: %s", scores_path, strerror(errno));
    if (fflush(stdout))
        bad = fail("%s: %s", "<stdout>", strerror(errno));
    ret = bad;
done:
    if (mt)
        sb_pb_mt_free(mt);
    if (pm)
        sb_pb_free(pm);
    if (lm)
        sb_lm_free(lm);
    arpa_free(&a);
    return ret;
}

/* ---------------------------------------------------------------------------------------------------- glm */

/* the trie's sorted tables (csrc/lm/btree.c's sb_btree_sort_tables, as smtbench.lm.btree does), then sb_btree_build */
static int build_btree(const arpa_model *a, int K, sb_btree **out, const char *path) {
    int N = a->order, rc = SB_ENOMEM, bad_order = 0, why = 0;
    uint64_t total = 0, bad_row = 0;
    for (int n = 2; n <= N; n++)
        total += a->counts[n - 1];
    float *uni_p = calloc(a->nvocab ? a->nvocab : 1, sizeof(float)), *uni_b = calloc(a->nvocab ? a->nvocab : 1, 4);
    uint32_t *parents = malloc((total ? total : 1) * sizeof(uint32_t)), *keys = malloc((total ? total : 1) * 4);
    float *probs = malloc((total ? total : 1) * sizeof(float)), *bos = malloc((total ? total : 1) * sizeof(float));
    const uint32_t *ids[SB_ARPA_MAX_ORDER];
    const float *prob[SB_ARPA_MAX_ORDER], *bo[SB_ARPA_MAX_ORDER];
    for (int n = 0; n < N; n++)
        ids[n] = a->ids[n], prob[n] = a->prob[n], bo[n] = a->bo[n];
    if (uni_p && uni_b && parents && keys && probs && bos)
        rc = sb_btree_sort_tables(N, a->nvocab, a->counts, ids, prob, bo, uni_p, uni_b, parents, keys, probs, bos,
                                  &bad_order, &bad_row, &why);
    if (rc == SB_EFORMAT)
        fprintf(stderr, "device_rows: %s: the %d-grams' entry %llu %s\n", path, bad_order,
                (unsigned long long)bad_row + 1, why == -1 ? "repeats another" : why == -2 ?
                "breaks the one-unigram-a-word rule" : "has a missing suffix (a pruned ARPA: not for the B-tree)");
    uint64_t counts[SB_ARPA_MAX_ORDER];
    memcpy(counts, a->counts, sizeof counts);
    counts[0] = a->nvocab;
    if (rc == SB_OK && (rc = sb_btree_build(N, K, counts, uni_p, uni_b, parents, keys, probs, bos, out)))
        fail("%s: the B-tree: %s", path, sb_strerror(rc));
    else if (rc == SB_ENOMEM)
        fail("%s: %s", path, "out of memory building the B-tree");
    free(uni_p);
    free(uni_b);
    free(parents);
    free(keys);
    free(probs);
    free(bos);
    return rc;
}

/* the n-gram queries of TEXT (smtbench.lm.btree.make_queries, bos and eos), tiled to >= min_queries rows */
static int make_queries(const arpa_model *a, const char *path, uint64_t min_queries, uint32_t **out, uint64_t *nq) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return 1;
    sb_pb_vocab ix = {0};  /* the ARPA's words interned in id order: ids equal (pb/vocab.h, the model's own index) */
    for (uint32_t i = 0; i < a->nvocab; i++) {
        if (sb_pb_vocab_intern(&ix, a->words[i], strlen(a->words[i])) != i) {
            sb_pb_vocab_free(&ix);
            free(text);
            return fail("%s: %s", path, "out of memory, or a word the ARPA lists twice");
        }
    }
    int64_t bos = word_id(a, "<s>"), eos = word_id(a, "</s>"), unk = word_id(a, "<unk>");
    int N = a->order;
    uint64_t cap = 1 << 16, n = 0;
    uint32_t *q = malloc(cap * N * sizeof(uint32_t));
    uint32_t ctx[SB_ARPA_MAX_ORDER + 1];
    char *p = text, *end = text + len;
    while (p < end && q) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        int have = 0;  /* context words, most recent first, <s> included */
        ctx[0] = (uint32_t)bos;
        have = 1;
        char *w = p;
        for (;;) {
            while (w < eol && (*w == ' ' || *w == '\t'))  /* words: ASCII space and TAB only (ioutil.words) */
                w++;
            int last = w >= eol;
            char *we = w;
            while (we < eol && !(*we == ' ' || *we == '\t'))
                we++;
            uint32_t id = last ? (uint32_t)eos : 0;
            if (!last) {
                uint32_t f = sb_pb_vocab_find(&ix, w, (size_t)(we - w));
                id = f == SB_PB_NO_WORD ? (uint32_t)unk : f;
            }
            if (n == cap) {
                cap *= 2;
                uint32_t *nqp = realloc(q, cap * N * sizeof(uint32_t));
                if (!nqp) {
                    free(q);
                    q = NULL;
                    break;
                }
                q = nqp;
            }
            uint32_t *row = q + n * N;
            row[0] = id;
            for (int j = 1; j < N; j++)
                row[j] = j - 1 < have ? ctx[j - 1] : 0xFFFFFFFFu;
            n++;
            if (last)
                break;
            memmove(ctx + 1, ctx, sizeof(uint32_t) * (N - 1));
            ctx[0] = id;
            if (have < N - 1)
                have++;
            w = we;
        }
        p = eol + 1;
    }
    free(text);
    sb_pb_vocab_free(&ix);
    if (!q)
        return fail("%s: %s", path, "out of memory");
    if (n == 0) {
        free(q);
        return fail("%s: %s", path, "no lines to score");
    }
    uint64_t reps = min_queries > n ? (min_queries + n - 1) / n : 1;
    uint32_t *all = malloc(n * reps * N * sizeof(uint32_t));
    if (!all) {
        free(q);
        return fail("%s: %s", path, "out of memory tiling the queries");
    }
    for (uint64_t r = 0; r < reps; r++)
        memcpy(all + r * n * N, q, n * N * sizeof(uint32_t));
    free(q);
    *out = all;
    *nq = n * reps;
    return 0;
}

static double sum_probs(const float *p, uint64_t n) {
    double s = 0;
    for (uint64_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

static int cmd_glm(int argc, char **argv) {
    const char *lm_path = opt(argc, argv, "--lm", NULL), *text = opt(argc, argv, "--text", NULL);
    if (!lm_path || !text)
        return fail("%s%s", "glm needs --lm and --text", "");
    long long K = int_opt(argc, argv, "--node-size", "31", SB_BTREE_MIN_K, SB_BTREE_MAX_K);
    long long minq = int_opt(argc, argv, "--min-queries", "1000000", 0, 1LL << 34);
    long long reps = int_opt(argc, argv, "--repeats", "5", 1, 1000);
    long long threads = int_opt(argc, argv, "--threads", "1", 1, 256);
    int gpu = flag(argc, argv, "--gpu");
    if (K < 0 || minq < 0 || reps < 0 || threads < 0)
        return 2;
#ifndef SB_WITH_CUDA
    if (gpu)
        return fail("%s%s", "--gpu: this build has no CUDA (tools/device-rows.sh builds it with nvcc)", "");
#endif
    arpa_model a;
    sb_btree *bt = NULL;
    uint32_t *q = NULL;
    float *cpu = NULL, *p = NULL;
    int ret = 1;
#ifdef SB_WITH_CUDA
    sb_cuda_btree *g = NULL;
#endif
    if (arpa_load(lm_path, &a))
        goto done;
    if (build_btree(&a, (int)K, &bt, lm_path))
        goto done;
    uint64_t nq = 0;
    if (make_queries(&a, text, (uint64_t)minq, &q, &nq))
        goto done;
    cpu = malloc(nq * sizeof(float));
    p = malloc(nq * sizeof(float));
    if (!cpu || !p) {
        fail("%s: %s", text, "out of memory for the answers");
        goto done;
    }
    /* the reference answers, checked against every point */
    int rc = sb_btree_query(bt, q, nq, SB_BTREE_DEFAULT_INTERLEAVE, 1, cpu, NULL);
    if (rc) {
        fail("%s: %s", "sb_btree_query", sb_strerror(rc));
        goto done;
    }
    double ref = sum_probs(cpu, nq);
    printf("{\"kind\": \"glm_model\", \"order\": %d, \"node_size\": %lld, \"vocab\": %u, \"model_bytes\": %llu, "
           "\"queries\": %llu, \"log10_sum\": %.10g, \"simd\": \"%s\"}\n", a.order, K, a.nvocab,
           (unsigned long long)sb_btree_bytes(bt), (unsigned long long)nq, ref, sb_btree_simd());
#ifdef SB_WITH_CUDA
    if (gpu) {
        char err[256] = "", name[256] = "";
        int major = 0, minor = 0, count = 0;
        rc = sb_cuda_device_count(&count, err, sizeof err);
        if (rc || count < 1) {  /* a row saying why, and the CPU points without it (the dry run here) */
            for (char *c = err; *c; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 32)
                    *c = ' ';
            printf("{\"kind\": \"glm_gpu\", \"available\": false, \"reason\": \"no CUDA device: %s\"}\n", err);
            gpu = 0;
            rc = SB_OK;
        } else {
            rc = sb_cuda_device_name(name, sizeof name, &major, &minor);
        }
        if (rc == SB_OK && gpu)
            rc = sb_cuda_btree_create(sb_btree_data(bt), sb_btree_bytes(bt), a.order, (int)K, a.nvocab, &g, err,
                                      sizeof err);
        if (rc) {
            fail("the GPU: %s %s", sb_strerror(rc), err);
            goto done;
        }
        if (gpu)
            printf("{\"kind\": \"glm_gpu\", \"available\": true, \"gpu\": \"%s\", \"compute_capability\": \"%d.%d\"}\n",
                   name, major, minor);
    }
#endif
    uint64_t cpu_threads[2] = {1, (uint64_t)threads};
    for (long long r = 0; r < reps; r++) {
        for (int t = 0; t < (threads > 1 ? 2 : 1); t++) {  /* interleaved: every point once a repeat */
            double t0 = now_s();
            rc = sb_btree_query(bt, q, nq, SB_BTREE_DEFAULT_INTERLEAVE, (int)cpu_threads[t], p, NULL);
            double s = now_s() - t0;
            if (rc || memcmp(p, cpu, nq * sizeof(float))) {
                fail("%s: %s", "the CPU B-tree's answers differ between thread counts", rc ? sb_strerror(rc) : "");
                ret = 3;
                goto done;
            }
            printf("{\"kind\": \"glm_point\", \"path\": \"cpu\", \"threads\": %llu, \"repeat\": %lld, "
                   "\"elapsed_ns\": %.0f, \"qps\": %.1f}\n", (unsigned long long)cpu_threads[t], r, s * 1e9, nq / s);
        }
#ifdef SB_WITH_CUDA
        if (gpu) {
            float kern = 0, tot = 0;
            memset(p, 0, nq * sizeof(float));
            rc = sb_cuda_btree_query(g, q, nq, p, NULL, &kern, &tot);
            if (rc) {
                char err[256] = "";
                sb_cuda_last_error(g, err, sizeof err);
                fail("the GPU query: %s %s", sb_strerror(rc), err);
                goto done;
            }
            uint64_t diff = 0;
            for (uint64_t i = 0; i < nq; i++)
                diff += memcmp(p + i, cpu + i, sizeof(float)) != 0;
            if (diff) {
                fprintf(stderr, "device_rows: the GPU's answers differ from the CPU B-tree's in %llu of %llu queries\n",
                        (unsigned long long)diff, (unsigned long long)nq);
                ret = 3;
                goto done;
            }
            printf("{\"kind\": \"glm_point\", \"path\": \"gpu-kernel\", \"repeat\": %lld, \"elapsed_ns\": %.0f, "
                   "\"qps\": %.1f}\n", r, kern * 1e6, nq / (kern * 1e-3));
            printf("{\"kind\": \"glm_point\", \"path\": \"gpu-with-copies\", \"repeat\": %lld, \"elapsed_ns\": %.0f, "
                   "\"qps\": %.1f}\n", r, tot * 1e6, nq / (tot * 1e-3));
        }
#endif
        fflush(stdout);
    }
    ret = 0;
done:
#ifdef SB_WITH_CUDA
    if (g)
        sb_cuda_btree_free(g);
#endif
    if (bt)
        sb_btree_free(bt);
    free(q);
    free(cpu);
    free(p);
    arpa_free(&a);
    return ret;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "decode") == 0)
        return cmd_decode(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "glm") == 0)
        return cmd_glm(argc, argv);
    fprintf(stderr, "usage: device_rows decode --lm LM.arpa --phrases PT [--reordering RT] --weights W,... ... < input\n"
                    "       device_rows glm --lm LM.arpa --text TEXT [--node-size K] [--min-queries N] [--repeats R] "
                    "[--threads T] [--gpu]\n");
    return 2;
}
