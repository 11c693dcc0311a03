/*
 * evstore: a durable counter served the way servers are written: one
 * event loop over epoll, non-blocking sockets, a timerfd for group
 * commit, and the value kept in a file made durable with fsync.
 *
 * Protocol. Clients connect to node 0 and send increments, one line each
 * ("+N\n", N one digit; the model's request bytes). The server applies
 * each complete line to its value at once, and acknowledges it ("ok\n")
 * only once the value is on disk: a one-second timerfd, armed by the first
 * increment not yet committed, commits the value (group commit) and then
 * answers every client waiting, and closes their connections. A TCP
 * connection is a byte stream, so a line may arrive in pieces: the server
 * keeps what it has of each connection's line until the newline.
 *
 * Durable state: DIR/value, the value in decimal, DIR the first argument
 * (the model's data directory). A commit writes DIR/tmp, fsyncs it,
 * renames it DIR/value and fsyncs DIR, so a crash leaves the old value or
 * the new one, whole. At start the server reads DIR/value back (0 if it is
 * not there).
 *
 * State on fd 3, at most 4 + 2 * 6 bytes: {value, committed, armed,
 * connections, then per connection in descriptor order: fd, waiting for
 * its acknowledgement, bytes of its line so far, those bytes (3)}: all the
 * server keeps in memory, and so where it is.
 *
 * Property (tests/models/programs.rs): acked_increments_are_durable: the
 * value on disk (what a crash keeps: DIR/value as it is durable) is at
 * least the number of acknowledgements in the ghost log.
 *
 * Planted bugs:
 *   BUG_ONE_READ_FRAMES: the server takes each read as one whole line. A
 *     read that got only "+" adds nothing, yet the line is acknowledged.
 *     Found only with stream = true: with one whole write per read (the
 *     default) every read is a whole line.
 *   BUG_TRUNCATE_IN_PLACE: the server writes each new value over DIR/value
 *     at once (O_TRUNC, then the digits), and only fsyncs it at the commit.
 *     A crash between them may keep the truncation and not the write (the
 *     first of the changes pending: CRASH(0, 1)), and the value
 *     acknowledged before is gone. Found only through that torn write: a
 *     crash keeping both or neither leaves a whole value.
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#ifndef BUG_ONE_READ_FRAMES
#define BUG_ONE_READ_FRAMES 0
#endif
#ifndef BUG_TRUNCATE_IN_PLACE
#define BUG_TRUNCATE_IN_PLACE 0
#endif

#define CONNS_MAX 2
#define LINE_MAX 3

struct conn {
    int fd;
    int waiting;
    int len;
    char line[LINE_MAX];
};

static struct conn conns[CONNS_MAX];
static int nconns, value, committed, armed;
static char path_value[256], path_tmp[256];
static const char *dir;

static void report(void)
{
    uint8_t st[3 + 1 + 6 * CONNS_MAX];
    int n = 0;
    st[n++] = (uint8_t)value;
    st[n++] = (uint8_t)committed;
    st[n++] = (uint8_t)armed;
    st[n++] = (uint8_t)nconns;
    /* In descriptor order, so that one state has one record. */
    for (int fd = 0, done = 0; done < nconns; fd++)
        for (int i = 0; i < nconns; i++)
            if (conns[i].fd == fd) {
                st[n++] = (uint8_t)fd;
                st[n++] = (uint8_t)conns[i].waiting;
                st[n++] = (uint8_t)conns[i].len;
                memcpy(st + n, conns[i].line, LINE_MAX);
                n += LINE_MAX;
                done++;
            }
    cmc_record_write(CMC_STATE_FD, st, (size_t)n);
}

