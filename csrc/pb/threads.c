/* pb/threads.c - see threads.h. */
#define _GNU_SOURCE
#include "pb/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    char *text;
    size_t len, cap;
    sb_pb_result *res;
    sb_pb_counters cnt;
    sb_pb_beam_stats stats;
    uint64_t ns;
    int rc;
    int done;
} slot_t;

typedef struct {
    struct sb_pb_mt *t;
    int index;
    sb_pb_ws *ws;
    _Atomic int phase;
    uint64_t hist[SB_PB_NPH];   /* written by the sampler only */
    int pinned;
} worker_t;

struct sb_pb_mt {
    const sb_pb_model *m;
    int search;
    union { sb_pb_normal_opts normal; sb_pb_cube_opts cube; sb_pb_beam_opts beam; } o;
    sb_pb_mt_opts mo;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    slot_t *ring;
    int cap;
    uint64_t head, next, tail;   /* oldest not taken, next to decode, next to submit */
    int stop;
    worker_t *w;
    pthread_t *tid;
    int started;
    pthread_t sampler;
    int sampling;
    _Atomic int sampler_stop;
};

/* one sentence through the search the threads run */
static int run(const struct sb_pb_mt *t, sb_pb_ws *ws, slot_t *s) {
    if (t->search == SB_PB_SEARCH_NORMAL)
        return sb_pb_decode_normal(t->m, s->text, s->len, &t->o.normal, ws, &s->res, &s->cnt);
    if (t->search == SB_PB_SEARCH_CUBE)
        return sb_pb_decode_cube(t->m, s->text, s->len, &t->o.cube, ws, &s->res, &s->cnt);
    return sb_pb_decode_beam(t->m, s->text, s->len, &t->o.beam, ws, &s->res, &s->cnt, &s->stats);
}

static void *worker_main(void *arg) {
    worker_t *me = arg;
    struct sb_pb_mt *t = me->t;
    if (t->mo.pin) me->pinned = sb_pin_to_cpu(t->mo.pin_offset + me->index * t->mo.pin_increment) == SB_OK;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->next == t->tail && !t->stop) pthread_cond_wait(&t->work, &t->mu);
        if (t->next == t->tail) break;  /* stopping and nothing left */
        slot_t *s = &t->ring[t->next++ % (uint64_t)t->cap];
        pthread_mutex_unlock(&t->mu);
        uint64_t t0 = sb_now_ns();
        s->rc = run(t, me->ws, s);
        s->ns = sb_now_ns() - t0;
        sb_pb_phase(&me->phase, SB_PB_PH_IDLE);
        pthread_mutex_lock(&t->mu);
        s->done = 1;
        pthread_cond_broadcast(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void *sampler_main(void *arg) {
    struct sb_pb_mt *t = arg;
    struct timespec ts = {0, (long)t->mo.profile_us * 1000L};
    while (!atomic_load_explicit(&t->sampler_stop, memory_order_relaxed)) {
        nanosleep(&ts, NULL);
        for (int i = 0; i < t->started; i++) {
            int ph = atomic_load_explicit(&t->w[i].phase, memory_order_relaxed);
            if (ph >= 0 && ph < SB_PB_NPH) t->w[i].hist[ph]++;
        }
    }
    return NULL;
}

int sb_pb_mt_new(const sb_pb_model *m, int search, const void *opts, const sb_pb_mt_opts *mo, sb_pb_mt **out) {
    *out = NULL;
    if (search < SB_PB_SEARCH_NORMAL || search > SB_PB_SEARCH_BEAM || mo->threads < 1 || mo->threads > 256 || mo->window < 0 || mo->profile_us < 0 ||
        mo->pin_offset < 0 || mo->pin_increment < 0)
        return SB_EINVAL;
    struct sb_pb_mt *t = calloc(1, sizeof *t);
    if (!t) return SB_ENOMEM;
    t->m = m;
    t->search = search;
    if (search == SB_PB_SEARCH_NORMAL) t->o.normal = *(const sb_pb_normal_opts *)opts;
    else if (search == SB_PB_SEARCH_CUBE) t->o.cube = *(const sb_pb_cube_opts *)opts;
    else t->o.beam = *(const sb_pb_beam_opts *)opts;
    t->mo = *mo;
    if (!t->mo.window) t->mo.window = 8 * mo->threads;
    t->cap = t->mo.window;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    t->ring = calloc((size_t)t->cap, sizeof *t->ring);
    t->w = calloc((size_t)mo->threads, sizeof *t->w);
    t->tid = calloc((size_t)mo->threads, sizeof *t->tid);
    if (!t->ring || !t->w || !t->tid) { sb_pb_mt_free(t); return SB_ENOMEM; }
    for (int i = 0; i < mo->threads; i++) {
        t->w[i].t = t;
        t->w[i].index = i;
        atomic_init(&t->w[i].phase, SB_PB_PH_IDLE);
        int rc = sb_pb_ws_new(mo->pooled, &t->w[i].ws);
        if (rc) { sb_pb_mt_free(t); return rc; }
        if (mo->profile_us > 0) t->w[i].ws->phase = &t->w[i].phase;
    }
    for (int i = 0; i < mo->threads; i++) {
        if (pthread_create(&t->tid[i], NULL, worker_main, &t->w[i]) != 0) { sb_pb_mt_free(t); return SB_ETHREAD; }
        t->started++;
    }
    if (mo->profile_us > 0) {
        atomic_init(&t->sampler_stop, 0);
        if (pthread_create(&t->sampler, NULL, sampler_main, t) != 0) { sb_pb_mt_free(t); return SB_ETHREAD; }
        t->sampling = 1;
    }
    *out = t;
    return SB_OK;
}

int sb_pb_mt_submit(sb_pb_mt *t, const char *text, size_t len) {
    pthread_mutex_lock(&t->mu);
    if (t->tail - t->head == (uint64_t)t->cap) { pthread_mutex_unlock(&t->mu); return SB_EFULL; }
    slot_t *s = &t->ring[t->tail % (uint64_t)t->cap];
    pthread_mutex_unlock(&t->mu);
    /* the slot is free (taken): only this thread touches it until it is published below */
    if (len + 1 > s->cap) {
        size_t cap = len + 1 > 256 ? len + 1 : 256;
        char *x = realloc(s->text, cap);
        if (!x) return SB_ENOMEM;
        s->text = x;
        s->cap = cap;
    }
    memcpy(s->text, text, len);
    s->text[len] = '\0';
    s->len = len;
    s->res = NULL;
    s->done = 0;
    s->rc = SB_OK;
    pthread_mutex_lock(&t->mu);
    t->tail++;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->mu);
    return SB_OK;
}

