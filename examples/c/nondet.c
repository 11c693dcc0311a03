/*
 * nondet: a node whose state depends on something outside the world, to
 * show that `--det` catches it. On every start it reports on fd 3 its
 * node number and four bytes of the CPU's own entropy, read with the
 * RDRAND instruction, which no system call answers and nothing can make
 * fault (cmc hides it from cpuid, but a program that executes it anyway
 * reads the hardware: docs/SEMANTICS.md, "RDRAND and RDSEED"), then waits
 * in accept(). Every run of a path draws anew, so two runs of the same
 * path give two different states. (It used to read its real pid from the
 * `/proc/self` link; the checker refuses that now.)
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
    uint32_t drawn;
    unsigned char ok;
    do
        __asm__ volatile("rdrand %0; setc %1" : "=r"(drawn), "=qm"(ok) : : "cc");
    while (!ok);
    uint8_t state[5] = {(uint8_t)node};
    memcpy(state + 1, &drawn, sizeof drawn);
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(node);
    for (;;)
        close(accept(l, 0, 0));
}
