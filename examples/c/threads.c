/*
 * threads: programs that start threads with pthread_create, the
 * regression programs of a node's threads (cmc/tests/process_threads.rs,
 * issue 28). Each reports on fd 3 what its future depends on.
 *
 *   threads NODE basic
 *
 * Node 0's main thread starts three workers. Each takes a mutex, adds one
 * to a count, notes its thread id and its own thread-local value, signals
 * a condition variable and ends; the main thread waits on the condition
 * variable until the count is 3, joins the three, and checks what they
 * noted: three thread ids apart from each other and from its own, each
 * worker's thread-local value its own. It reports [count, checks passed]
 * and waits for a client that never comes (an accept). Any failed check
 * exits with 2 or more.
 *
 *   threads NODE lease [BUG]
 *
 * A lease server with a worker thread. The main thread accepts a client,
 * reads its request, and hands it to the worker through a queue under a
 * mutex and a condition variable; the worker decides: the lease to the
 * first asker ("G"), "D" to every later one, and reports [held, grants].
 * With BUG ("bug"), the worker grants every asker: two clients get "G".
 *
 *   threads NODE shutread
 *
 * The main thread accepts a client, starts a thread that shuts the
 * connection for reading (SHUT_RD), and reads it: Linux ends the read
 * with 0 at once, and the program aborts then (a review's probe; the
 * read waited for the request before).
 *
 *   threads NODE sigpipe
 *
 * A worker blocks SIGPIPE and writes to a pipe whose reader is closed:
 * EPIPE, and the signal stays pending for the worker alone; the node
 * reports [1] and serves (it was killed by SIGPIPE before: the checker
 * read the main thread's mask and signalled the process).
 *
 *   threads NODE abort
 *
 * A worker aborts (`abort` sends SIGABRT to its own thread id): the node
 * is killed by the signal.
 *
 *   threads NODE robust
 *
 * A worker ends holding a robust mutex; Linux marks it owner-died by the
 * worker's real thread id. The checker's ids are virtual: an error.
 *
 *   threads NODE mainexit
 *
 * The main thread starts a worker that serves, and ends itself with
 * pthread_exit; the worker reports [5] and accepts.
 *
 *   threads NODE regs
 *
 * The main thread accepts a client and joins a worker, which puts known
 * values in rbx, r12 to r15 and xmm8, xmm9 and xmm15, rounds downward
 * (MXCSR), and reads the request with a raw `syscall`; after it, it
 * checks that every one of them, its thread-local value and its errno's
 * place are as they were, and reports [1], or aborts. The read is
 * answered in a fork of the parked process, where the worker was made
 * again from its captured frame (a snapshot of a process with threads).
 *
 *   threads NODE fenew
 *
 * The main thread accepts a client, rounds upward (MXCSR) and starts a
 * worker, which checks that it rounds upward too (a new thread has its
 * creator's floating-point environment) and reports [1], or aborts. With
 * a thread switch the node is held where the worker is made and not yet
 * run (every signal blocked, as glibc starts a thread): not snapshotted.
 *
 *   threads NODE smallstack
 *
 * A worker with a 16 KiB stack accepts a client, takes 10,000 bytes of
 * it and reads the request with a raw `syscall`, then reports [1]: too
 * little room left for the snapshot handler's frame, so the process is
 * not snapshotted (its capture killed it).
 *
 *   threads NODE stackmerge
 *
 * Two workers on 16 KiB stacks without guard pages, which glibc maps next
 * to each other and the kernel merges into one mapping. The first
 * accepts a client and reads its request deep in its stack, 1,500 bytes
 * above its lowest address; the second notes the top 512 bytes below the
 * first's stack and waits on a pipe the first writes after its read,
 * then checks them and its thread-local value, and reports [1], or
 * aborts. A capture's frame must not reach below the first's stack.
 *
 *   threads NODE pipelater
 *
 * The main thread accepts a client and joins a worker, which blocks
 * SIGPIPE, gets EPIPE from a pipe with no reader (the signal pending for
 * it), reads the request and unblocks SIGPIPE: on Linux the pending
 * signal kills the node then. A fork of the parked process would not
 * have it (the kernel copies no pending signal), so such a process is
 * not snapshotted.
 *
 *   threads NODE race
 *
 * The main thread accepts a client, starts two workers and joins them;
 * each takes a mutex
 * and, if none came before it, notes itself as the first. It reports
 * [first]. In the fixed order worker 1 runs first; with a thread switch,
 * worker 2 may (on Linux either may).
 *
 *   threads NODE preempt
 *
 * The main thread accepts a client, starts a worker, and without waiting
 * writes 'A' to a pipe; the worker writes 'B'. The main thread joins it
 * and reports [the first byte]. In the fixed order 'A' is first (the
 * worker runs once the main thread waits); a thread switch before the
 * main thread's write runs the worker first, as Linux may (a review's
 * probe: with switches only where a thread waits, 'B' first was never
 * found).
 *
 *   threads NODE waitall
 *
 * Two nodes. Node 1 dials node 0 and writes "AB", "CD", "EF". Node 0's
 * worker polls the connection, wakes the main thread, and receives 4
 * bytes with MSG_WAITALL ("AB", then it waits); the main thread writes to
 * a pipe (which makes the worker's wait be made again) and joins. Linux
 * gives the worker "ABCD"; it aborts on anything else (a review's probe:
 * the wait made again lost "AB" and got "CDEF").
 *
 *   threads NODE killblock
 *
 * A worker blocks SIGUSR1 and sends it to the process: Linux gives it to
 * the main thread, which does not block it, and the process dies. Not
 * modelled: an error.
 *
 *   threads NODE two
 *
 * Two threads wait at once for what the world brings: the main thread in
 * an accept, a second in a read of a connection it dialled to its own
 * node. The main thread accepts that connection and closes it, and the
 * reader's read ends with 0; the node reports [1] when it has.
 *
 *   threads NODE timedwait [mono]
 *
 * A worker waits on a condition variable with a timeout of a second
 * (`pthread_cond_timedwait`: a futex wait with an absolute timeout on the
 * real-time clock, or with "mono" on the monotonic one); nobody signals
 * it, so it times out, and the node reports [1]; the main thread accepts
 * meanwhile.
 *
 *   threads NODE futexsolo
 *
 * No thread: the main thread waits on a futex word nobody wakes, with a
 * relative timeout of a second (FUTEX_WAIT), and on ETIMEDOUT reports [1]
 * and accepts.
 *
 *   threads NODE retimeo set|clear
 *
 * Two nodes; node 1 dials node 0 and waits. Node 0 accepts, starts a
 * thread that reads the connection (exiting 7 if the read fails), and
 * after 200 ms changes the connection's receive timeout ("set": none at
 * the read's start, then a second; "clear": a second at its start, then
 * none) and makes a pipe (a change that makes the read be made again).
 * Linux reads the timeout once, when the read begins: "set" waits for
 * ever, "clear" fails after a second (a review's probes).
 *
 *   threads NODE closeunder
 *
 * Two nodes, as retimeo; node 0's main thread, after 200 ms, closes the
 * connection the thread reads and makes a pipe, which takes its number,
 * and writes "P" into it. On Linux the read goes on with the connection's
 * file; the checker does not model a file kept open by a wait: an error
 * (a review's probe: the read was made again on the pipe and got "P").
 *
 *   threads NODE exitwhile accept|cond
 *
 * Two nodes; node 1 dials node 0 and waits. Node 0 accepts, starts a
 * thread that reads the connection with a receive timeout of a second
 * and exits 7 (`exit`, every thread) when it fails, while the main thread
 * waits in accept, or on a condition variable: the node ends with 7 (a
 * review's probe: its end was sometimes taken for the thread's alone).
 *
 *   threads NODE futexerrs
 *
 * No thread: futex calls the kernel refuses, each checked for Linux's
 * answer (FUTEX_CLOCK_REALTIME with FUTEX_WAIT or FUTEX_WAKE: ENOSYS; a
 * bad timeout, even with the word changed: EINVAL; a bitset of 0: EINVAL;
 * a zero timeout: ETIMEDOUT); it reports how many matched (5), aborting
 * on the first that does not, and accepts.
 *
 *   threads NODE abortwait
 *
 * A worker accepts a client, reads its request, reports [1] and aborts,
 * while the main thread waits in pause(): the node is killed by SIGABRT
 * (a review's probe: the node was sometimes taken for a live one, waiting,
 * the thread's end for its own alone).
 *
 *   threads NODE perconn [bug|timed|split]
 *
 * A thread per connection: the main thread accepts, and starts a thread
 * for each connection, which reads requests and answers each under a
 * mutex: the lease ("G") to the first asker, its holder the request's
 * second byte, "D" to every later one; a read that ends the connection
 * (its end, or its receive timeout) ends the thread, which closes it. It
 * reports [holder, grants, connections ended]. With "bug" it grants
 * every asker. With "timed" each connection's thread reads with a receive
 * timeout of a second. With "split" a thread checks that the lease is
 * free under the mutex, and takes it under the mutex again, with its
 * report between: a second connection's thread may check in between, on
 * Linux, and both are granted.
 *
 *   threads NODE pollrace
 *
 * Two nodes; node 1 dials node 0, writes "A" and waits. Node 0 accepts,
 * starts a worker that polls the connection and then, after a spin with
 * no call, receives with MSG_DONTWAIT, aborting on EAGAIN; the main
 * thread reads the connection meanwhile. On Linux the data wakes both,
 * and the main thread's read may take it first (the worker aborts); the
 * checker must offer that read before the worker's receive (a third
 * review's probe passed: a wait another thread's wake ended was made
 * ready only where that thread waited next).
 *
 *   threads NODE selleft | tfdarm | pipeunder
 *
 * A fourth review's probes of waits made again, one node each. "selleft":
 * a worker selects on a pipe with a timeout of 5 s; the main thread
 * sleeps a second and writes the pipe; the worker aborts unless select
 * wrote back about 4 s left (Linux: 4,000 ms; made again, it wrote back
 * the whole timeout). "tfdarm": a worker reads a timerfd not armed; the
 * main thread, after 100 ms, arms it for a second; the read returns then,
 * and the worker aborts (Linux: every run; the read was never made again).
 * "pipeunder": the main thread closes the pipe end a worker reads, makes a
 * pipe that takes its number and writes into it: an error (Linux: the
 * read waits on in the old pipe; it returned the new pipe's byte).
 *
 *   threads NODE preadv2 | evfull | epaddtfd | stale
 *
 * A fifth review's probes, one node each; the worker aborts once its wait
 * ends (every native run aborts), but for "stale". "preadv2": the worker
 * reads a pipe with `preadv2` at offset -1; the main thread writes it.
 * "evfull": the worker writes 1 to an eventfd whose count is at its most
 * but one; the main thread reads it (room). "epaddtfd": the worker waits
 * in an empty epoll instance; the main thread arms a timerfd for 50 ms and
 * adds it. "stale": the worker polls a pipe with a 10 ms timeout; the main
 * thread writes a byte and reads it back at once, computes (no call), and
 * aborts if the worker timed out meanwhile (natively, some runs).
 *
 *   threads NODE evwritev | waitallpair | epother | dlmark
 *
 * A sixth review's probes, one node each. "evwritev": a worker's writev
 * of 5 and of the most but 5 to an eventfd (the second waits for room):
 * an error with threads. "waitallpair": a worker's MSG_WAITALL receive of
 * 10 bytes of a socketpair the main thread writes 5 to: an error with
 * threads. "epother": a worker polls an empty pipe with a 10 ms timeout
 * while an epoll instance it does not wait in has a ready eventfd; the
 * main thread sleeps 1 ms, computes, and aborts if the worker timed out
 * meanwhile. "dlmark": one worker polls pipe A for 10 ms, another pipe B
 * for 20 ms, noting its timeout; the main thread writes A, computes, and
 * aborts if the second timed out meanwhile. Natively both abort.
 *
 *   threads NODE epclose | epdup | eptmadd | eptfreuse
 *
 * A tokio probe's, one node each (a runtime of two workers: one deletes
 * a connection from the epoll instance and closes it while the other
 * waits in epoll_wait). "epclose": a worker waits in an epoll instance
 * watching eventfds A and B; the main thread deletes A, closes it and
 * writes B; the worker aborts unless it gets B alone. "epdup": the worker
 * waits through a duplicate of the instance (F_DUPFD_CLOEXEC); the main
 * thread writes B, computes (no call), and aborts if the worker has run
 * meanwhile: natively every run aborts. A review's: "eptmadd": the main
 * thread adds a timerfd armed for 1 ms to the instance under the wait,
 * computes, and aborts if the worker (which wants the timer alone) has
 * run meanwhile: natively every run aborts. "eptfreuse": A is a timerfd,
 * not armed; the main thread deletes and closes it, makes a timerfd at
 * its number (not added), arms it for 1 ms, reads it, and writes B; the
 * worker aborts unless it gets B alone: natively no run aborts.
 *
 *   threads NODE shuttimeo
 *
 * Two nodes; node 1 dials node 0 and waits. Node 0 accepts, sets a
 * receive timeout of a second, starts a worker that reads the connection;
 * after 100 ms the main thread shuts the connection for reading and notes
 * it. The worker aborts on EAGAIN after the shutdown: Linux ends the read
 * with 0 there (the shutdown is looked at before the timeout; a review:
 * TIMEOUT failed the read after it).
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int count;
static pid_t tids[3];
static int locals[3];
static __thread int mine;

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    mine = 100 + i;
    pthread_mutex_lock(&mu);
    count++;
    tids[i] = (pid_t)syscall(SYS_gettid);
    locals[i] = mine;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return (void *)(intptr_t)(i + 1);
}

static int basic(int me)
{
    pthread_t t[3];
    mine = 7;
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0)
            return 2;
    pthread_mutex_lock(&mu);
    while (count < 3)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    uint8_t checks = 0;
    for (int i = 0; i < 3; i++) {
        void *ret;
        if (pthread_join(t[i], &ret) != 0 || ret != (void *)(intptr_t)(i + 1))
            return 3;
    }
    pid_t self = (pid_t)syscall(SYS_gettid);
    checks += tids[0] != tids[1] && tids[1] != tids[2] && tids[0] != tids[2];
    checks += tids[0] != self && tids[1] != self && tids[2] != self && self == getpid();
    checks += locals[0] == 100 && locals[1] == 101 && locals[2] == 102 && mine == 7;
    if (checks != 3)
        return 4;
    uint8_t s[2] = {(uint8_t)count, checks};
    cmc_record_write(CMC_STATE_FD, s, 2);
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            close(c);
    }
}

/* The lease server's queue: at most one request waits. */
static int pending = -1;
static int bug;
static uint8_t state[2];

