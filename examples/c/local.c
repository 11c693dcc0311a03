/*
 * local: pipes, socketpairs and eventfds inside one node (issue 26,
 * Deliver 1), the regression programs of `cmc/tests/process_local.rs`.
 * Each mode checks what the kernel answers and reports it (one byte per
 * answer: a count, or 256 - errno for an error), on fd 3 for the checker
 * and as a line "report B0 B1 ..." on stdout, so that the same program run
 * natively (`local 0 MODE ARGS`, with fd 3 open on /dev/null for the modes
 * that then go on) and under the checker can be compared byte for byte.
 * Without fd 3 (natively) a mode that would wait for the checker's
 * actions exits after its report.
 *
 *   local NODE MODE ARGS
 *
 *   "eventfd"      counter semantics: 8-byte reads and writes, the maximum,
 *                  EFD_SEMAPHORE, EFD_NONBLOCK, readv and writev, FIONREAD,
 *                  poll and level-triggered epoll, fstat, lseek.
 *   "pipe"         a non-blocking pipe: flags, F_GETPIPE_SZ, poll at each
 *                  end, partial reads, FIONREAD, EBADF at the wrong end,
 *                  ESPIPE, fstat, EOF and POLLHUP once the writer closes.
 *   "pair" TYPE    a socketpair of TYPE (stream or seqpacket): message
 *                  boundaries, MSG_PEEK, MSG_TRUNC, MSG_WAITALL, recvmsg's
 *                  flags, names, options, shutdown, and closing an end with
 *                  data unread (ECONNRESET).
 *   "sigpipe" HOW  EPIPE on a pipe without a reader and on socketpairs shut
 *                  for writing, with SIGPIPE ignored, caught, left to its
 *                  default (the node dies of it) or blocked (HOW: ignore,
 *                  handler, default, blocked).
 *   "emfile"       pipe and socketpair with one descriptor free, eventfd
 *                  with none: EMFILE, and nothing left behind; EFAULT too.
 *   "block" WHAT   a read that nothing can end (WHAT: pipe, eventfd,
 *                  pair) or an eventfd write past its maximum (full): the
 *                  node waits for ever.
 *   "poll"         poll and select over a pipe and an eventfd: a timeout
 *                  with nothing ready, then ready at once.
 *   "waker" HOW    an eventfd as the waker of an event loop (HOW: poll or
 *                  epoll) beside a client connection: each read from the
 *                  connection wakes the loop through the eventfd.
 *   "memory"       a pipe remembers the bytes read from connections (a
 *                  request's 'r', a TIMEOUT's 'T') without reporting them;
 *                  with two, the node aborts if they came as "Tr".
 *   "pingpong"     on every byte from a client, a round over a seqpacket
 *                  socketpair: a ping one way, its answer back.
 *   "dup"          duplicates of ends (dup, F_DUPFD_CLOEXEC): the same
 *                  end through each, open while one is, O_NONBLOCK shared,
 *                  an edge-triggered epoll of a duplicate.
 *   "dupwatch"     closes a watched end while its duplicate is open
 *                  (Linux keeps the interest; the checker refuses it).
 *   "limit" WHAT N N pipes, socketpairs and eventfds (WHAT: objects), a
 *                  write of N bytes to a pipe (bytes), or N one-byte writes
 *                  to a socketpair (messages); then wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
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

/* A call's answer as one byte: its value, or 256 - errno. */
static uint8_t res(long r)
{
    return r >= 0 ? (uint8_t)r : (uint8_t)-errno;
}

