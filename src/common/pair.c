#include "pair.h"

#include <pthread.h>

typedef struct {
    void (*task)(int which, void *context);
    void *context;
} Lane;

static void *(*thread_begin)(void);
static void (*thread_end)(void *);

void Pair_set_thread_hooks(void *(*begin)(void), void (*end)(void *))
{
    thread_begin = begin;
    thread_end = end;
}

static void *second_lane(void *arg)
{
    Lane *lane = arg;
    void *hook = thread_begin ? thread_begin() : NULL;
    lane->task(1, lane->context);
    if (thread_end)
        thread_end(hook);
    return NULL;
}

void Pair_run(void *pair_context, void (*task)(int which, void *context), void *context)
{
    (void)pair_context;
    Lane lane = {task, context};
    pthread_t thread;
    if (pthread_create(&thread, NULL, second_lane, &lane) != 0) {
        task(0, context);
        task(1, context);
        return;
    }
    task(0, context);
    pthread_join(thread, NULL);
}