static void *decider(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (pending < 0)
            pthread_cond_wait(&cv, &mu);
        int c = pending;
        pending = -1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        const char *reply = "D";
        if (!state[0] || bug) {
            state[0] = 1;
            state[1]++;
            reply = "G";
        }
        cmc_record_write(CMC_STATE_FD, state, 2);
        if (write(c, reply, 1) != 1)
            exit(5);
        close(c);
    }
    return NULL;
}

static int lease(int me)
{
    pthread_t t;
    cmc_record_write(CMC_STATE_FD, state, 2);
    if (pthread_create(&t, NULL, decider, NULL) != 0)
        return 2;
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        char req[8];
        if (c < 0 || read(c, req, sizeof req) <= 0)
            return 3;
        pthread_mutex_lock(&mu);
        while (pending >= 0)
            pthread_cond_wait(&cv, &mu);
        pending = c;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static void *reader(void *arg)
{
    int c = (int)(intptr_t)arg;
    char b;
    if (read(c, &b, 1) != 0)
        exit(6);
    uint8_t ended = 1;
    cmc_record_write(CMC_STATE_FD, &ended, 1);
    return NULL;
}

static int two(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    int l = cmc_listen(me);
    int c = cmc_dial(me);
    pthread_t t;
    if (c < 0 || pthread_create(&t, NULL, reader, (void *)(intptr_t)c) != 0)
        return 2;
    for (;;) {
        int a = accept(l, NULL, NULL);
        if (a >= 0)
            close(a);
    }
}

/* perconn's state: [holder, grants, connections ended]. */
static uint8_t served[3];
static int split;

static void *per_conn(void *arg)
{
    int c = (int)(intptr_t)arg;
    char req[8];
    for (;;) {
        ssize_t r = read(c, req, sizeof req);
        pthread_mutex_lock(&mu);
        if (r <= 0) {
            served[2]++;
            cmc_record_write(CMC_STATE_FD, served, 3);
            pthread_mutex_unlock(&mu);
            close(c);
            return NULL;
        }
        const char *reply = "D";
        if (split) {
            /* Checked under the mutex, taken under it again, with the
             * record between. */
            int free_ = !served[0];
            pthread_mutex_unlock(&mu);
            cmc_record_write(CMC_STATE_FD, served, 3);
            pthread_mutex_lock(&mu);
            if (free_) {
                served[0] = r > 1 ? (uint8_t)req[1] : 1;
                served[1]++;
                reply = "G";
            }
        } else if (!served[0] || bug) {
            served[0] = r > 1 ? (uint8_t)req[1] : 1;
            served[1]++;
            reply = "G";
        }
        cmc_record_write(CMC_STATE_FD, served, 3);
        pthread_mutex_unlock(&mu);
        if (write(c, reply, 1) != 1)
            exit(5);
    }
}

static int mono;

static void *timed_waiter(void *arg)
{
    (void)arg;
    pthread_condattr_t a;
    pthread_cond_t c;
    pthread_condattr_init(&a);
    if (mono)
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c, &a);
    struct timespec until;
    clock_gettime(mono ? CLOCK_MONOTONIC : CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_mutex_lock(&mu);
    int r = pthread_cond_timedwait(&c, &mu, &until);
    pthread_mutex_unlock(&mu);
    if (r != ETIMEDOUT)
        exit(7);
    uint8_t done = 1;
    cmc_record_write(CMC_STATE_FD, &done, 1);
    return NULL;
}

static int timedwait(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    pthread_t t;
    if (pthread_create(&t, NULL, timed_waiter, NULL) != 0)
        return 2;
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            close(c);
    }
}