static short revents(int fd)
{
    struct pollfd p = {fd, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM | POLLRDHUP | POLLPRI | POLLWRBAND, 0};
    return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

/* Whether the checker runs the node: fd 3 was open at the start. */
static int under_checker;

static int checked(void)
{
    return under_checker;
}

/* Waits for the checker's actions for ever; natively, ends. */
static int park(int node)
{
    if (!checked())
        return 0;
    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    accept(l, NULL, NULL);
    return 0;
}

static int eventfds(int node)
{
    uint8_t out[36];
    uint64_t v;
    char b[16];
    int e = eventfd(3, EFD_NONBLOCK), k = -7;
    out[0] = res(read(e, b, 4));
    out[1] = res(read(e, b, 16));
    memcpy(&v, b, 8);
    out[2] = (uint8_t)v;
    out[3] = res(read(e, &v, 8));
    out[4] = res(write(e, b, 4));
    v = UINT64_MAX;
    out[5] = res(write(e, &v, 8));
    v = UINT64_MAX - 1;
    out[6] = res(write(e, &v, 8));
    out[7] = (uint8_t)revents(e);
    v = 1;
    out[8] = res(write(e, &v, 8));
    v = 0;
    out[9] = res(write(e, &v, 8));
    out[10] = res(ioctl(e, FIONREAD, &k));
    out[11] = res(read(e, &v, 8));
    out[12] = v == UINT64_MAX - 1;
    out[13] = (uint8_t)revents(e);
    int s = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    out[14] = read(s, &v, 8) == 8 ? (uint8_t)v : 0xff;
    out[15] = read(s, &v, 8) == 8 ? (uint8_t)v : 0xff;
    out[16] = res(read(s, &v, 8));
    v = 5;
    write(e, &v, 8);
    struct iovec halves[2] = {{b, 4}, {b + 4, 4}};
    out[17] = res(readv(e, halves, 2));
    memcpy(&v, b, 8);
    out[18] = (uint8_t)v;
    uint64_t ones[2] = {1, 1};
    struct iovec two[2] = {{&ones[0], 8}, {&ones[1], 8}};
    out[19] = res(writev(e, two, 2));
    out[20] = res(writev(e, halves, 2));
    out[21] = read(e, &v, 8) == 8 ? (uint8_t)v : 0xff;
    int flags = fcntl(e, F_GETFL);
    out[22] = (uint8_t)flags;
    out[23] = (uint8_t)(flags >> 8);
    struct stat st;
    fstat(e, &st);
    out[24] = (st.st_mode & S_IFMT) == 0;
    out[25] = (st.st_mode & 0777) >> 6;
    out[26] = res(lseek(e, 0, SEEK_CUR));
    out[27] = res(pread(e, &v, 8, 0));
    int ep = epoll_create1(0);
    struct epoll_event ev = {EPOLLIN, {.u64 = 7}}, got[2];
    epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev);
    out[28] = res(epoll_wait(ep, got, 2, 0));
    v = 1;
    write(e, &v, 8);
    out[29] = res(epoll_wait(ep, got, 2, 0));
    out[30] = (uint8_t)got[0].events;
    out[31] = (uint8_t)got[0].data.u64;
    out[32] = res(epoll_wait(ep, got, 2, 0));
    read(e, &v, 8);
    out[33] = res(epoll_wait(ep, got, 2, 0));
    out[34] = res(syscall(SYS_eventfd2, 0, 0x100));
    out[35] = res(send(e, &v, 8, 0));
    report(out, sizeof out);
    return park(node);
}

static int pipes(int node)
{
    uint8_t out[34];
    static char b[8192];
    int p[2], k = 0;
    memset(b, 'a', sizeof b);
    if (pipe2(p, O_NONBLOCK) != 0)
        return 2;
    out[0] = (uint8_t)(p[1] - p[0]);
    int fr = fcntl(p[0], F_GETFL), fw = fcntl(p[1], F_GETFL);
    out[1] = (uint8_t)(fr >> 8);
    out[2] = fr & O_ACCMODE;
    out[3] = fw & O_ACCMODE;
    out[4] = (uint8_t)(fcntl(p[0], F_GETPIPE_SZ) >> 12);
    out[5] = (uint8_t)revents(p[0]);
    int w = revents(p[1]);
    out[6] = (uint8_t)w;
    out[7] = (uint8_t)(w >> 8);
    out[8] = res(read(p[0], b, 10));
    out[9] = res(write(p[1], b, 100));
    ioctl(p[0], FIONREAD, &k);
    out[10] = (uint8_t)k;
    ioctl(p[1], FIONREAD, &k);
    out[11] = (uint8_t)k;
    out[12] = (uint8_t)revents(p[0]);
    out[13] = res(read(p[0], b, 30));
    out[14] = res(read(p[0], b, 100));
    out[15] = res(write(p[1], b, 0));
    out[16] = res(read(p[0], b, 0));
    out[17] = res(read(p[1], b, 1));
    out[18] = res(write(p[0], b, 1));
    out[19] = res(lseek(p[0], 0, SEEK_CUR));
    struct stat r, s;
    fstat(p[0], &r);
    fstat(p[1], &s);
    out[20] = S_ISFIFO(r.st_mode) && (r.st_mode & 0777) == 0600;
    out[21] = r.st_ino == s.st_ino;
    out[22] = (uint8_t)(write(p[1], b, 4096) >> 8);
    out[23] = (uint8_t)(read(p[0], b, sizeof b) >> 8);
    write(p[1], "hello", 5);
    close(p[1]);
    out[24] = (uint8_t)revents(p[0]);
    out[25] = res(read(p[0], b, 3));
    out[26] = res(read(p[0], b, 3));
    out[27] = res(read(p[0], b, 3));
    out[28] = (uint8_t)revents(p[0]);
    int q[2];
    pipe2(q, O_CLOEXEC);
    out[29] = res(fcntl(q[0], F_GETFD));
    out[30] = res(pipe2(q, 0x10));
    out[31] = res(send(q[1], b, 1, 0));
    out[32] = res(pread(q[0], b, 1, 0));
    out[33] = res(fsync(q[0]));
    report(out, sizeof out);
    return park(node);
}

