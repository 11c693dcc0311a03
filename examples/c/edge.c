/*
 * edge: edge-triggered and one-shot epoll (EPOLLET, EPOLLONESHOT), the
 * regression program of `cmc/tests/process_edges.rs`. Each mode reports
 * what the kernel answers (one byte per answer: a count of events, or
 * 256 - errno), on fd 3 for the checker and as a line "report B0 B1 ..."
 * on stdout, so that the same program run natively (`edge 0 MODE`) and
 * under the checker can be compared byte for byte.
 *
 *   edge NODE MODE
 *
 *   "local"   one node, objects inside it, each waited on with timeout 0:
 *             an eventfd, edge-triggered: written, reported once, not
 *             again while unread, again after a second write (a new
 *             edge, though the count was not 0); added while ready,
 *             reported; a reader's edge for a writer's EPOLLOUT interest.
 *             A one-shot interest: reported once, then nothing until
 *             EPOLL_CTL_MOD. A pipe, edge-triggered: nothing, then its
 *             writer closed (a hang-up: an edge). A socketpair end: each
 *             write of the other end an edge.
 *   "dup"     one node: an epoll instance duplicated (F_DUPFD_CLOEXEC,
 *             as mio's try_clone, and dup) is one instance: an interest
 *             added through the duplicate reports through the original,
 *             and after the original is closed through the duplicate; the
 *             instance cannot watch itself (EINVAL); a new instance at
 *             the closed number is another.
 *   "partial" node 1 dials node 0 and writes "ab" in one write, then
 *             waits; node 0 accepts, watches the connection
 *             edge-triggered and reads one byte per event it gets, its
 *             count of bytes reported after each: the classic bug of
 *             edge-triggered epoll, a second byte never read (on Linux
 *             node 0 waits for ever after its first byte).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmc.h"

static void report(const uint8_t *bytes, unsigned len)
{
    cmc_record_write(CMC_STATE_FD, bytes, len);
    printf("report");
    for (unsigned i = 0; i < len; i++)
        printf(" %u", bytes[i]);
    printf("\n");
    fflush(stdout);
}

/* Events epoll instance `ep` reports at once, as one byte: their count
   (at most 4), or 256 - errno. */
static uint8_t now(int ep)
{
    struct epoll_event ev[4];
    int k = epoll_wait(ep, ev, 4, 0);
    return k >= 0 ? (uint8_t)k : (uint8_t)-errno;
}

static int add(int ep, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.fd = fd};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int park(void);

static int local(void)
{
    uint8_t out[24];
    unsigned k = 0;
    uint64_t one = 1, v;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    /* An eventfd, edge-triggered. */
    int e = eventfd(0, EFD_NONBLOCK);
    add(ep, e, EPOLLIN | EPOLLET);
    out[k++] = now(ep);          /* 0: nothing yet */
    write(e, &one, 8);
    out[k++] = now(ep);          /* 1: the write's edge */
    out[k++] = now(ep);          /* 0: still readable, no new edge */
    write(e, &one, 8);
    out[k++] = now(ep);          /* 1: a second write, a second edge */
    out[k++] = read(e, &v, 8) == 8 ? (uint8_t)v : 0xff; /* 2 */
    out[k++] = now(ep);          /* 0 */
    /* Added while ready: on the ready list at once. */
    int r = eventfd(5, EFD_NONBLOCK);
    add(ep, r, EPOLLIN | EPOLLET);
    out[k++] = now(ep);          /* 1 */
    out[k++] = now(ep);          /* 0 */
    /* A writer's interest (EPOLLOUT): a read wakes writers. */
    int w = epoll_create1(0);
    add(w, r, EPOLLOUT | EPOLLET);
    out[k++] = now(w);           /* 1: writable when added */
    out[k++] = now(w);           /* 0 */
    read(r, &v, 8);
    out[k++] = now(w);           /* 1: the read's edge */
    /* One-shot, level-triggered: once, then nothing until MOD. */
    int o = eventfd(1, EFD_NONBLOCK);
    int op = epoll_create1(0);
    add(op, o, EPOLLIN | EPOLLONESHOT);
    out[k++] = now(op);          /* 1 */
    out[k++] = now(op);          /* 0: disabled, though readable */
    struct epoll_event again = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = o};
    out[k++] = (uint8_t)epoll_ctl(op, EPOLL_CTL_MOD, o, &again); /* 0 */
    out[k++] = now(op);          /* 1 */
    /* A pipe's read end: its writer closed is a hang-up, an edge. */
    int p[2];
    pipe2(p, O_NONBLOCK);
    int pp = epoll_create1(0);
    add(pp, p[0], EPOLLIN | EPOLLET);
    out[k++] = now(pp);          /* 0 */
    close(p[1]);
    out[k++] = now(pp);          /* 1: EPOLLHUP */
    out[k++] = now(pp);          /* 0 */
    /* A socketpair end: each write of the other end is an edge. */
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s);
    int sp = epoll_create1(0);
    add(sp, s[0], EPOLLIN | EPOLLET);
    write(s[1], "a", 1);
    out[k++] = now(sp);          /* 1 */
    out[k++] = now(sp);          /* 0 */
    write(s[1], "b", 1);
    out[k++] = now(sp);          /* 1 */
    report(out, k);
    return park();
}

