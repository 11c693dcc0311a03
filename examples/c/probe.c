/*
 * probe: reads everything a program could use to tell two runs apart and
 * reports it on fd 3, so that the tests can show the checker makes them
 * equal; and, given a mode as its second argument, misbehaves in one way
 * the checker must report as an error.
 *
 * Modes: (none) report time, random bytes and heap addresses, then wait in
 * accept() (and linger if the checker dies); "stall" block in
 * sigsuspend(), which waits as pause() does (no signal comes); "busy"
 * report a state, then loop without system calls; "spin-accept" report a
 * state, then call accept on a non-blocking listening socket until it
 * succeeds, never waiting; "spin" loop at once, before any call (started
 * without the preload, it never says hello); "sleeper" sleep
 * 3 s (sleep), 1 ms (usleep), until 2 s later on the monotonic clock
 * (clock_nanosleep), then not at all (nanosleep of zero, and
 * clock_nanosleep until a time past), reporting {step, logical seconds}
 * after each, then pause(); "thread" start a thread; "fork" fork a child;
 * "exec" exec /bin/true; "abort" abort once a client connects (a
 * failed assertion); "signal-other" signal another process (its
 * parent); "ipc" send to System V message queue 0, which it did not make;
 * "nowhere" dial port 8080, which no node listens on, and exit 5 if
 * refused; "elsewhere" dial 10.0.0.1, another host, and exit 5 if refused;
 * "bindelsewhere" bind 10.0.0.1, an address of another host, and
 * "bindzero" bind port 0 (the kernel's choice), each exiting 5 if refused;
 * "udp" and "inet6" make a SOCK_DGRAM and an AF_INET6 socket and exit 5
 * if refused; "exit" as node 0 exit at once with the status given as its
 * third argument, as any other node behave as with no mode;
 * "framing" node 0 reads 4-byte requests one read each, node 1 writes
 * two (a framing bug byte streams show); "framing waitall" node 0 reads
 * both with one recv(MSG_WAITALL); "ticker" timerfds (see ticker);
 * "store DIR" durable files in the data directory (see store); "churn
 * DIR" files that come and go there (see churn); "naps"
 * sleeps by sleep, poll and select of nothing; "selectleft" node 0 selects
 * on node 1's connection with one struct timeval, 2.5 s, until Linux's
 * select has written back that none is left, reporting {votes read,
 * seconds left, tenths left} after each; node 1 sleeps a second and
 * writes a vote; "rdhup" a poll for
 * the peer's hang-up only; "addresses" report where the text,
 * the stack, the break, an anonymous mapping and printf are, then wait
 * in accept();
 * "evloop HOW" an event loop over non-blocking sockets, waiting with
 * poll, select or epoll (see evloop_server);
 * "chatty" as "abort", printing on stdout as it starts and once a client
 * connects, and on stderr before it aborts;
 * "peek" read another process's memory (process_vm_readv of pid 1); "uring" and "aio" set up asynchronous I/O
 * (io_uring_setup, io_setup), which the checker must reject; "bigstate" report a 65-byte state; "bigdurable"
 * make a 65-byte record durable; "selfdial" dial its own port and accept
 * the connection, so that it holds both ends of it, write "d" on the end it
 * dialled and "a" on the end it accepted, then read the accepted end and
 * the dialled end in turn, reporting {step, first byte read, second byte
 * read} before the reads and after each (1, 2, 3), and exit 0.
 *
 * Calls on a connection, by class, given as `probe NODE CLASS [CALL]`. The
 * node listens and dials itself for a connection, and first
 * makes each call on an ordinary file (the program's own executable, read
 * only, or /dev/null for writes), where it must work, or
 * exits with 6. Then, on the connection:
 *   "positional"  pread, pwrite, preadv, pwritev, preadv2 and pwritev2 at
 *                 offset 0, lseek, and pread of its listening socket, which
 *                 fail with ESPIPE as on a socket; it reports the eight
 *                 errnos, the count of a pread of /dev/urandom and of a
 *                 pwritev2 at offset -1 of "p" on the connection, then
 *                 waits in a preadv2 at offset -1. CALL "flags" instead
 *                 makes a preadv2 with RWF_NOWAIT on the connection,
 *                 "durable" a pread of fd 193;
 *   "transfer"    CALL (sendfile, splice, tee, vmsplice, copy_file_range)
 *                 with the connection as one end;
 *   "control"     CALL: ioctl (FIONREAD), fcntl (F_SETFL O_NONBLOCK), dup,
 *                 dup2 and dup3 (onto the connection), or dupfd-state
 *                 (fcntl F_DUPFD of fd 3);
 *   "batch"       CALL (sendmmsg, recvmmsg);
 *   "poll"        CALL: poll, or epoll_ctl adding the connection;
 *   "sockopt"     setsockopt of TCP_NODELAY and of a zero SO_RCVTIMEO,
 *                 getsockopt of SO_ERROR, then a one-second SO_RCVTIMEO.
 *
 * The file system, given as `probe NODE files CALL`: the node first reads
 * a file, opens /dev/null for writing and changes into its working
 * directory's subdirectory `sub` (which the test makes), each of which
 * must work (or it exits with 6), then makes CALL on `sub/f` or `f` there
 * (an existing file, made by the test) or on a new name; the checker must
 * stop it with an error naming the node, the call and the path. CALL:
 * creat, tmpfile (O_TMPFILE), append, rdwr, trunc (O_RDONLY|O_TRUNC),
 * openat-dirfd (relative to a descriptor of the parent directory),
 * openat2, unlink, rename, mkdir, rmdir, link, symlink, mknod, chmod,
 * fchmod, chown, utimes, futimens, truncate, ftruncate, setxattr,
 * fallocate, chattr (ioctl FS_IOC_SETFLAGS), lock (fcntl F_SETLK), flock,
 * mount, sethostname, settimeofday.
 *
 * Time and entropy, each reported on fd 3 before the node waits in
 * accept():
 *   "random PATH [DIR]"  8 bytes read from PATH (opened relative to DIR
 *                        when given, with openat2 when PATH starts "2:");
 *   "read PATH"          opens PATH for reading, which the checker must
 *                        refuse (exits 7 if it does not);
 *   "clocks"             times() and its CPU times, sysinfo's uptime,
 *                        memory and processes, adjtimex's answer and time,
 *                        getrusage's user time, sched_getcpu() through the
 *                        vDSO's getcpu, rdtsc, rdtscp, and whether CPUID
 *                        shows RDRAND and RDSEED (a bit each);
 *   "auxv"               the 16 bytes of getauxval(AT_RANDOM);
 *   "segv"               a SIGSEGV handler set with sigaction sees a
 *                        NULL dereference (after a cpuid, which must not
 *                        reach it): reports 1; "segv-default" dereferences
 *                        NULL with no handler, and is killed by SIGSEGV;
 *   "undo CALL"          CALL: tsc (prctl PR_SET_TSC, PR_TSC_ENABLE),
 *                        cpuid (arch_prctl ARCH_SET_CPUID, 1), adjtime
 *                        (adjtimex setting an offset), segv-raw (a SIGSEGV
 *                        handler set by the raw system call), each of
 *                        which the checker must refuse (exits 7).
 * The checker must stop each mode but "positional" (without CALL) with an
 * error naming the node and the call; a mode that returns exits with 7.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#define _GNU_SOURCE
#include "cmc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <cpuid.h>
#include <sched.h>
#include <setjmp.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/timex.h>
#include <x86intrin.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static void put(uint8_t *out, uint64_t v)
{
    memcpy(out, &v, sizeof v);
}

static void *nothing(void *arg)
{
    return arg;
}

static int wait_in_accept(int node)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_port = htons(CMC_PORT_BASE + node);
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&me, sizeof me) < 0 || listen(s, 8) < 0)
        return 2;
    /* Each connection accepted is counted in the state, so that every
     * ACCEPT makes a new node state (and the checker a new snapshot). */
    uint8_t accepted = 0;
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            /* The checker is gone (its calls fail with ENOSYS): linger, so
             * that only the kernel's death signal can end this process. */
            sigset_t none;
            sigemptyset(&none);
            for (;;)
                sigsuspend(&none);
        }
        close(c);
        accepted++;
        cmc_record_write(CMC_STATE_FD, &accepted, 1);
    }
}