static int pairs(int node, const char *type)
{
    uint8_t out[50];
    char b[16];
    int s[2], k = 0, o = 0;
    int seqpacket = strcmp(type, "seqpacket") == 0;
    if (socketpair(AF_UNIX, seqpacket ? SOCK_SEQPACKET : SOCK_STREAM, 0, s) != 0)
        return 2;
    out[0] = (uint8_t)(s[1] - s[0]);
    int r = revents(s[0]);
    out[1] = (uint8_t)r;
    out[2] = (uint8_t)(r >> 8);
    write(s[0], "ab", 2);
    write(s[0], "cd", 2);
    out[3] = res(write(s[0], "", 0));
    ioctl(s[1], FIONREAD, &k);
    out[4] = (uint8_t)k;
    ioctl(s[0], FIONREAD, &k);
    out[5] = (uint8_t)k;
    r = revents(s[1]);
    out[6] = (uint8_t)r;
    out[7] = (uint8_t)(r >> 8);
    out[8] = res(recv(s[1], b, 3, MSG_PEEK));
    out[9] = res(recv(s[1], b, 1, 0));
    out[10] = (uint8_t)b[0];
    out[11] = res(recv(s[1], b, 10, MSG_PEEK));
    out[12] = (uint8_t)b[0];
    out[13] = res(recv(s[1], b, 10, MSG_DONTWAIT));
    out[14] = res(recv(s[1], b, 10, MSG_DONTWAIT));
    out[15] = res(recv(s[1], b, 10, MSG_DONTWAIT));
    write(s[0], "efgh", 4);
    out[16] = res(recv(s[1], b, 2, MSG_TRUNC));
    out[17] = res(recv(s[1], b, 10, MSG_DONTWAIT));
    write(s[0], "ijkl", 4);
    struct iovec iov = {b, 2};
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    out[18] = res(recvmsg(s[1], &m, 0));
    out[19] = (uint8_t)m.msg_flags;
    out[20] = res(recv(s[1], b, 10, MSG_DONTWAIT));
    write(s[0], "ab", 2);
    write(s[0], "cd", 2);
    out[21] = res(recv(s[1], b, 4, MSG_WAITALL));
    out[22] = res(recv(s[1], b, 4, MSG_DONTWAIT));
    write(s[0], "ab", 2);
    out[23] = res(recv(s[1], b, 4, MSG_WAITALL | MSG_DONTWAIT));
    struct sockaddr_un a;
    memset(&a, 0x55, sizeof a);
    socklen_t len = sizeof a;
    out[24] = res(getsockname(s[0], (struct sockaddr *)&a, &len));
    out[25] = (uint8_t)len;
    out[26] = (uint8_t)a.sun_family;
    out[27] = (uint8_t)a.sun_path[0];
    len = sizeof a;
    out[28] = res(getpeername(s[0], (struct sockaddr *)&a, &len));
    out[29] = (uint8_t)len;
    len = sizeof o;
    getsockopt(s[0], SOL_SOCKET, SO_TYPE, &o, &len);
    out[30] = (uint8_t)o;
    getsockopt(s[0], SOL_SOCKET, SO_DOMAIN, &o, &len);
    out[31] = (uint8_t)o;
    struct ucred cred;
    len = sizeof cred;
    getsockopt(s[0], SOL_SOCKET, SO_PEERCRED, &cred, &len);
    out[32] = cred.pid == getpid() && len == sizeof cred;
    struct stat st;
    fstat(s[0], &st);
    out[33] = S_ISSOCK(st.st_mode);
    out[34] = res(lseek(s[0], 0, SEEK_CUR));
    out[35] = res(listen(s[0], 1));
    out[36] = res(shutdown(s[0], SHUT_WR));
    r = revents(s[1]);
    out[37] = (uint8_t)r;
    out[38] = (uint8_t)(r >> 8);
    out[39] = res(recv(s[1], b, 10, 0));
    signal(SIGPIPE, SIG_IGN);
    out[40] = res(write(s[0], "x", 1));
    out[41] = res(write(s[1], "yy", 2));
    out[42] = res(recv(s[0], b, 10, 0));
    /* Closing an end with data unread at it: ECONNRESET at the other. */
    write(s[1], "zz", 2);
    close(s[0]);
    r = revents(s[1]);
    out[43] = (uint8_t)r;
    out[44] = (uint8_t)(r >> 8);
    len = sizeof o;
    getsockopt(s[1], SOL_SOCKET, SO_ERROR, &o, &len);
    out[45] = (uint8_t)o;
    r = revents(s[1]);
    out[46] = (uint8_t)r;
    out[47] = res(recv(s[1], b, 10, 0));
    out[48] = res(write(s[1], "x", 1));
    out[49] = res(shutdown(s[1], 7));
    report(out, sizeof out);
    return park(node);
}

