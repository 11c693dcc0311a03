/*
 * ackfirst: the classic durability bug, for crash points (issue 27, item
 * 3; cmc/tests/process_crash_points.rs). Two nodes: node 1 asks node 0 to
 * store a value; node 0 makes it durable (fd 193) and acknowledges it, in
 * two writes ('A', then 'K'); node 1 reports the value acknowledged once
 * it has both. The invariant: a value acknowledged is durable at node 0.
 *
 * BUG_ACK_FIRST: node 0 acknowledges before it makes the value durable.
 * Every run of it ends with the value durable, so a crash only between
 * whole steps never sees the bug; a crash between the acknowledgement
 * and the record (a crash point) does: node 1 reads the acknowledgement
 * the dead node wrote, and node 0 recovers with nothing.
 *
 * State, fd 3: node 0 {0, stored}; node 1 {1, phase, value, first byte,
 * bytes read}. Node 1 aborts if a third message arrives (node 0 writes
 * two).
 *
 * Built by the tests (cmc/tests/process_support): cc -I.
 */
#include "cmc.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef BUG_ACK_FIRST
#define BUG_ACK_FIRST 0
#endif

enum { SENT = 1, ACKED = 2, FAILED = 3 };

static void store(int node)
{
    signal(SIGPIPE, SIG_IGN); /* node 1 may crash: a write to it fails */
    uint8_t stored = 0, rec[CMC_STATE_MAX];
    if (cmc_recover(rec) == 1)
        stored = rec[0];
    uint8_t st[2] = {0, stored};
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    int s = cmc_listen(node);
    if (s < 0)
        exit(2);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            exit(3);
        uint8_t req[CMC_WRITE_MAX];
        if (read(c, req, sizeof req) != 2 || req[0] != 'p') {
            close(c);
            continue;
        }
#if BUG_ACK_FIRST
        write(c, "A", 1);
        write(c, "K", 1);
#endif
        cmc_record_write(CMC_DURABLE_FD, &req[1], 1);
        st[1] = req[1];
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
#if !BUG_ACK_FIRST
        write(c, "A", 1);
        write(c, "K", 1);
#endif
        close(c);
    }
}

static void ask(void)
{
    /* Honest: what the rest of the run depends on (how many bytes of the
     * acknowledgement have come, and the first) is reported:
     * {1, phase, value, first byte, bytes read}. */
    uint8_t st[5] = {1, 0, 0, 0, 0};
    int c = cmc_dial(0);
    if (c < 0)
        exit(2);
    write(c, "p\x07", 2);
    st[1] = SENT;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    uint8_t buf[CMC_WRITE_MAX];
    for (;;) {
        if (read(c, buf, 1) != 1) { /* one byte at a time: on Linux "AK" may come in one read */
            st[1] = FAILED;
            cmc_record_write(CMC_STATE_FD, st, sizeof st);
            pause();
        }
        if (st[4]++ == 1)
            break;
        st[3] = buf[0];
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
    }
    st[1] = st[3] == 'A' && buf[0] == 'K' ? ACKED : FAILED;
    st[2] = 7;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    if (read(c, buf, sizeof buf) > 0)
        abort(); /* node 0 writes two messages, never three */
    pause();
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    if (node == 0)
        store(node);
    else
        ask();
    return 0;
}