/* The program's path (argv[0]). */
static const char *self_path;

/* An ordinary file, read only: the program's own executable. (A node may
 * not write files, nor make a memfd, whose contents its forks would share.) */
static int ordinary_file(void)
{
    return open(self_path, O_RDONLY);
}

/* A connection of the node to itself: it listens (the listener stays
 * open), then dials its own port; -1 if either fails. */
static int dial_self(int node)
{
    return cmc_listen(node) < 0 ? -1 : cmc_dial(node);
}

/* The errno of a call that returned `r`, or 0 if it succeeded. */
static uint8_t errno_of(long r)
{
    return r < 0 ? (uint8_t)errno : 0;
}

static int positional(int node, const char *call)
{
    int l = cmc_listen(node), c = cmc_dial(node), f = ordinary_file();
    int u = open("/dev/urandom", O_RDONLY), w = open("/dev/null", O_WRONLY);
    char buf[8];
    struct iovec one = {buf, 1}, p = {(void *)"p", 1};
    if (l < 0 || c < 0 || f < 0 || u < 0 || w < 0)
        return 2;
    if (pread(f, buf, 2, 1) != 2 || pwrite(w, "xy", 2, 1) != 2 || preadv(f, &one, 1, 0) != 1
        || pwritev(w, &one, 1, 0) != 1 || preadv2(f, &one, 1, 0, 0) != 1 || pwritev2(w, &one, 1, 0, 0) != 1
        || lseek(f, 0, SEEK_END) <= 0)
        return 6;
    if (strcmp(call, "flags") == 0) {
        preadv2(c, &one, 1, -1, RWF_NOWAIT);
        return 7;
    }
    if (strcmp(call, "durable") == 0) {
        pread(CMC_DURABLE_FD, buf, sizeof buf, 0);
        return 7;
    }
    uint8_t out[10];
    out[0] = errno_of(pread(c, buf, 1, 0));
    out[1] = errno_of(pwrite(c, "x", 1, 0));
    out[2] = errno_of(preadv(c, &one, 1, 0));
    out[3] = errno_of(pwritev(c, &one, 1, 0));
    out[4] = errno_of(preadv2(c, &one, 1, 0, 0));
    out[5] = errno_of(pwritev2(c, &one, 1, 0, 0));
    out[6] = errno_of(lseek(c, 0, SEEK_CUR));
    out[7] = errno_of(pread(l, buf, 1, 0));
    out[8] = (uint8_t)pread(u, buf, sizeof buf, 0);
    out[9] = (uint8_t)pwritev2(c, &p, 1, -1, 0);
    cmc_record_write(CMC_STATE_FD, out, sizeof out);
    preadv2(c, &one, 1, -1, 0);
    return 0;
}

static int transfer(int node, const char *call)
{
    int c = dial_self(node), f = ordinary_file(), g = open("/dev/null", O_WRONLY), p[2], q[2];
    char buf[4] = {'a', 'b', 'c', 'd'};
    struct iovec iov = {buf, sizeof buf};
    loff_t at = 0, to = 0;
    if (c < 0 || f < 0 || g < 0)
        return 2;
    /* splice, tee and vmsplice need pipes, which are the world's: the
     * checker refuses the transfer itself. */
    if ((strcmp(call, "splice") == 0 || strcmp(call, "tee") == 0 || strcmp(call, "vmsplice") == 0)
        && (pipe(p) < 0 || pipe(q) < 0))
        return 2;
    if (strcmp(call, "sendfile") == 0) {
        if (sendfile(g, f, &at, 4) != 4)
            return 6;
        at = 0;
        sendfile(c, f, &at, 4);
    } else if (strcmp(call, "splice") == 0) {
        if (splice(f, &at, p[1], NULL, 4, 0) != 4)
            return 6;
        splice(p[0], NULL, c, NULL, 4, 0);
    } else if (strcmp(call, "tee") == 0) {
        if (write(p[1], buf, 4) != 4 || tee(p[0], q[1], 4, 0) != 4)
            return 6;
        tee(p[0], c, 4, 0);
    } else if (strcmp(call, "vmsplice") == 0) {
        if (vmsplice(p[1], &iov, 1, 0) != 4)
            return 6;
        vmsplice(c, &iov, 1, 0);
    } else if (strcmp(call, "copy_file_range") == 0) {
        /* Between two regular files only, and a node writes none: the call
         * on the connection alone. */
        (void)to;
        copy_file_range(f, NULL, c, NULL, 4, 0);
    }
    return 7;
}

