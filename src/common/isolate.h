/* The long LAPACK calls in a child process, where a stop can kill them (see isolate.c).
 *
 *     int main(...) { Isolate_start(); ... }      first, before any thread is started
 *     Linalg_set_isolation(la, Isolate_linalg());
 *     Linalg_set_stop(la, (LinalgStop){stop_requested, context});
 *
 * A long call on that Linalg then returns LINALG_STOPPED within ~0.1 s of the stop, and its
 * worker process is gone by then.  Without the helper (not started, or it died) every call
 * runs in process, as without isolation.
 */
#ifndef ATTNSCOPE_COMMON_ISOLATE_H
#define ATTNSCOPE_COMMON_ISOLATE_H

#include "attnscope/linalg.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Forks the helper process.  Must come before the program starts any thread, since a fork
   copies only the calling thread and whatever locks the others hold.  Returns 0, or -1 with
   errno when it could not (calls then run in process).  A second call does nothing. */
int Isolate_start(void);

/* Ends the helper and waits for it; later calls run in process.  Only while no isolated call
   runs.  The program need not call it: the helper ends when the program does. */
void Isolate_end(void);

/* The hook for Linalg_set_isolation; thread-safe (each call brings its own channel). */
LinalgIsolation Isolate_linalg(void);

/* The helper's process id (its workers are its children), or -1 when it is not running. */
pid_t Isolate_helper_pid(void);

/* A helper that dies (killed, or out of memory) is noticed at the next isolated call or
   Isolate_notice: it is reaped and, when the program said how (Isolate_restart_with), a new
   one runs PROGRAM ISOLATE_HELPER_OPTION FD, a fresh image (a fork of a program with threads
   could copy a lock held); PROGRAM's main hands FD to Isolate_serve first thing.  At most
   three restarts; then, or without a program, calls run in process. */
#define ISOLATE_HELPER_OPTION "--isolate-helper"
void Isolate_restart_with(const char *program);
_Noreturn void Isolate_serve(int socket);

/* What happened to isolation since the last call, for the screen to show: a dead helper
   (reaped and restarted, or isolation off) or a worker that died before answering (its call
   ran in process).  Checks the helper first.  True with the note in out. */
bool Isolate_notice(char *out, size_t size);

#endif
