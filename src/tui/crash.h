/* A crash gives the terminal back before the process dies (htop's CRT_done before abort).
 * On SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, and on any other signal whose default
 * action ends the process (SIGQUIT, SIGUSR1, SIGALRM, SIGPIPE, SIGXCPU, ...; SIGINT, SIGTERM
 * and SIGHUP are the screen's to quit by), the handler writes a reset sequence
 * computed in advance and sets the saved terminal modes, with async-signal-safe calls only
 * (write, tcsetattr, sigaction, raise), then the signal ends the process with its default
 * action: the exit status and the core dump are the real ones.  The handler runs on an
 * alternate stack, so a stack overflow is caught too.
 */
#ifndef ATTNSCOPE_TUI_CRASH_H
#define ATTNSCOPE_TUI_CRASH_H

#include <signal.h>
#include <termios.h>

/* Arms the handlers for the terminal on fd: `modes` as they were before the screen took
   over, `reset` the bytes that undo the screen's modes (both copied).  Returns 0, or -1
   when the alternate stack cannot be had (then nothing is armed). */
int Crash_arm(int fd, const struct termios *modes, const char *reset);
/* Puts the previous handlers back. */
void Crash_disarm(void);

/* Removes the faults from a thread's signal mask: a fault in a thread that blocks its
   signal kills the process without running the handler.  (The other signals reach the
   threads that let them in, the main one at least.) */
void Crash_unblock(sigset_t *mask);
/* Each thread has its own alternate stack: a thread the screen starts calls begin first
   and end (with what begin returned) last.  NULL from begin: none, which end accepts. */
void *Crash_thread_begin(void);
void Crash_thread_end(void *stack);

#endif
