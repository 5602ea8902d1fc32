#include "crash.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room for the handler's frame on any x86-64 or ARM machine (AVX-512 state included):
   MINSIGSTKSZ is not a constant in newer glibc. */
#define CRASH_STACK_SIZE (64 * 1024)

/* The faults (raised in the thread that caused them, so every thread must let them in)
   first, then every other signal whose default action ends the process (SIGINT, SIGTERM
   and SIGHUP excepted: the screen's loop reads those and quits in order). */
static const int CRASH_SIGNALS[] = {SIGSEGV,   SIGBUS,  SIGFPE,  SIGILL,  SIGABRT, SIGQUIT,
                                    SIGUSR1,   SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGXFSZ,
                                    SIGVTALRM, SIGPROF, SIGTRAP, SIGSYS};
enum { CRASH_SIGNAL_COUNT = sizeof CRASH_SIGNALS / sizeof CRASH_SIGNALS[0], CRASH_FAULTS = 5 };

/* Written once before the handlers are armed, only read by them. */
static struct {
    int fd;
    struct termios modes;
    char reset[256];
    size_t length;
    struct sigaction old[CRASH_SIGNAL_COUNT];
    void *stack; /* the arming thread's */
    bool armed;
} crash;

static void on_crash(int sig)
{
    ssize_t n = write(crash.fd, crash.reset, crash.length);
    (void)n;
    tcsetattr(crash.fd, TCSANOW, &crash.modes);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Blocked while the handler runs, so it is delivered on return, now with the default
       action; a fault also recurs when the instruction is retried. */
    raise(sig);
}

void *Crash_thread_begin(void)
{
    stack_t ss = {.ss_sp = malloc(CRASH_STACK_SIZE), .ss_size = CRASH_STACK_SIZE};
    if (!ss.ss_sp)
        return NULL;
    if (sigaltstack(&ss, NULL)) {
        free(ss.ss_sp);
        return NULL;
    }
    return ss.ss_sp;
}

void Crash_thread_end(void *stack)
{
    if (!stack)
        return;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(stack);
}

void Crash_unblock(sigset_t *mask)
{
    for (int i = 0; i < CRASH_FAULTS; i++)
        sigdelset(mask, CRASH_SIGNALS[i]);
}

int Crash_arm(int fd, const struct termios *modes, const char *reset)
{
    crash.stack = Crash_thread_begin();
    if (!crash.stack)
        return -1;
    crash.fd = fd;
    crash.modes = *modes;
    crash.length = strlen(reset);
    if (crash.length >= sizeof crash.reset)
        crash.length = sizeof crash.reset - 1;
    memcpy(crash.reset, reset, crash.length);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK;
    /* A signal the parent made us ignore stays ignored (nohup, a SIGPIPE-ignoring shell):
       catching it would turn what was harmless into an end. */
    for (int i = 0; i < CRASH_SIGNAL_COUNT; i++) {
        sigaction(CRASH_SIGNALS[i], NULL, &crash.old[i]);
        if (crash.old[i].sa_handler != SIG_IGN)
            sigaction(CRASH_SIGNALS[i], &sa, NULL);
    }
    crash.armed = true;
    return 0;
}

void Crash_disarm(void)
{
    if (!crash.armed)
        return;
    for (int i = 0; i < CRASH_SIGNAL_COUNT; i++)
        sigaction(CRASH_SIGNALS[i], &crash.old[i], NULL);
    Crash_thread_end(crash.stack);
    crash.armed = false;
}