static volatile sig_atomic_t caught;

static void on_sigpipe(int sig)
{
    (void)sig;
    caught++;
}

static int sigpipes(int node, const char *how)
{
    uint8_t out[14];
    if (strcmp(how, "ignore") == 0)
        signal(SIGPIPE, SIG_IGN);
    else if (strcmp(how, "handler") == 0)
        signal(SIGPIPE, on_sigpipe);
    else if (strcmp(how, "blocked") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        sigprocmask(SIG_BLOCK, &set, NULL);
    }
    int p[2];
    if (pipe(p) != 0)
        return 2;
    close(p[0]);
    int r = revents(p[1]);
    out[0] = (uint8_t)r;
    out[1] = (uint8_t)(r >> 8);
    /* What a node killed by the write below has reported. */
    report(out, 2);
    out[2] = res(write(p[1], "x", 1));
    out[3] = caught;
    out[4] = res(write(p[1], "", 0));
    out[5] = caught;
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    shutdown(s[0], SHUT_WR);
    out[6] = res(write(s[0], "x", 1));
    out[7] = caught;
    out[8] = res(send(s[0], "x", 1, MSG_NOSIGNAL));
    out[9] = caught;
    out[10] = res(write(s[0], "", 0));
    out[11] = caught;
    int t[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, t);
    close(t[1]);
    out[12] = res(write(t[0], "x", 1));
    out[13] = caught;
    report(out, sizeof out);
    return park(node);
}

/* The lowest free descriptor. */
static int lowest_free(void)
{
    int f = open("/dev/null", O_RDONLY);
    close(f);
    return f;
}

static int emfile(int node)
{
    uint8_t out[10];
    int free_at = lowest_free(), p[2] = {-1, -1}, s[2] = {-1, -1};
    struct rlimit old, one;
    getrlimit(RLIMIT_NOFILE, &old);
    one = old;
    one.rlim_cur = free_at + 1;
    setrlimit(RLIMIT_NOFILE, &one);
    out[0] = res(pipe(p));
    out[1] = p[0] == -1 && p[1] == -1;
    out[2] = res(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
    out[3] = s[0] == -1 && s[1] == -1;
    int e = eventfd(0, 0);
    out[4] = e == free_at;
    close(e);
    one.rlim_cur = free_at;
    setrlimit(RLIMIT_NOFILE, &one);
    out[5] = res(eventfd(0, 0));
    setrlimit(RLIMIT_NOFILE, &old);
    out[6] = lowest_free() == free_at;
    /* A bad address (raw calls: the compiler sees through the wrappers). */
    out[7] = res(syscall(SYS_pipe2, 8, 0));
    out[8] = res(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 8));
    out[9] = lowest_free() == free_at;
    report(out, sizeof out);
    return park(node);
}

