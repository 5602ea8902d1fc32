/* Long LAPACK calls in a process of their own, so that a stop can end them: a superseded job
 * must give its core back within a second, and one dgeev at T = 4096 runs for a quarter of a minute
 * with no way to interrupt it from inside.
 *
 * Why a process: a thread cannot be cancelled safely in the middle of LAPACK (it may hold the
 * allocator's or OpenBLAS's locks, and its memory would leak); a process can be killed, and
 * the kernel takes everything back.
 *
 * Why a helper: by the time a call is stopped the program is multithreaded (the worker, the
 * lanes, OpenBLAS's pool), and fork copies only the calling thread: a lock another thread
 * held at that moment (OpenBLAS's buffer lock, stdio's) stays locked in the child forever.
 * So Isolate_start forks one helper first thing in main, before any thread exists.  The
 * helper stays single-threaded, never touches BLAS, and forks one worker per call.
 * (OpenBLAS's own fork handler shuts its idle pool down before that first fork, so the
 * helper's copy of OpenBLAS holds no thread and no lock, and each worker starts as fresh as
 * the program did.)
 *
 * A call: the caller copies the input into a memfd, maps it shared and sends the helper the
 * call's shape with two descriptors (SCM_RIGHTS on a SOCK_SEQPACKET socket, so concurrent
 * callers' messages stay whole): the memfd, and one end of a socketpair of the call's own.
 * The worker maps the memfd, answers on that socket with a pidfd of itself, runs the call
 * with Linalg_execute on the mapping at the caller's BLAS thread count (the same routine,
 * inputs and blocking: the same bits), and answers with the status.  The caller polls the
 * socket and the stop hook; on a stop it kills the worker through the pidfd (which, unlike a
 * pid, cannot name a recycled process) and waits on the pidfd until the worker is gone.
 * Every call, finished or stopped, returns only after its worker has exited.  The helper
 * ignores SIGCHLD, so the kernel reaps the workers: no zombies.
 *
 * The data is copied once each way, through memory: inputs in, outputs back; the destroyed
 * input is not copied back.  That, the fork and the worker's fresh workspace are the cost of
 * isolation, measured per call by bench/isolation_cost.c (bench/README.md, "Cancelling"):
 * tens of milliseconds, against a stop that would otherwise wait for the call's end.  The
 * memfd's pages are reserved (fallocate) before they are touched, since a shared page that cannot
 * be allocated at fault time is a SIGBUS.
 *
 * Isolation never fails a computation: no helper, no memory for the mapping, a failed fork
 * or a worker that dies on its own (the OOM killer) all make the call run in process.  Calls
 * too short to matter stay in process too (isolation_pays).
 *
 * Lifetimes: the helper leaves the terminal's foreground process group, so Ctrl-C and
 * Ctrl-Z reach only the program; it ends when its socket closes (the program ended, or
 * Isolate_end); workers get SIGKILL when the helper ends (PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE /* memfd_create, MSG_CMSG_CLOEXEC */

#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often a waiting caller looks at the stop hook. */
enum { POLL_MS = 20 };

/* Arrays in the shared mapping start on cache lines. */
enum { ARRAY_ALIGN = 64 };

/* The caller's end of the helper's socket, and the helper; -1 when not running.  Written by
   Isolate_start and Isolate_end, before and after the threads that call, and under lock by
   a restart; read under lock by the callers. */
static int requests = -1;
static pid_t helper = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Under lock: the program to run a new helper with (Isolate_restart_with; NULL: no restart),
   the restarts left, and a note for Isolate_notice not yet taken. */
static const char *helper_program;
static int restarts_left = 3;
static char note[256];

typedef struct {
    int routine, m, n, blas_threads;
    size_t offset[LINALG_CALL_ARRAYS]; /* bytes into the mapping */
    size_t length;                     /* of the mapping */
} Request;

enum { REPLY_STARTED, REPLY_DONE };
typedef struct {
    int kind;
    int status; /* REPLY_DONE: Linalg_execute's */
} Reply;

