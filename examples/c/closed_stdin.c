/*
 * closed_stdin: a daemon that closes its standard input, so that the first
 * connection it accepts gets descriptor 0, and answers each request with
 * "ok". Every connection must be seen by the checker, whatever its number
 * (issue 10, 1c): a filter that left fds 0 to 2 to the kernel let this
 * node's read of fd 0 return 0 from the placeholder while the request was
 * still queued, and the reply was lost.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#include "cmc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int node = atoi(argv[1]);
    uint8_t state[2] = {(uint8_t)node, 0};
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(node);
    close(0);
    for (;;) {
        int c = accept(l, 0, 0);
        char buf[CMC_WRITE_MAX];
        ssize_t k = read(c, buf, sizeof buf);
        state[1] = c == 0 ? 1 : 2;
        cmc_record_write(CMC_STATE_FD, state, sizeof state);
        if (k > 0)
            write(c, "ok", 2);
        close(c);
    }
}
