/*
 * rcvtimeo: a socket's receive timeout (SO_RCVTIMEO) and send timeout
 * (SO_SNDTIMEO), the regression program of `cmc/tests/process_time.rs`
 * (issue 27, Deliver 4). One node; each answer of the kernel is reported
 * as one byte (a count, or 256 - errno for an error), on fd 3 for the
 * checker and as a line "report B0 B1 ..." on stdout, so that the same
 * program run natively (`rcvtimeo 0`, on a free loopback port 20000) and
 * under the checker can be compared byte for byte. Natively each timeout
 * takes half a second of real time; under the checker a TIMEOUT ends it.
 *
 *   rcvtimeo NODE
 *
 * In order: SO_RCVTIMEO refused with a short option (EINVAL) and with
 * microseconds out of range (EDOM); set to half a second on the listening
 * socket and read back; an accept with nobody dialling (EAGAIN once the
 * timeout passes); a connection to itself, accepted, which inherits the
 * listener's timeout; read, recv, readv and recvmsg with nothing sent
 * (each EAGAIN once the timeout passes); recv with MSG_WAITALL for four
 * bytes of which two came (2, once the timeout passes); a read of a byte
 * sent (1, at once); SO_SNDTIMEO set, read back, and a write (1, at
 * once: a write never waits here); the new options' numbers
 * (SO_RCVTIMEO_NEW); a timeout of zero read back as none; a negative one
 * (a read is EAGAIN at once, as non-blocking); O_NONBLOCK beside a
 * timeout (EAGAIN at once).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cmc.h"

#ifndef SO_RCVTIMEO_NEW
#define SO_RCVTIMEO_NEW 66
#endif

static void report(const uint8_t *bytes, unsigned len)
{
    cmc_record_write(CMC_STATE_FD, bytes, len);
    printf("report");
    for (unsigned i = 0; i < len; i++)
        printf(" %u", bytes[i]);
    printf("\n");
    fflush(stdout);
}

/* A call's answer as one byte: its value, or 256 - errno. */
static uint8_t res(long r)
{
    return r >= 0 ? (uint8_t)r : (uint8_t)-errno;
}

/* `opt` of `fd` as read back: seconds, then microseconds in 4 ms steps
 * (a jiffy at HZ 250; the values set here are whole steps at 250 and at
 * 1000), and 255 twice if the call failed or gave another length. */
static void timeout_of(int fd, int opt, uint8_t *out)
{
    struct timeval tv;
    socklen_t len = sizeof tv;
    memset(&tv, 0xff, sizeof tv);
    if (getsockopt(fd, SOL_SOCKET, opt, &tv, &len) < 0 || len != sizeof tv) {
        out[0] = out[1] = 255;
        return;
    }
    out[0] = (uint8_t)tv.tv_sec;
    out[1] = (uint8_t)(tv.tv_usec / 4000);
}

int main(int argc, char **argv)
{
    (void)argc;
    int node = argv[1] ? argv[1][0] - '0' : 0;
    int checked = fcntl(CMC_STATE_FD, F_GETFD) >= 0;
    if (!checked && dup2(open("/dev/null", O_WRONLY), CMC_STATE_FD) != CMC_STATE_FD)
        return 2; /* natively: keep fd 3 from being the listener */
    uint8_t out[40];
    unsigned k = 0;
    char b[8];
    struct timeval half = {0, 500000}, bad = {1, 1000000}, two = {2, 0}, none = {0, 0}, negative = {-1, 0};

    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    out[k++] = res(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &half, 8));
    out[k++] = res(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &bad, sizeof bad));
    out[k++] = res(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &half, sizeof half));
    timeout_of(l, SO_RCVTIMEO, out + k);
    k += 2;
    out[k++] = res(accept(l, NULL, NULL));

    int d = cmc_dial(node);
    int a = accept(l, NULL, NULL);
    out[k++] = d >= 0 && a >= 0;
    timeout_of(a, SO_RCVTIMEO, out + k);
    k += 2;
    out[k++] = res(read(a, b, sizeof b));
    out[k++] = res(recv(a, b, sizeof b, 0));
    struct iovec iov = {b, sizeof b};
    out[k++] = res(readv(a, &iov, 1));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    out[k++] = res(recvmsg(a, &msg, 0));
    out[k++] = res(write(d, "ab", 2));
    out[k++] = res(recv(a, b, 4, MSG_WAITALL));
    out[k++] = res(write(d, "x", 1));
    out[k++] = res(read(a, b, sizeof b));

    out[k++] = res(setsockopt(a, SOL_SOCKET, SO_SNDTIMEO, &two, sizeof two));
    timeout_of(a, SO_SNDTIMEO, out + k);
    k += 2;
    out[k++] = res(write(a, "y", 1));

    out[k++] = res(setsockopt(a, SOL_SOCKET, SO_RCVTIMEO_NEW, &two, sizeof two));
    timeout_of(a, SO_RCVTIMEO, out + k);
    k += 2;
    out[k++] = res(setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none));
    timeout_of(a, SO_RCVTIMEO, out + k);
    k += 2;
    out[k++] = res(setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &negative, sizeof negative));
    timeout_of(a, SO_RCVTIMEO, out + k);
    k += 2;
    out[k++] = res(read(a, b, sizeof b));

    out[k++] = res(setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &half, sizeof half));
    out[k++] = res(fcntl(a, F_SETFL, O_NONBLOCK));
    out[k++] = res(read(a, b, sizeof b));
    report(out, k);

    /* Under the checker, wait for its actions for ever (the listener's
     * timeout cleared first); natively, end. */
    if (checked && setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none) == 0)
        accept(l, NULL, NULL);
    return 0;
}
