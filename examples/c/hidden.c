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
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
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
