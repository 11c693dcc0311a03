/*
 * uninit: the C program probe of the memory gate (scripts/memory_teeth.sh).
 * Started as `uninit NODE MODE`. Node 0 serves: it accepts one connection
 * and reads one message; node 1 dials node 0 and sends "x". Only once node
 * 0 has that message, which takes an ACCEPT and a DELIVER the checker must
 * choose, does it go wrong, as MODE says:
 *
 *   clean   not at all: the control, which must pass;
 *   stack   it branches on a byte of a stack buffer never written;
 *   heap    it branches on a byte of a malloc'd block never written;
 *   report  it reports a state on fd 3 with one byte never written.
 *
 * Each wrong mode must be caught by MemorySanitizer under the checker.
 */
#include "cmc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Out of line and volatile, so that the compiler cannot see that the byte
 * it reads was never written and fold it to a constant; the callers branch
 * on the result with a call on one side, so that the branch stays a branch. */
__attribute__((noinline)) static int odd(const volatile uint8_t *p)
{
    return p[3] & 1;
}

static void report(uint8_t phase, uint8_t value)
{
    uint8_t s[2] = {phase, value};
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
}

static int serve(const char *mode)
{
    report(1, 0);
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    int c = accept(l, NULL, NULL);
    if (c < 0)
        return 3;
    report(2, 0);
    uint8_t buf[CMC_WRITE_MAX];
    if (read(c, buf, sizeof buf) <= 0)
        return 4;
    uint8_t value = buf[0];
    if (strcmp(mode, "stack") == 0) {
        uint8_t junk[8];
        if (odd(junk))
            report(4, value);
    } else if (strcmp(mode, "heap") == 0) {
        uint8_t *junk = malloc(8);
        if (junk == NULL)
            return 5;
        if (odd(junk))
            report(4, value);
        free(junk);
    } else if (strcmp(mode, "report") == 0) {
        /* Volatile: the compiler may not replace the read of s[1] by a
         * constant of its choosing. */
        volatile uint8_t s[2];
        s[0] = 3;
        uint8_t copy[2] = {s[0], s[1]};
        cmc_record_write(CMC_STATE_FD, copy, sizeof copy);
        return 0;
    }
    report(3, value);
    return 0;
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "clean";
    if (node != 0) {
        int c = cmc_dial(0);
        if (c < 0)
            return 2;
        write(c, "x", 1);
        report(9, 0);
        return 0;
    }
    return serve(mode);
}