static int block(const char *what)
{
    uint8_t out[1] = {1};
    int p[2];
    uint64_t v = UINT64_MAX - 1;
    char b[8];
    if (strcmp(what, "pipe") == 0 && pipe(p) == 0) {
        report(out, 1);
        read(p[0], b, 1);
    } else if (strcmp(what, "eventfd") == 0) {
        int e = eventfd(0, 0);
        report(out, 1);
        read(e, &v, 8);
    } else if (strcmp(what, "full") == 0) {
        int e = eventfd(0, 0);
        write(e, &v, 8);
        report(out, 1);
        v = 1;
        write(e, &v, 8);
    } else if (strcmp(what, "pair") == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, p) == 0) {
        report(out, 1);
        read(p[0], b, 1);
    }
    return 3;
}

static int polls(int node)
{
    uint8_t out[6];
    int p[2], e = eventfd(0, 0);
    uint64_t one = 1;
    if (pipe(p) != 0)
        return 2;
    struct pollfd f[2] = {{p[0], POLLIN, 0}, {e, POLLIN, 0}};
    out[0] = res(poll(f, 2, 1000));
    write(e, &one, 8);
    out[1] = res(poll(f, 2, 1000));
    out[2] = (uint8_t)f[1].revents;
    fd_set r;
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    FD_SET(e, &r);
    struct timeval tv = {1, 0};
    out[3] = res(select((p[0] > e ? p[0] : e) + 1, &r, NULL, NULL, &tv));
    write(p[1], "x", 1);
    out[4] = res(poll(f, 2, 1000));
    out[5] = (uint8_t)f[0].revents;
    report(out, sizeof out);
    return park(node);
}

static int waker(int node, const char *how)
{
    uint8_t state[3] = {0, 0, 0}; /* bytes read, wakes, the counters read, summed */
    int l = cmc_listen(node), e = eventfd(0, EFD_NONBLOCK);
    if (l < 0 || e < 0)
        return 2;
    report(state, sizeof state);
    int c = accept(l, NULL, NULL);
    if (c < 0)
        return 2;
    int ep = -1;
    if (strcmp(how, "epoll") == 0) {
        ep = epoll_create1(0);
        struct epoll_event a = {EPOLLIN, {.u64 = 0}}, b = {EPOLLIN, {.u64 = 1}};
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &a);
        epoll_ctl(ep, EPOLL_CTL_ADD, e, &b);
    }
    for (;;) {
        int conn_ready = 0, woken = 0;
        if (ep >= 0) {
            struct epoll_event got[2];
            int k = epoll_wait(ep, got, 2, -1);
            for (int i = 0; i < k; i++) {
                conn_ready |= got[i].data.u64 == 0;
                woken |= got[i].data.u64 == 1;
            }
        } else {
            struct pollfd f[2] = {{c, POLLIN, 0}, {e, POLLIN, 0}};
            poll(f, 2, -1);
            conn_ready = f[0].revents & POLLIN;
            woken = f[1].revents & POLLIN;
        }
        if (woken) {
            uint64_t v;
            if (read(e, &v, 8) == 8) {
                state[1]++;
                state[2] += (uint8_t)v;
            }
        }
        if (conn_ready) {
            char b[16];
            ssize_t k = read(c, b, sizeof b);
            if (k <= 0)
                return 0;
            state[0] += (uint8_t)k;
            uint64_t v = (uint64_t)k;
            write(e, &v, 8);
        }
        report(state, sizeof state);
    }
}

static int memory(int node)
{
    int p[2];
    uint8_t count = 0;
    if (pipe(p) != 0)
        return 2;
    report(&count, 1);
    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 2;
        char b;
        while (read(c, &b, 1) == 1) {
            write(p[1], &b, 1);
            count++;
            report(&count, 1);
            if (count == 2) {
                char seen[2];
                if (read(p[0], seen, 2) == 2 && seen[0] == 'T' && seen[1] == 'r')
                    abort();
            }
        }
        close(c);
    }
}

static int pingpong(int node)
{
    int s[2];
    uint8_t state[2] = {0, 0}; /* rounds, the last answer */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s) != 0)
        return 2;
    report(state, sizeof state);
    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 2;
        char b, ping, pong;
        while (read(c, &b, 1) == 1) {
            if (send(s[0], &b, 1, 0) != 1 || recv(s[1], &ping, 1, 0) != 1)
                return 4;
            pong = (char)(ping + 1);
            if (send(s[1], &pong, 1, 0) != 1 || recv(s[0], &pong, 1, 0) != 1)
                return 5;
            state[0]++;
            state[1] = (uint8_t)pong;
            report(state, sizeof state);
        }
        close(c);
    }
}

