/*
 * nondet: a node whose state depends on something outside the world, to
 * show that `--det` catches it. On every start it reads a one-byte run
 * count from the file named by its second argument, adds one, writes it
 * back and reports it on fd 3; then it waits in accept(). Files a node
 * writes are outside the world, so two runs of the same path give two
 * different states.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#include "cmc.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int node = atoi(argv[1]);
    uint8_t runs = 0;
    int fd = open(argv[2], O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return 3;
    if (read(fd, &runs, 1) < 0)
        return 4;
    runs++;
    if (pwrite(fd, &runs, 1, 0) != 1)
        return 5;
    close(fd);
    uint8_t state[2] = {(uint8_t)node, runs};
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(node);
    for (;;)
        close(accept(l, 0, 0));
}
