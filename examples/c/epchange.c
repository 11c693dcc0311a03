/* Epoll waits whose instance changes under them: a review of follow_epoll_waits (cmc/src/process/calls/poll.rs), cmc/tests/process_threads.rs.
 *
 *   epchange NODE MODE
 *
 * tfout: a worker waits (epoll_wait, -1) in an instance watching timerfd T
 *   (not armed, EPOLLIN, data 1) and eventfd B (data 2). The main thread
 *   MODs T to EPOLLOUT (a timerfd is never writable), arms T for 1 ms,
 *   reads T (its expiry), sleeps 2 ms and writes B. Linux: the worker gets
 *   B alone; it aborts on anything else.
 * tfout1: one thread: epoll_wait(-1) on T armed (1 ms) with EPOLLOUT;
 *   aborts if the wait returns (Linux: it never does).
 * selfboth: node 0 listens, dials itself (D) and accepts (A); a worker
 *   waits in an instance watching eventfd B (data 2); the main thread adds
 *   D (data 4) and A (data 5) under the wait, writes "x" on D (toward A),
 *   computes, and pauses. Worker aborts unless it gets data 5 alone.
 * selfexit: as selfboth, the main thread ending the process (_exit(0))
 *   after its computation instead of pausing.
 * hup0: two nodes; node 1 dials node 0 and closes after 20 ms. Node 0
 *   accepts C, shuts it for writing, and a worker waits in an instance
 *   watching C (EPOLLIN, data 1) and eventfd B (data 2); the main thread
 *   MODs C to events 0 under the wait, and pauses. The program believes
 *   an interest asking for nothing reports nothing: the worker aborts if
 *   the wait returns (Linux adds EPOLLHUP|EPOLLERR to every interest: once
 *   the FIN arrives, C is hung up both ways and reports EPOLLHUP).
 * hup01: as hup0 with one thread: C added with events 0, epoll_wait(-1);
 *   aborts if it returns.
 */
#include "cmc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

static int ep;
static uint32_t want = 2;
static volatile int ran;
static int hup;

static void *worker(void *arg)
{
    (void)arg;
    struct epoll_event got[4];
    int k = epoll_wait(ep, got, 4, -1);
    if (hup && k == 1 && got[0].data.u32 == 1 && (got[0].events & EPOLLIN)) {
        /* reported while it still asked for EPOLLIN: fine */
        uint8_t early = 2;
        cmc_record_write(CMC_STATE_FD, &early, 1);
        for (;;)
            pause();
    }
    if (k != 1 || got[0].data.u32 != want) {
        fprintf(stderr, "worker: k %d data %u ev %x\n", k, k > 0 ? got[0].data.u32 : 0, k > 0 ? got[0].events : 0);
        abort();
    }
    ran = 1;
    uint8_t done = 1;
    cmc_record_write(CMC_STATE_FD, &done, 1);
    for (;;)
        pause();
    return NULL;
}

static void arm(int t, long ms)
{
    struct itimerspec it = {.it_value = {.tv_sec = 0, .tv_nsec = ms * 1000000L}};
    if (timerfd_settime(t, 0, &it, NULL) != 0)
        exit(4);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int me = atoi(argv[1]);
    const char *mode = argv[2];
    uint8_t none = 0;
    cmc_record_write(CMC_STATE_FD, &none, 1);
    uint64_t one = 1;
    if ((strcmp(mode, "hup0") == 0 || strcmp(mode, "hup01") == 0) && me == 1) {
        int d = cmc_dial(0);
        if (d < 0)
            return 3;
        usleep(20000);
        close(d);
        for (;;)
            pause();
    }
    ep = epoll_create1(0);
    int b = eventfd(0, 0);
    if (ep < 0 || b < 0)
        return 2;
    struct epoll_event eb = {.events = EPOLLIN, .data.u32 = 2};
    if (strcmp(mode, "tfout1") == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, 0);
        struct epoll_event et = {.events = EPOLLOUT, .data.u32 = 1};
        if (t < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, t, &et) != 0)
            return 2;
        arm(t, 1);
        struct epoll_event got[4];
        int k = epoll_wait(ep, got, 4, -1);
        fprintf(stderr, "returned %d\n", k);
        abort();
    }
    if (strcmp(mode, "hup01") == 0) {
        int l = cmc_listen(0);
        int c = accept(l, NULL, NULL);
        struct epoll_event ec = {.events = 0, .data.u32 = 1};
        if (c < 0 || shutdown(c, SHUT_WR) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ec) != 0)
            return 2;
        struct epoll_event got[4];
        int k = epoll_wait(ep, got, 4, -1);
        fprintf(stderr, "returned %d ev %x\n", k, k > 0 ? got[0].events : 0);
        abort();
    }
    if (epoll_ctl(ep, EPOLL_CTL_ADD, b, &eb) != 0)
        return 2;
    if (strcmp(mode, "tfout") == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, 0);
        struct epoll_event et = {.events = EPOLLIN, .data.u32 = 1};
        if (t < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, t, &et) != 0)
            return 2;
        pthread_t th;
        if (pthread_create(&th, NULL, worker, NULL) != 0)
            return 2;
        usleep(1000);
        et.events = EPOLLOUT;
        if (epoll_ctl(ep, EPOLL_CTL_MOD, t, &et) != 0)
            return 3;
        arm(t, 1);
        uint64_t n;
        if (read(t, &n, 8) != 8)
            return 3;
        usleep(2000);
        if (write(b, &one, 8) != 8)
            return 3;
    } else if (strcmp(mode, "selfboth") == 0 || strcmp(mode, "selfexit") == 0) {
        want = 5;
        int l = cmc_listen(0);
        int d = cmc_dial(0);
        int a = accept(l, NULL, NULL);
        if (l < 0 || d < 0 || a < 0)
            return 2;
        pthread_t th;
        if (pthread_create(&th, NULL, worker, NULL) != 0)
            return 2;
        usleep(1000);
        struct epoll_event ed = {.events = EPOLLIN, .data.u32 = 4}, ea = {.events = EPOLLIN, .data.u32 = 5};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, d, &ed) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, a, &ea) != 0)
            return 3;
        if (write(d, "x", 1) != 1)
            return 3;
        for (volatile long i = 0; i < 1000000; i++) {
        }
        uint8_t st = 0x20;
        cmc_record_write(CMC_STATE_FD, &st, 1);
        if (strcmp(mode, "selfexit") == 0)
            _exit(0);
    } else if (strcmp(mode, "hup0") == 0) {
        want = 99; /* a report with no EPOLLIN aborts */
        hup = 1;
        int l = cmc_listen(0);
        int c = accept(l, NULL, NULL);
        struct epoll_event ec = {.events = EPOLLIN, .data.u32 = 1};
        if (c < 0 || shutdown(c, SHUT_WR) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c, &ec) != 0)
            return 2;
        pthread_t th;
        if (pthread_create(&th, NULL, worker, NULL) != 0)
            return 2;
        usleep(1000);
        ec.events = 0;
        if (epoll_ctl(ep, EPOLL_CTL_MOD, c, &ec) != 0)
            return 3;
    } else {
        return 2;
    }
    for (;;)
        pause();
}
