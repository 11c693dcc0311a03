/*
 * realpid: reports its real process id (read through /proc/self, which the
 * checker does not virtualize) as its state. Every life and every rebuild
 * of a world is a new process, so this node is not deterministic under the
 * checker: a world rebuilt (from the templates, or from a kept ancestor)
 * differs from the one first found, and the checker must say so, naming
 * the action, instead of going on with a different world (issue 10, 1f).
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
    char buf[32] = {0};
    if (readlink("/proc/self", buf, sizeof buf - 1) <= 0)
        return 3;
    int pid = atoi(buf);
    uint8_t state[3] = {(uint8_t)node, (uint8_t)pid, (uint8_t)(pid >> 8)};
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(node);
    for (;;) {
        int c = accept(l, 0, 0);
        char req[CMC_WRITE_MAX];
        if (read(c, req, sizeof req) > 0)
            write(c, "ok", 2);
        close(c);
    }
}