static int futexsolo(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    uint32_t word = 0;
    struct timespec second = {1, 0};
    if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &second, NULL, 0) != -1 || errno != ETIMEDOUT)
        return 7;
    uint8_t done = 1;
    cmc_record_write(CMC_STATE_FD, &done, 1);
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            close(c);
    }
}

static int conn_c;

static void *timeo_reader(void *arg)
{
    (void)arg;
    char b[8];
    if (read(conn_c, b, sizeof b) < 0)
        exit(7);
    return NULL;
}

/* retimeo and exitwhile: node 1 dials and waits; node 0 accepts and
 * starts timeo_reader. */
static int two_node_reader(int me, const char *mode, const char *how)
{
    uint8_t s = 0;
    cmc_record_write(CMC_STATE_FD, &s, 1);
    if (me != 0) {
        int d = cmc_dial(0);
        char b[8];
        for (;;)
            if (d < 0 || read(d, b, sizeof b) <= 0)
                pause();
    }
    int l = cmc_listen(0);
    conn_c = accept(l, NULL, NULL);
    if (conn_c < 0)
        return 2;
    struct timeval second = {1, 0}, none = {0, 0};
    int retimeo = strcmp(mode, "retimeo") == 0;
    int clear = strcmp(how, "clear") == 0;
    if ((!retimeo || clear) && setsockopt(conn_c, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second) != 0)
        return 3;
    pthread_t t;
    if (pthread_create(&t, NULL, timeo_reader, NULL) != 0)
        return 4;
    if (strcmp(mode, "closeunder") == 0) {
        usleep(200000);
        int p[2];
        close(conn_c);
        if (pipe(p) != 0 || p[0] != conn_c || write(p[1], "P", 1) != 1)
            return 6;
        pthread_join(t, NULL);
    } else if (retimeo) {
        usleep(200000);
        if (setsockopt(conn_c, SOL_SOCKET, SO_RCVTIMEO, clear ? &none : &second, sizeof second) != 0)
            return 5;
        int p[2];
        if (pipe(p) != 0)
            return 6;
        pthread_join(t, NULL);
    } else if (strcmp(how, "cond") == 0) {
        pthread_mutex_lock(&mu);
        for (;;)
            pthread_cond_wait(&cv, &mu);
    } else {
        accept(l, NULL, NULL);
    }
    s = 1;
    cmc_record_write(CMC_STATE_FD, &s, 1);
    for (;;)
        pause();
}

