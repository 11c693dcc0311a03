/*
 * tcp: connections as Linux keeps them (issue 27, items 1 and 2), one
 * behaviour per mode, each honest about its state. Node 0 serves, node 1
 * is its client; each reports on fd 3 what it saw, as errnos and counts.
 * Every expectation in cmc/tests/process_tcp.rs was measured by running
 * these natively, on loopback in a private network namespace.
 *
 * Honest: a node that waits twice in the same call reports between the
 * two waits, so that the checker, which keeps one snapshot per node state,
 * never takes one wait for the other (the conformance gate found the
 * "crash" mode's client taken back to its first read when it was not).
 *
 *   tcp NODE MODE
 *
 * Modes:
 *   "fin"      node 0 accepts, writes "hi" and closes; node 1 reads until
 *              the end: {bytes, last read}. (A close did not reach the
 *              peer: node 1 waited for ever.)
 *   "shutwr"   node 0 accepts, writes "hi", shuts its writing and reads
 *              node 1's answer: {answer bytes}; node 1 reads to the end,
 *              then answers "ok": {bytes, last read}.
 *   "epipe"    node 0 accepts and closes; node 1 (SIGPIPE ignored) reads
 *              the end, then writes twice: {read, first write, errno of the
 *              second} (EPIPE; it succeeded).
 *   "sigpipe"  as "epipe", SIGPIPE at its default: node 1 dies of it.
 *   "nosignal" as "sigpipe", its writes sent with MSG_NOSIGNAL: {read, first
 *              send, errno of the second} (EPIPE, and it lives).
 *   "caught"   as "sigpipe", SIGPIPE caught: {read, first write, errno of
 *              the second, signals caught} (EPIPE, 1).
 *   "reset"    node 1 writes "x"; node 0 accepts, polls until "x" has
 *              arrived, and closes without reading it (a reset); node 1 reads, reads, writes: {errno, read,
 *              errno} (ECONNRESET, 0, EPIPE).
 *   "refused"  node 0 never listens; node 1 dials it: {errno}
 *              (ECONNREFUSED; it connected), then dials without blocking:
 *              {errno, errno, SO_ERROR} (EINPROGRESS, ECONNREFUSED).
 *   "late"     node 0 exits at once; node 1 sleeps a second, then dials:
 *              {errno} (ECONNREFUSED).
 *   "bind"     node 0 listens on 127.0.0.1 port 20001 (node 1's by the
 *              convention); node 1 tries to bind 20001 (EADDRINUSE), dials
 *              127.0.0.2:20001 (ECONNREFUSED: nobody listens there) and
 *              127.0.0.1:20001, writes "b", then binds one socket twice
 *              (EINVAL); node 0 reports the byte it read: {errno, errno,
 *              0, errno}, {'b'}. (The dial went to node 1 by the port,
 *              whatever was bound.)
 *   "crash"    node 0 accepts, reads the request, answers "r1" and waits
 *              in a second read: {1};
 *              node 1 writes "q" and reads twice: {bytes, errno} (2,
 *              ECONNRESET after a CRASH of node 0: what node 0 wrote
 *              arrives, then the reset).
 *   "midstream" node 1 writes "a" then "b"; node 0 reads once and aborts if
 *              what it read is "b" (a later message without the earlier
 *              one: no TCP connection delivers that): {read, errno}.
 *   "shutrd"   node 0 accepts, shuts its reading and reads: {read} (0 at
 *              once; it waited).
 *   "shutrdpoll" node 1 writes "x"; node 0 accepts, shuts its reading,
 *              polls for POLLIN and aborts if the read then returns 0
 *              (it assumes a poll after its own SHUT_RD waits for data):
 *              {POLLIN, POLLRDHUP, read}. Linux's poll returns POLLIN and
 *              POLLRDHUP at once, and the read 0 unless "x" came first (a
 *              review's probe: the poll waited for "x", a pass).
 *   "finwrite" as "fin", node 1 reads "hi", writes "ack" (SIGPIPE ignored)
 *              and reads again: {bytes, write, read, errno} (2, 3, 0, 0
 *              where node 0's close came first; 2, 3, -1, ECONNRESET where
 *              the write came first and node 0 closed with it unread).
 *   "selfclose" node 0 dials itself, accepts, closes the accepted end,
 *              writes "x" on the dialled end (SIGPIPE ignored) and reads
 *              it: {write, read} (1, 0: its own close came first).
 *   "finpoll"  as "fin", node 1 polls for POLLIN|POLLRDHUP instead and
 *              aborts if the data is there without the hang-up (it assumes
 *              the FIN comes with the last byte): {POLLIN, POLLRDHUP}. On
 *              Linux it may run between node 0's write and its close.
 *   "finread"  as "fin", node 1 reads "hi", then receives without waiting
 *              and aborts on EAGAIN (it assumes the end is there with the
 *              data): {bytes, result, errno}.
 *   "rstpoll"  node 1 writes "x" and polls for POLLIN; node 0 accepts,
 *              polls until "x" has arrived, writes "hi" and closes without
 *              reading "x" (a reset after the data); node 1 aborts if the
 *              data is there without POLLHUP or POLLERR: {POLLIN, POLLHUP,
 *              POLLERR}.
 *   "rstwrite" as "reset", node 1 writes "x", sleeps a second (node 0 has
 *              closed by then), writes "y" and receives without waiting:
 *              {errno of the write, result of the receive} (ECONNRESET, 0:
 *              the reset is there for the write at once, and for reads
 *              once a write has seen it).
 *   "nbread"   node 1 dials and writes "a"; node 0, busy for a while (no
 *              call), accepts and receives without waiting, and aborts if
 *              "a" is there (its path for data already there has the bug);
 *              otherwise it polls and reads: {0, bytes}. On Linux "a" is
 *              usually there.
 *   "nbpoll"   as "nbread", node 0 polls with a zero timeout instead of
 *              receiving, and aborts if "a" is ready.
 *   "spin"     node 1 dials, is busy a while (no call) and writes "x"; node
 *              0 accepts, reports, then receives without waiting until "x"
 *              is there, counting its EAGAINs in memory, unreported, and
 *              aborts if there were any (natively it does, node 1 being
 *              busy). Each receive is held for "x" on its way; the holds
 *              after the first are in the middle of its step, and their
 *              trail keeps them apart (one world passed the bug, each
 *              hold's process taken for the first's).
 *   "spinquiet" as "spin", node 0 counts nothing and never aborts
 *              (natively {1}): held without end, it crosses
 *              holds_per_step_max (an error), as the checker cannot tell
 *              it from "spin".
 *   "reqnow"   node 1 dials, writes "q", is busy a while (no call) and
 *              receives without waiting, aborting if node 0's answer "r"
 *              is there (natively 10 of 10 runs abort); node 0 accepts,
 *              reads "q" and answers. The answer is drawn by node 1's own
 *              step, which was atomic: nothing was on its way at the
 *              receive, and it was EAGAIN at once (a pass).
 *   "reqpoll"  as "reqnow", node 1 polls with a zero timeout (10 of 10).
 *   "batch"    node 1 dials and writes "q"; node 0 accepts, reads it and
 *              answers in 20 writes of one byte (SIGPIPE ignored): {20
 *              results} as they went. A crash of node 1 before them holds
 *              each write that may come before it (WriteNow): the review
 *              found such a batch an error once past 16 holds, counted as
 *              a spin.
 *   "twowrite" node 1 dials, writes "a", is busy a while (no call) and
 *              writes "b", aborting if that fails (SIGPIPE ignored); node
 *              0 accepts, polls until "a" is there and closes without
 *              reading it (a reset). Natively 6 of 6 runs abort. It passed
 *              while a write toward a peer still open was made at once.
 *   "dlwrite"  node 1 writes "a", which node 0 never reads, and sleeps a
 *              second, is busy and writes "b", aborting if that fails;
 *              node 0 sleeps 1.005 s and closes (a reset). Under deadline
 *              order node 0's TIMEOUT cannot come before node 1's, yet
 *              natively it falls while node 1 is busy (6 of 6 runs abort).
 *   "lateaccept" node 0 alone (a client may come) listens, is busy a while
 *              (no call) and accepts without waiting, aborting if a
 *              connection is there (natively, a client dialling every
 *              millisecond: 8 of 10 runs abort). The review found it
 *              passed where holds waited for the step to have sent
 *              something: a listen sends nothing.
 *   "stream"   node 1 writes 7 bytes, one write each; node 0 reads them
 *              as they come, reporting how many it has: {bytes}.
 *   "crossconn" node 1 dials twice, writes "g" on its second connection,
 *              is busy, writes "x" on its first and reads it, aborting on
 *              0; node 0 closes the first (nothing unread: a FIN) once "g"
 *              is there. Natively the FIN comes before "x" (10 of 10 runs
 *              abort); it passed while a write with nothing unread at the
 *              peer was made at once.
 *   "dlfin"    node 1 writes "a", reads node 0's "k", sleeps a second, is
 *              busy, writes "x" and reads, aborting on 0; node 0 sleeps
 *              1.005 s after "k" and closes (a FIN). Under deadline order
 *              node 0's TIMEOUT cannot come first, yet natively it falls
 *              while node 1 is busy (10 of 10).
 *   "fionread" node 1 dials and writes "hi"; node 0 accepts, is busy a
 *              while (no call) and asks FIONREAD, aborting if anything is
 *              there (natively 10 of 10 runs abort).
 *   "waitallnb" the same with a receive of two bytes, MSG_WAITALL and
 *              MSG_DONTWAIT, aborting if it gets both (10 of 10).
 *   "soerror"  node 0 accepts, writes "x", is busy and reads SO_ERROR,
 *              aborting on an error; node 1 closes once "x" is there,
 *              unread, so a reset (10 of 10). The three passed while such
 *              observations answered from the world at once.
 *   "peername" as "soerror", with getpeername, aborting on ENOTCONN (a
 *              reset end is closed; 10 of 10).
 *   "startaccept" as "lateaccept", with node 1 dialling at its start
 *              (natively every millisecond until it connects; 8 of 10 runs
 *              abort). It passed while a node starting ran as if the
 *              nodes after it could not act yet.
 *   "nbaccept" node 0 listens without blocking and sleeps a second; node 1
 *              dials; node 0 accepts without waiting and aborts if the
 *              connection is there (its bug); otherwise {EAGAIN}.
 *   "finrst"   node 0 shuts its writing (a FIN), waits for node 1's "x"
 *              and closes without reading it (then a reset); node 1 reads
 *              the end, then polls for nothing (events 0) until the reset
 *              is there, receives and reads SO_ERROR: {read, poll, POLLHUP,
 *              POLLERR, receive, SO_ERROR} (0, 1, 1, 1, 0, EPIPE: the reset
 *              that follows a FIN reaches a poll, and a read after the FIN
 *              returns 0, leaving the error).
 *   "shutrdrst" as "reset", node 1 shuts its reading after writing "x",
 *              sleeps a second (node 0 has closed by then) and reads:
 *              {errno} (ECONNRESET: a read shut for reading does not wait,
 *              and finds the reset that arrived).
 *   "peek"     as "reset", node 1 polls until the reset is there, then
 *              peeks without waiting, then receives: {poll, errno of the
 *              peek, the receive} (1, ECONNRESET, 0: a peek takes the
 *              error).
 *   "twolooks" node 0 accepts, writes "g" and "h", and reads a byte at a
 *              time, asking FIONREAD after each, and closes (a reset) once
 *              more is there; node 1 writes "a" and "b", reads, and reads
 *              SO_ERROR and FIONREAD, aborting on ECONNRESET. Whether its
 *              SO_ERROR is held turns on whether node 0 read what it
 *              wrote, which its trail leaves out: the two holds, at two
 *              calls, were one world, and a search found an error or a
 *              violation by how many processes it kept parked.
 *   "shutshare" three nodes. Node 0 accepts nodes 1 and 2, polls, and
 *              shuts node 2's connection for writing if node 2's "V" was
 *              there at that poll, for both otherwise (reading it first;
 *              node 2's "x" then draws a reset). Node 2 reads the end,
 *              writes "x" and then no bytes, reads node 1's connection
 *              without waiting (held), and aborts if the write of no bytes
 *              failed with EPIPE (natively 10 of 10 runs, node 2 started
 *              50 ms after node 1). Node 0's own SHUT_RD decides that
 *              answer; a trail that left the peer's socket out made the
 *              two shutdowns one process, and it passed with the default
 *              snapshots (the review's `share`).
 *   "lclose"   node 1 dials twice (B, then A), writes "g" on B, is busy
 *              and writes "x" on A; node 0 accepts B only, reads its "g"
 *              and closes its listener, A still in its accept queue (a
 *              reset). Node 1 aborts where "x" fails (natively 10 of 10).
 *   "shutrdwr" as "lclose", with node 0 accepting A and shutting it both
 *              ways; node 1's "x" arrives after the shutdown (a reset), and
 *              it aborts where its next write, "y", fails (10 of 10). Both
 *              passed while a write toward an open peer was made at once
 *              (the review's `lclose`, `shutrdwr`).
 *   "redial"   node 0 accepts and reads; node 1 reads, and once its
 *              connection ends (node 0 crashed: ECONNRESET) dials node 0
 *              again: {errno of the read, errno of the dial}
 *              (ECONNREFUSED while node 0 is down, 0 once it is back; a
 *              crashed node was back at once, and the dial always
 *              connected).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmc.h"

static unsigned char state[8];
static unsigned state_len;

static void report(void)
{
    cmc_record_write(CMC_STATE_FD, state, state_len);
}

static void set(unsigned i, long v)
{
    state[i] = (unsigned char)v;
    if (i + 1 > state_len)
        state_len = i + 1;
}

static int err(long r)
{
    return r < 0 ? errno : 0;
}

static struct sockaddr_in at(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

/* Waits for ever where a search leaves it (and where a native run is
 * killed). */
