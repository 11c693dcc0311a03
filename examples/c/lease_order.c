/*
 * lease_order: a lease that is correct only if time runs in order, the
 * regression program of `cmc/tests/process_time.rs` (issue 27, Deliver
 * 4). Leases in the manner of Gray and Cheriton: the holder counts its
 * term from before it asked, the grantor waits out the term and a margin
 * for the clocks' drift after it granted, so the two never hold at once
 * while one second on the holder's clock ends before five on the
 * grantor's. Correct on Linux, and under deadline order (within a drift
 * of at most 3 s); a counterexample under any order, where the 5-second
 * sleep may end first.
 *
 *   lease_order NODE
 *
 * Node 0 grants: it accepts a connection, reads "A" (acquire), answers
 * "G" (granted), waits the term (1 s) and a margin (4 s), and then holds
 * the lease itself. Node 1 asks: it reads the monotonic clock (t0), dials
 * node 0, sends "A" and reads the answer; if its term (until t0 + 1 s)
 * has not ended yet it holds the lease until then, else it arrived too
 * late to hold it at all.
 *
 * State on fd 3: {node, phase}. Node 0: 0 free, 1 granted (waiting out
 * the term), 2 holding. Node 1: 0 asking, 1 holding, 2 expired (it held
 * and stopped), 3 late (the answer came after its term). The property
 * (the test's): node 0 holding and node 1 holding are never both true.
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { TERM_S = 1, MARGIN_S = 4 };

static void report(uint8_t node, uint8_t phase)
{
    uint8_t s[2] = {node, phase};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

static int grant(void)
{
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    report(0, 0);
    int c = accept(l, NULL, NULL);
    char a;
    if (c < 0 || read(c, &a, 1) != 1 || a != 'A' || write(c, "G", 1) != 1)
        return 3;
    report(0, 1);
    sleep(TERM_S + MARGIN_S);
    report(0, 2);
    return 0;
}

static int hold(void)
{
    report(1, 0);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int c = cmc_dial(0);
    char g;
    if (c < 0 || write(c, "A", 1) != 1 || read(c, &g, 1) != 1 || g != 'G')
        return 2;
    struct timespec end = {t0.tv_sec + TERM_S, t0.tv_nsec};
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
        report(1, 3);
        return 0;
    }
    report(1, 1);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) != 0)
        ;
    report(1, 2);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    return argv[1][0] == '0' ? grant() : hold();
}