static long futex_call(uint32_t *word, int op, uint32_t val, const struct timespec *t, uint32_t bitset)
{
    return syscall(SYS_futex, word, op, val, t, NULL, bitset);
}

static int futexerrs(int me)
{
    uint32_t word = 0;
    struct timespec second = {1, 0}, bad = {0, 2000000000}, zero = {0, 0};
    int want[] = {ENOSYS, ENOSYS, EINVAL, EINVAL, ETIMEDOUT};
    uint8_t matched = 0;
    long r[5];
    int e[5];
    r[0] = futex_call(&word, FUTEX_WAIT | FUTEX_CLOCK_REALTIME, 0, &second, 0);
    e[0] = errno;
    r[1] = futex_call(&word, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, 0);
    e[1] = errno;
    r[2] = futex_call(&word, FUTEX_WAIT_PRIVATE, 1, &bad, 0);
    e[2] = errno;
    r[3] = futex_call(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, 0);
    e[3] = errno;
    r[4] = futex_call(&word, FUTEX_WAIT_PRIVATE, 0, &zero, 0);
    e[4] = errno;
    for (int i = 0; i < 5; i++) {
        if (r[i] != -1 || e[i] != want[i])
            abort();
        matched++;
    }
    cmc_record_write(CMC_STATE_FD, &matched, 1);
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            close(c);
    }
}

static void *abort_after_request(void *arg)
{
    int l = (int)(intptr_t)arg;
    int c = accept(l, NULL, NULL);
    char b[8];
    if (c < 0 || read(c, b, sizeof b) <= 0)
        exit(2);
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    abort();
}

static int abortwait(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    int l = cmc_listen(me);
    pthread_t t;
    if (pthread_create(&t, NULL, abort_after_request, (void *)(intptr_t)l) != 0)
        return 2;
    for (;;)
        pause();
}

static int perconn(int me, int timed)
{
    cmc_record_write(CMC_STATE_FD, served, 3);
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 3;
        struct timeval second = {1, 0};
        if (timed && setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second) != 0)
            return 4;
        pthread_t t;
        if (pthread_create(&t, NULL, per_conn, (void *)(intptr_t)c) != 0 || pthread_detach(t) != 0)
            return 2;
    }
}

static int shut_c;

static void *shutter(void *arg)
{
    (void)arg;
    shutdown(shut_c, SHUT_RD);
    return NULL;
}

static int shutread(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    shut_c = accept(l, NULL, NULL);
    pthread_t t;
    if (shut_c < 0 || pthread_create(&t, NULL, shutter, NULL) != 0)
        return 2;
    char b[8];
    if (read(shut_c, b, sizeof b) <= 0)
        abort();
    state[0] = 1;
    cmc_record_write(CMC_STATE_FD, state, 1);
    for (;;)
        pause();
}

static int piped_errno;

static void *piper(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    int p[2];
    if (pipe(p) != 0)
        return NULL;
    close(p[0]);
    if (write(p[1], "x", 1) < 0)
        piped_errno = errno;
    return NULL;
}

static void *aborter(void *arg)
{
    (void)arg;
    abort();
}

static pthread_mutex_t robust_mu;

static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&robust_mu);
    return NULL;
}

static void *killer(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    kill(getpid(), SIGUSR1);
    return NULL;
}

static int serve(int me, uint8_t report)
{
    cmc_record_write(CMC_STATE_FD, &report, 1);
    int l = cmc_listen(me);
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            close(c);
    }
    return 0;
}

static void *server(void *arg)
{
    serve((int)(intptr_t)arg, 5);
    return NULL;
}