__attribute__((noreturn)) static void idle(int node)
{
    int l = cmc_listen(node);
    for (;;)
        if (l < 0 || close(accept(l, NULL, NULL)) != 0)
            pause();
}

static int server(const char *mode)
{
    char b[8];
    if (strcmp(mode, "selfclose") == 0) {
        signal(SIGPIPE, SIG_IGN);
        int l = cmc_listen(0), d = cmc_dial(0);
        report();
        int a = accept(l, NULL, NULL);
        close(a);
        set(0, write(d, "x", 1));
        report(); /* honest: it has written, before it reads */
        set(1, read(d, b, sizeof b));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "lateaccept") == 0 || strcmp(mode, "startaccept") == 0) {
        int l = cmc_listen(0);
        if (l < 0 || fcntl(l, F_SETFL, O_NONBLOCK) != 0)
            return 2;
        for (volatile long i = 0; i < 20000000; i++) /* busy, no call */
            ;
        if (accept(l, NULL, NULL) >= 0)
            abort(); /* the bug: a client may have come */
        set(0, errno);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "nbaccept") == 0) {
        int l = cmc_listen(0);
        if (l < 0 || fcntl(l, F_SETFL, O_NONBLOCK) != 0)
            return 2;
        report();
        sleep(1);
        int c = accept(l, NULL, NULL);
        if (c >= 0)
            abort(); /* the bug: the connection may be there */
        set(0, errno);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "refused") == 0) {
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "late") == 0)
        return 0;
    if (strcmp(mode, "bind") == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = at("127.0.0.1", CMC_PORT_BASE + 1);
        if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 4) != 0)
            return 2;
        report();
        int c = accept(l, NULL, NULL);
        set(0, read(c, b, 1) == 1 ? b[0] : 0);
        report();
        pause();
        return 0;
    }
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    report();
    int nb = strcmp(mode, "nbread") == 0 || strcmp(mode, "nbpoll") == 0;
    if (nb)
        for (volatile long i = 0; i < 20000000; i++) /* busy, no call */
            ;
    int c = accept(l, NULL, NULL);
    if (strcmp(mode, "batch") == 0) {
        signal(SIGPIPE, SIG_IGN);
        read(c, b, sizeof b);
        int ok = 0;
        for (int i = 0; i < 20; i++)
            ok += write(c, "y", 1) == 1;
        set(0, ok);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "fionread") == 0 || strcmp(mode, "waitallnb") == 0 || strcmp(mode, "soerror") == 0 ||
        strcmp(mode, "peername") == 0) {
        if (strcmp(mode, "soerror") == 0 || strcmp(mode, "peername") == 0)
            write(c, "x", 1);
        for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
            ;
        int k = 0;
        socklen_t len = sizeof k;
        if (strcmp(mode, "fionread") == 0)
            ioctl(c, FIONREAD, &k);
        else if (strcmp(mode, "waitallnb") == 0)
            k = recv(c, b, 2, MSG_WAITALL | MSG_DONTWAIT) == 2;
        else if (strcmp(mode, "soerror") == 0)
            getsockopt(c, SOL_SOCKET, SO_ERROR, &k, &len);
        else {
            struct sockaddr_in a;
            socklen_t alen = sizeof a;
            k = getpeername(c, (struct sockaddr *)&a, &alen) != 0;
        }
        if (k != 0)
            abort(); /* the bug: what came meanwhile may be there */
        set(0, 0);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "lclose") == 0 || strcmp(mode, "shutrdwr") == 0) {
        set(0, 1);
        report();
        struct pollfd p = {c, POLLIN, 0};
        poll(&p, 1, -1);
        read(c, b, 1); /* "g" */
        if (strcmp(mode, "lclose") == 0) {
            close(l); /* A never accepted: a reset */
        } else {
            int a = accept(l, NULL, NULL);
            set(0, 2);
            report();
            shutdown(a, SHUT_RDWR); /* what arrives after: a reset */
        }
        set(0, 3);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "twolooks") == 0) {
        signal(SIGPIPE, SIG_IGN);
        write(c, "g", 1);
        write(c, "h", 1);
        set(0, 1);
        report();
        for (int i = 0; i < 2; i++) {
            if (read(c, b, 1) != 1)
                break;
            int k = 0;
            ioctl(c, FIONREAD, &k);
            set(1 + i, 1 + k);
            report();
            if (k > 0) {
                close(c); /* "b" unread: a reset */
                set(0, 2);
                report();
                break;
            }
        }
        pause();
        return 0;
    }
    if (strncmp(mode, "req", 3) == 0) {
        set(0, read(c, b, sizeof b));
        write(c, "r", 1);
        report();
        pause();
        return 0;
    }
    if (strncmp(mode, "spin", 4) == 0) {
        report();
        long tries = 0, k;
        for (;;) {
            if ((k = recv(c, b, sizeof b, MSG_DONTWAIT)) > 0)
                break;
            tries++;
        }
        if (strcmp(mode, "spin") == 0 && tries > 0)
            abort(); /* the bug: "x" need not be there at once */
        set(0, k);
        report();
        pause();
        return 0;
    }
    if (nb) {
        struct pollfd p = {c, POLLIN, 0};
        if (strcmp(mode, "nbread") == 0 ? recv(c, b, sizeof b, MSG_DONTWAIT) > 0 : poll(&p, 1, 0) == 1)
            abort(); /* the bug: the data may be there */
        poll(&p, 1, -1);
        set(0, 0);
        set(1, read(c, b, sizeof b));
        report();
        pause();
        return 0;
    }
    int hi = strcmp(mode, "fin") == 0 || strcmp(mode, "finpoll") == 0 || strcmp(mode, "finread") == 0 ||
             strcmp(mode, "finwrite") == 0;
    if (hi || strcmp(mode, "epipe") == 0 || strcmp(mode, "sigpipe") == 0 || strcmp(mode, "nosignal") == 0 ||
        strcmp(mode, "caught") == 0) {
        if (hi)
            write(c, "hi", 2);
        close(c);
        idle(0);
    }
    if (strcmp(mode, "shutwr") == 0) {
        write(c, "hi", 2);
        shutdown(c, SHUT_WR);
        ssize_t k = read(c, b, sizeof b);
        set(0, k);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "finrst") == 0)
        shutdown(c, SHUT_WR);
    if (strcmp(mode, "reset") == 0 || strcmp(mode, "rstpoll") == 0 || strcmp(mode, "rstwrite") == 0 ||
        strcmp(mode, "finrst") == 0 || strcmp(mode, "peek") == 0 || strcmp(mode, "shutrdrst") == 0) {
        struct pollfd p = {c, POLLIN, 0};
        poll(&p, 1, -1); /* "x" has arrived */
        if (strcmp(mode, "rstpoll") == 0)
            write(c, "hi", 2);
        close(c); /* unread: a reset */
        idle(0);
    }
    if (strcmp(mode, "stream") == 0) {
        int got = 0;
        while (got < 7) {
            ssize_t k = read(c, b, sizeof b);
            if (k <= 0)
                abort();
            got += k;
            set(0, got);
            report();
        }
        pause();
        return 0;
    }
    if (strcmp(mode, "crossconn") == 0) {
        int g = accept(l, NULL, NULL);
        set(0, 1);
        report();
        struct pollfd p = {g, POLLIN, 0};
        poll(&p, 1, -1);
        read(g, b, 1); /* "g" */
        set(0, 2);
        report();
        close(c); /* nothing unread on it: a FIN */
        set(0, 3);
        report();
        idle(0);
    }
    if (strcmp(mode, "dlfin") == 0) {
        read(c, b, 1); /* "a" */
        write(c, "k", 1);
        set(0, 1);
        report();
        usleep(1005000);
        close(c); /* nothing unread: a FIN */
        set(0, 2);
        report();
        idle(0);
    }
    if (strcmp(mode, "twowrite") == 0) {
        struct pollfd p = {c, POLLIN, 0};
        poll(&p, 1, -1); /* "a" has arrived */
        close(c);        /* unread: a reset */
        idle(0);
    }
    if (strcmp(mode, "dlwrite") == 0) {
        set(0, 1);
        report();
        usleep(1005000);
        close(c); /* "a" unread: a reset */
        idle(0);
    }
    if (strcmp(mode, "redial") == 0) {
        read(c, b, sizeof b);
        idle(0);
    }
    if (strcmp(mode, "crash") == 0) {
        read(c, b, sizeof b);
        write(c, "r1", 2);
        /* Honest: its second read is another place than its first. */
        set(0, 1);
        report();
        read(c, b, sizeof b);
        return 0;
    }
    if (strcmp(mode, "midstream") == 0) {
        ssize_t k = read(c, b, sizeof b);
        set(0, k > 0 ? b[0] : k);
        set(1, err(k));
        report();
        if (k > 0 && b[0] == 'b')
            abort(); /* no TCP connection delivers this */
        pause();
        return 0;
    }
    if (strcmp(mode, "shutrd") == 0) {
        shutdown(c, SHUT_RD);
        set(0, read(c, b, sizeof b));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "shutrdpoll") == 0) {
        shutdown(c, SHUT_RD);
        struct pollfd p = {c, POLLIN | POLLRDHUP, 0};
        poll(&p, 1, -1);
        set(0, (p.revents & POLLIN) != 0);
        set(1, (p.revents & POLLRDHUP) != 0);
        ssize_t k = read(c, b, sizeof b);
        set(2, k);
        report();
        if (k == 0)
            abort(); /* the bug: a read after the poll finds the end */
        pause();
        return 0;
    }
    return 1;
}