static int control(int node, const char *call)
{
    int c = dial_self(node), f = ordinary_file(), avail = 0;
    if (c < 0 || f < 0)
        return 2;
    if (strcmp(call, "ioctl") == 0) {
        if (ioctl(f, FIONREAD, &avail) < 0)
            return 6;
        ioctl(c, FIONREAD, &avail);
    } else if (strcmp(call, "fcntl") == 0) {
        if (fcntl(f, F_SETFL, O_NONBLOCK) < 0)
            return 6;
        fcntl(c, F_SETFL, O_NONBLOCK);
    } else if (strcmp(call, "dupfd-state") == 0) {
        if (fcntl(f, F_DUPFD, 0) < 0)
            return 6;
        fcntl(CMC_STATE_FD, F_DUPFD, 0);
    } else if (strcmp(call, "dup") == 0) {
        if (dup(f) < 0)
            return 6;
        dup(c);
    } else if (strcmp(call, "dup2") == 0) {
        if (dup2(f, 100) != 100)
            return 6;
        dup2(c, 101);
    } else if (strcmp(call, "dup3") == 0) {
        if (dup3(f, 102, 0) != 102)
            return 6;
        dup3(f, c, 0);
    }
    return 7;
}

static int batch(int node, const char *call)
{
    int c = dial_self(node), f = ordinary_file();
    char buf[4];
    struct iovec iov = {buf, sizeof buf};
    struct mmsghdr m;
    memset(&m, 0, sizeof m);
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
    if (c < 0 || f < 0)
        return 2;
    if (strcmp(call, "sendmmsg") == 0) {
        if (sendmmsg(f, &m, 1, 0) >= 0 || errno != ENOTSOCK)
            return 6;
        sendmmsg(c, &m, 1, 0);
    } else if (strcmp(call, "recvmmsg") == 0) {
        if (recvmmsg(f, &m, 1, 0, NULL) >= 0 || errno != ENOTSOCK)
            return 6;
        recvmmsg(c, &m, 1, 0, NULL);
    }
    return 7;
}

static int polling(int node, const char *call)
{
    int c = dial_self(node), e = epoll_create1(0), f = ordinary_file();
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    if (c < 0 || e < 0 || f < 0)
        return 2;
    if (strcmp(call, "poll") == 0) {
        struct pollfd pfd = {c, POLLIN, 0};
        poll(&pfd, 1, -1);
    } else if (strcmp(call, "epoll_ctl") == 0) {
        /* A file cannot be polled: EPERM, as Linux answers; then wait. */
        uint8_t got = epoll_ctl(e, EPOLL_CTL_ADD, f, &ev) == 0 ? 0 : (uint8_t)errno;
        cmc_record_write(CMC_STATE_FD, &got, 1);
        struct pollfd pfd = {c, POLLIN, 0};
        poll(&pfd, 1, -1);
    } else if (strcmp(call, "epoll_exclusive") == 0) {
        if (epoll_ctl(e, EPOLL_CTL_MOD, c, &ev) == 0 || errno != ENOENT)
            return 6;
        ev.events |= EPOLLEXCLUSIVE;
        epoll_ctl(e, EPOLL_CTL_ADD, c, &ev);
    }
    return 7;
}

static int sockopt(int node)
{
    int c = dial_self(node), one = 1, error = -1;
    socklen_t len = sizeof error;
    struct timeval none = {0, 0}, second = {1, 0};
    if (c < 0)
        return 2;
    if (setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0
        || setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none) < 0
        || getsockopt(c, SOL_SOCKET, SO_ERROR, &error, &len) < 0 || error != 0)
        return 6;
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second);
    return 7;
}

/* Mode "evloop HOW": node 0 serves from an event loop over non-blocking
 * sockets with a 2-second timeout, waiting with HOW ("poll", "select" or
 * "epoll"), and reports {accepted, messages, eofs, timeouts, peeked}
 * after each turn; node 1 dials without blocking, polls for writable,
 * sends "hi", checks a non-blocking read finds nothing yet, polls for the
 * answer, and exits 0 reporting {1, what it read, flags it saw}. */

/* Waits for fds[0..n] with HOW; sets each revents to POLLIN if readable.
 * Returns how many are, 0 on timeout, -1 on error. */
static int evloop_wait(const char *how, int e, struct pollfd *fds, int n)
{
    if (strcmp(how, "select") == 0) {
        fd_set r;
        FD_ZERO(&r);
        int top = 0;
        for (int i = 0; i < n; i++) {
            FD_SET(fds[i].fd, &r);
            top = fds[i].fd > top ? fds[i].fd : top;
        }
        struct timeval tv = {2, 0};
        int k = select(top + 1, &r, NULL, NULL, &tv);
        for (int i = 0; i < n; i++)
            fds[i].revents = k > 0 && FD_ISSET(fds[i].fd, &r) ? POLLIN : 0;
        return k;
    }
    if (strcmp(how, "epoll") == 0) {
        struct epoll_event evs[8];
        int k = epoll_wait(e, evs, 8, 2000);
        for (int i = 0; i < n; i++) {
            fds[i].revents = 0;
            for (int j = 0; j < k; j++)
                if (evs[j].data.fd == fds[i].fd && (evs[j].events & EPOLLIN))
                    fds[i].revents = POLLIN;
        }
        return k;
    }
    return poll(fds, n, 2000);
}

