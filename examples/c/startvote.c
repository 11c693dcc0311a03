/*
 * startvote: a crash while a node starts (issue 27, item 3;
 * cmc/tests/process_crash_points.rs). Node 0 counts the votes it receives,
 * over any number of connections, and aborts at a second one: a vote
 * counted twice. Node 1 votes in its start-up, before it first waits:
 * it recovers, and if it has not voted it dials node 0, sends its vote
 * and records that it voted.
 *
 *   startvote NODE first    the vote is sent, then recorded on fd 193:
 *                           a machine that dies between the two makes
 *                           the next life vote again (a bug, found only
 *                           by a crash in the start)
 *   startvote NODE durable  recorded, then sent: correct (a crash between
 *                           loses the vote, never doubles it)
 *   startvote NODE disk DIR as first, the record being DIR/voted, written
 *                           before the vote and fsynced (with DIR) after
 *                           it: a crash between may lose the write
 *                           (CRASH(1, start k, 0)) or keep it
 *                           (CRASH(1, start k, j))
 *   startvote NODE clock    three nodes: node 1 reports, then reads the
 *                           clock; node 2 reads the clock, keeps what it
 *                           said in memory only, and reports it after an
 *                           accept that does not wait: a node held in its
 *                           start remembers the crashes in the starts
 *                           before its own
 *
 * Natively (kill -9 of node 1 and a restart) "first" aborts when the kill
 * falls between the send and the record.
 *
 * State, fd 3: node 0 {0, votes, connections}; node 1 {1, voted, sent}.
 * Built by the tests (cmc/tests/process_support): cc -I.
 */
#include "cmc.h"

#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void report(uint8_t a, uint8_t b, uint8_t c)
{
    uint8_t s[3] = {a, b, c};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

static void count(void)
{
    int l = cmc_listen(0);
    if (l < 0)
        exit(2);
    uint8_t votes = 0;
    int conns[8], nc = 0;
    report(0, votes, 0);
    for (;;) {
        struct pollfd p[9] = {{.fd = l, .events = POLLIN}};
        for (int i = 0; i < nc; i++)
            p[1 + i] = (struct pollfd){.fd = conns[i], .events = POLLIN};
        if (poll(p, 1 + nc, -1) < 0)
            exit(3);
        if (p[0].revents & POLLIN) {
            int c = accept(l, NULL, NULL);
            if (c >= 0 && nc < 8)
                conns[nc++] = c;
            report(0, votes, (uint8_t)nc);
        }
        for (int i = 0; i < nc; i++) {
            if (!(p[1 + i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char b[8];
            if (read(conns[i], b, sizeof b) > 0) {
                votes++;
                report(0, votes, (uint8_t)nc);
                if (votes >= 2)
                    abort();
            } else {
                close(conns[i]);
                conns[i] = conns[--nc];
                report(0, votes, (uint8_t)nc);
            }
            break;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    if (argv[1][0] == '0') {
        count();
        return 0;
    }
    const char *mode = argv[2];
    if (strcmp(mode, "clock") == 0) {
        /* Three nodes. Node 1 reports, then reads the clock. Node 2 reads
         * the clock, keeps what it said in memory only, and reports it
         * after an accept that does not wait (held, node 0 being able to
         * act): what it read counts node 1's reads before it. */
        struct timespec ts;
        if (argv[1][0] == '1') {
            report(1, 0, 0);
            clock_gettime(CLOCK_MONOTONIC, &ts);
            pause();
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int l = cmc_listen(2);
        if (l < 0 || fcntl(l, F_SETFL, O_NONBLOCK) != 0)
            exit(2);
        int a = accept(l, NULL, NULL);
        report(2, (uint8_t)ts.tv_nsec, a >= 0);
        pause();
        return 0;
    }
    int disk = strcmp(mode, "disk") == 0 && argc > 3;
    char path[4096];
    uint8_t rec[CMC_STATE_MAX];
    int voted;
    if (disk) {
        snprintf(path, sizeof path, "%s/voted", argv[3]);
        int f = open(path, O_RDONLY);
        char b = 0;
        voted = f >= 0 && read(f, &b, 1) == 1 && b == 'v';
        if (f >= 0)
            close(f);
    } else {
        voted = cmc_recover(rec) == 1 && rec[0] == 1;
    }
    report(1, (uint8_t)voted, 0);
    if (!voted) {
        uint8_t one = 1;
        if (strcmp(mode, "durable") == 0)
            cmc_record_write(CMC_DURABLE_FD, &one, 1);
        int f = -1;
        if (disk) {
            f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (f < 0 || write(f, "v", 1) != 1)
                exit(4);
        }
        int c = cmc_dial(0);
        if (c < 0 || write(c, "v", 1) != 1)
            exit(2);
        if (strcmp(mode, "first") == 0)
            cmc_record_write(CMC_DURABLE_FD, &one, 1);
        if (disk) {
            int d = open(argv[3], O_RDONLY | O_DIRECTORY);
            if (fsync(f) != 0 || d < 0 || fsync(d) != 0)
                exit(5);
            close(d);
            close(f);
        }
        report(1, 1, 1);
    }
    pause();
    return 0;
}