static volatile sig_atomic_t caught;

static void on_sigpipe(int sig)
{
    (void)sig;
    caught++;
}

static int client(const char *mode)
{
    char b[8];
    if (strcmp(mode, "selfclose") == 0) {
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "epipe") == 0)
        signal(SIGPIPE, SIG_IGN);
    if (strcmp(mode, "caught") == 0) {
        struct sigaction sa = {.sa_handler = on_sigpipe};
        sigaction(SIGPIPE, &sa, NULL);
    }
    if (strcmp(mode, "refused") == 0) {
        int c = cmc_dial(0);
        set(0, c < 0 ? errno : 0);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in a = at("127.0.0.1", CMC_PORT_BASE);
        set(1, err(connect(s, (struct sockaddr *)&a, sizeof a)));
        int e = 0;
        socklen_t len = sizeof e;
        getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len);
        set(2, e);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "startaccept") == 0) {
        int c;
        while ((c = cmc_dial(0)) < 0) /* natively: node 0 may not listen yet */
            usleep(1000);
        set(0, 1);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "late") == 0) {
        report();
        sleep(1);
        int c = cmc_dial(0);
        set(0, c < 0 ? errno : 0);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "bind") == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = at("127.0.0.1", CMC_PORT_BASE + 1);
        set(0, err(bind(s, (struct sockaddr *)&a, sizeof a)));
        close(s);
        s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in other = at("127.0.0.2", CMC_PORT_BASE + 1);
        set(1, err(connect(s, (struct sockaddr *)&other, sizeof other)));
        close(s);
        s = socket(AF_INET, SOCK_STREAM, 0);
        set(2, err(connect(s, (struct sockaddr *)&a, sizeof a)));
        write(s, "b", 1);
        /* A socket bound once is not bound again (EINVAL), even to a
           port that is free. */
        int twice = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in first = at("127.0.0.1", CMC_PORT_BASE + 5);
        struct sockaddr_in second = at("127.0.0.1", CMC_PORT_BASE + 6);
        bind(twice, (struct sockaddr *)&first, sizeof first);
        set(3, err(bind(twice, (struct sockaddr *)&second, sizeof second)));
        report();
        pause();
        return 0;
    }
    int c = cmc_dial(0);
    if (c < 0)
        return 2;
    if (strcmp(mode, "fin") == 0 || strcmp(mode, "shutwr") == 0) {
        ssize_t total = 0, k;
        while ((k = read(c, b, sizeof b)) > 0) {
            total += k;
            /* Honest: what it has read so far, before it waits again. */
            set(0, total);
            report();
        }
        set(0, total);
        set(1, k);
        if (strcmp(mode, "shutwr") == 0)
            write(c, "ok", 2);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "fionread") == 0 || strcmp(mode, "waitallnb") == 0) {
        write(c, "hi", 2);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "lclose") == 0 || strcmp(mode, "shutrdwr") == 0) {
        signal(SIGPIPE, SIG_IGN);
        int a = cmc_dial(0);
        if (a < 0)
            return 2;
        write(c, "g", 1);
        for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
            ;
        long r = write(a, "x", 1);
        if (strcmp(mode, "lclose") == 0 && r < 0)
            abort(); /* the listener's close reset A before "x" */
        set(0, 1);
        report();
        if (strcmp(mode, "shutrdwr") == 0) {
            for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
                ;
            if (write(a, "y", 1) < 0)
                abort(); /* "x" arrived after the shutdown: a reset */
            set(0, 2);
            report();
        }
        pause();
        return 0;
    }
    if (strcmp(mode, "twolooks") == 0) {
        signal(SIGPIPE, SIG_IGN);
        write(c, "a", 1);
        write(c, "b", 1);
        report();
        read(c, b, 1);
        int e = 0, k = 0;
        socklen_t len = sizeof e;
        getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &len);
        ioctl(c, FIONREAD, &k);
        set(0, 3);
        set(1, e);
        set(2, k);
        report();
        if (e == ECONNRESET)
            abort(); /* the bug: node 0 may have closed on "b" */
        pause();
        return 0;
    }
    if (strcmp(mode, "soerror") == 0 || strcmp(mode, "peername") == 0) {
        struct pollfd p = {c, POLLIN, 0};
        poll(&p, 1, -1); /* "x" has arrived */
        close(c);        /* unread: a reset */
        idle(1);
    }
    if (strcmp(mode, "stream") == 0) {
        for (int i = 0; i < 7; i++)
            write(c, "x", 1);
        set(0, 7);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "crossconn") == 0 || strcmp(mode, "dlfin") == 0) {
        signal(SIGPIPE, SIG_IGN);
        if (strcmp(mode, "crossconn") == 0) {
            int g = cmc_dial(0);
            write(g, "g", 1);
        } else {
            write(c, "a", 1);
            read(c, b, 1); /* "k" */
            set(0, 1);
            report();
            usleep(1000000);
        }
        for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
            ;
        write(c, "x", 1); /* nothing unread at node 0 */
        if (read(c, b, sizeof b) == 0)
            abort(); /* the bug: node 0's FIN may come before "x" */
        set(0, 2);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "twowrite") == 0 || strcmp(mode, "dlwrite") == 0) {
        signal(SIGPIPE, SIG_IGN);
        write(c, "a", 1);
        if (strcmp(mode, "dlwrite") == 0) {
            set(0, 0);
            report();
            usleep(1000000);
        }
        for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
            ;
        if (write(c, "b", 1) < 0)
            abort(); /* the bug: node 0 may have closed, "a" unread */
        set(0, 1);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "finwrite") == 0) {
        signal(SIGPIPE, SIG_IGN);
        set(0, read(c, b, sizeof b));
        report(); /* honest: it has read, before it writes */
        set(1, write(c, "ack", 3));
        ssize_t k = read(c, b, sizeof b);
        set(2, k);
        set(3, err(k));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "finpoll") == 0) {
        struct pollfd p = {c, POLLIN | POLLRDHUP, 0};
        poll(&p, 1, -1);
        set(0, (p.revents & POLLIN) != 0);
        set(1, (p.revents & POLLRDHUP) != 0);
        report();
        if ((p.revents & POLLIN) && !(p.revents & POLLRDHUP))
            abort(); /* the bug: the FIN need not come with the data */
        pause();
        return 0;
    }
    if (strcmp(mode, "finread") == 0) {
        set(0, read(c, b, sizeof b));
        report(); /* honest: it has read, before it reads again */
        ssize_t k = recv(c, b, sizeof b, MSG_DONTWAIT);
        set(1, k);
        set(2, err(k));
        report();
        if (k < 0 && state[2] == EAGAIN)
            abort(); /* the bug: the end need not be there yet */
        pause();
        return 0;
    }
    if (strcmp(mode, "batch") == 0) {
        write(c, "q", 1);
        report();
        pause();
        return 0;
    }
    if (strncmp(mode, "req", 3) == 0) {
        write(c, "q", 1);
        for (volatile long i = 0; i < 20000000; i++) /* busy, no call */
            ;
        struct pollfd p = {c, POLLIN, 0};
        if (strcmp(mode, "reqnow") == 0 ? recv(c, b, sizeof b, MSG_DONTWAIT) > 0 : poll(&p, 1, 0) == 1)
            abort(); /* the bug: the answer may be there */
        set(0, 0);
        report();
        pause();
        return 0;
    }
    if (strncmp(mode, "spin", 4) == 0) {
        for (volatile long i = 0; i < 20000000; i++) /* busy, no call */
            ;
        write(c, "x", 1);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "nbread") == 0 || strcmp(mode, "nbpoll") == 0) {
        write(c, "a", 1);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "nbaccept") == 0) {
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "finrst") == 0) {
        signal(SIGPIPE, SIG_IGN);
        write(c, "x", 1);
        set(0, read(c, b, sizeof b));
        report(); /* honest: it has read, before it waits again */
        struct pollfd p = {c, 0, 0};
        set(1, poll(&p, 1, -1));
        set(2, (p.revents & POLLHUP) != 0);
        set(3, (p.revents & POLLERR) != 0);
        set(4, recv(c, b, sizeof b, MSG_DONTWAIT));
        int e = 0;
        socklen_t len = sizeof e;
        getsockopt(c, SOL_SOCKET, SO_ERROR, &e, &len);
        set(5, e);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "shutrdrst") == 0) {
        write(c, "x", 1);
        shutdown(c, SHUT_RD);
        report();
        sleep(1);
        set(0, err(read(c, b, sizeof b)));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "peek") == 0) {
        write(c, "x", 1);
        struct pollfd p = {c, 0, 0};
        set(0, poll(&p, 1, -1));
        set(1, err(recv(c, b, sizeof b, MSG_PEEK | MSG_DONTWAIT)));
        set(2, recv(c, b, sizeof b, MSG_DONTWAIT));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "rstwrite") == 0) {
        write(c, "x", 1);
        report();
        sleep(1);
        signal(SIGPIPE, SIG_IGN);
        set(0, err(write(c, "y", 1)));
        set(1, recv(c, b, sizeof b, MSG_DONTWAIT));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "rstpoll") == 0) {
        write(c, "x", 1);
        struct pollfd p = {c, POLLIN, 0};
        poll(&p, 1, -1);
        set(0, (p.revents & POLLIN) != 0);
        set(1, (p.revents & POLLHUP) != 0);
        set(2, (p.revents & POLLERR) != 0);
        report();
        if ((p.revents & POLLIN) && !(p.revents & (POLLHUP | POLLERR)))
            abort(); /* the bug: the reset need not come with the data */
        pause();
        return 0;
    }
    if (strcmp(mode, "epipe") == 0 || strcmp(mode, "sigpipe") == 0) {
        set(0, read(c, b, sizeof b));
        set(1, write(c, "a", 1));
        set(2, err(write(c, "b", 1)));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "nosignal") == 0) {
        set(0, read(c, b, sizeof b));
        set(1, send(c, "a", 1, MSG_NOSIGNAL));
        set(2, err(send(c, "b", 1, MSG_NOSIGNAL)));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "caught") == 0) {
        set(0, read(c, b, sizeof b));
        set(1, write(c, "a", 1));
        set(2, err(write(c, "b", 1)));
        set(3, caught);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "reset") == 0) {
        write(c, "x", 1);
        set(0, err(read(c, b, sizeof b)));
        set(1, read(c, b, sizeof b));
        signal(SIGPIPE, SIG_IGN);
        set(2, err(write(c, "y", 1)));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "redial") == 0) {
        report();
        set(0, err(read(c, b, sizeof b)));
        report(); /* honest: it has read, before it dials */
        int again = cmc_dial(0);
        set(1, again < 0 ? errno : 0);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "crash") == 0) {
        write(c, "q", 1);
        set(0, read(c, b, sizeof b));
        report(); /* honest: it has read, before it waits again */
        set(1, err(read(c, b, sizeof b)));
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "midstream") == 0) {
        write(c, "a", 1);
        write(c, "b", 1);
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "shutrd") == 0) {
        report();
        pause();
        return 0;
    }
    if (strcmp(mode, "shutrdpoll") == 0) {
        write(c, "x", 1);
        report();
        pause();
        return 0;
    }
    return 1;
}