static int evloop_server(int node, const char *how)
{
    struct sockaddr_in a = cmc_address(node);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 16) < 0)
        return 2;
    uint8_t st[5] = {0, 0, 0, 0, 0};
    struct pollfd fds[5] = {{l, POLLIN, 0}};
    int n = 1, e = -1;
    if (strcmp(how, "epoll") == 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = l};
        e = epoll_create1(EPOLL_CLOEXEC);
        if (e < 0 || epoll_ctl(e, EPOLL_CTL_ADD, l, &ev) < 0)
            return 2;
        if (epoll_ctl(e, EPOLL_CTL_ADD, l, &ev) == 0 || errno != EEXIST)
            return 2;
        if (epoll_ctl(e, EPOLL_CTL_DEL, 99, NULL) == 0 || errno != EBADF)
            return 2;
        /* A socket, which can be polled, not in the interest list. */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0 || epoll_ctl(e, EPOLL_CTL_MOD, s, &ev) == 0 || errno != ENOENT)
            return 2;
        close(s);
    }
    for (;;) {
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        int ready = evloop_wait(how, e, fds, n);
        if (ready < 0)
            return 3;
        if (ready == 0) {
            st[3]++;
            continue;
        }
        if (fds[0].revents & POLLIN) {
            int c;
            while ((c = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0 && n < 5) {
                fds[n++] = (struct pollfd){c, POLLIN | POLLRDHUP, 0};
                st[0]++;
                struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = c};
                if (e >= 0 && epoll_ctl(e, EPOLL_CTL_ADD, c, &ev) < 0)
                    return 4;
            }
            if (c >= 0 || errno != EAGAIN)
                return 4;
        }
        for (int i = 1; i < n; i++) {
            if (!(fds[i].revents & POLLIN))
                continue;
            char buf[16], peek[16];
            int avail = -1;
            ioctl(fds[i].fd, FIONREAD, &avail);
            ssize_t p = recv(fds[i].fd, peek, sizeof peek, MSG_PEEK);
            ssize_t k = read(fds[i].fd, buf, sizeof buf);
            if (k == 0) {
                st[2]++;
                close(fds[i].fd);
                fds[i--] = fds[--n];
                continue;
            }
            if (k < 0 || p != k || memcmp(buf, peek, (size_t)k) != 0 || avail != k)
                return 5;
            st[1]++;
            st[4] = (uint8_t)p;
            write(fds[i].fd, "ok", 2);
        }
    }
}

/* Mode "ticker": timerfds. Reports {step, logical seconds or a flag,
 * expirations read} after each step: 1, a blocking read of a 3-second
 * timer with a 2-second interval; 2, a poll of it then a read (then a
 * 1-second sleep, as after 4, so that each step is seen); 3, a
 * non-blocking timer read disarmed (EAGAIN), then set in the past
 * (absolute) and read; 4, a 10-second sleep then a read of the periodic
 * timer (several expirations); 5, gettime of it disarmed; then a
 * blocking read of the disarmed timer, which never returns. */
static int ticker(void)
{
    uint8_t st[3] = {0, 0, 0};
    uint64_t count = 0;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    int t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec set = {{2, 0}, {3, 0}}, got;
    if (t < 0 || timerfd_settime(t, 0, &set, NULL) < 0 || timerfd_gettime(t, &got) < 0)
        return 2;
    /* A little less than 3 s left: time passes between the two calls. */
    long long left = got.it_value.tv_sec * 1000000000LL + got.it_value.tv_nsec;
    if (left > 3000000000LL || left < 2900000000LL || got.it_interval.tv_sec != 2)
        return 3;
    if (read(t, &count, sizeof count) != 8)
        return 4;
    st[0] = 1, st[1] = (uint8_t)(time(NULL) - 1767225600), st[2] = (uint8_t)count;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    struct pollfd p = {t, POLLIN, 0};
    if (poll(&p, 1, -1) != 1 || read(t, &count, sizeof count) != 8)
        return 5;
    st[0] = 2, st[1] = (uint8_t)(time(NULL) - 1767225600), st[2] = (uint8_t)count;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    sleep(1);
    uint32_t small;
    if (read(t, &small, sizeof small) != -1 || errno != EINVAL)
        return 10;
    int u = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    struct itimerspec past = {{0, 0}, {4, 0}};
    st[0] = 3, st[1] = read(u, &count, sizeof count) == -1 && errno == EAGAIN;
    if (timerfd_settime(u, TFD_TIMER_ABSTIME, &past, NULL) < 0 || read(u, &count, sizeof count) != 8)
        return 6;
    st[2] = (uint8_t)count;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    sleep(10);
    /* Expired unread: the next expiry, not "disarmed": at 17 s, a little
     * less than a second after the sleep's end (a sleep ends late). */
    if (timerfd_gettime(t, &got) < 0 || got.it_value.tv_sec != 0 || got.it_value.tv_nsec < 900000000 ||
        got.it_interval.tv_sec != 2)
        return 9;
    if (read(t, &count, sizeof count) != 8)
        return 7;
    st[0] = 4, st[1] = (uint8_t)(time(NULL) - 1767225600), st[2] = (uint8_t)count;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    sleep(1);
    struct itimerspec off = {{0, 0}, {0, 0}};
    timerfd_settime(t, 0, &off, NULL);
    timerfd_gettime(t, &got);
    st[0] = 5, st[1] = got.it_value.tv_sec == 0 && got.it_interval.tv_sec == 0, st[2] = 0;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    read(t, &count, sizeof count);
    return 8;
}

/* Mode "store DIR": durable files in the data directory DIR. Reports
 * {bytes of DIR/log, its first 4 bytes, DIR/tmp exists, DIR/cur exists,
 * names listed}. On a first start (no DIR/log) it writes "ab" to a new
 * log and fsyncs it, writes "cd" unsynced, fsyncs the directory; writes
 * "new" to DIR/tmp opened O_SYNC and renames it DIR/cur (names not
 * synced); then waits in accept. */
static int store(int node, const char *dir)
{
    char log[256], tmp[256], cur[256];
    uint8_t st[8] = {0};
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    snprintf(cur, sizeof cur, "%s/cur", dir);
    int fd = open(log, O_RDONLY);
    if (fd < 0) {
        if (errno != ENOENT)
            return 2;
        fd = open(log, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "ab", 2) != 2 || fsync(fd) != 0 || write(fd, "cd", 2) != 2 || close(fd) != 0)
            return 3;
        int d = open(dir, O_RDONLY | O_DIRECTORY);
        if (d < 0 || fsync(d) != 0 || close(d) != 0)
            return 4;
        int t = open(tmp, O_CREAT | O_WRONLY | O_SYNC, 0644);
        if (t < 0 || write(t, "new", 3) != 3 || close(t) != 0 || rename(tmp, cur) != 0)
            return 5;
        if (open(log, O_CREAT | O_EXCL | O_WRONLY, 0644) != -1 || errno != EEXIST)
            return 6;
        fd = open(log, O_RDONLY);
    }
    struct stat s;
    if (fd < 0 || fstat(fd, &s) != 0 || !S_ISREG(s.st_mode))
        return 7;
    st[0] = (uint8_t)s.st_size;
    if (pread(fd, st + 1, 4, 0) != (ssize_t)s.st_size && s.st_size <= 4)
        return 8;
    close(fd);
    st[5] = access(tmp, F_OK) == 0;
    st[6] = access(cur, F_OK) == 0;
    DIR *d = opendir(dir);
    while (d && readdir(d))
        st[7]++;
    if (d)
        closedir(d);
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    return wait_in_accept(node);
}

