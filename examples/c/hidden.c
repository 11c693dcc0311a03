/*
 * hidden: a lease server that keeps, as an event loop keeps its timers, a
 * deadline in memory it does not report: the regression program of
 * `node_state = "inputs"` (cmc/tests/process_edges.rs, issue 28).
 *
 *   hidden NODE
 *
 * Node 0 waits for askers with a poll of its listener that times out
 * every second (its loop's tick). It grants the lease to the first asker
 * and remembers when (the clock it read at the grant), reporting only
 * that the lease is held; a later asker is granted the lease again once
 * its term (1.5 s) has run out, and denied before. So its future depends
 * on when it granted, which its report on fd 3 leaves out, as tokio's
 * report leaves out its timer wheel.
 *
 * Two paths reach one world: a tick then the first asker (granted at
 * 1 s), and the first asker then a tick (granted at 0 s). After one more
 * tick the second asker is denied on the first path and granted on the
 * second (two grants, which the model's property forbids). The manual's
 * state (`node_state = "report"`) keeps one process for both: which one
 * decides whether the second grant is found. `node_state = "inputs"`
 * keeps the two apart by what each process read of the clock.
 *
 *   hidden NODE waitall BAD
 *
 * A receive that fills its buffer over several actions: node 0's
 * recv(MSG_WAITALL) of 4 bytes gets "AA" or "BB" (node 1's choice, by
 * whether node 2's byte has reached it) in one DELIVER, is held, and gets
 * "xy" in another. It reports nothing of them until EOF, then the first
 * byte, and aborts if it is BAD. What the first DELIVER wrote into its
 * memory is in the world while the receive waits, and must be in its
 * inputs once it returns: both choices abort on Linux (a review's probe).
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int waitall(int me, char bad)
{
    if (me == 0) {
        int l = cmc_listen(0);
        uint8_t s = 0;
        cmc_record_write(CMC_STATE_FD, &s, 1);
        int c = accept(l, NULL, NULL);
        char buf[4], x;
        if (c < 0 || write(c, "g", 1) != 1 || recv(c, buf, 4, MSG_WAITALL) != 4 || read(c, &x, 1) != 0)
            return 4;
        s = (uint8_t)buf[0];
        cmc_record_write(CMC_STATE_FD, &s, 1);
        if (buf[0] == bad)
            abort();
        for (;;)
            pause();
    }
    if (me == 1) {
        int l = cmc_listen(1);
        int c0 = cmc_dial(0);
        int c2 = c0 < 0 ? -1 : accept(l, NULL, NULL);
        if (c2 < 0)
            return 2;
        struct pollfd p = {.fd = c2, .events = POLLIN};
        int k = poll(&p, 1, 0);
        char g, z;
        if (read(c0, &g, 1) != 1 || write(c0, k > 0 ? "BB" : "AA", 2) != 2 || write(c0, "xy", 2) != 2)
            return 3;
        return read(c2, &z, 1) == 1 ? 0 : 4;
    }
    int c = cmc_dial(1);
    return c >= 0 && write(c, "z", 1) == 1 ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[2], "waitall") == 0)
        return waitall(argv[1][0] - '0', argv[3][0]);
    if (argc < 2 || argv[1][0] != '0')
        return 2;
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    uint8_t held = 0;
    int64_t granted_at = 0;
    cmc_record_write(CMC_STATE_FD, &held, 1);
    for (;;) {
        struct pollfd p = {.fd = l, .events = POLLIN};
        int k = poll(&p, 1, 1000);
        if (k < 0)
            return 3;
        if (k == 0)
            continue;
        int c = accept(l, NULL, NULL);
        char req[2];
        if (c < 0 || read(c, req, sizeof req) != 2)
            return 4;
        int64_t t = now_ms();
        int grant = !held || t >= granted_at + 1500;
        if (write(c, grant ? "G" : "D", 1) != 1)
            return 5;
        close(c);
        if (grant) {
            held = 1;
            granted_at = t;
        }
        cmc_record_write(CMC_STATE_FD, &held, 1);
    }
}