/* "shutshare", three nodes. */
static int shutshare(int node)
{
    char b[8];
    signal(SIGPIPE, SIG_IGN);
    if (node == 0) {
        int l = cmc_listen(0);
        report();
        int fds[2] = {accept(l, NULL, NULL), accept(l, NULL, NULL)};
        struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        poll(p, 2, -1);
        int victim = -1, sawv = 0;
        for (int i = 0; i < 2; i++)
            if (p[i].revents & POLLIN) {
                read(fds[i], b, 1);
                if (b[0] == 'V') {
                    victim = fds[i];
                    sawv = 1;
                }
                set(1 + i, b[0]);
            }
        set(0, sawv ? 'W' : 'R');
        report();
        for (int i = 0; victim < 0 && i < 2; i++)
            if (!(p[i].revents & POLLIN)) {
                read(fds[i], b, 1); /* node 2's "V" */
                victim = fds[i];
            }
        shutdown(victim, sawv ? SHUT_WR : SHUT_RDWR);
        set(3, 1);
        report();
        int other = victim == fds[0] ? fds[1] : fds[0];
        for (;;)
            if (read(other, b, 1) <= 0)
                pause();
    }
    if (node == 1) {
        int l = cmc_listen(1), d = cmc_dial(0);
        write(d, "H", 1);
        report();
        int a = accept(l, NULL, NULL);
        write(a, "h", 1);
        set(0, 2);
        report();
        for (;;)
            if (read(a, b, 1) <= 0)
                pause();
    }
    int d0 = cmc_dial(0), d1 = cmc_dial(1);
    write(d0, "V", 1);
    report();
    set(1, read(d0, b, 1));
    set(0, 2);
    report();
    long w1 = write(d0, "x", 1);
    int e2 = err(write(d0, "", 0));
    fcntl(d1, F_SETFL, O_NONBLOCK);
    long r1 = read(d1, b, 1);
    set(0, 3);
    set(2, w1);
    set(3, e2);
    set(4, r1);
    report();
    if (e2 == EPIPE)
        abort(); /* the bug: node 0 may have shut both ways */
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    int node = atoi(argv[1]);
    if (strcmp(argv[2], "shutshare") == 0)
        return shutshare(node);
    return node == 0 ? server(argv[2]) : client(argv[2]);
}
