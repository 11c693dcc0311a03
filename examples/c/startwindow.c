/*
 * startwindow: crashes while the nodes start, where a later node's start
 * comes before the crash (cmc/tests/process_crash_points.rs). From the
 * review of crashes in starts; natively, node 0 is killed and restarted.
 *
 *   startwindow NODE window  node 0, every life, dials node 1 and says
 *                            whether it recovered "started", then listens,
 *                            then records "started" on fd 193. Node 1
 *                            listens, dials node 0 and writes "h", and
 *                            aborts on a '0' once it has talked to node 0:
 *                            node 0 forgot a life a peer reached. Node 1
 *                            may start while node 0 is between its listen
 *                            and its record, and node 0 die there
 *                            (natively 5 of 10 runs abort)
 *   startwindow NODE silent  node 0 listens and accepts, with no other
 *                            effect in its start; node 1 dials it and
 *                            aborts if refused: node 0 may die in its
 *                            start before node 1 starts (natively 5 of 5)
 *
 * State, fd 3: node 0 {0, started, 0}; node 1 {1, talked, what it read}.
 * Built by the tests (cmc/tests/process_support): cc -I.
 */
#include "cmc.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report(uint8_t a, uint8_t b, uint8_t c)
{
    uint8_t s[3] = {a, b, c};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

static void serve(int l)
{
    for (;;) {
        int a = accept(l, NULL, NULL);
        if (a < 0)
            exit(3);
        char b[8];
        while (read(a, b, sizeof b) > 0)
            ;
        close(a);
    }
}

static void window0(void)
{
    uint8_t rec[CMC_STATE_MAX];
    int started = cmc_recover(rec) == 1 && rec[0] == 1;
    int c = cmc_dial(1);
    if (c >= 0) {
        char m = started ? '1' : '0';
        if (write(c, &m, 1) != 1)
            exit(4);
    }
    int l = cmc_listen(0);
    if (l < 0)
        exit(2);
    uint8_t one = 1;
    cmc_record_write(CMC_DURABLE_FD, &one, 1);
    report(0, 1, 0);
    serve(l);
}

static void window1(void)
{
    int l = cmc_listen(1);
    if (l < 0)
        exit(2);
    int c = cmc_dial(0);
    int talked = c >= 0 && write(c, "h", 1) == 1;
    report(1, (uint8_t)talked, 0);
    int conns[8], nc = 0;
    for (;;) {
        struct pollfd p[9] = {{.fd = l, .events = POLLIN}};
        for (int i = 0; i < nc; i++)
            p[1 + i] = (struct pollfd){.fd = conns[i], .events = POLLIN};
        if (poll(p, 1 + nc, -1) < 0)
            exit(3);
        if (p[0].revents & POLLIN) {
            int a = accept(l, NULL, NULL);
            if (a >= 0 && nc < 8)
                conns[nc++] = a;
            continue;
        }
        for (int i = 0; i < nc; i++) {
            if (!(p[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char b;
            if (read(conns[i], &b, 1) == 1) {
                report(1, (uint8_t)talked, (uint8_t)b);
                if (b == '0' && talked)
                    abort();
            } else {
                close(conns[i]);
                conns[i] = conns[--nc];
            }
            break;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    int node0 = argv[1][0] == '0';
    if (strcmp(argv[2], "window") == 0) {
        if (node0)
            window0();
        window1();
    }
    if (node0)
        serve(cmc_listen(0));
    if (cmc_dial(0) < 0)
        abort();
    report(1, 1, 0);
    pause();
    return 0;
}