/* One message, with up to two descriptors. */
static int send_message(int socket, const void *data, size_t size, const int *fds, int count)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = size};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(2 * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (count) {
        msg.msg_control = control.space;
        msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(count * sizeof(int));
        memcpy(CMSG_DATA(c), fds, count * sizeof(int));
    }
    ssize_t sent;
    do
        sent = sendmsg(socket, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent == (ssize_t)size ? 0 : -1;
}

/* One message and the descriptors it carries (fds[i] = -1 beyond them).  Returns its size, 0
   at the end of the stream, -1 on an error. */
static ssize_t receive_message(int socket, void *data, size_t size, int *fds, int count)
{
    struct iovec iov = {.iov_base = data, .iov_len = size};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(2 * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.space,
                         .msg_controllen = CMSG_SPACE(count * sizeof(int))};
    for (int i = 0; i < count; i++)
        fds[i] = -1;
    ssize_t got;
    do
        got = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        memcpy(fds, CMSG_DATA(c), (size_t)(n < count ? n : count) * sizeof(int));
    }
    return got;
}

static void close_all(const int *fds, int count)
{
    for (int i = 0; i < count; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The call a request describes, on the mapping at base; false when the request does not fit
   the mapping (a request is never trusted to stay inside it). */
static bool call_of(const Request *rq, unsigned char *base, size_t mapped, LinalgCall *call)
{
    *call = (LinalgCall){.routine = (LinalgRoutine)rq->routine,
                         .m = rq->m,
                         .n = rq->n,
                         .blas_threads = rq->blas_threads};
    if (rq->routine < 0 || rq->routine >= LINALG_ROUTINES || rq->length > mapped)
        return false;
    call->arrays = Linalg_call_sizes(call->routine, rq->m, rq->n, call->size);
    if (!call->arrays)
        return false;
    for (int i = 0; i < call->arrays; i++) {
        size_t bytes = call->size[i] * sizeof(double);
        if (rq->offset[i] > rq->length || bytes > rq->length - rq->offset[i])
            return false;
        call->array[i] = (double *)(base + rq->offset[i]);
    }
    return true;
}

/* A worker: runs one call and exits.  Any failure before the call exits without a status,
   and the caller then runs the call itself. */
static _Noreturn void worker_main(const Request *rq, int memory, int reply, pid_t parent)
{
    /* Dies with the helper, which dies with the program: no worker outlives either. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
        _exit(1);
    int self = pidfd_open(getpid(), 0);
    Reply started = {.kind = REPLY_STARTED};
    if (self < 0 || send_message(reply, &started, sizeof started, &self, 1))
        _exit(1);
    close(self);
    struct stat st;
    if (fstat(memory, &st) || st.st_size < 0 || (size_t)st.st_size < rq->length)
        _exit(1);
    void *base = mmap(NULL, rq->length, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
    LinalgCall call;
    if (base == MAP_FAILED || !call_of(rq, base, rq->length, &call))
        _exit(1);
    Linalg *la = Linalg_new();
    if (!la)
        _exit(1);
    Linalg_set_blas_threads(call.blas_threads);
    Reply done = {.kind = REPLY_DONE, .status = Linalg_execute(la, &call)};
    send_message(reply, &done, sizeof done, NULL, 0);
    /* _exit: no atexit handlers, no stdio flush of buffers copied from the program. */
    _exit(0);
}

void Isolate_serve(int socket)
{
    setpgid(0, 0);
    signal(SIGCHLD, SIG_IGN);
    pid_t self = getpid();
    for (;;) {
        Request rq;
        int fds[2];
        ssize_t got = receive_message(socket, &rq, sizeof rq, fds, 2);
        if (got <= 0) /* the program closed its end */
            _exit(0);
        /* A failed fork closes the call's socket unanswered: the caller computes in process. */
        if (got == sizeof rq && fds[0] >= 0 && fds[1] >= 0 && fork() == 0) {
            close(socket);
            worker_main(&rq, fds[0], fds[1], self);
        }
        close_all(fds, 2);
    }
}

int Isolate_start(void)
{
    if (requests >= 0)
        return 0;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair))
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close_all(pair, 2);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        close(pair[0]);
        Isolate_serve(pair[1]);
    }
    close(pair[1]);
    requests = pair[0];
    helper = pid;
    return 0;
}

void Isolate_end(void)
{
    pthread_mutex_lock(&lock);
    if (requests >= 0) {
        close(requests);
        requests = -1;
        while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
            ;
        helper = -1;
    }
    pthread_mutex_unlock(&lock);
}

