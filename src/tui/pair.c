#include "pair.h"

#include "crash.h"

#include <pthread.h>

typedef struct {
    void (*task)(int which, void *context);
    void *context;
} Lane;

static void *second_lane(void *arg)
{
    Lane *lane = arg;
    void *crash_stack = Crash_thread_begin();
    lane->task(1, lane->context);
    Crash_thread_end(crash_stack);
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
