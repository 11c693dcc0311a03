/*
 * tokens: a lease server whose epoll data only its history fixes, the
 * regression program of `cmc/tests/process_edges.rs` (issue 28). tokio
 * gives epoll the address of each registration's `ScheduledIo` as its
 * token, and an address depends on the heap's history, not on the
 * program's state; this program does the same with a number.
 *
 *   tokens NODE
 *
 * Node 0 grants one lease: it accepts each connection and watches it
 * (level-triggered) with data = (the asker granted so far << 8) | fd,
 * reads a request "A" and the asker's digit, answers "G" to the first
 * and "D" to every later one, and closes. It only ever uses the data's
 * low byte, so its future depends on what it reports on fd 3, {0,
 * answered, leased}, and not on who holds the lease. Nodes 1 and up ask:
 * they dial node 0, send "A" and their number, and report {node, 1} when
 * granted, {node, 2} when denied. The checker's client sends "A9".
 *
 * Two orders of the asks end in one state of node 0 that differs only in
 * its memory (the holder), and the data of the next connection it
 * accepts differs with it. Data kept in the world then depended on which
 * of the two processes the checker had kept (a count that changed with
 * `snapshots_max`, or an error rebuilding a world).
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { LISTENER = 0xff };

static void report(uint8_t a, uint8_t b, uint8_t c, unsigned len)
{
    uint8_t s[3] = {a, b, c};
    cmc_record_write(CMC_STATE_FD, s, len);
}

static int grant(void)
{
    int l = cmc_listen(0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = LISTENER};
    if (l < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) < 0)
        return 2;
    uint8_t answered = 0, leased = 0, holder = 0;
    report(0, answered, leased, 3);
    for (;;) {
        struct epoll_event got[8];
        int k = epoll_wait(ep, got, 8, -1);
        if (k < 0)
            return 3;
        for (int i = 0; i < k; i++) {
            uint64_t slot = got[i].data.u64 & 0xff;
            if (slot == LISTENER) {
                int c = accept(l, NULL, NULL);
                if (c < 0 || c >= LISTENER)
                    return 4;
                struct epoll_event w = {.events = EPOLLIN, .data.u64 = (uint64_t)holder << 8 | (uint64_t)c};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &w) < 0)
                    return 5;
                continue;
            }
            char req[2];
            ssize_t r = read((int)slot, req, sizeof req);
            if (r == 2 && req[0] == 'A') {
                if (write((int)slot, leased ? "D" : "G", 1) != 1)
                    return 6;
                if (!leased)
                    holder = (uint8_t)req[1];
                leased = 1;
                answered++;
            }
            close((int)slot);
            report(0, answered, leased, 3);
        }
    }
}

static int ask(uint8_t node)
{
    report(node, 0, 0, 2);
    int c = cmc_dial(0);
    char req[2] = {'A', (char)('0' + node)};
    char a;
    if (c < 0 || write(c, req, 2) != 2 || read(c, &a, 1) != 1)
        return 2;
    report(node, a == 'G' ? 1 : 2, 0, 2);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    uint8_t node = (uint8_t)(argv[1][0] - '0');
    return node == 0 ? grant() : ask(node);
}