static int limit(int node, const char *what, int n)
{
    uint8_t out[1] = {0};
    static char b[8192];
    int p[2];
    if (strcmp(what, "objects") == 0) {
        for (int i = 0; i < n; i++)
            if (eventfd(0, 0) < 0)
                return 2;
        out[0] = 1;
    } else if (strcmp(what, "bytes") == 0 && pipe(p) == 0) {
        out[0] = write(p[1], b, n) == n;
    } else if (strcmp(what, "messages") == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, p) == 0) {
        int i = 0;
        while (i < n && write(p[0], b, 1) == 1)
            i++;
        out[0] = i == n;
    }
    report(out, 1);
    return park(node);
}

static int dups(int node)
{
    uint8_t out[22];
    char c = 0;
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
    int d = fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
    out[0] = (uint8_t)(d - sv[0]);
    out[1] = res(write(sv[1], "x", 1));
    out[2] = res(read(d, &c, 1));
    out[3] = (uint8_t)c;
    out[4] = res(close(sv[0]));
    /* The end is open through d: the peer may still write. */
    out[5] = res(send(sv[1], "y", 1, MSG_NOSIGNAL));
    out[6] = res(read(d, &c, 1));
    /* O_NONBLOCK is the description's. */
    out[7] = res(fcntl(d, F_SETFL, 0));
    int e = dup(d);
    out[8] = (fcntl(e, F_GETFL) & O_NONBLOCK) != 0;
    out[9] = res(fcntl(e, F_SETFL, O_NONBLOCK));
    out[10] = (fcntl(d, F_GETFL) & O_NONBLOCK) != 0;
    out[11] = res(read(d, &c, 1));
    /* An edge through a duplicate. */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 7};
    out[12] = res(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev));
    out[13] = res(write(sv[1], "z", 1));
    struct epoll_event got[2];
    out[14] = res(epoll_wait(ep, got, 2, 0));
    out[15] = res(read(d, &c, 1));
    out[16] = res(close(d));
    out[17] = res(epoll_wait(ep, got, 2, 0));
    /* The last descriptor closed: the peer's writes fail. */
    out[18] = res(epoll_ctl(ep, EPOLL_CTL_DEL, e, NULL));
    out[19] = res(close(e));
    out[20] = res(send(sv[1], "w", 1, MSG_NOSIGNAL));
    /* An eventfd through a duplicate. */
    int ef = eventfd(0, EFD_NONBLOCK);
    int ef2 = dup(ef);
    uint64_t v = 5;
    write(ef, &v, 8);
    v = 0;
    out[21] = read(ef2, &v, 8) == 8 ? (uint8_t)v : res(-1);
    report(out, sizeof out);
    return park(node);
}

static int dupwatch(int node)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int d = dup(sv[0]);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
    close(sv[0]);
    write(sv[1], "x", 1);
    struct epoll_event got[1];
    uint8_t out[1] = {res(epoll_wait(ep, got, 1, 0))};
    report(out, sizeof out);
    (void)d;
    return park(node);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    under_checker = fcntl(CMC_STATE_FD, F_GETFD) >= 0;
    int node = atoi(argv[1]);
    const char *mode = argv[2], *arg = argc > 3 ? argv[3] : "";
    if (strcmp(mode, "eventfd") == 0)
        return eventfds(node);
    if (strcmp(mode, "pipe") == 0)
        return pipes(node);
    if (strcmp(mode, "pair") == 0)
        return pairs(node, arg);
    if (strcmp(mode, "sigpipe") == 0)
        return sigpipes(node, arg);
    if (strcmp(mode, "emfile") == 0)
        return emfile(node);
    if (strcmp(mode, "block") == 0)
        return block(arg);
    if (strcmp(mode, "poll") == 0)
        return polls(node);
    if (strcmp(mode, "waker") == 0)
        return waker(node, arg);
    if (strcmp(mode, "memory") == 0)
        return memory(node);
    if (strcmp(mode, "pingpong") == 0)
        return pingpong(node);
    if (strcmp(mode, "dup") == 0)
        return dups(node);
    if (strcmp(mode, "dupwatch") == 0)
        return dupwatch(node);
    if (strcmp(mode, "limit") == 0)
        return limit(node, arg, argc > 4 ? atoi(argv[4]) : 0);
    return 2;
}
