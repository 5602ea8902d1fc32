/* The two lanes of a model layer (Progress.run_pair) on one long-lived thread: the caller's
 * thread runs lane 0 while the lane thread runs lane 1.  The thread is started once, by
 * Lanes_new, and reused by every run, so a run costs a hand-over, not a thread's creation.
 * Used by batch mode and by the screen's worker; batch also hands the lane thread work to run
 * beside the caller's (Progress.start_second: the shown layer's eigenvalues), and posts the
 * pairs meanwhile for either thread to claim (Progress.run_claimed), so that the lane thread
 * takes a network step as soon as those eigenvalues end.
 */
#ifndef ATTNSCOPE_COMMON_LANES_H
#define ATTNSCOPE_COMMON_LANES_H

#include <stdbool.h>

typedef struct Lanes Lanes;

/* Starts the lane thread, which inherits the caller's signal mask.  begin is called first
   on that thread and end, with what begin returned, last (the screen gives the thread an
   alternate signal stack this way); either may be NULL.  Returns NULL only when out of
   memory.  When the thread cannot be started, the object still works: it runs both lanes
   in turn on the caller's thread. */
Lanes *Lanes_new(void *(*begin)(void), void (*end)(void *));

/* Progress.run_pair, with pair_context the Lanes (or NULL: both lanes in turn): runs
   task(0, context) on the calling thread and task(1, context) on the lane thread, and
   returns when both are done.  One caller at a time. */
void Lanes_run(void *lanes, void (*task)(int which, void *context), void *context);

/* Progress.start_second and .second_finished: hands task(1, context) to the lane thread and
   returns at once (without the thread, runs it here to its end), so that the caller goes on
   with other work beside it.  Lanes_finished says whether that task is done, waiting for it
   first when `wait` is set; a task handed over must be waited for before the next
   Lanes_start or Lanes_run, and before Lanes_free. */
void Lanes_start(void *lanes, void (*task)(int which, void *context), void *context);
bool Lanes_finished(void *lanes, bool wait);

/* Progress.run_claimed: runs task(0, context) and task(1, context), each on whichever thread
   claims it first: the caller's, which claims them in turn until none is left, or the lane
   thread once it is free (of a task Lanes_start handed it, which may still run), and returns
   when both are done.  Without the thread, both in turn here.  One caller at a time. */
void Lanes_run_claimed(void *lanes, void (*task)(int which, void *context), void *context);

/* Stops and joins the lane thread (which must be idle) and frees the object; NULL is
   accepted. */
void Lanes_free(Lanes *l);

#endif
