/* The crash handler of the screen (crash.h), on a pseudo-terminal: a child process in raw
 * mode crashes for real (a stack overflow on the main thread and on a thread of its own,
 * abort) and the parent checks that it died by that signal after writing the reset
 * sequence and giving the terminal its saved modes back. */
#include "testing.h"

#include "crash.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define RESET "<reset>"

/* Recursion the compiler cannot turn into a loop: the frame is used after the call. */
static int deep(int n)
{
    volatile char frame[1024];
    frame[0] = (char)n;
    return n > 0 ? deep(n - 1) + frame[0] : 0;
}

static void *overflow_thread(void *arg)
{
    (void)arg;
    void *stack = Crash_thread_begin();
    deep(INT_MAX);
    Crash_thread_end(stack);
    return NULL;
}

typedef enum { OVERFLOW_MAIN, OVERFLOW_THREAD, ABORT, RAISE } Crash;

/* What RAISE raises (a signal that ends the process by default), and one the child ignores
   before arming (it must stay ignored). */
static int raised, ignored;

/* Runs a child that arms the handler for the pty's terminal side in its saved modes,
   switches to raw mode, and crashes as told.  Returns how it ended; the bytes the terminal
   received go to out. */
static int crash_child(Crash how, struct termios *saved, struct termios *after, char *out,
                       size_t size)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(tty >= 0);
    assert_int_equal(tcgetattr(tty, saved), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        struct termios raw = *saved;
        cfmakeraw(&raw);
        tcsetattr(tty, TCSANOW, &raw);
        /* A shell starts a background job with QUIT and INT ignored (POSIX): the signal
           under test must start at its default, whatever the test inherited. */
        if (how == RAISE)
            signal(raised, SIG_DFL);
        if (ignored)
            signal(ignored, SIG_IGN);
        if (Crash_arm(tty, saved, RESET))
            _exit(3);
        if (how == OVERFLOW_MAIN) {
            deep(INT_MAX);
        } else if (how == OVERFLOW_THREAD) {
            pthread_t t;
            pthread_create(&t, NULL, overflow_thread, NULL);
            pthread_join(t, NULL);
        } else if (how == RAISE) {
            raise(raised);
        } else {
            abort();
        }
        _exit(4); /* not reached: the crash ends the child */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(tcgetattr(tty, after), 0);
    fcntl(master, F_SETFL, O_NONBLOCK);
    ssize_t n = read(master, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
    close(tty);
    close(master);
    return status;
}

static void expect_restored(Crash how, int sig)
{
    struct termios saved, after;
    char out[256];
    int status = crash_child(how, &saved, &after, out, sizeof out);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
        fail_msg("the child ended with status 0x%x, expected death by signal %d", status, sig);
    assert_non_null(strstr(out, RESET));
    assert_true(after.c_lflag == saved.c_lflag && after.c_iflag == saved.c_iflag &&
                after.c_oflag == saved.c_oflag && after.c_cflag == saved.c_cflag);
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static void test_stack_overflow_on_the_main_thread(void **state)
{
    (void)state;
    if (SANITIZED) /* ASan reports the overflow itself */
        skip();
    expect_restored(OVERFLOW_MAIN, SIGSEGV);
}

static void test_stack_overflow_on_another_thread(void **state)
{
    (void)state;
    if (SANITIZED)
        skip();
    expect_restored(OVERFLOW_THREAD, SIGSEGV);
}

static void test_abort(void **state)
{
    (void)state;
    expect_restored(ABORT, SIGABRT);
}

/* Every signal that ends the process gives the terminal back too (QUIT, USR1, ALRM, PIPE and
   XCPU left it in raw mode, on the alternate screen, with the mouse reported). */
static void test_ending_signals(void **state)
{
    (void)state;
    const int ending[] = {SIGQUIT, SIGUSR1,   SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU,
                          SIGXFSZ, SIGVTALRM, SIGPROF, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++) {
        raised = ending[i];
        expect_restored(RAISE, ending[i]);
    }
}

/* A signal ignored when the screen starts stays ignored: the child lives on past it. */
static void test_ignored_stays_ignored(void **state)
{
    (void)state;
    struct termios saved, after;
    char out[256];
    raised = ignored = SIGPIPE;
    int status = crash_child(RAISE, &saved, &after, out, sizeof out);
    ignored = 0;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 4);
    assert_null(strstr(out, RESET));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_overflow_on_the_main_thread),
        cmocka_unit_test(test_stack_overflow_on_another_thread),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_ending_signals),
        cmocka_unit_test(test_ignored_stays_ignored),
    };
    return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