/* Under the checker (fd 3 open), waits for ever; natively, ends. */
static int park(void)
{
    if (fcntl(CMC_STATE_FD, F_GETFD) < 0)
        return 0;
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    accept(l, NULL, NULL);
    return 0;
}

static int dup_instance(void)
{
    uint8_t out[12];
    unsigned k = 0;
    uint64_t one = 1;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int d = fcntl(ep, F_DUPFD_CLOEXEC, 3);
    out[k++] = d > ep;                     /* 1 */
    int e = eventfd(0, EFD_NONBLOCK);
    add(d, e, EPOLLIN | EPOLLET);
    write(e, &one, 8);
    out[k++] = now(ep);                    /* 1: one instance */
    out[k++] = now(d);                     /* 0: the edge taken */
    close(ep);
    write(e, &one, 8);
    out[k++] = now(d);                     /* 1: still there */
    out[k++] = (uint8_t)(add(d, d, EPOLLIN) < 0 ? -errno : 0); /* EINVAL */
    int fresh = epoll_create1(0);
    out[k++] = fresh == ep;                /* 1: the lowest number free */
    out[k++] = now(fresh);                 /* 0: another instance */
    int d2 = dup(d);
    write(e, &one, 8);
    out[k++] = now(d2);                    /* 1 */
    close(d);
    out[k++] = (uint8_t)(add(d2, e, EPOLLIN) < 0 ? -errno : 0); /* EEXIST */
    report(out, k);
    return park();
}

static int partial(int node)
{
    uint8_t count = 0;
    if (node == 1) {
        int c = cmc_dial(0);
        if (c < 0)
            return 2;
        write(c, "ab", 2);
        report(&count, 1);
        char b;
        read(c, &b, 1); /* waits for ever: node 0 never answers */
        return 0;
    }
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    report(&count, 1);
    int c = accept4(l, NULL, NULL, SOCK_NONBLOCK);
    int ep = epoll_create1(0);
    add(ep, c, EPOLLIN | EPOLLRDHUP | EPOLLET);
    for (;;) {
        struct epoll_event ev;
        if (epoll_wait(ep, &ev, 1, -1) != 1)
            return 3;
        char b;
        if (read(c, &b, 1) == 1) {
            count++;
            report(&count, 1);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    int node = argv[1][0] - '0';
    if (strcmp(argv[2], "local") == 0)
        return local();
    if (strcmp(argv[2], "dup") == 0)
        return dup_instance();
    if (strcmp(argv[2], "partial") == 0)
        return partial(node);
    return 1;
}
