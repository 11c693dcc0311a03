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
 *   threads NODE two
 *
 * Two threads wait at once for what the world brings: the main thread in
 * an accept, a second in a read of a connection it dialled. Not modelled
 * yet: an error naming both.
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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
    if (read(c, &b, 1) < 0)
        exit(6);
    return NULL;
}

static int two(int me)
{
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

int main(int argc, char **argv)
{
    if (argc < 3)
        return 9;
    int me = atoi(argv[1]);
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
    return 9;
}
