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
 *   "order"   one node: the order of an epoll wait's events is its ready
 *             list's, the order of the wake-ups (each answer: the count,
 *             then which of the objects came, in the order they came).
 *             Three eventfds a, b, c written c, a, b: reported c, a, b,
 *             and again so (level-triggered ones go back on the tail);
 *             one event per wait (maxevents 1): c, then a (the head left
 *             first), then b, then c again; one drained and written again
 *             keeps its place; edge-triggered, b written twice around a
 *             keeps its place (b, a); added while ready, in the order
 *             added; EPOLL_CTL_MOD of one on the list keeps its place; a
 *             pipe whose writer closed (a hang-up) after an eventfd's
 *             write comes after it.
 *   "wakes"   one node: which changes wake an interest (each answer as
 *             in "order", the objects numbered in each part). A
 *             socketpair end's own shutdown wakes its edge-triggered
 *             EPOLLOUT interest, though its events stay (the kernel's
 *             sk_state_change names no event), and a shutdown wakes both
 *             ends, its own first; a peek and a part of a message read
 *             wake no writer, the rest of it read does; a wake-up is for
 *             an interest that asks for EPOLLRDNORM or EPOLLWRNORM alone
 *             too (the kernel's keys are wider than EPOLLIN and EPOLLOUT);
 *             a pipe's writer is woken by no read (the pipe is never
 *             full); an eventfd's EPOLLOUT interest by its reads, not its
 *             writes.
 *   "dupadd"  one node: an eventfd and its duplicate added to one
 *             instance (an error under the checker: the kernel wakes the
 *             one added last first).
 *   "first"   three nodes: nodes 1 and 2 dial node 0 and write a byte
 *             each, node 2 after a sleep of 20 ms before its dial, node 1
 *             after a sleep of 50 ms after its dial; node 0 accepts both,
 *             watches both (level-triggered), sleeps 200 ms, waits
 *             and assumes that where both come in one wait, the one
 *             accepted first comes first (its descriptor is the lower):
 *             it aborts otherwise. On Linux the events come in the order
 *             the bytes arrived, so where node 2's byte came first node 0
 *             aborts. State: node 0 {bytes read}; nodes 1, 2 {1}.
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
#include <stdlib.h>
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

/* Appends to out[*k] the count epoll instance `ep` reports at once to a
   wait of at most `max` events, then the index in `fds` of each, in the
   order reported. */
static void order_of(int ep, int max, const int *fds, int nfds, uint8_t *out, unsigned *k)
{
    struct epoll_event ev[8];
    int got = epoll_wait(ep, ev, max, 0);
    out[(*k)++] = got >= 0 ? (uint8_t)got : (uint8_t)-errno;
    for (int i = 0; i < got; i++) {
        uint8_t which = 0xff;
        for (int j = 0; j < nfds; j++)
            if (fds[j] == ev[i].data.fd)
                which = (uint8_t)j;
        out[(*k)++] = which;
    }
}