int sb_pb_mt_take(sb_pb_mt *t, sb_pb_result **out, sb_pb_counters *counters, sb_pb_beam_stats *stats, uint64_t *ns) {
    *out = NULL;
    pthread_mutex_lock(&t->mu);
    if (t->head == t->tail) { pthread_mutex_unlock(&t->mu); return SB_EINVAL; }
    slot_t *s = &t->ring[t->head % (uint64_t)t->cap];
    while (!s->done) pthread_cond_wait(&t->done, &t->mu);
    *out = s->res;
    s->res = NULL;
    *counters = s->cnt;
    if (stats) *stats = s->stats;
    *ns = s->ns;
    int rc = s->rc;
    t->head++;
    pthread_mutex_unlock(&t->mu);
    return rc;
}


void sb_pb_mt_profile(sb_pb_mt *t, uint64_t *samples) {
    for (int k = 0; k < SB_PB_NPH; k++) samples[k] = 0;
    for (int i = 0; i < t->started; i++)
        for (int k = 0; k < SB_PB_NPH; k++) samples[k] += t->w[i].hist[k];
}

void sb_pb_mt_counts(sb_pb_mt *t, uint64_t *counts) {
    for (int k = 0; k < 4; k++) counts[k] = 0;
    pthread_mutex_lock(&t->mu);  /* the workers are idle when nothing is in flight; callers ask then */
    for (int i = 0; i < t->mo.threads; i++) {
        uint64_t c[4];
        if (!t->w[i].ws) continue;
        sb_pb_ws_counts(t->w[i].ws, c);
        for (int k = 0; k < 3; k++) counts[k] += c[k];
        counts[3] += c[3];
    }
    pthread_mutex_unlock(&t->mu);
}

int sb_pb_mt_pinned(sb_pb_mt *t) {
    if (!t->mo.pin) return 0;
    for (int i = 0; i < t->started; i++)
        if (!t->w[i].pinned) return 0;
    return 1;
}

void sb_pb_mt_free(sb_pb_mt *t) {
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < t->started; i++) pthread_join(t->tid[i], NULL);
    if (t->sampling) {
        atomic_store(&t->sampler_stop, 1);
        pthread_join(t->sampler, NULL);
    }
    if (t->ring) {
        for (int i = 0; i < t->cap; i++) {
            sb_pb_result_free(t->ring[i].res);
            free(t->ring[i].text);
        }
    }
    if (t->w)
        for (int i = 0; i < t->mo.threads; i++) sb_pb_ws_free(t->w[i].ws);
    free(t->ring);
    free(t->w);
    free(t->tid);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->done);
    free(t);
}
