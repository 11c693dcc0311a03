/*
 * nondet: a node whose state depends on something outside the world, to
 * show that `--det` catches it. On every start it reports on fd 3 its
 * node number and its real process id, read from the `/proc/self` link
 * (the checker answers getpid() with a virtual pid, but does not hide
 * /proc), then waits in accept(). Every run of a path is a new process, so
 * two runs of the same path give two different states.
 *
 * It used to count its runs in a file; a node's file system is read-only
 * now, so that is an error of its own.
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
    char link[16] = {0};
    if (readlink("/proc/self", link, sizeof link - 1) <= 0)
        return 3;
    uint32_t pid = (uint32_t)atoi(link);
    uint8_t state[5] = {(uint8_t)node};
    memcpy(state + 1, &pid, sizeof pid);
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(node);
    for (;;)
        close(accept(l, 0, 0));
}
