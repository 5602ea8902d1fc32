/* Runs the two lanes of a model layer on two threads (Progress.run_pair): the caller's
 * thread takes lane 0, a second thread lane 1.  Used by batch mode and by the worker. */
#ifndef ATTNSCOPE_COMMON_PAIR_H
#define ATTNSCOPE_COMMON_PAIR_H

/* Matches Progress.run_pair; pair_context is unused.  Falls back to running both tasks in
   turn when no thread can be started. */
void Pair_run(void *pair_context, void (*task)(int which, void *context), void *context);

/* Called first and last on every thread the pair starts (the screen gives each thread an
   alternate signal stack this way).  begin may return NULL, which end accepts. */
void Pair_set_thread_hooks(void *(*begin)(void), void (*end)(void *));

#endif
