/*
 * lazy: recovers its durable record lazily, at its first client request
 * rather than at start, to show that what a read of fd 193 will return is
 * part of the world (issue 10, 1b).
 *
 * Its state is one byte: 0 until its first request, then 1 if the read of
 * fd 193 returned the record {1}, 2 if it returned nothing. A TIMEOUT
 * before that request makes {1} durable and changes nothing else, so two
 * paths (TIMEOUT then
 * CRASH, and CRASH then TIMEOUT) end with the same state and the same
 * durable record, yet only after the first does the restarted node's read
 * return {1}: a checker that left the record a read returns out of the
 * world would merge the two and never see the second's answer.
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
    uint8_t state = 0;
    cmc_record_write(CMC_STATE_FD, &state, 1);
    int l = cmc_listen(node);
    for (;;) {
        int c = accept(l, 0, 0);
        char buf[CMC_WRITE_MAX];
        ssize_t k = read(c, buf, sizeof buf);
        if (k == 1 && buf[0] == 'T') {
            uint8_t d = 1;
            if (state == 0)
                cmc_record_write(CMC_DURABLE_FD, &d, 1);
        } else if (k > 0 && state == 0) {
            uint8_t rec[2];
            ssize_t r = read(CMC_DURABLE_FD, rec, sizeof rec);
            state = (r == 2 && rec[0] == 1 && rec[1] == 1) ? 1 : 2;
            cmc_record_write(CMC_STATE_FD, &state, 1);
            write(c, "ok", 2);
        }
        close(c);
    }
}
