/* phrase_score.c - see phrase_score.h: the scorer's state, steps 4/5 (merge by source, the scores) and the driver of
 * the steps. */
#define _GNU_SOURCE
#include "tm/phrase_score.h"
#include "tm/phrase_merge.h"
#include "tm/phrase_runs.h"
#include "tm/phrase_write.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_MERGE_RECS 64   /* records buffered per run in a merge, at the least */

static void mkname(char *out, size_t n, const char *dir, const char *what, int t) {
    snprintf(out, n, "%s/%s.%d", dir, what, t);
}

int sb_pscore_create(const sb_pscore_args *args, sb_pscore **out) {
    *out = NULL;
    if (!args || args->threads < 1 || args->threads > 256 || !args->tmpdir) return SB_EINVAL;
    if (args->memory_bytes < (1u << 20)) return SB_EINVAL;
    if (strlen(args->tmpdir) > 4000) return SB_EINVAL;
    sb_pscore *s = calloc(1, sizeof(*s));
    if (!s) return SB_ENOMEM;
    s->a = *args;
    strcpy(s->tmpdir, args->tmpdir);
    s->a.tmpdir = s->tmpdir;
    pthread_mutex_init(&s->mu, NULL);
    int T = args->threads;
    s->fd1 = malloc(T * sizeof(int)); s->fd2 = malloc(T * sizeof(int));
    s->end1 = calloc(T, sizeof(uint64_t)); s->end2 = calloc(T, sizeof(uint64_t));
    s->buf1 = calloc(T, sizeof(rec1 *)); s->n1 = calloc(T, sizeof(size_t));
    int rc = SB_OK;
    if (!s->fd1 || !s->fd2 || !s->end1 || !s->end2 || !s->buf1 || !s->n1) rc = SB_ENOMEM;
    if (!rc) for (int t = 0; t < T; t++) s->fd1[t] = s->fd2[t] = -1;
    if (!rc) rc = sb_dict_create(&s->aln);
    if (!rc) rc = sb_dict_create(&s->fw);
    if (!rc) rc = sb_dict_create(&s->ew);
    if (!rc) {
        char name[4200];
        for (int t = 0; t < T && !rc; t++) {
            mkname(name, sizeof name, s->tmpdir, "run1", t);
            s->fd1[t] = open(name, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
            mkname(name, sizeof name, s->tmpdir, "run2", t);
            s->fd2[t] = open(name, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
            if (s->fd1[t] < 0 || s->fd2[t] < 0) rc = SB_EIO;
        }
    }
    s->cap1 = (size_t)(args->memory_bytes / (uint64_t)T / sizeof(rec1));
    if (s->cap1 < 1024) s->cap1 = 1024;
    for (int t = 0; t < T && !rc; t++) {
        s->buf1[t] = malloc(s->cap1 * sizeof(rec1));
        if (!s->buf1[t]) rc = SB_ENOMEM;
    }
    s->st.buffer_bytes = (uint64_t)s->cap1 * sizeof(rec1) * (uint64_t)T;
    s->null_f = s->null_e = UINT32_MAX;
    if (rc) { sb_pscore_free(s); return rc; }
    *out = s;
    return SB_OK;
}

static void free_load_buffers(sb_pscore *s) {
    if (!s->buf1) return;
    for (int t = 0; t < s->a.threads; t++) { free(s->buf1[t]); s->buf1[t] = NULL; }
}

void sb_pscore_free(sb_pscore *s) {
    if (!s) return;
    char name[4200];
    for (int t = 0; t < s->a.threads; t++) {
        if (s->fd1 && s->fd1[t] >= 0) { close(s->fd1[t]); }
        if (s->fd2 && s->fd2[t] >= 0) { close(s->fd2[t]); }
        mkname(name, sizeof name, s->tmpdir, "run1", t); unlink(name);
        mkname(name, sizeof name, s->tmpdir, "run2", t); unlink(name);
    }
    free_load_buffers(s);
    free(s->buf1); free(s->n1);
    free(s->fd1); free(s->fd2); free(s->end1); free(s->end2);
    free(s->runs1.v); free(s->runs2.v); free(s->samples1.v); free(s->samples2.v);
    sb_dict_free(s->aln);
    free(s->fcode); free(s->ecode); free((void *)s->fword); free((void *)s->eword); free(s->fwlen); free(s->ewlen);
    free(s->fid_of); free(s->eid_of);
    sb_dict_free(s->fw); sb_dict_free(s->ew);
    sb_probing_release(&s->lex);
    sb_probing_release(&s->fwt); sb_probing_release(&s->ewt);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---------------------------------------------------------------- steps 4/5: merge by source, score */
typedef struct {
    sb_pscore *s; int t; uint64_t lo, hi; int hi_inf; size_t merge_recs;
    double N, D[4];
    FILE *out;
    rec2 *grp; size_t ng, capg;
    uint64_t lines;
    int rc;
} m2_t;

static void write_source(m2_t *w) {
    sb_pscore *s = w->s;
    double cf = 0;
    for (size_t i = 0; i < w->ng; i++) cf += w->grp[i].c_ef;
    double n1f = (double)w->ng;
    char fs[8192];
    size_t fsl = sb_ps_key_str(s, w->grp[0].src, 0, fs, sizeof fs);
    for (size_t i = 0; i < w->ng; i++) {
        const rec2 *r = &w->grp[i];
        double c = r->c_ef, pfe, pef;
        if (s->a.smoothing == SB_PSCORE_SMOOTH_KN) {
            double D = c < 2 ? w->D[1] : c < 3 ? w->D[2] : w->D[3];
            if (D > c) D = c - 0.01;
            double n1e = (double)r->n1e;
            pef = (c - D + D * n1f * n1e / w->N) / cf;
            pfe = (c - D + D * n1e * n1f / w->N) / r->c_e;
        } else {
            pef = c / cf;
            pfe = c / r->c_e;
        }
        sb_ps_write_pair(w->out, s, fs, fsl, r, pfe, pef, cf);
    }
    w->lines += w->ng;
    w->ng = 0;
}

static void *merge2_worker(void *arg) {
    m2_t *w = arg;
    sb_pscore *s = w->s;
    sb_ps_merger m;
    int rc = sb_ps_merger_init(&m, 2, &s->runs2, s->fd2, w->lo, w->hi, w->hi_inf, w->merge_recs);
    rec2 r;
    while (!rc) {
        int got = sb_ps_merger_pop(&m, &r);
        if (got < 0) { rc = got; break; }
        if (!got) break;
        if (w->ng && !keq(r.src, w->grp[0].src)) write_source(w);
        if (SB_GROW(w->grp, w->capg, w->ng + 1, 256)) { rc = SB_ENOMEM; break; }
        w->grp[w->ng++] = r;
    }
    if (!rc && w->ng) write_source(w);
    if (!rc && ferror(w->out)) rc = SB_EIO;
    sb_ps_merger_free(&m);
    w->rc = rc;
    return NULL;
}

int sb_pscore_finish(sb_pscore *s, const char *out_prefix, char *err, size_t errlen) {
    int T = s->a.threads, rc = SB_OK;
    if (!s->buf1[0]) return SB_EINVAL;
    uint64_t t0 = sb_now_ns();
    if ((rc = sb_ps_prepare_vocab(s))) return rc;
    /* a load that wrote no run keeps its sorted buffers as the runs where they fit in 3/4 of the budget (the rest
     * then holds the step-3 buffers): no write and read back of what memory already holds */
    int in_mem = 0;
    uint64_t kept = 0;
    if (s->st.runs1 == 0) rc = sb_ps_keep1(s, s->a.memory_bytes / 4 * 3, &kept, &in_mem);
    else for (int t = 0; t < T && !rc; t++) rc = sb_ps_spill1(s, t);
    if (!in_mem || rc) free_load_buffers(s);
    if (rc) { sb_ps_seterr(err, errlen, "writing a sorted run failed"); return rc; }
    s->st.src_phrases = s->fcode ? sb_dict_size(s->fw) : 0;   /* (words, with the key design) */
    s->st.tgt_phrases = s->ecode ? sb_dict_size(s->ew) : 0;
    s->st.alignments = 0;
    s->st.dict_bytes = sb_dict_bytes(s->aln) +
                       sb_dict_bytes(s->fw) + sb_dict_bytes(s->ew) +
                       s->lex.buckets * sizeof(lexent);
    /* budget in steps 2-3: half for merge buffers, half for the new runs */
    uint64_t half = s->a.memory_bytes / 2;
    size_t nr = s->runs1.n ? s->runs1.n : 1;
    size_t mrecs = (size_t)(half / (uint64_t)T / nr / sizeof(rec1));
    if (mrecs < MIN_MERGE_RECS) mrecs = MIN_MERGE_RECS;
    size_t cap2 = (size_t)((in_mem ? s->a.memory_bytes - kept : half) / (uint64_t)T / sizeof(rec2));
    if (cap2 < 1024) cap2 = 1024;
    uint64_t used = (in_mem ? kept : (uint64_t)mrecs * sizeof(rec1) * nr * T) + (uint64_t)cap2 * sizeof(rec2) * T;
    if (used > s->st.buffer_bytes) s->st.buffer_bytes = used;

    uint64_t *bounds = malloc((T + 1) * sizeof(uint64_t));
    uint64_t nk[5] = {0};
    rc = bounds ? sb_ps_merge_by_target(s, out_prefix, mrecs, cap2, bounds, nk) : SB_ENOMEM;
    free_load_buffers(s);   /* (the runs kept in memory) */
    s->st.n1 = nk[1]; s->st.n2 = nk[2]; s->st.n3 = nk[3]; s->st.n4 = nk[4];
    s->st.ns_merge1 = sb_now_ns() - t0;
    if (rc) sb_ps_seterr(err, errlen, "merging by target failed");

    if (!rc && !s->a.counts_only) {
        uint64_t t1 = sb_now_ns();
        double D[4] = {0, 0, 0, 0};
        if (s->a.smoothing == SB_PSCORE_SMOOTH_KN) {
            double n1 = (double)nk[1], n2 = (double)nk[2], n3 = (double)nk[3], n4 = (double)nk[4];
            double Y = (n1 + 2 * n2) > 0 ? n1 / (n1 + 2 * n2) : 0;
            D[1] = n1 > 0 ? 1 - 2 * Y * n2 / n1 : 0;
            D[2] = n2 > 0 ? 2 - 3 * Y * n3 / n2 : 0;
            D[3] = n3 > 0 ? 3 - 4 * Y * n4 / n3 : 0;
            if (D[1] > 0.9) D[1] = 0.9;
            if (D[2] > 1.9) D[2] = 1.9;
            if (D[3] > 2.9) D[3] = 2.9;
            for (int k = 1; k <= 3; k++) if (D[k] < 0) D[k] = 0;
        }
        s->st.kn_d1 = D[1]; s->st.kn_d2 = D[2]; s->st.kn_d3 = D[3];
        nr = s->runs2.n ? s->runs2.n : 1;
        mrecs = (size_t)(s->a.memory_bytes / (uint64_t)T / nr / sizeof(rec2));
        if (mrecs < MIN_MERGE_RECS) mrecs = MIN_MERGE_RECS;
        m2_t *w2 = calloc(T, sizeof(m2_t));
        if (!w2) rc = SB_ENOMEM;
        if (!rc) sb_ps_make_bounds(&s->samples2, T, bounds);
        for (int t = 0; t < T && !rc; t++) {
            w2[t] = (m2_t){.s = s, .t = t, .lo = bounds[t], .hi = bounds[t + 1], .hi_inf = t == T - 1,
                           .merge_recs = mrecs, .N = (double)s->st.pairs,
                           .D = {0, D[1], D[2], D[3]}};
            if (!(w2[t].out = sb_ps_open_part(out_prefix, t))) rc = SB_EIO;
        }
        if (!rc) rc = sb_run_threads(T, merge2_worker, w2, sizeof *w2);
        for (int t = 0; t < T && w2; t++) {
            if (!rc && w2[t].rc) rc = w2[t].rc;
            s->st.out_lines += w2[t].lines;
            if (w2[t].out && fclose(w2[t].out) && !rc) rc = SB_EIO;
            free(w2[t].grp);
        }
        free(w2);
        s->st.ns_merge2 = sb_now_ns() - t1;
        if (rc) sb_ps_seterr(err, errlen, "merging by source / writing the table failed");
    }
    free(bounds);
    return rc;
}

void sb_pscore_get_stats(const sb_pscore *s, sb_pscore_stats *st) { *st = s->st; }
