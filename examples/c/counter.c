/*
 * counter: a tiny replicated-nothing counter service, the process front
 * end's first real target.
 *
 * Node 0 serves: it recovers its count from fd 193, listens on port
 * CMC_PORT_BASE + 0, and for each connection reads messages; each '+'
 * increments the count, makes it durable (fd 193) and replies "ok" and the
 * count. A read that returns 'T' (the checker's TIMEOUT) or 0 (EOF) ends
 * the connection.
 * Every other node is a client: it dials node 0, sends "+", reads one reply
 * (or a timeout, or EOF) and exits.
 *
 * State on fd 3: server {0, phase, count, timeouts}; client {1, phase,
 * answer}. Both are canonical and complete: they say where in the code the
 * node is and everything its future depends on.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#include "cmc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { ACCEPTING = 1, SERVING = 2, SENT = 3, DONE = 4 };

static void report(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    uint8_t s[4] = {a, b, c, d};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

static int serve(int node)
{
    uint8_t count = 0, timeouts = 0, rec[CMC_STATE_MAX];
    if (cmc_recover(rec) == 1)
        count = rec[0];
    int s = cmc_listen(node);
    if (s < 0)
        return 2;
    for (;;) {
        report(0, ACCEPTING, count, timeouts);
        int c = accept(s, NULL, NULL);
        if (c < 0)
            return 3;
        report(0, SERVING, count, timeouts);
        for (;;) {
            uint8_t buf[CMC_WRITE_MAX];
            ssize_t n = read(c, buf, sizeof buf);
            if (n <= 0)
                break;
            if (buf[0] == 'T') {
                timeouts++;
                report(0, SERVING, count, timeouts);
                break;
            }
            for (ssize_t i = 0; i < n; i++) {
                if (buf[i] != '+')
                    continue;
                count++;
                cmc_record_write(CMC_DURABLE_FD, &count, 1);
                report(0, SERVING, count, timeouts);
                uint8_t reply[3] = {'o', 'k', count};
                write(c, reply, sizeof reply);
            }
        }
        close(c);
    }
}

static int client(void)
{
    int c = cmc_dial(0);
    if (c < 0)
        return 2;
    write(c, "+", 1);
    report(1, SENT, 0, 0);
    uint8_t buf[CMC_WRITE_MAX];
    ssize_t n = read(c, buf, sizeof buf);
    uint8_t answer = n == 3 ? buf[2] : n == 1 ? buf[0] : n == 0 ? 'E' : '?';
    report(1, DONE, answer, 0);
    close(c);
    return 0;
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    return node == 0 ? serve(node) : client();
}
