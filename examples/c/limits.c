/*
 * limits: walks up to one limit of the process front end (cmc(7), LIMITS)
 * and, given a count one past it, over it, so that the tests can show that
 * each crossing is an error naming the node and the limit, and that the
 * limit itself is allowed.
 *
 * Started as `limits NODE MODE COUNT`. Node 0 serves: it listens and
 * accepts for ever. In mode "reply" it writes COUNT one-byte replies on
 * each connection it accepts, then closes it; in mode "long" one
 * COUNT-byte reply (at most 4096); in mode "read" it reads once from
 * each connection and reports how many bytes it got; in every other mode it keeps
 * each connection open and never reads it. Node 1, in the other modes,
 * dials node 0 and then:
 *   "write"  writes one COUNT-byte message, at most 4096 (limit
 *            write_bytes_max), and so does "read";
 *   "flood"  writes COUNT one-byte messages (limit messages_in_flight_max);
 *   "dial"   dials COUNT times in all, keeping every connection open
 *            (limit connections_per_node_max);
 * and then waits in a read of its first connection.
 *
 * State on fd 3: node 0 {0, connections accepted}; node 1 {1, messages or
 * connections made}.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): cc -no-pie -I.
 */
#include "cmc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report(uint8_t role, uint8_t count)
{
    uint8_t s[2] = {role, count};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

enum { BIG = 4096 };

static int serve(int reply, int count)
{
    uint8_t accepted = 0;
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    for (;;) {
        report(0, accepted);
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 3;
        accepted++;
        if (reply == 3) {
            static uint8_t got[BIG];
            long r = read(c, got, sizeof got);
            report(0, r < 0 ? 0xff : (uint8_t)r);
            for (;;)
                if (accept(l, NULL, NULL) < 0)
                    return 3;
        }
        if (!reply)
            continue;
        if (reply == 2) {
            static uint8_t big[BIG];
            if (count > BIG)
                return 4;
            memset(big, 'r', sizeof big);
            write(c, big, count);
        } else {
            for (int i = 0; i < count; i++)
                write(c, "r", 1);
        }
        close(c);
    }
}

static int dial(const char *mode, int count)
{
    static uint8_t big[BIG];
    uint8_t made = 0;
    int first = cmc_dial(0);
    if (first < 0)
        return 2;
    if (strcmp(mode, "write") == 0 || strcmp(mode, "read") == 0) {
        if (count > (int)sizeof big)
            return 4;
        memset(big, 'w', sizeof big);
        write(first, big, count);
        made = 1;
    } else if (strcmp(mode, "flood") == 0) {
        for (; made < count; made++)
            write(first, "m", 1);
    } else if (strcmp(mode, "dial") == 0) {
        for (made = 1; made < count; made++)
            if (cmc_dial(0) < 0)
                return 2;
    }
    report(1, made);
    char buf[CMC_WRITE_MAX];
    read(first, buf, sizeof buf);
    return 0;
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "";
    int count = argc > 3 ? atoi(argv[3]) : 0;
    if (node == 0)
        return serve(strcmp(mode, "reply") == 0  ? 1
                     : strcmp(mode, "long") == 0 ? 2
                     : strcmp(mode, "read") == 0 ? 3
                                                 : 0,
                     count);
    return dial(mode, count);
}
