/*
 * ready: a poll's ready set, the regression program of
 * cmc/tests/process_events.rs (a_woken_poll_returns_what_arrived_before_it_ran).
 * Two nodes. Node 1 dials node 0 and writes "a", then "b", in two writes.
 * Node 0's event loop polls its connection and an eventfd (its waker, as
 * an async runtime's): on a byte from the connection it wakes the
 * eventfd. It assumes a poll never returns the two at once, and aborts if
 * one does. On Linux one does: "b" is on its way when node 0 reads "a"
 * and wakes the eventfd, and arrives before its next poll, which then
 * finds both ready. Before the checker held a woken wait for what was
 * still on its way (`Blocked::Woken`), every poll returned as soon as one
 * thing was ready, and the program passed.
 *
 *   ready NODE [poll|epoll|epoll1]
 *
 * epoll1 waits with epoll for one event at a time (maxevents 1): with both
 * ready, which one the kernel returns depends on the order they became
 * ready in, which the checker does not keep, and it says so (an error).
 *
 * State, fd 3: node 0 {0, bytes read, wakes}; node 1 {1}. Each read takes
 * one byte, so that Linux handing it "ab" in one read changes nothing.
 *
 * Built by examples/c/Makefile (cc -no-pie -I../..).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmc.h"

static int loop(int node, int epoll, int maxevents)
{
    uint8_t st[3] = {0, 0, 0};
    int l = cmc_listen(node), e = eventfd(0, EFD_NONBLOCK);
    if (l < 0 || e < 0)
        return 2;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    int c = accept(l, NULL, NULL);
    if (c < 0)
        return 2;
    int ep = -1;
    if (epoll) {
        ep = epoll_create1(0);
        struct epoll_event a = {EPOLLIN, {.u64 = 0}}, b = {EPOLLIN, {.u64 = 1}};
        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c, &a) != 0 || epoll_ctl(ep, EPOLL_CTL_ADD, e, &b) != 0)
            return 2;
    }
    for (;;) {
        int conn_ready = 0, woken = 0;
        if (epoll) {
            struct epoll_event got[2];
            int k = epoll_wait(ep, got, maxevents, -1);
            for (int i = 0; i < k; i++) {
                conn_ready |= got[i].data.u64 == 0;
                woken |= got[i].data.u64 == 1;
            }
        } else {
            struct pollfd f[2] = {{c, POLLIN, 0}, {e, POLLIN, 0}};
            if (poll(f, 2, -1) < 0)
                return 2;
            conn_ready = f[0].revents & POLLIN;
            woken = f[1].revents & POLLIN;
        }
        if (conn_ready && woken)
            abort(); /* the assumption a real run breaks */
        if (woken) {
            uint64_t v;
            if (read(e, &v, 8) == 8)
                st[2]++;
        }
        if (conn_ready) {
            char b;
            if (read(c, &b, 1) != 1)
                return 0;
            st[1]++;
            uint64_t one = 1;
            if (write(e, &one, 8) != 8)
                return 2;
        }
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
    }
}

static int sender(void)
{
    uint8_t st[1] = {1};
    int c = cmc_dial(0);
    if (c < 0)
        return 2;
    if (write(c, "a", 1) != 1 || write(c, "b", 1) != 1)
        return 2;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    pause();
    return 0;
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *how = argc > 2 ? argv[2] : "poll";
    int epoll = strncmp(how, "epoll", 5) == 0;
    return node == 0 ? loop(node, epoll, strcmp(how, "epoll1") == 0 ? 1 : 2) : sender();
}
