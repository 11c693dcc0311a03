/*
 * untimed: a request and its answer over plain blocking sockets, written
 * as a program for Linux is (Rust's std::net, or C without a timeout): no
 * SO_RCVTIMEO, no poll, no sleep. The regression program of
 * `cmc/tests/process_time.rs` (issue 27, Deliver 4): such a program never
 * sees a timeout, for on Linux a blocking read or accept that asked for
 * none waits for ever.
 *
 *   untimed NODE
 *
 * Node 0 serves: it accepts a connection, reads one request, answers
 * "pong" to "ping", closes, and accepts the next. Anything else it reads
 * is a request it cannot parse, which it counts (and a real server would
 * log) before closing. Node 1 dials node 0, sends "ping", reads the
 * answer and exits.
 *
 * State on fd 3: server {0, answered, unparsed}; client {1, phase}, phase
 * 0 asking, 1 answered ("pong"), 2 failed (anything else, or nothing).
 * Properties (the test's): the server never reads an unparsable request,
 * the client never fails, and eventually it has its answer.
 */
#include "cmc.h"

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void report(uint8_t a, uint8_t b, uint8_t c)
{
    uint8_t s[3] = {a, b, c};
    cmc_record_write(CMC_STATE_FD, s, a == 0 ? 3 : 2);
}

static int serve(void)
{
    uint8_t answered = 0, unparsed = 0;
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    for (;;) {
        report(0, answered, unparsed);
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 3;
        char buf[8];
        ssize_t n = read(c, buf, sizeof buf);
        if (n == 4 && memcmp(buf, "ping", 4) == 0) {
            write(c, "pong", 4);
            answered++;
        } else if (n != 0) {
            unparsed++;
        }
        close(c);
    }
}

static int ask(void)
{
    report(1, 0, 0);
    int c = cmc_dial(0);
    if (c < 0 || write(c, "ping", 4) != 4)
        return 2;
    char buf[8];
    ssize_t n = read(c, buf, sizeof buf);
    report(1, n == 4 && memcmp(buf, "pong", 4) == 0 ? 1 : 2, 0);
    close(c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    return argv[1][0] == '0' ? serve() : ask();
}