void Isolate_restart_with(const char *program)
{
    pthread_mutex_lock(&lock);
    helper_program = program;
    pthread_mutex_unlock(&lock);
}

/* Under lock: a new helper, program ISOLATE_HELPER_OPTION FD, forked and at once replaced by
   a fresh image (only async-signal-safe calls between: the program has threads now, whose
   locks a plain fork would copy held).  0, or -1 with the helper still absent. */
static int spawn_helper(void)
{
    int pair[2];
    char fd_text[16];
    if (!helper_program || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair))
        return -1;
    snprintf(fd_text, sizeof fd_text, "%d", pair[1]);
    char *argv[] = {(char *)helper_program, ISOLATE_HELPER_OPTION, fd_text, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        if (fcntl(pair[1], F_SETFD, 0) == 0)
            execv(helper_program, argv);
        _exit(127);
    }
    close(pair[1]);
    if (pid < 0) {
        close(pair[0]);
        return -1;
    }
    requests = pair[0];
    helper = pid;
    return 0;
}

/* Under lock: when the helper has ended (killed, or gone with its socket), reaps it (no
   zombie), starts another where it can (a few times at most) and leaves the note of it. */
static void check_helper(void)
{
    int status;
    if (helper < 0 || waitpid(helper, &status, WNOHANG) != helper)
        return;
    char how[64];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
    pid_t old = helper;
    close(requests);
    requests = -1;
    helper = -1;
    if (restarts_left > 0 && spawn_helper() == 0) {
        restarts_left--;
        snprintf(note, sizeof note, "the LAPACK helper process %d ended (%s): restarted as %d",
                 (int)old, how, (int)helper);
    } else {
        snprintf(note, sizeof note,
                 "the LAPACK helper process %d ended (%s): long LAPACK calls now run in "
                 "process, and a stop waits for the one running",
                 (int)old, how);
    }
}

bool Isolate_notice(char *out, size_t size)
{
    pthread_mutex_lock(&lock);
    check_helper();
    bool any = note[0] != '\0';
    if (any) {
        snprintf(out, size, "%s", note);
        note[0] = '\0';
    }
    pthread_mutex_unlock(&lock);
    return any;
}

pid_t Isolate_helper_pid(void)
{
    pthread_mutex_lock(&lock);
    pid_t pid = helper;
    pthread_mutex_unlock(&lock);
    return pid;
}

/* A call goes to a worker from the size where it takes about 0.1 s on one core (measured
   in process on the development machine), in work m·n·min(m, n).  A shorter call delays a
   stop less than that, and the worker's costs (the fork, the copies, a fresh workspace)
   would be a larger share of it: 10-15% there, a few percent at twice the size.  The QR
   starts later, at ~0.25 s: it runs once per job (the input), and at 1024 its worker cost
   up to 40% on a loaded machine (bench/isolation_cost.c). */
static const double ISOLATED_FROM[LINALG_ROUTINES] = {
    [LINALG_EIGENVALUES] = 512.0 * 512 * 512, [LINALG_SINGULAR_VALUES] = 896.0 * 896 * 896,
    [LINALG_SVD] = 640.0 * 640 * 640,         [LINALG_SYMMETRIC_EIGENVALUES] = 1280.0 * 1280 * 1280,
    [LINALG_GRAM] = 1536.0 * 1536 * 1536,     [LINALG_ORTHONORMAL] = 1536.0 * 1536 * 1536,
    [LINALG_SOLVE] = 2048.0 * 2048 * 2048,    [LINALG_CHOLESKY] = 2560.0 * 2560 * 2560,
};

static bool isolation_pays(const LinalgCall *call)
{
    /* The Gram matrix costs m·m·n whichever of m and n is larger. */
    double k = call->routine == LINALG_GRAM ? call->m : call->m < call->n ? call->m : call->n;
    return (double)call->m * call->n * k >= ISOLATED_FROM[call->routine];
}

typedef struct {
    int fd;
    unsigned char *base;
    size_t length;
    size_t offset[LINALG_CALL_ARRAYS];
} Shared;