static int one_thread(int me, const char *mode)
{
    pthread_t t;
    if (strcmp(mode, "sigpipe") == 0) {
        if (pthread_create(&t, NULL, piper, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
        return serve(me, piped_errno == EPIPE);
    }
    if (strcmp(mode, "killblock") == 0) {
        if (pthread_create(&t, NULL, killer, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
        return serve(me, 1);
    }
    if (strcmp(mode, "abort") == 0) {
        if (pthread_create(&t, NULL, aborter, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
        return serve(me, 1);
    }
    if (strcmp(mode, "robust") == 0) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&robust_mu, &a);
        if (pthread_create(&t, NULL, holder, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
        if (pthread_mutex_trylock(&robust_mu) == EOWNERDEAD)
            abort();
        return serve(me, 1);
    }
    if (pthread_create(&t, NULL, server, (void *)(intptr_t)me) != 0)
        return 2;
    pthread_exit(NULL);
    return 0;
}

static int later_conn;

static void *late_piper(void *arg)
{
    piper(arg);
    char b[8];
    if (piped_errno != EPIPE || read(later_conn, b, sizeof b) <= 0)
        return NULL;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int pipelater(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    later_conn = accept(l, NULL, NULL);
    pthread_t t;
    if (later_conn < 0 || pthread_create(&t, NULL, late_piper, NULL) != 0)
        return 2;
    pthread_join(t, NULL);
    for (;;)
        pause();
}

static int first;

static void *racer(void *arg)
{
    pthread_mutex_lock(&mu);
    if (first == 0)
        first = (int)(intptr_t)arg;
    pthread_mutex_unlock(&mu);
    return NULL;
}

static int race(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    if (accept(l, NULL, NULL) < 0)
        return 3;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, racer, (void *)(intptr_t)(i + 1)) != 0)
            return 2;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    uint8_t s = (uint8_t)first;
    cmc_record_write(CMC_STATE_FD, &s, 1);
    for (;;)
        pause();
}

/* read(fd, buf, n) by a raw syscall, with known values in registers the
 * kernel keeps across it; each one's value after it, into out. */
static long reg_read(int fd, void *buf, size_t n, uint64_t out[8])
{
    long ret;
    __asm__ volatile("movabs $0x1212121212121212, %%r12\n\t"
                     "movabs $0x1313131313131313, %%r13\n\t"
                     "movabs $0x1414141414141414, %%r14\n\t"
                     "movabs $0x1515151515151515, %%r15\n\t"
                     "movabs $0x0b0b0b0b0b0b0b0b, %%rbx\n\t"
                     "movq %%r12, %%xmm8\n\t"
                     "movq %%r13, %%xmm9\n\t"
                     "movq %%r14, %%xmm15\n\t"
                     "syscall\n\t"
                     "movq %%r12, 0(%[o])\n\t"
                     "movq %%r13, 8(%[o])\n\t"
                     "movq %%r14, 16(%[o])\n\t"
                     "movq %%r15, 24(%[o])\n\t"
                     "movq %%rbx, 32(%[o])\n\t"
                     "movq %%xmm8, 40(%[o])\n\t"
                     "movq %%xmm9, 48(%[o])\n\t"
                     "movq %%xmm15, 56(%[o])\n\t"
                     : "=a"(ret)
                     : "a"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n), [o] "r"(out)
                     : "rcx", "r11", "r12", "r13", "r14", "r15", "rbx", "xmm8", "xmm9", "xmm15", "memory");
    return ret;
}

static int regs_conn;

static uint32_t mxcsr(void)
{
    uint32_t m;
    __asm__ volatile("stmxcsr %0" : "=m"(m));
    return m;
}

/* MXCSR with its rounding control (bits 13 and 14) rounding downward. */
static void round_down(void)
{
    uint32_t m = (mxcsr() & ~0x6000u) | 0x2000u;
    __asm__ volatile("ldmxcsr %0" : : "m"(m));
}

static void *reg_worker(void *arg)
{
    (void)arg;
    mine = 77;
    int *where = &errno;
    round_down();
    uint64_t out[8];
    char b[8];
    long got = reg_read(regs_conn, b, sizeof b, out);
    const uint64_t want[8] = {0x1212121212121212, 0x1313131313131313, 0x1414141414141414, 0x1515151515151515,
                              0x0b0b0b0b0b0b0b0b, 0x1212121212121212, 0x1313131313131313, 0x1414141414141414};
    if (got <= 0 || memcmp(out, want, sizeof want) != 0 || (mxcsr() & 0x6000u) != 0x2000u || mine != 77 ||
        where != &errno)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int regs(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    regs_conn = accept(l, NULL, NULL);
    pthread_t t;
    if (regs_conn < 0 || pthread_create(&t, NULL, reg_worker, NULL) != 0)
        return 2;
    pthread_join(t, NULL);
    for (;;)
        pause();
}

static void *fe_worker(void *arg)
{
    (void)arg;
    if ((mxcsr() & 0x6000u) != 0x4000u)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int fenew(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    if (accept(l, NULL, NULL) < 0)
        return 3;
    /* Rounding upward: bits 13 and 14 of MXCSR, 10. */
    uint32_t m = (mxcsr() & ~0x6000u) | 0x4000u;
    __asm__ volatile("ldmxcsr %0" : : "m"(m));
    pthread_t t;
    if (pthread_create(&t, NULL, fe_worker, NULL) != 0)
        return 2;
    pthread_join(t, NULL);
    for (;;)
        pause();
}

static int small_l;

static void *small_worker(void *arg)
{
    (void)arg;
    int c = accept(small_l, NULL, NULL);
    volatile char *p = __builtin_alloca(10000);
    for (int i = 0; i < 10000; i += 64)
        p[i] = 1;
    uint64_t out[8];
    char b[8];
    if (c < 0 || reg_read(c, b, sizeof b, out) <= 0)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int smallstack(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    small_l = cmc_listen(me);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 16384);
    pthread_t t;
    if (pthread_create(&t, &a, small_worker, NULL) != 0)
        return 2;
    pthread_join(t, NULL);
    for (;;)
        pause();
}

static int merge_l, merge_pipe[2];
static char *merge_base;
static __thread volatile unsigned long merge_tls = 0x1122334455667788UL;
static unsigned char merge_copy[512];

static __attribute__((noinline)) void merge_deep(int c)
{
    char here;
    long room = (long)(&here - merge_base);
    volatile char *p = __builtin_alloca(room - 1500);
    p[0] = 1;
    uint64_t out[8];
    char b[8];
    if (reg_read(c, b, sizeof b, out) <= 0)
        abort();
    p[0] = 2;
}

static void *merge_first(void *arg)
{
    (void)arg;
    int c = accept(merge_l, NULL, NULL);
    if (c < 0)
        abort();
    merge_deep(c);
    char x = 1;
    if (write(merge_pipe[1], &x, 1) != 1)
        abort();
    return NULL;
}

static void *merge_second(void *arg)
{
    unsigned char *top = arg;
    memcpy(merge_copy, top - 512, 512);
    uint64_t out[8];
    char x;
    if (reg_read(merge_pipe[0], &x, 1, out) != 1 || merge_tls != 0x1122334455667788UL ||
        memcmp(merge_copy, top - 512, 512) != 0)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int stackmerge(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    merge_l = cmc_listen(me);
    if (pipe(merge_pipe) != 0)
        return 2;
    pthread_attr_t a, b;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 16384);
    pthread_attr_setguardsize(&a, 0);
    pthread_t t1, t2;
    if (pthread_create(&t1, &a, merge_first, NULL) != 0)
        return 2;
    void *sa;
    size_t ss;
    pthread_getattr_np(t1, &b);
    pthread_attr_getstack(&b, &sa, &ss);
    merge_base = sa;
    pthread_attr_init(&b);
    pthread_attr_setstacksize(&b, 16384);
    pthread_attr_setguardsize(&b, 0);
    if (pthread_create(&t2, &b, merge_second, merge_base) != 0)
        return 2;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    for (;;)
        pause();
}

static int preempt_pipe[2];

static void *writer(void *arg)
{
    (void)arg;
    if (write(preempt_pipe[1], "B", 1) != 1)
        exit(5);
    return NULL;
}

static int preempt(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    int l = cmc_listen(me);
    pthread_t t;
    if (accept(l, NULL, NULL) < 0 || pipe(preempt_pipe) != 0 || pthread_create(&t, NULL, writer, NULL) != 0)
        return 2;
    if (write(preempt_pipe[1], "A", 1) != 1)
        return 3;
    pthread_join(t, NULL);
    uint8_t b = 0;
    if (read(preempt_pipe[0], &b, 1) != 1)
        return 4;
    cmc_record_write(CMC_STATE_FD, &b, 1);
    for (;;)
        pause();
}

static int wa_conn, wa_pipe[2], wa_go;

static void *wa_worker(void *arg)
{
    (void)arg;
    struct pollfd p = {wa_conn, POLLIN, 0};
    poll(&p, 1, -1);
    pthread_mutex_lock(&mu);
    wa_go = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    char b[4];
    if (recv(wa_conn, b, 4, MSG_WAITALL) != 4 || memcmp(b, "ABCD", 4) != 0)
        abort();
    return NULL;
}

static int waitall(int me)
{
    cmc_record_write(CMC_STATE_FD, state, 1);
    if (me == 1) {
        int c = cmc_dial(0);
        const char *parts[] = {"AB", "CD", "EF"};
        for (int i = 0; i < 3; i++)
            if (c < 0 || write(c, parts[i], 2) != 2)
                return 3;
        for (;;)
            pause();
    }
    int l = cmc_listen(0);
    pthread_t t;
    wa_conn = accept(l, NULL, NULL);
    if (wa_conn < 0 || pipe(wa_pipe) != 0 || pthread_create(&t, NULL, wa_worker, NULL) != 0)
        return 2;
    pthread_mutex_lock(&mu);
    while (!wa_go)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    if (write(wa_pipe[1], "x", 1) != 1)
        return 4;
    pthread_join(t, NULL);
    state[0] = 1;
    cmc_record_write(CMC_STATE_FD, state, 1);
    for (;;)
        pause();
}

static int pr_conn;

static void *pr_worker(void *arg)
{
    (void)arg;
    struct pollfd p = {pr_conn, POLLIN, 0};
    if (poll(&p, 1, -1) != 1)
        exit(3);
    for (volatile long i = 0; i < 3000000; i++) {
    }
    char b;
    if (recv(pr_conn, &b, 1, MSG_DONTWAIT) < 0)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int pollrace(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    if (me != 0) {
        int d = cmc_dial(0);
        if (d < 0 || write(d, "A", 1) != 1)
            return 3;
        for (;;)
            pause();
    }
    int l = cmc_listen(0);
    pr_conn = accept(l, NULL, NULL);
    pthread_t t;
    if (pr_conn < 0 || pthread_create(&t, NULL, pr_worker, NULL) != 0)
        return 2;
    char b;
    read(pr_conn, &b, 1);
    for (;;)
        pause();
}

static int q_pipe[2], q_tfd;

static void *q_worker(void *arg)
{
    const char *mode = arg;
    char b[8];
    if (strcmp(mode, "selleft") == 0) {
        fd_set r;
        FD_ZERO(&r);
        FD_SET(q_pipe[0], &r);
        struct timeval tv = {5, 0};
        if (select(q_pipe[0] + 1, &r, NULL, NULL, &tv) != 1)
            abort();
        long long left = tv.tv_sec * 1000LL + tv.tv_usec / 1000;
        if (left < 3800 || left > 4200)
            abort();
        uint8_t one = 1;
        cmc_record_write(CMC_STATE_FD, &one, 1);
        return NULL;
    }
    if (strcmp(mode, "tfdarm") == 0) {
        uint64_t x;
        if (read(q_tfd, &x, 8) == 8)
            abort();
        exit(3);
    }
    read(q_pipe[0], b, sizeof b);
    abort();
}

static int fa[2], q_ep;
static volatile int took, timed_out;

static void *q_worker2(void *arg)
{
    const char *mode = arg;
    char b[8];
    long r;
    if (strcmp(mode, "preadv2") == 0) {
        struct iovec v = {b, sizeof b};
        r = preadv2(fa[0], &v, 1, -1, 0);
    } else if (strcmp(mode, "evfull") == 0) {
        uint64_t one = 1;
        r = write(fa[0], &one, 8);
    } else if (strcmp(mode, "epaddtfd") == 0) {
        struct epoll_event out;
        r = epoll_wait(q_ep, &out, 1, -1);
    } else {
        struct pollfd p = {fa[0], POLLIN, 0};
        if (poll(&p, 1, 10) == 0 && took)
            timed_out = 1;
        for (;;)
            pause();
    }
    (void)r;
    abort();
}

static int waits2(const char *mode)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    if (strcmp(mode, "evfull") == 0) {
        uint64_t big = UINT64_MAX - 1;
        if ((fa[0] = eventfd(0, 0)) < 0 || write(fa[0], &big, 8) != 8)
            return 2;
    } else if (strcmp(mode, "epaddtfd") == 0) {
        if ((q_ep = epoll_create1(0)) < 0 || (fa[0] = timerfd_create(CLOCK_MONOTONIC, 0)) < 0)
            return 2;
    } else if (pipe(fa) != 0) {
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, q_worker2, (void *)mode) != 0)
        return 2;
    usleep(5000);
    char b[8];
    if (strcmp(mode, "evfull") == 0) {
        if (read(fa[0], b, 8) != 8)
            return 3;
    } else if (strcmp(mode, "epaddtfd") == 0) {
        struct itimerspec a = {{0, 0}, {0, 50000000}};
        struct epoll_event ev = {.events = EPOLLIN};
        if (timerfd_settime(fa[0], 0, &a, NULL) != 0 || epoll_ctl(q_ep, EPOLL_CTL_ADD, fa[0], &ev) != 0)
            return 3;
    } else if (write(fa[1], "x", 1) != 1) {
        return 3;
    }
    if (strcmp(mode, "stale") == 0) {
        if (read(fa[0], b, 1) != 1)
            return 4;
        took = 1;
        for (volatile long i = 0; i < 30000000; i++) {
        }
        uint8_t one = 1;
        cmc_record_write(CMC_STATE_FD, &one, 1);
        if (timed_out)
            abort();
    }
    for (;;)
        pause();
}

static int r6_a[2], r6_b[2];
static volatile int r6_flag;

static void *r6_worker(void *arg)
{
    const char *mode = arg;
    if (strcmp(mode, "evwritev") == 0) {
        uint64_t v[2] = {5, UINT64_MAX - 5};
        struct iovec io[2] = {{&v[0], 8}, {&v[1], 8}};
        writev(r6_a[0], io, 2);
    } else if (strcmp(mode, "waitallpair") == 0) {
        char b[10];
        recv(r6_a[1], b, 10, MSG_WAITALL);
    } else if (strcmp(mode, "epother") == 0) {
        struct pollfd p = {r6_a[0], POLLIN, 0};
        if (poll(&p, 1, 10) == 0)
            r6_flag = 1;
    } else {
        struct pollfd p = {r6_b[0], POLLIN, 0};
        if (poll(&p, 1, 20) == 0)
            r6_flag = 1;
    }
    for (;;)
        pause();
    return NULL;
}

static void *r6_first(void *arg)
{
    (void)arg;
    struct pollfd p = {r6_a[0], POLLIN, 0};
    poll(&p, 1, 10);
    for (;;)
        pause();
    return NULL;
}

static int sixth(const char *mode)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    pthread_t t, u;
    if (strcmp(mode, "evwritev") == 0)
        r6_a[0] = eventfd(0, 0);
    else if (strcmp(mode, "waitallpair") == 0)
        socketpair(AF_UNIX, SOCK_STREAM, 0, r6_a);
    else if (pipe(r6_a) != 0 || pipe(r6_b) != 0)
        return 2;
    if (strcmp(mode, "epother") == 0) {
        int ep = epoll_create1(0), ev = eventfd(1, 0);
        struct epoll_event e = {.events = EPOLLIN};
        if (ep < 0 || ev < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) != 0)
            return 2;
    }
    if (strcmp(mode, "dlmark") == 0 && pthread_create(&u, NULL, r6_first, NULL) != 0)
        return 2;
    if (pthread_create(&t, NULL, r6_worker, (void *)mode) != 0)
        return 2;
    usleep(1000);
    char b[8];
    uint64_t x;
    if (strcmp(mode, "evwritev") == 0) {
        read(r6_a[0], &x, 8);
        read(r6_a[0], &x, 8);
    } else if (strcmp(mode, "waitallpair") == 0) {
        write(r6_a[0], "12345", 5);
        usleep(1000);
        if (recv(r6_a[1], b, 5, MSG_DONTWAIT) < 0)
            abort();
    } else {
        if (strcmp(mode, "dlmark") == 0 && write(r6_a[1], "x", 1) != 1)
            return 3;
        for (volatile long i = 0; i < 150000000; i++) {
        }
        uint8_t one = 1;
        cmc_record_write(CMC_STATE_FD, &one, 1);
        if (r6_flag)
            abort();
    }
    for (;;)
        pause();
}

/* "epclose" and "epdup" (see the top). */
static int r7_ep, r7_ep2, r7_a, r7_b;
static volatile int r7_ran;
static uint32_t r7_want = 2;

static void r7_arm(int t)
{
    struct itimerspec it = {.it_value = {.tv_sec = 0, .tv_nsec = 1000000}};
    if (timerfd_settime(t, 0, &it, NULL) != 0)
        exit(4);
}

static void *r7_worker(void *arg)
{
    struct epoll_event got[4];
    int dup = arg != NULL;
    int k = epoll_wait(dup ? r7_ep2 : r7_ep, got, 4, -1);
    if (k != 1 || got[0].data.u32 != r7_want)
        abort();
    r7_ran = 1;
    for (;;)
        pause();
    return NULL;
}

static int seventh(const char *mode)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    int dup = strcmp(mode, "epdup") == 0, tmadd = strcmp(mode, "eptmadd") == 0,
        tfreuse = strcmp(mode, "eptfreuse") == 0;
    r7_ep = epoll_create1(0);
    r7_a = tfreuse ? timerfd_create(CLOCK_MONOTONIC, 0) : eventfd(0, 0);
    r7_b = eventfd(0, 0);
    struct epoll_event ea = {.events = EPOLLIN, .data.u32 = 1}, eb = {.events = EPOLLIN, .data.u32 = 2};
    if (r7_ep < 0 || r7_a < 0 || r7_b < 0 || epoll_ctl(r7_ep, EPOLL_CTL_ADD, r7_a, &ea) != 0 ||
        epoll_ctl(r7_ep, EPOLL_CTL_ADD, r7_b, &eb) != 0)
        return 2;
    if (dup && (r7_ep2 = fcntl(r7_ep, F_DUPFD_CLOEXEC, 20)) < 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, r7_worker, dup ? (void *)1 : NULL) != 0)
        return 2;
    if (tmadd)
        r7_want = 3;
    usleep(1000);
    uint64_t one = 1;
    if (tmadd) {
        int t3 = timerfd_create(CLOCK_MONOTONIC, 0);
        struct epoll_event e3 = {.events = EPOLLIN, .data.u32 = 3};
        if (t3 < 0)
            return 3;
        r7_arm(t3);
        if (epoll_ctl(r7_ep, EPOLL_CTL_ADD, t3, &e3) != 0)
            return 3;
    } else if (!dup && (epoll_ctl(r7_ep, EPOLL_CTL_DEL, r7_a, NULL) != 0 || close(r7_a) != 0))
        return 3;
    if (tfreuse) {
        int t2 = timerfd_create(CLOCK_MONOTONIC, 0);
        uint64_t n;
        if (t2 != r7_a)
            return 5;
        r7_arm(t2);
        if (read(t2, &n, 8) != 8)
            return 3;
    }
    if (!tmadd && write(r7_b, &one, 8) != 8)
        return 3;
    if (dup || tmadd) {
        for (volatile long i = 0; i < 150000000; i++) {
        }
        uint8_t done = 1;
        cmc_record_write(CMC_STATE_FD, &done, 1);
        if (r7_ran)
            abort();
    }
    for (;;)
        pause();
}

static int one_node_waits(const char *mode)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    pthread_t t;
    if (pipe(q_pipe) != 0 || (q_tfd = timerfd_create(CLOCK_MONOTONIC, 0)) < 0)
        return 2;
    if (pthread_create(&t, NULL, q_worker, (void *)mode) != 0)
        return 2;
    if (strcmp(mode, "selleft") == 0) {
        sleep(1);
        if (write(q_pipe[1], "x", 1) != 1)
            return 3;
    } else if (strcmp(mode, "tfdarm") == 0) {
        usleep(100000);
        struct itimerspec a = {{0, 0}, {1, 0}};
        if (timerfd_settime(q_tfd, 0, &a, NULL) != 0)
            return 3;
    } else {
        usleep(100000);
        int p[2];
        int old = q_pipe[0];
        close(q_pipe[0]);
        if (pipe(p) != 0 || p[0] != old || write(p[1], "P", 1) != 1)
            return 4;
    }
    for (;;)
        pause();
}

