/*
 * leak: a node that keeps state in a file, outside the world, to show that
 * the checker does not let a file carry state across lives, snapshots and
 * crashes. Given a mode as its second argument:
 *
 *   "sibling"  waits in accept(). A TIMEOUT (a connection that sends 'T')
 *              makes it write the file `leak-marker` in its working
 *              directory; a client's request makes it check that the file
 *              is there, and abort if it is not. On a fresh run,
 *              [CLIENT(0), ACCEPT(0, client)] aborts. When files outlived
 *              lives, the TIMEOUT branch, which BFS explores first, left the
 *              file behind for its sibling, and the abort was never seen.
 *   "crash"    on its first life (nothing on fd 193) writes the file and
 *              records a durable byte; after a CRASH it reads the file back
 *              and aborts if it finds it, since the model's only durable
 *              state is fd 193.
 *
 * Every other start reports its state (one byte: what it saw) on fd 3 and
 * waits in accept().
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#include "cmc.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MARKER "leak-marker"

static int marker_exists(void)
{
    int fd = open(MARKER, O_RDONLY);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

static void write_marker(void)
{
    int fd = open(MARKER, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        write(fd, "x", 1);
        close(fd);
    }
}

static int sibling(int node)
{
    uint8_t state = 0;
    int l = cmc_listen(node);
    cmc_record_write(CMC_STATE_FD, &state, 1);
    for (;;) {
        int c = accept(l, NULL, NULL);
        char b = 0;
        if (c < 0 || read(c, &b, 1) != 1)
            return 2;
        if (b == 'T') {
            write_marker();
            state = 1;
        } else if (!marker_exists()) {
            abort();
        } else {
            state = 2;
        }
        close(c);
        cmc_record_write(CMC_STATE_FD, &state, 1);
    }
}

static int crash(int node)
{
    uint8_t durable[CMC_STATE_MAX], state;
    if (cmc_recover(durable) < 0) {
        write_marker();
        state = 1;
        cmc_record_write(CMC_DURABLE_FD, &state, 1);
    } else if (marker_exists()) {
        abort();
    } else {
        state = 2;
    }
    cmc_record_write(CMC_STATE_FD, &state, 1);
    int l = cmc_listen(node);
    for (;;)
        close(accept(l, NULL, NULL));
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "";
    if (strcmp(mode, "sibling") == 0)
        return sibling(node);
    if (strcmp(mode, "crash") == 0)
        return crash(node);
    return 2;
}