static int shared_open(Shared *sh, const LinalgCall *call)
{
    size_t length = 0;
    for (int i = 0; i < call->arrays; i++) {
        sh->offset[i] = length;
        size_t bytes = call->size[i] * sizeof(double);
        length += (bytes + ARRAY_ALIGN - 1) / ARRAY_ALIGN * ARRAY_ALIGN;
    }
    sh->length = length;
    sh->fd = memfd_create("attnscope-linalg", MFD_CLOEXEC);
    if (sh->fd < 0)
        return -1;
    if (posix_fallocate(sh->fd, 0, (off_t)length) == 0) {
        sh->base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, sh->fd, 0);
        if (sh->base != MAP_FAILED)
            return 0;
    }
    close(sh->fd);
    return -1;
}

static void shared_close(Shared *sh)
{
    munmap(sh->base, sh->length);
    close(sh->fd);
}

static bool stop_requested(LinalgStop stop)
{
    return stop.requested && stop.requested(stop.context);
}

/* Until the process behind pidfd has exited. */
static void wait_gone(int pidfd)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
}

/* The worker's answers on reply, polling stop meanwhile.  A stop before the worker has sent
   its pidfd waits for it (a fork away) so that the worker can be killed; so does a failing
   channel, whose worker's result could not be had. */
static int await_worker(int reply, LinalgStop stop)
{
    int worker = -1;
    bool stopping = false, done = false;
    int status = LINALG_NOT_ISOLATED; /* unless the worker answers */
    for (;;) {
        struct pollfd p = {.fd = reply, .events = POLLIN};
        int ready = poll(&p, 1, POLL_MS);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0) {
            Reply r;
            int fd;
            if (receive_message(reply, &r, sizeof r, &fd, 1) != sizeof r) {
                close_all(&fd, 1); /* the worker died, or was never born */
                /* Only a worker that sent its pidfd is known to have lived: a failed fork
                   closes the socket as a worker killed before that message (a few system
                   calls after its fork) would, and a fork that failed is no death to tell. */
                if (worker >= 0 && !stopping) {
                    pthread_mutex_lock(&lock);
                    snprintf(note, sizeof note,
                             "a LAPACK worker process died before answering: its call ran "
                             "again in process");
                    pthread_mutex_unlock(&lock);
                }
                break;
            }
            if (r.kind == REPLY_DONE) {
                done = true;
                /* The worker's own memory ran out: the caller's may not have. */
                status = r.status == LINALG_OUT_OF_MEMORY ? LINALG_NOT_ISOLATED : r.status;
                break;
            }
            if (worker < 0)
                worker = fd;
            else
                close_all(&fd, 1);
        }
        stopping = stopping || stop_requested(stop);
        if (stopping && worker >= 0)
            break;
    }
    if (worker >= 0) {
        if (!done)
            pidfd_send_signal(worker, SIGKILL, NULL, 0);
        wait_gone(worker);
        close(worker);
    }
    return stopping ? LINALG_STOPPED : status;
}

static int isolate_run(void *context, const LinalgCall *call, LinalgStop stop)
{
    (void)context;
    if (!isolation_pays(call))
        return LINALG_NOT_ISOLATED;
    if (stop_requested(stop))
        return LINALG_STOPPED;
    Shared sh = {.fd = -1};
    if (shared_open(&sh, call))
        return LINALG_NOT_ISOLATED;
    for (int i = 0; i < call->inputs; i++)
        memcpy(sh.base + sh.offset[i], call->array[i], call->size[i] * sizeof(double));
    Request rq = {.routine = call->routine,
                  .m = call->m,
                  .n = call->n,
                  .blas_threads = call->blas_threads,
                  .length = sh.length};
    memcpy(rq.offset, sh.offset, sizeof rq.offset);
    int status = LINALG_NOT_ISOLATED;
    int reply[2];
    if (!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, reply)) {
        int fds[2] = {sh.fd, reply[1]};
        pthread_mutex_lock(&lock);
        check_helper();
        int sent = requests >= 0 ? send_message(requests, &rq, sizeof rq, fds, 2) : -1;
        pthread_mutex_unlock(&lock);
        close(reply[1]);
        if (!sent)
            status = await_worker(reply[0], stop);
        close(reply[0]);
    }
    if (status != LINALG_NOT_ISOLATED && status != LINALG_STOPPED)
        for (int i = 1; i < call->arrays; i++)
            memcpy(call->array[i], sh.base + sh.offset[i], call->size[i] * sizeof(double));
    shared_close(&sh);
    return status;
}

LinalgIsolation Isolate_linalg(void)
{
    return (LinalgIsolation){.run = isolate_run};
}