static int recover(void)
{
    char buf[16] = {0};
    int fd = open(path_value, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    return k > 0 ? atoi(buf) : 0;
}

/* Makes the directory's names durable. */
static int sync_dir(void)
{
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    if (d < 0 || fsync(d) != 0)
        return -1;
    return close(d);
}

/* Makes `v` the durable value: written whole to a new file, synced, put
 * in place by one rename, and the directory synced. */
static int commit(int v)
{
#if BUG_TRUNCATE_IN_PLACE
    /* The digits were written over the file already (see `apply`). */
    (void)v;
    int fd = open(path_value, O_WRONLY);
    if (fd < 0 || fsync(fd) != 0 || close(fd) != 0)
        return -1;
#else
    char text[16];
    int len = snprintf(text, sizeof text, "%d", v);
    int fd = open(path_tmp, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, (size_t)len) != len || fsync(fd) != 0 || close(fd) != 0)
        return -1;
    if (rename(path_tmp, path_value) != 0)
        return -1;
#endif
    return sync_dir();
}

/* Applies one increment of `n` for connection `c`, and makes sure a
 * commit will come. */
static void apply(int timer, struct conn *c, int n)
{
    value += n;
    c->waiting = 1;
#if BUG_TRUNCATE_IN_PLACE
    char text[16];
    int len = snprintf(text, sizeof text, "%d", value);
    int fd = open(path_value, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, text, (size_t)len) != len)
            exit(5);
        close(fd);
    }
#endif
    if (!armed) {
        struct itimerspec one = {{0, 0}, {1, 0}};
        timerfd_settime(timer, 0, &one, NULL);
        armed = 1;
    }
}

static void drop_conn(int ep, int i)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, conns[i].fd, NULL);
    close(conns[i].fd);
    conns[i] = conns[--nconns];
}

/* What a readable connection sent. */
static void on_readable(int ep, int timer, int i)
{
    char buf[8];
    ssize_t k = read(conns[i].fd, buf, sizeof buf);
    if (k == 0) {
        drop_conn(ep, i);
        return;
    }
    if (k < 0)
        return; /* EAGAIN: nothing after all */
#if BUG_ONE_READ_FRAMES
    /* Each read taken as a whole line. */
    if (buf[0] == '+')
        apply(timer, &conns[i], k >= 2 && buf[1] >= '0' && buf[1] <= '9' ? buf[1] - '0' : 0);
#else
    for (ssize_t j = 0; j < k; j++) {
        struct conn *c = &conns[i];
        if (buf[j] != '\n') {
            if (c->len < LINE_MAX)
                c->line[c->len++] = buf[j];
            continue;
        }
        if (c->len == 2 && c->line[0] == '+' && c->line[1] >= '0' && c->line[1] <= '9')
            apply(timer, c, c->line[1] - '0');
        c->len = 0;
        memset(c->line, 0, LINE_MAX);
    }
#endif
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    dir = argc > 2 ? argv[2] : ".";
    snprintf(path_value, sizeof path_value, "%s/value", dir);
    snprintf(path_tmp, sizeof path_tmp, "%s/tmp", dir);
    value = committed = recover();

    struct sockaddr_in a = cmc_address(node);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (l < 0 || timer < 0 || ep < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 8) < 0)
        return 2;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev) < 0)
        return 2;
    ev.data.fd = timer;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, timer, &ev) < 0)
        return 2;

    for (;;) {
        report();
        struct epoll_event ready[4];
        int k = epoll_wait(ep, ready, 4, -1);
        if (k < 0)
            return 3;
        for (int r = 0; r < k; r++) {
            int fd = ready[r].data.fd;
            if (fd == l) {
                int c;
                while (nconns < CONNS_MAX && (c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    conns[nconns] = (struct conn){.fd = c};
                    nconns++;
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
                    if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev) < 0)
                        return 4;
                }
            } else if (fd == timer) {
                uint64_t expirations;
                if (read(timer, &expirations, sizeof expirations) != 8)
                    continue;
                if (commit(value) != 0)
                    return 5;
                committed = value;
                armed = 0;
                for (int i = nconns - 1; i >= 0; i--)
                    if (conns[i].waiting) {
                        if (write(conns[i].fd, "ok\n", 3) != 3)
                            return 6;
                        drop_conn(ep, i);
                    }
            } else {
                for (int i = 0; i < nconns; i++)
                    if (conns[i].fd == fd) {
                        on_readable(ep, timer, i);
                        break;
                    }
            }
        }
    }
}