/* Mode "churn DIR": files come and go in the data directory DIR.
 * Reports {st_ino of the second file (2 + its inode: the first's number
 * again), what openat from the directory read, its size by newfstatat
 * from the directory, size after a pwrite on an O_APPEND file, size
 * after a write past the end, names listed twice (rewinddir between)}. */
static int churn(int node, const char *dir)
{
    char a[256], b[256], c[256];
    uint8_t st[7] = {0};
    struct stat s;
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    int fd = open(a, O_CREAT | O_WRONLY, 0644);
    if (d < 0 || fd < 0 || write(fd, "x", 1) != 1 || fsync(fd) != 0 || close(fd) != 0 || fsync(d) != 0)
        return 2;
    if (unlink(a) != 0 || fsync(d) != 0)
        return 3;
    fd = open(b, O_CREAT | O_RDWR, 0644);
    if (fd < 0 || fstat(fd, &s) != 0 || write(fd, "y", 1) != 1)
        return 4;
    st[0] = (uint8_t)s.st_ino;
    char got = 0;
    int e = openat(d, "b", O_RDONLY);
    if (e < 0 || read(e, &got, 1) != 1 || fstatat(d, "b", &s, 0) != 0)
        return 5;
    st[1] = (uint8_t)got, st[2] = (uint8_t)s.st_size;
    int f = open(c, O_CREAT | O_WRONLY | O_APPEND, 0644);
    if (f < 0 || write(f, "1", 1) != 1 || pwrite(f, "2", 1, 0) != 1 || fstat(f, &s) != 0)
        return 6;
    st[3] = (uint8_t)s.st_size;
    if (lseek(fd, 10, SEEK_SET) != 10 || read(fd, &got, 1) != 0 || write(fd, "z", 1) != 1 || fstat(fd, &s) != 0)
        return 7;
    st[4] = (uint8_t)s.st_size;
    DIR *list = opendir(dir);
    while (list && readdir(list))
        st[5]++;
    rewinddir(list);
    while (list && readdir(list))
        st[6]++;
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    return wait_in_accept(node);
}

static int evloop_client(void)
{
    struct sockaddr_in a = cmc_address(0);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    uint8_t st[3] = {0, 0, 0};
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) == 0 || errno != EINPROGRESS)
        return 2;
    struct pollfd p = {c, POLLOUT, 0};
    if (poll(&p, 1, -1) != 1 || !(p.revents & POLLOUT))
        return 3;
    write(c, "hi", 2);
    char buf[4];
    if (recv(c, buf, sizeof buf, MSG_DONTWAIT) != -1 || errno != EAGAIN)
        return 4;
    if (read(c, buf, sizeof buf) != -1 || errno != EAGAIN)
        return 4;
    st[2] = (fcntl(c, F_GETFL) & O_NONBLOCK) ? 1 : 0;
    p.events = POLLIN;
    if (poll(&p, 1, -1) != 1 || !(p.revents & POLLIN))
        return 5;
    st[0] = 1;
    st[1] = (uint8_t)read(c, buf, sizeof buf);
    cmc_record_write(CMC_STATE_FD, st, sizeof st);
    return 0;
}

static int selfdial(int node)
{
    int l = cmc_listen(node), d = cmc_dial(node);
    if (l < 0 || d < 0)
        return 2;
    int a = accept(l, NULL, NULL);
    uint8_t s[3] = {1, 0, 0};
    if (a < 0 || write(d, "d", 1) != 1 || write(a, "a", 1) != 1)
        return 3;
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
    if (read(a, &s[1], 1) != 1)
        return 4;
    s[0] = 2;
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
    if (read(d, &s[2], 1) != 1)
        return 5;
    s[0] = 3;
    cmc_record_write(CMC_STATE_FD, s, sizeof s);
    return 0;
}

static void prctl_tsc_enable(void)
{
    prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

static int report_and_wait(int node, const void *bytes, unsigned len)
{
    cmc_record_write(CMC_STATE_FD, bytes, len);
    return wait_in_accept(node);
}

static int random_path(int node, const char *path, const char *dir)
{
    uint8_t out[9] = {0};
    int at = dir[0] ? open(dir, O_RDONLY | O_DIRECTORY) : AT_FDCWD, fd;
    if (strncmp(path, "2:", 2) == 0) {
        struct open_how how = {.flags = O_RDONLY};
        fd = (int)syscall(SYS_openat2, at, path + 2, &how, sizeof how);
    } else {
        fd = openat(at, path, O_RDONLY);
    }
    if (fd < 0 || read(fd, out, 8) != 8)
        return 2;
    return report_and_wait(node, out, 8);
}

static int clocks(int node)
{
    uint8_t out[CMC_STATE_MAX] = {0};
    struct tms t;
    struct sysinfo si;
    struct timex tx = {.modes = 0};
    struct rusage ru;
    unsigned a, b, c, d, aux = 7, rdrand = 0, rdseed = 0;
    clock_t ticks = times(&t);
    if (ticks == (clock_t)-1 || sysinfo(&si) != 0 || getrusage(RUSAGE_SELF, &ru) != 0)
        return 2;
    int state = adjtimex(&tx);
    /* Little-endian fields: 0 ticks, 8 CPU times, 12 uptime, 16 memory,
     * 24 adjtimex's seconds, 32 user time, 36 adjtimex's state, 37
     * processes, 38 the RDRAND and RDSEED bits, 39 the processor, 40 rdtsc,
     * 48 rdtscp, 56 rdtscp's processor. */
    uint32_t cpu = (uint32_t)(t.tms_utime + t.tms_stime + t.tms_cutime + t.tms_cstime);
    uint32_t up = (uint32_t)si.uptime, user = (uint32_t)(ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec);
    put(out + 0, (uint64_t)ticks);
    memcpy(out + 8, &cpu, 4);
    memcpy(out + 12, &up, 4);
    put(out + 16, (uint64_t)si.totalram * si.mem_unit);
    put(out + 24, (uint64_t)tx.time.tv_sec);
    memcpy(out + 32, &user, 4);
    if (__get_cpuid(1, &a, &b, &c, &d))
        rdrand = (c >> 30) & 1;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        rdseed = (b >> 18) & 1;
    out[36] = (uint8_t)state;
    out[37] = (uint8_t)si.procs;
    out[38] = (uint8_t)(rdrand | rdseed << 1);
    out[39] = (uint8_t)sched_getcpu();
    put(out + 40, __rdtsc());
    put(out + 48, __rdtscp(&aux));
    memcpy(out + 56, &aux, 4);
    return report_and_wait(node, out, 60);
}

static sigjmp_buf faulted;

static void on_segv(int sig)
{
    siglongjmp(faulted, sig);
}

static int segv(int node, int handled)
{
    uint8_t seen = 0;
    if (handled) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_segv;
        sigaction(SIGSEGV, &sa, NULL);
        unsigned a, b, c, d;
        __get_cpuid(0, &a, &b, &c, &d);
        if (sigsetjmp(faulted, 1) != 0)
            return report_and_wait(node, (seen = 1, &seen), 1);
    }
    *(volatile int *)(uintptr_t)(node * 8) = 1;
    return report_and_wait(node, &seen, 1);
}