static volatile int shut_done;

static void *shut_reader(void *arg)
{
    (void)arg;
    char b[8];
    if (read(conn_c, b, sizeof b) < 0 && errno == EAGAIN && shut_done)
        abort();
    uint8_t one = 1;
    cmc_record_write(CMC_STATE_FD, &one, 1);
    return NULL;
}

static int shuttimeo(int me)
{
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    if (me != 0) {
        int d = cmc_dial(0);
        for (;;)
            if (d < 0 || pause() < 0)
                pause();
    }
    int l = cmc_listen(0);
    conn_c = accept(l, NULL, NULL);
    struct timeval second = {1, 0};
    pthread_t t;
    if (conn_c < 0 || setsockopt(conn_c, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second) != 0 ||
        pthread_create(&t, NULL, shut_reader, NULL) != 0)
        return 2;
    usleep(100000);
    shutdown(conn_c, SHUT_RD);
    shut_done = 1;
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 9;
    int me = atoi(argv[1]);
    if (strcmp(argv[2], "waitall") == 0)
        return waitall(me);
    if (strcmp(argv[2], "pollrace") == 0)
        return pollrace(me);
    if (strcmp(argv[2], "shuttimeo") == 0)
        return shuttimeo(me);
    if (strcmp(argv[2], "selleft") == 0 || strcmp(argv[2], "tfdarm") == 0 || strcmp(argv[2], "pipeunder") == 0)
        return one_node_waits(argv[2]);
    const char *sevenths[] = {"epclose", "epdup", "eptmadd", "eptfreuse"};
    for (unsigned i = 0; i < sizeof sevenths / sizeof *sevenths; i++)
        if (strcmp(argv[2], sevenths[i]) == 0)
            return seventh(argv[2]);
    const char *sixths[] = {"evwritev", "waitallpair", "epother", "dlmark"};
    for (unsigned i = 0; i < sizeof sixths / sizeof *sixths; i++)
        if (strcmp(argv[2], sixths[i]) == 0)
            return sixth(argv[2]);
    const char *waits[] = {"preadv2", "evfull", "epaddtfd", "stale"};
    for (unsigned i = 0; i < sizeof waits / sizeof *waits; i++)
        if (strcmp(argv[2], waits[i]) == 0)
            return waits2(argv[2]);
    if (argc > 3 && (strcmp(argv[2], "retimeo") == 0 || strcmp(argv[2], "exitwhile") == 0))
        return two_node_reader(me, argv[2], argv[3]);
    if (strcmp(argv[2], "closeunder") == 0)
        return two_node_reader(me, argv[2], "");
    uint8_t none = 0;
    if (me != 0) {
        cmc_record_write(CMC_STATE_FD, &none, 1);
        for (;;)
            pause();
    }
    if (strcmp(argv[2], "basic") == 0)
        return basic(me);
    if (strcmp(argv[2], "lease") == 0) {
        bug = argc > 3 && strcmp(argv[3], "bug") == 0;
        return lease(me);
    }
    if (strcmp(argv[2], "two") == 0)
        return two(me);
    if (strcmp(argv[2], "futexsolo") == 0)
        return futexsolo(me);
    if (strcmp(argv[2], "futexerrs") == 0)
        return futexerrs(me);
    if (strcmp(argv[2], "abortwait") == 0)
        return abortwait(me);
    if (strcmp(argv[2], "timedwait") == 0) {
        mono = argc > 3 && strcmp(argv[3], "mono") == 0;
        return timedwait(me);
    }
    if (strcmp(argv[2], "perconn") == 0) {
        bug = argc > 3 && strcmp(argv[3], "bug") == 0;
        split = argc > 3 && strcmp(argv[3], "split") == 0;
        return perconn(me, argc > 3 && strcmp(argv[3], "timed") == 0);
    }
    if (strcmp(argv[2], "shutread") == 0)
        return shutread(me);
    if (strcmp(argv[2], "race") == 0)
        return race(me);
    if (strcmp(argv[2], "regs") == 0)
        return regs(me);
    if (strcmp(argv[2], "pipelater") == 0)
        return pipelater(me);
    if (strcmp(argv[2], "fenew") == 0)
        return fenew(me);
    if (strcmp(argv[2], "smallstack") == 0)
        return smallstack(me);
    if (strcmp(argv[2], "stackmerge") == 0)
        return stackmerge(me);
    if (strcmp(argv[2], "preempt") == 0)
        return preempt(me);
    const char *single[] = {"sigpipe", "abort", "robust", "mainexit", "killblock"};
    for (unsigned i = 0; i < sizeof single / sizeof *single; i++)
        if (strcmp(argv[2], single[i]) == 0)
            return one_thread(me, argv[2]);
    return 9;
}