static int order(void)
{
    uint8_t out[96];
    unsigned k = 0;
    uint64_t one = 1, v;
    int f[4];
    for (int i = 0; i < 3; i++)
        f[i] = eventfd(0, EFD_NONBLOCK);
    /* Level-triggered: written c, a, b. */
    int ep = epoll_create1(0);
    for (int i = 0; i < 3; i++)
        add(ep, f[i], EPOLLIN);
    write(f[2], &one, 8);
    write(f[0], &one, 8);
    write(f[1], &one, 8);
    order_of(ep, 8, f, 3, out, &k);          /* 3 2 0 1 */
    order_of(ep, 8, f, 3, out, &k);          /* 3 2 0 1: back on the tail */
    /* One at a time: the head first, the rest left at the head. */
    for (int i = 0; i < 4; i++)
        order_of(ep, 1, f, 3, out, &k);      /* 1 2, 1 0, 1 1, 1 2 */
    /* Drained and written again: it kept its place on the list. */
    read(f[0], &v, 8);
    write(f[0], &one, 8);
    order_of(ep, 8, f, 3, out, &k);
    /* Drained, looked at (off the list), written again: the tail. */
    read(f[0], &v, 8);
    order_of(ep, 8, f, 3, out, &k);
    write(f[0], &one, 8);
    order_of(ep, 8, f, 3, out, &k);
    /* Edge-triggered: b, a, b again (b keeps its place). */
    int et = epoll_create1(0);
    for (int i = 0; i < 3; i++)
        add(et, f[i], EPOLLIN | EPOLLET);
    order_of(et, 8, f, 3, out, &k);          /* added while ready: 3 0 1 2 */
    write(f[1], &one, 8);
    write(f[0], &one, 8);
    write(f[1], &one, 8);
    order_of(et, 8, f, 3, out, &k);          /* 2 1 0 */
    order_of(et, 8, f, 3, out, &k);          /* 0 */
    /* Added while ready, in the order added: c, then a. */
    int ad = epoll_create1(0);
    add(ad, f[2], EPOLLIN);
    add(ad, f[0], EPOLLIN);
    order_of(ad, 8, f, 3, out, &k);          /* 2 2 0 */
    /* MOD of one on the list keeps its place; of one off it, the tail if
       ready. */
    struct epoll_event m = {.events = EPOLLIN | EPOLLOUT, .data.fd = f[2]};
    epoll_ctl(ad, EPOLL_CTL_MOD, f[2], &m);
    order_of(ad, 8, f, 3, out, &k);          /* 2 2 0 */
    add(ad, f[1], EPOLLIN | EPOLLET);
    order_of(ad, 1, f, 3, out, &k);          /* the head */
    struct epoll_event m2 = {.events = EPOLLIN | EPOLLET, .data.fd = f[1]};
    epoll_ctl(ad, EPOLL_CTL_MOD, f[1], &m2);
    order_of(ad, 8, f, 3, out, &k);
    /* A hang-up after an eventfd's write: the pipe after the eventfd,
       though its descriptor is lower. */
    int p[2];
    pipe2(p, O_NONBLOCK);
    int e = eventfd(0, EFD_NONBLOCK);
    int hp = epoll_create1(0);
    int g[2] = {p[0], e};
    add(hp, p[0], EPOLLIN);
    add(hp, e, EPOLLIN);
    write(e, &one, 8);
    close(p[1]);
    order_of(hp, 8, g, 2, out, &k);          /* 2 1 0 */
    report(out, k);
    return park();
}