static int undo(const char *call)
{
    if (strcmp(call, "tsc") == 0)
        prctl_tsc_enable();
    else if (strcmp(call, "cpuid") == 0)
        syscall(SYS_arch_prctl, 0x1012, 1);
    else if (strcmp(call, "adjtime") == 0) {
        struct timex tx = {.modes = ADJ_OFFSET, .offset = 1};
        adjtimex(&tx);
    } else if (strcmp(call, "segv-raw") == 0) {
        unsigned long act[4] = {(unsigned long)(uintptr_t)on_segv, 0, 0, 0};
        syscall(SYS_rt_sigaction, SIGSEGV, act, NULL, 8);
    }
    return 7;
}

static int files(const char *call)
{
    int f = ordinary_file(), w = open("/dev/null", O_WRONLY);
    char b;
    if (f < 0 || w < 0 || read(f, &b, 1) != 1 || write(w, "x", 1) != 1 || chdir("sub") != 0)
        return 6;
    int r = open("f", O_RDONLY);
    if (r < 0)
        return 6;
    struct timeval times[2] = {{0, 0}, {0, 0}};
    struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    if (strcmp(call, "creat") == 0)
        creat("new", 0600);
    else if (strcmp(call, "tmpfile") == 0)
        open(".", O_TMPFILE | O_RDWR, 0600);
    else if (strcmp(call, "append") == 0)
        open("f", O_WRONLY | O_APPEND);
    else if (strcmp(call, "rdwr") == 0)
        open("f", O_RDWR);
    else if (strcmp(call, "trunc") == 0)
        open("f", O_RDONLY | O_TRUNC);
    else if (strcmp(call, "openat-dirfd") == 0)
        openat(open("..", O_RDONLY | O_DIRECTORY), "new", O_WRONLY | O_CREAT, 0600);
    else if (strcmp(call, "openat2") == 0) {
        struct open_how how = {.flags = O_WRONLY | O_CREAT, .mode = 0600};
        syscall(SYS_openat2, AT_FDCWD, "new", &how, sizeof how);
    } else if (strcmp(call, "unlink") == 0)
        unlink("f");
    else if (strcmp(call, "rename") == 0)
        rename("f", "g");
    else if (strcmp(call, "mkdir") == 0)
        mkdir("d", 0700);
    else if (strcmp(call, "rmdir") == 0)
        rmdir("../sub");
    else if (strcmp(call, "link") == 0)
        link("f", "new");
    else if (strcmp(call, "symlink") == 0)
        symlink("f", "new");
    else if (strcmp(call, "mknod") == 0)
        mknod("new", S_IFIFO | 0600, 0);
    else if (strcmp(call, "chmod") == 0)
        chmod("f", 0644);
    else if (strcmp(call, "fchmod") == 0)
        fchmod(r, 0644);
    else if (strcmp(call, "chown") == 0)
        chown("f", 0, 0);
    else if (strcmp(call, "utimes") == 0)
        utimes("f", times);
    else if (strcmp(call, "futimens") == 0)
        futimens(r, NULL);
    else if (strcmp(call, "truncate") == 0)
        truncate("f", 0);
    else if (strcmp(call, "ftruncate") == 0)
        ftruncate(r, 0);
    else if (strcmp(call, "setxattr") == 0)
        setxattr("f", "user.cmc", "x", 1, 0);
    else if (strcmp(call, "fallocate") == 0)
        fallocate(r, 0, 0, 4096);
    else if (strcmp(call, "chattr") == 0) {
        long flags = 0;
        ioctl(r, FS_IOC_SETFLAGS, &flags);
    } else if (strcmp(call, "lock") == 0)
        fcntl(r, F_SETLK, &lock);
    else if (strcmp(call, "flock") == 0)
        flock(r, LOCK_SH);
    else if (strcmp(call, "mount") == 0)
        mount("none", "f", "tmpfs", 0, NULL);
    else if (strcmp(call, "sethostname") == 0)
        sethostname("cmc", 3);
    else if (strcmp(call, "settimeofday") == 0)
        settimeofday(&times[0], NULL);
    return 7;
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "";
    const char *call = argc > 3 ? argv[3] : "";
    uint8_t one = (uint8_t)node;

    self_path = argv[0];
    if (strcmp(mode, "spin") == 0)
        for (volatile int i = 0;; i++)
            ;
    if (strcmp(mode, "positional") == 0)
        return positional(node, call);
    if (strcmp(mode, "transfer") == 0)
        return transfer(node, call);
    if (strcmp(mode, "control") == 0)
        return control(node, call);
    if (strcmp(mode, "batch") == 0)
        return batch(node, call);
    if (strcmp(mode, "poll") == 0)
        return polling(node, call);
    if (strcmp(mode, "sockopt") == 0)
        return sockopt(node);
    if (strcmp(mode, "selfdial") == 0)
        return selfdial(node);
    if (strcmp(mode, "files") == 0)
        return files(call);
    if (strcmp(mode, "random") == 0)
        return random_path(node, call, argc > 4 ? argv[4] : "");
    if (strcmp(mode, "read") == 0)
        return open(call, O_RDONLY) < 0 ? 2 : 7;
    if (strcmp(mode, "clocks") == 0)
        return clocks(node);
    if (strcmp(mode, "auxv") == 0)
        return report_and_wait(node, (const void *)getauxval(AT_RANDOM), 16);
    if (strcmp(mode, "segv") == 0 || strcmp(mode, "segv-default") == 0)
        return segv(node, strcmp(mode, "segv") == 0);
    if (strcmp(mode, "undo") == 0)
        return undo(call);

    if (strcmp(mode, "stall") == 0) {
        sigset_t none;
        sigemptyset(&none);
        cmc_record_write(CMC_STATE_FD, &one, 1);
        sigsuspend(&none);
        return 0;
    }
    if (strcmp(mode, "spin-accept") == 0) {
        /* Poll a non-blocking listening socket with accept until it gives
         * a connection, never waiting: a node that never blocks. */
        int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(20000 + node)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 8) != 0)
            return 5;
        cmc_record_write(CMC_STATE_FD, &one, 1);
        while (accept(l, NULL, NULL) < 0 && errno == EAGAIN)
            ;
        return 0;
    }
    if (strcmp(mode, "busy") == 0) {
        cmc_record_write(CMC_STATE_FD, &one, 1);
        for (volatile int i = 0;; i++)
            ;
    }
    if (strcmp(mode, "sleeper") == 0) {
        /* Sleeps of each kind; after each, {step, logical seconds}. */
        uint8_t st[2] = {0, 0};
        struct timespec now, until, zero = {0, 0};
        cmc_record_write(CMC_STATE_FD, st, 2);
        sleep(3);
        st[0] = 1, st[1] = (uint8_t)(time(NULL) - 1767225600);
        cmc_record_write(CMC_STATE_FD, st, 2);
        usleep(1000);
        st[0] = 2, st[1] = (uint8_t)(time(NULL) - 1767225600);
        cmc_record_write(CMC_STATE_FD, st, 2);
        clock_gettime(CLOCK_MONOTONIC, &now);
        until = now;
        until.tv_sec += 2;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
        st[0] = 3, st[1] = (uint8_t)(time(NULL) - 1767225600);
        cmc_record_write(CMC_STATE_FD, st, 2);
        nanosleep(&zero, NULL);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &now, NULL);
        st[0] = 4;
        cmc_record_write(CMC_STATE_FD, st, 2);
        pause();
        return 0;
    }
    if (strcmp(mode, "addresses") == 0) {
        /* Where the text, the stack, the break, an anonymous mapping and
         * libc are: the same on every run, PIE or not. */
        uint64_t at[5];
        int local = 0;
        void *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        at[0] = (uint64_t)(uintptr_t)&main;
        at[1] = (uint64_t)(uintptr_t)&local;
        at[2] = (uint64_t)(uintptr_t)sbrk(0);
        at[3] = (uint64_t)(uintptr_t)map;
        at[4] = (uint64_t)(uintptr_t)&printf;
        cmc_record_write(CMC_STATE_FD, at, sizeof at);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "framing") == 0) {
        /* A framing bug: node 0 takes each read as one 4-byte request;
         * node 1 writes two. It reports {requests, size of a read that
         * was not 4 bytes}. */
        uint8_t st[2] = {0, 0};
        if (node == 1) {
            int c = cmc_dial(0);
            write(c, "ping", 4);
            write(c, "pong", 4);
            cmc_record_write(CMC_STATE_FD, st, sizeof st);
            return wait_in_accept(node);
        }
        int l = cmc_listen(0), c = l < 0 ? -1 : accept(l, NULL, NULL);
        char buf[8];
        ssize_t k;
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        if (strcmp(call, "small") == 0) {
            /* Reads of two bytes: the rest of a message is received, and
             * the next read has it at once. */
            for (;;) {
                k = read(c, buf, 2);
                st[0]++;
                st[1] = (uint8_t)k;
                cmc_record_write(CMC_STATE_FD, st, sizeof st);
            }
        }
        if (strcmp(call, "waitall") == 0) {
            /* The fix: wait for all 8 bytes of both requests. */
            k = recv(c, buf, sizeof buf, MSG_WAITALL);
            st[0] = 2;
            st[1] = k == 8 && memcmp(buf, "pingpong", 8) == 0 ? 0 : (uint8_t)k;
            cmc_record_write(CMC_STATE_FD, st, sizeof st);
            return wait_in_accept(node);
        }
        while (c >= 0 && (k = read(c, buf, sizeof buf)) > 0) {
            st[0]++;
            if (k != 4)
                st[1] = (uint8_t)k;
            cmc_record_write(CMC_STATE_FD, st, sizeof st);
        }
        return wait_in_accept(node);
    }
    if (strcmp(mode, "naps") == 0) {
        /* Node 0 sleeps 5 s, node 1 polls nothing for 10 s, node 2
         * selects nothing for 15 s; each reports {1, logical seconds}. */
        uint8_t st[2] = {0, 0};
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        if (node == 0) {
            sleep(5);
        } else if (node == 1) {
            poll(NULL, 0, 10000);
        } else {
            struct timeval tv = {15, 0};
            select(0, NULL, NULL, NULL, &tv);
        }
        st[0] = 1, st[1] = (uint8_t)(time(NULL) - 1767225600);
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        pause();
        return 0;
    }
    if (strcmp(mode, "selectleft") == 0) {
        uint8_t st[3] = {0, 2, 5};
        if (node == 0) {
            int l = cmc_listen(0);
            cmc_record_write(CMC_STATE_FD, st, sizeof st);
            int c = accept(l, NULL, NULL);
            struct timeval tv = {2, 500000};
            while (tv.tv_sec > 0 || tv.tv_usec > 0) {
                fd_set r;
                FD_ZERO(&r);
                FD_SET(c, &r);
                char b[8];
                if (select(c + 1, &r, NULL, NULL, &tv) > 0 && read(c, b, sizeof b) > 0)
                    st[0]++;
                st[1] = (uint8_t)tv.tv_sec, st[2] = (uint8_t)(tv.tv_usec / 100000);
                cmc_record_write(CMC_STATE_FD, st, sizeof st);
            }
            pause();
            return 0;
        }
        int c = cmc_dial(0);
        st[0] = 9;
        cmc_record_write(CMC_STATE_FD, st, 1);
        sleep(1);
        write(c, "v", 1);
        st[0] = 10;
        cmc_record_write(CMC_STATE_FD, st, 1);
        pause();
        return 0;
    }
    if (strcmp(mode, "rdhup") == 0) {
        /* Node 1 sends "x" and exits; node 0 polls its connection for the
         * hang-up only, then reads twice: {revents, first read, second}. */
        if (node == 1) {
            int c = cmc_dial(0);
            write(c, "x", 1);
            return 0;
        }
        int l = cmc_listen(0), c = accept(l, NULL, NULL);
        struct pollfd p = {c, POLLRDHUP, 0};
        uint8_t st[3] = {0, 0, 0};
        char buf[4];
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        if (poll(&p, 1, -1) != 1)
            return 3;
        st[0] = (uint8_t)(p.revents >> 8);
        st[1] = (uint8_t)read(c, buf, sizeof buf);
        st[2] = (uint8_t)read(c, buf, sizeof buf);
        cmc_record_write(CMC_STATE_FD, st, sizeof st);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "store") == 0)
        return store(node, call);
    if (strcmp(mode, "churn") == 0)
        return churn(node, call);
    if (strcmp(mode, "ticker") == 0)
        return ticker();
    if (strcmp(mode, "evloop") == 0)
        return node == 0 ? evloop_server(node, call) : evloop_client();
    if (strcmp(mode, "nowhere") == 0) {
        /* Dial a port that is no node's; give up if refused. */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(8080)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 5;
    }
    if (strcmp(mode, "elsewhere") == 0) {
        /* Dial another host; give up if refused. */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(CMC_PORT_BASE)};
        a.sin_addr.s_addr = htonl(0x0a000001); /* 10.0.0.1 */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 5;
    }
    if (strcmp(mode, "bindelsewhere") == 0 || strcmp(mode, "bindzero") == 0) {
        /* Bind where the model has no answer; give up if refused. */
        int zero = strcmp(mode, "bindzero") == 0;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(zero ? 0 : CMC_PORT_BASE)};
        a.sin_addr.s_addr = htonl(zero ? 0x7f000001 : 0x0a000001); /* 127.0.0.1, 10.0.0.1 */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        return bind(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 5;
    }
    if (strcmp(mode, "udp") == 0)
        return socket(AF_INET, SOCK_DGRAM, 0) >= 0 ? 0 : 5;
    if (strcmp(mode, "inet6") == 0)
        return socket(AF_INET6, SOCK_STREAM, 0) >= 0 ? 0 : 5;
    if (strcmp(mode, "exit") == 0 && node == 0)
        return atoi(call);
    if (strcmp(mode, "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, nothing, NULL);
        pthread_join(t, NULL);
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        if (fork() == 0)
            _exit(0);
        return 0;
    }
    if (strcmp(mode, "chatty") == 0) {
        /* "abort", saying so on stdout and stderr. */
        printf("node %d up\n", node);
        fflush(stdout);
        cmc_record_write(CMC_STATE_FD, &one, 1);
        close(accept(cmc_listen(node), NULL, NULL));
        printf("node %d: accepted a client\n", node);
        fflush(stdout);
        fprintf(stderr, "node %d: aborting\n", node);
        abort();
    }
    if (strcmp(mode, "abort") == 0) {
        /* A failed assertion once a client connects. */
        cmc_record_write(CMC_STATE_FD, &one, 1);
        close(accept(cmc_listen(node), NULL, NULL));
        abort();
    }
    if (strcmp(mode, "ipc") == 0) {
        long msg[2] = {1, 0};
        return msgsnd(0, msg, sizeof msg[1], IPC_NOWAIT) == 0 ? 0 : 5;
    }
    if (strcmp(mode, "peek") == 0) {
        char b;
        struct iovec mine = {&b, 1}, theirs = {(void *)0x400000, 1};
        return process_vm_readv(1, &mine, 1, &theirs, 1, 0) == 1 ? 0 : 5;
    }
    if (strcmp(mode, "signal-other") == 0)
        return kill(getppid(), 0) == 0 ? 0 : 5;
    if (strcmp(mode, "uring") == 0) {
        uint8_t params[120] = {0}; /* struct io_uring_params */
        return (int)syscall(SYS_io_uring_setup, 4, params) < 0 ? 5 : 0;
    }
    if (strcmp(mode, "aio") == 0) {
        unsigned long ctx = 0;
        return (int)syscall(SYS_io_setup, 4, &ctx) < 0 ? 5 : 0;
    }
    if (strcmp(mode, "exec") == 0) {
        execl("/bin/true", "true", (char *)NULL);
        return 4;
    }
    if (strcmp(mode, "bigstate") == 0 || strcmp(mode, "bigdurable") == 0) {
        uint8_t big[1 + 65];
        memset(big, 7, sizeof big);
        big[0] = 65;
        write(strcmp(mode, "bigstate") == 0 ? CMC_STATE_FD : CMC_DURABLE_FD, big, sizeof big);
        return wait_in_accept(node);
    }

    uint8_t out[CMC_STATE_MAX];
    struct timespec mono, spec;
    struct timeval tv;
    uint64_t random_bytes = 0, urandom = 0;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    timespec_get(&spec, TIME_UTC);
    gettimeofday(&tv, NULL);
    getrandom(&random_bytes, sizeof random_bytes, 0);
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        read(fd, &urandom, sizeof urandom);
        close(fd);
    }
    void *small = malloc(24);
    void *large = malloc(1 << 20);
    free(small);
    void *again = malloc(20);
    put(out + 0, (uint64_t)time(NULL));
    put(out + 8, (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
    put(out + 16, (uint64_t)spec.tv_sec * 1000000000u + (uint64_t)spec.tv_nsec);
    put(out + 24, (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec);
    put(out + 32, random_bytes);
    put(out + 40, urandom);
    put(out + 48, (uint64_t)(uintptr_t)large);
    if (again != small)
        return 5; /* the heap reuses a freed block of the same class */
    uint32_t pid = (uint32_t)getpid(), arc = arc4random();
    memcpy(out + 56, &pid, 4);
    memcpy(out + 60, &arc, 4);
    cmc_record_write(CMC_STATE_FD, out, sizeof out);
    return wait_in_accept(node);
}
