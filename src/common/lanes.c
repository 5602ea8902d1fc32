#include "lanes.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct Lanes {
    pthread_t thread;
    bool started;
    void *(*begin)(void);
    void (*end)(void *);

    pthread_mutex_t lock;
    pthread_cond_t posted; /* a task was handed over, a pair posted, or quit was set */
    pthread_cond_t done;   /* the lane thread finished its task, or a claimed one */
    /* Guarded by lock.  Counting hand-overs rather than flagging them keeps a run's wake-up
       from being mistaken for the next one's. */
    unsigned long handed, finished;
    bool quit;
    void (*task)(int which, void *context);
    void *context;
    /* Lanes_run_claimed's pair, guarded by lock: its two tasks go, in order, to whichever
       thread asks first; claimed and ended count them (claimed == LANE_PAIR: none left). */
    void (*pair_task)(int which, void *context);
    void *pair_context;
    int claimed, ended;
};

enum { LANE_PAIR = 2 };

/* The next unclaimed task of the posted pair, or -1: the lock is held. */
static int claim(Lanes *l)
{
    return l->pair_task && l->claimed < LANE_PAIR ? l->claimed++ : -1;
}

/* Runs claimed task `which` with the lock released, and counts it ended. */
static void run_claimed(Lanes *l, int which)
{
    void (*task)(int, void *) = l->pair_task;
    void *context = l->pair_context;
    pthread_mutex_unlock(&l->lock);
    task(which, context);
    pthread_mutex_lock(&l->lock);
    l->ended++;
}

static void *lane_main(void *arg)
{
    Lanes *l = arg;
    void *hook = l->begin ? l->begin() : NULL;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        int which = -1;
        /* A handed task first: it was handed before any pair was posted beside it. */
        while (l->finished == l->handed && (which = claim(l)) < 0 && !l->quit)
            pthread_cond_wait(&l->posted, &l->lock);
        if (which >= 0) {
            run_claimed(l, which);
            pthread_cond_broadcast(&l->done);
            continue;
        }
        if (l->finished == l->handed)
            break; /* quit, with nothing left to run */
        void (*task)(int, void *) = l->task;
        void *context = l->context;
        pthread_mutex_unlock(&l->lock);
        task(1, context);
        pthread_mutex_lock(&l->lock);
        l->finished++;
        pthread_cond_broadcast(&l->done);
    }
    pthread_mutex_unlock(&l->lock);
    if (l->end)
        l->end(hook);
    return NULL;
}

Lanes *Lanes_new(void *(*begin)(void), void (*end)(void *))
{
    Lanes *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->begin = begin;
    l->end = end;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->posted, NULL);
    pthread_cond_init(&l->done, NULL);
    l->started = pthread_create(&l->thread, NULL, lane_main, l) == 0;
    return l;
}

void Lanes_start(void *lanes, void (*task)(int which, void *context), void *context)
{
    Lanes *l = lanes;
    if (!l || !l->started) {
        task(1, context);
        return;
    }
    pthread_mutex_lock(&l->lock);
    l->task = task;
    l->context = context;
    l->handed++;
    pthread_cond_signal(&l->posted);
    pthread_mutex_unlock(&l->lock);
}

bool Lanes_finished(void *lanes, bool wait)
{
    Lanes *l = lanes;
    if (!l || !l->started)
        return true;
    pthread_mutex_lock(&l->lock);
    while (wait && l->finished != l->handed)
        pthread_cond_wait(&l->done, &l->lock);
    bool finished = l->finished == l->handed;
    pthread_mutex_unlock(&l->lock);
    return finished;
}

void Lanes_run(void *lanes, void (*task)(int which, void *context), void *context)
{
    Lanes *l = lanes;
    if (!l || !l->started) {
        task(0, context);
        task(1, context);
        return;
    }
    Lanes_start(l, task, context);
    task(0, context);
    Lanes_finished(l, true);
}

void Lanes_run_claimed(void *lanes, void (*task)(int which, void *context), void *context)
{
    Lanes *l = lanes;
    if (!l || !l->started) {
        task(0, context);
        task(1, context);
        return;
    }
    pthread_mutex_lock(&l->lock);
    l->pair_task = task;
    l->pair_context = context;
    l->claimed = l->ended = 0;
    pthread_cond_signal(&l->posted);
    int which;
    while ((which = claim(l)) >= 0)
        run_claimed(l, which);
    while (l->ended < LANE_PAIR)
        pthread_cond_wait(&l->done, &l->lock);
    l->pair_task = NULL;
    pthread_mutex_unlock(&l->lock);
}

void Lanes_free(Lanes *l)
{
    if (!l)
        return;
    if (l->started) {
        pthread_mutex_lock(&l->lock);
        l->quit = true;
        pthread_cond_signal(&l->posted);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
    }
    pthread_cond_destroy(&l->done);
    pthread_cond_destroy(&l->posted);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