static int wakes(void)
{
    uint8_t out[96];
    unsigned k = 0;
    uint64_t one = 1;
    char buf[4];
    /* Its own shutdown: a wake-up with its events as they were. */
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    int ep = epoll_create1(0);
    add(ep, s[0], EPOLLOUT | EPOLLET);
    order_of(ep, 8, s, 2, out, &k);          /* 1 0 */
    order_of(ep, 8, s, 2, out, &k);          /* 0 */
    shutdown(s[0], SHUT_WR);
    order_of(ep, 8, s, 2, out, &k);          /* 1 0 */
    /* Both ends woken, its own first. */
    int t[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, t);
    int both = epoll_create1(0);
    add(both, t[0], EPOLLOUT | EPOLLET);
    add(both, t[1], EPOLLOUT | EPOLLET);
    order_of(both, 8, t, 2, out, &k);        /* 2 0 1 */
    shutdown(t[1], SHUT_RD);
    order_of(both, 8, t, 2, out, &k);        /* 2 1 0 */
    shutdown(t[1], SHUT_WR);
    order_of(both, 8, t, 2, out, &k);        /* 2 1 0 */
    /* A peek and a part of a message wake no writer. */
    int u[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, u);
    int pk = epoll_create1(0);
    add(pk, u[0], EPOLLOUT | EPOLLET);
    order_of(pk, 8, u, 2, out, &k);          /* 1 0 */
    write(u[0], "xy", 2);
    order_of(pk, 8, u, 2, out, &k);          /* 0 */
    recv(u[1], buf, 1, MSG_PEEK);
    order_of(pk, 8, u, 2, out, &k);          /* 0 */
    read(u[1], buf, 1);
    order_of(pk, 8, u, 2, out, &k);          /* 0 */
    read(u[1], buf, 1);
    order_of(pk, 8, u, 2, out, &k);          /* 1 0 */
    /* EPOLLRDNORM and EPOLLWRNORM alone. */
    int p[2];
    pipe2(p, O_NONBLOCK);
    int rn = epoll_create1(0);
    add(rn, p[0], EPOLLRDNORM | EPOLLET);
    order_of(rn, 8, p, 2, out, &k);          /* 0 */
    write(p[1], "x", 1);
    order_of(rn, 8, p, 2, out, &k);          /* 1 0 */
    int v[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, v);
    int wn = epoll_create1(0);
    add(wn, v[1], EPOLLRDNORM | EPOLLET);
    add(wn, v[0], EPOLLWRNORM | EPOLLET);
    order_of(wn, 8, v, 2, out, &k);          /* 1 0 */
    write(v[0], "x", 1);
    order_of(wn, 8, v, 2, out, &k);          /* 1 1 */
    read(v[1], buf, 1);
    order_of(wn, 8, v, 2, out, &k);          /* 1 0 */
    /* A pipe's writer: no read wakes it. */
    int q[2];
    pipe2(q, O_NONBLOCK);
    int po = epoll_create1(0);
    add(po, q[1], EPOLLOUT | EPOLLET);
    order_of(po, 8, q, 2, out, &k);          /* 1 1 */
    write(q[1], "xy", 2);
    order_of(po, 8, q, 2, out, &k);          /* 0 */
    read(q[0], buf, 1);
    order_of(po, 8, q, 2, out, &k);          /* 0 */
    /* An eventfd's writer: its reads wake it, not its writes. */
    int e[1] = {eventfd(0, EFD_NONBLOCK)};
    int eo = epoll_create1(0);
    add(eo, e[0], EPOLLOUT | EPOLLET);
    order_of(eo, 8, e, 1, out, &k);          /* 1 0 */
    write(e[0], &one, 8);
    order_of(eo, 8, e, 1, out, &k);          /* 0 */
    uint64_t got;
    read(e[0], &got, 8);
    order_of(eo, 8, e, 1, out, &k);          /* 1 0 */
    report(out, k);
    return park();
}

static int dupadd(void)
{
    uint8_t r = 0;
    int e = eventfd(0, EFD_NONBLOCK);
    int d = dup(e);
    int ep = epoll_create1(0);
    add(ep, e, EPOLLIN);
    r = (uint8_t)(add(ep, d, EPOLLIN) == 0);
    report(&r, 1);
    return park();
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

static int first(int node)
{
    uint8_t count = 0;
    if (node != 0) {
        if (node == 2)
            usleep(20000);
        int c = cmc_dial(0);
        if (c < 0)
            return 2;
        if (node == 1)
            usleep(50000);
        write(c, "x", 1);
        count = 1;
        report(&count, 1);
        char b;
        read(c, &b, 1); /* waits for ever: node 0 never answers */
        return 0;
    }
    int l = cmc_listen(0);
    if (l < 0)
        return 2;
    report(&count, 1);
    int c[2];
    c[0] = accept(l, NULL, NULL);
    c[1] = accept(l, NULL, NULL);
    int ep = epoll_create1(0);
    add(ep, c[0], EPOLLIN);
    add(ep, c[1], EPOLLIN);
    usleep(200000);
    while (count < 2) {
        struct epoll_event ev[8];
        int got = epoll_wait(ep, ev, 8, -1);
        if (got == 2 && ev[0].data.fd != c[0])
            abort();
        for (int i = 0; i < got; i++) {
            char b;
            if (read(ev[i].data.fd, &b, 1) == 1)
                count++;
        }
        report(&count, 1);
    }
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
    if (strcmp(argv[2], "order") == 0)
        return order();
    if (strcmp(argv[2], "wakes") == 0)
        return wakes();
    if (strcmp(argv[2], "dupadd") == 0)
        return dupadd();
    if (strcmp(argv[2], "first") == 0)
        return first(node);
    if (strcmp(argv[2], "partial") == 0)
        return partial(node);
    return 1;
}
