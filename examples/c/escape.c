/*
 * escape: programs honest about their state (each reports on fd 3
 * everything its future depends on) that reach, or try to reach, something
 * outside the world: the regression programs of issue 26, one mode per
 * class of "a pass you cannot trust". Each was a pass (or a verdict that
 * changed from one run of cmc to the next) where a real run of it aborts;
 * the checker must now answer as Linux does from the world, or refuse the
 * call by name.
 *
 *   escape NODE MODE
 *
 * Class 1, default-allow:
 *   "pipe"        a pipe made in main is a counter: every byte the node
 *                 reads from a connection (a request or a TIMEOUT's T)
 *                 adds one byte to it, and the node aborts when its second
 *                 read leaves exactly two bytes in the pipe (a real run
 *                 always does). Forks of one snapshot shared the pipe, so
 *                 siblings' bytes piled up and the abort was never seen
 *                 (the pipe is now the world's).
 *   "eventfd", "socketpair", "signalfd", "inotify", "userfaultfd",
 *   "memfd"       make one, then wait in accept: each is a kernel object
 *                 outside the world (but an eventfd and a socketpair,
 *                 now the world's).
 *   "rlimit-cpu"  set RLIMIT_CPU: CPU time would count from zero in every
 *                 fork.
 *   "rlimit-own"  read and set RLIMIT_NOFILE by prlimit of its own pid,
 *                 as getpid() says, and read it back by getrlimit:
 *                 {prlimit read, its soft limit is getrlimit's, set, read
 *                 back} (1, 1, 1, 1 natively; the virtual pid reached the
 *                 kernel, which found no such process).
 *   "shared-ro"   map its own executable read-only and shared: a mapping
 *                 of the file's pages, which a snapshot's forks share.
 *   "offset"      its own executable, opened in main, is a counter too:
 *                 every byte read from a connection reads one byte of it,
 *                 and the node aborts when its second read leaves the
 *                 file's offset at exactly 2 (a real run always does).
 *                 Forks of one snapshot shared the open file description,
 *                 so siblings' reads moved the offset.
 * Class 2, code before the template parked:
 *   "canary"      with a data directory (argument 3): the first life
 *                 saves its stack canary (ld.so's, from AT_RANDOM) to a
 *                 file there and makes it durable; a later life (after a
 *                 crash) that finds a saved canary other than its own
 *                 aborts, as a real run's second life always does. Every
 *                 life was forked from one template that ld.so had run
 *                 in, so all had the template's canary.
 * Class 3, process state a fork does not copy:
 *   "pending"     block SIGUSR1, raise it (pending), report, and on the
 *                 first request unblock it: the default action kills the
 *                 node. Forks of the snapshot lost the pending signal.
 *   "preinit-pending" the same with SIGPIPE, blocked and made pending by
 *                 a .preinit_array function's write to a pipe with no
 *                 reader: that ran in the template, so every life, those
 *                 of --det's second run too, was forked without it.
 * Class 4, the host:
 *   "host"        report uname's node name, the process group, the session,
 *                 the affinity mask, the program file's modification time
 *                 and whether another process's /proc entry exists, then
 *                 wait in accept.
 *   "statfs"      statfs of "/": the machine's free blocks.
 *   "proc-stat"   read /proc/self/stat: CPU times and real pids.
 * Class 5, right answers or errors:
 *   "fionread"    with a data directory (argument 3): write 5 bytes to a
 *                 file, seek to 2, report FIONREAD (3), SEEK_DATA and
 *                 SEEK_HOLE, then wait in accept.
 *   "datafile"    with a data directory (argument 3) and a call (argument
 *                 4): on a file there, "answers" reports fchdir's errno
 *                 (ENOTDIR), readahead's and sync_file_range's results (0, 0),
 *                 then personality's persona (its byte 2), getpgid(0) - 1000
 *                 and prctl(PR_SET_NAME) read back by PR_GET_NAME ('x');
 *                 "mmap", "fstatfs" and "dup" make that one call, which the
 *                 checker refuses by name.
 *   "clock-id"    clock_gettime of clock 42 and of another process's CPU
 *                 clock: report both errnos (EINVAL), then wait in accept.
 *   "int80"       getpid through int 0x80.
 *   "x32"         getpid through the x32 ABI: a syscall instruction with
 *                 the number __X32_SYSCALL_BIT | __NR_getpid.
 *   "emfile"      lower RLIMIT_NOFILE to 8 and make sockets until one
 *                 fails: report the errno (EMFILE) and the descriptor
 *                 count, then wait in accept.
 *   "dumpable"    prctl(PR_SET_DUMPABLE, 0).
 *   "handoff"     open descriptors up to 1020, then a socketpair, whose
 *                 first end is fd 1021, and sendmsg on it: the filter let
 *                 sendmsg on fd 1021 through to the kernel (the listener's
 *                 hand-off before exec), so the node's pair was the
 *                 kernel's, not the world's (ENOTSOCK, where Linux sends).
 *   "handoff-accept" descriptors up to 1019, then wait in accept: the
 *                 connection an ACCEPT hands out is fd 1021.
 * Class 6, what the checker hands out is shared:
 *   "stdin-flags" make stdin non-blocking, report its flags, wait.
 *   "record-flags" make fd 3 non-blocking.
 * Class 7, observing changes the verdict:
 *   "stdout-offset" on every byte read from a connection, print a line
 *                 on stdout and report where stdout's offset is (always 0
 *                 on /dev/null; with a log file shared by every fork it was
 *                 what every sibling had printed).
 *   "stdout-written" on every byte read from a connection, print a line
 *                 on stdout, report the count, and abort if stdout's
 *                 offset is still 0: a node's stdout is /dev/null, as a
 *                 real run's with >/dev/null, so the first request aborts
 *                 it. With a log directory the shared log's offset moved,
 *                 and the node lived.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmc.h"

static int report(const void *bytes, unsigned len)
{
    return cmc_record_write(CMC_STATE_FD, bytes, len);
}

/* Accepts one connection at a time and reads one byte from it at a time,
 * calling `on_byte` with each. */
static int serve(int node, int (*on_byte)(char byte))
{
    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    for (;;) {
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 2;
        char b;
        while (read(c, &b, 1) == 1)
            if (on_byte(b) != 0)
                return 3;
        close(c);
    }
}

static int counter[2];
static unsigned char reads;

static int count_byte(char b)
{
    (void)b;
    int in_pipe = 0;
    if (write(counter[1], "x", 1) != 1 || ioctl(counter[0], FIONREAD, &in_pipe) != 0)
        return 1;
    reads++;
    unsigned char state[2] = {reads, (unsigned char)in_pipe};
    report(state, sizeof state);
    /* A real run has exactly `reads` bytes in the pipe. */
    if (reads == 2 && in_pipe == 2)
        abort();
    return 0;
}

static int counted_file = -1;

static int count_offset(char b)
{
    (void)b;
    char byte;
    if (read(counted_file, &byte, 1) != 1)
        return 1;
    reads++;
    off_t at = lseek(counted_file, 0, SEEK_CUR);
    unsigned char state[2] = {reads, (unsigned char)at};
    report(state, sizeof state);
    /* A real run's offset is `reads`. */
    if (reads == 2 && at == 2)
        abort();
    return 0;
}

static int print_and_report(char b)
{
    (void)b;
    reads++;
    printf("read %d\n", reads);
    fflush(stdout);
    off_t at = lseek(1, 0, SEEK_CUR);
    unsigned char state[2] = {reads, (unsigned char)at};
    report(state, sizeof state);
    return 0;
}

static int written_and_report(char b)
{
    (void)b;
    reads++;
    printf("read %d\n", reads);
    fflush(stdout);
    report(&reads, 1);
    /* On /dev/null the offset stays 0. */
    if (lseek(1, 0, SEEK_CUR) == 0)
        abort();
    return 0;
}

static int wait_in_accept(int node)
{
    int l = cmc_listen(node);
    if (l < 0)
        return 2;
    accept(l, NULL, NULL);
    return 0;
}

static int make_and_wait(int node, const char *what)
{
    int fd = -1;
    if (strcmp(what, "eventfd") == 0)
        fd = eventfd(0, 0);
    else if (strcmp(what, "socketpair") == 0) {
        int sv[2];
        fd = socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 ? sv[0] : -1;
    } else if (strcmp(what, "signalfd") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR2);
        fd = signalfd(-1, &set, 0);
    } else if (strcmp(what, "inotify") == 0)
        fd = inotify_init1(0);
    else if (strcmp(what, "userfaultfd") == 0)
        fd = (int)syscall(SYS_userfaultfd, 0);
    else if (strcmp(what, "memfd") == 0)
        fd = memfd_create("escape", 0);
    unsigned char state[1] = {fd >= 0};
    report(state, 1);
    return wait_in_accept(node);
}

static unsigned char pending_reads;

static int unblock_on_request(char b)
{
    (void)b;
    pending_reads++;
    report(&pending_reads, 1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGPIPE);
    /* The pending SIGUSR1 (or SIGPIPE) is delivered here and kills the
     * node. */
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    return 0;
}

/* MemorySanitizer initialises itself from .preinit_array too, and code it
 * instrumented faults when it runs first: its build (the memory gate
 * compiles every example and runs only those of model files) has no
 * entry here. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define ESCAPE_MSAN 1
#endif
#endif

#ifndef ESCAPE_MSAN
/* "preinit-pending": runs before every constructor, where a template used
 * to run it once for every life. */
static void make_sigpipe_pending(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc < 3 || strcmp(argv[2], "preinit-pending") != 0)
        return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* A write to a pipe nobody reads: EPIPE, and SIGPIPE, pending. */
    int p[2];
    if (pipe(p) == 0 && close(p[0]) == 0 && write(p[1], "x", 1) < 0)
        close(p[1]);
}

__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **, char **) = make_sigpipe_pending;
#endif

static int canary(int node, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/canary", dir);
    uint64_t mine, saved = 0;
    __asm__ volatile("mov %%fs:0x28, %0" : "=r"(mine));
    int f = open(path, O_RDWR | O_CREAT, 0644);
    if (f < 0)
        return 2;
    ssize_t got = pread(f, &saved, sizeof saved, 0);
    unsigned char state[1] = {got == sizeof saved};
    report(state, 1);
    /* Each life of a real run has its own AT_RANDOM, so its own canary. */
    if (got == sizeof saved && saved != mine)
        abort();
    if (got != sizeof saved && (pwrite(f, &mine, sizeof mine, 0) != sizeof mine || fsync(f) != 0))
        return 2;
    return wait_in_accept(node);
}

static int host(int node, const char *self)
{
    struct utsname u;
    cpu_set_t set;
    struct stat st;
    uname(&u);
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    stat(self, &st);
    unsigned char state[20] = {0};
    state[0] = (unsigned char)strlen(u.nodename);
    memcpy(state + 1, u.nodename, state[0] < 3 ? state[0] : 3);
    int pgrp = getpgrp(), sid = getsid(0);
    memcpy(state + 4, &pgrp, 4);
    memcpy(state + 8, &sid, 4);
    state[12] = (unsigned char)CPU_COUNT(&set);
    memcpy(state + 13, &st.st_mtime, 4);
    state[17] = access("/proc/1/status", F_OK) == 0;
    state[18] = (unsigned char)errno;
    report(state, sizeof state);
    return wait_in_accept(node);
}

static int fionread(int node, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/f", dir);
    int f = open(path, O_RDWR | O_CREAT, 0644), avail = -1;
    if (f < 0 || write(f, "hello", 5) != 5 || lseek(f, 2, SEEK_SET) != 2 || ioctl(f, FIONREAD, &avail) != 0)
        return 2;
    off_t data = lseek(f, 1, SEEK_DATA), hole = lseek(f, 1, SEEK_HOLE);
    errno = 0;
    off_t past = lseek(f, 9, SEEK_DATA);
    unsigned char state[4] = {(unsigned char)avail, (unsigned char)data, (unsigned char)hole,
                              (unsigned char)(past < 0 ? errno : 0)};
    report(state, sizeof state);
    return wait_in_accept(node);
}

static int datafile(int node, const char *dir, const char *call)
{
    char path[512];
    snprintf(path, sizeof path, "%s/f", dir);
    int f = open(path, O_RDWR | O_CREAT, 0644);
    if (f < 0 || write(f, "hello", 5) != 5)
        return 2;
    if (strcmp(call, "mmap") == 0)
        mmap(NULL, 5, PROT_READ, MAP_PRIVATE, f, 0);
    if (strcmp(call, "fstatfs") == 0) {
        struct statfs st;
        fstatfs(f, &st);
    }
    if (strcmp(call, "dup") == 0)
        dup(f);
    if (strcmp(call, "answers") == 0) {
        unsigned char state[7];
        errno = 0;
        state[0] = (unsigned char)(fchdir(f) < 0 ? errno : 0);
        state[1] = (unsigned char)readahead(f, 0, 5);
        state[2] = (unsigned char)sync_file_range(f, 0, 5, SYNC_FILE_RANGE_WRITE);
        state[3] = (unsigned char)(personality(0xffffffff) >> 16);
        state[4] = (unsigned char)(getpgid(0) - 1000);
        char name[16] = {0};
        state[5] = (unsigned char)prctl(PR_SET_NAME, "x");
        prctl(PR_GET_NAME, name);
        state[6] = (unsigned char)name[0];
        report(state, sizeof state);
    }
    return wait_in_accept(node);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int node = atoi(argv[1]);
    const char *mode = argv[2];
    if (strcmp(mode, "pipe") == 0) {
        if (pipe(counter) != 0)
            return 2;
        unsigned char state[2] = {0, 0};
        report(state, sizeof state);
        return serve(node, count_byte);
    }
    if (strcmp(mode, "offset") == 0) {
        counted_file = open(argv[0], O_RDONLY);
        if (counted_file < 0)
            return 2;
        unsigned char state[2] = {0, 0};
        report(state, sizeof state);
        return serve(node, count_offset);
    }
    if (strcmp(mode, "stdout-offset") == 0) {
        unsigned char state[2] = {0, 0};
        report(state, sizeof state);
        return serve(node, print_and_report);
    }
    if (strcmp(mode, "stdout-written") == 0) {
        report(&reads, 1);
        return serve(node, written_and_report);
    }
    if (strcmp(mode, "canary") == 0 && argc > 3)
        return canary(node, argv[3]);
    if (strcmp(mode, "stdin-flags") == 0 || strcmp(mode, "record-flags") == 0) {
        int fd = mode[0] == 's' ? 0 : CMC_STATE_FD;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        unsigned char state[1] = {(fcntl(fd, F_GETFL) & O_NONBLOCK) != 0};
        report(state, 1);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "rlimit-own") == 0) {
        struct rlimit got = {0, 0}, again = {0, 0}, set;
        unsigned char state[4];
        state[0] = prlimit(getpid(), RLIMIT_NOFILE, NULL, &got) == 0;
        state[1] = getrlimit(RLIMIT_NOFILE, &again) == 0 && again.rlim_cur == got.rlim_cur;
        set = (struct rlimit){got.rlim_cur / 2, got.rlim_max};
        state[2] = prlimit(getpid(), RLIMIT_NOFILE, &set, NULL) == 0;
        state[3] = getrlimit(RLIMIT_NOFILE, &again) == 0 && again.rlim_cur == got.rlim_cur / 2;
        report(state, 4);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "rlimit-cpu") == 0) {
        struct rlimit r = {1, 1};
        setrlimit(RLIMIT_CPU, &r);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "shared-ro") == 0) {
        int f = open(argv[0], O_RDONLY);
        char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
        if (m == MAP_FAILED)
            return 2;
        return wait_in_accept(node);
    }
    if (strcmp(mode, "preinit-pending") == 0) {
        report(&pending_reads, 1);
        return serve(node, unblock_on_request);
    }
    if (strcmp(mode, "pending") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, NULL);
        raise(SIGUSR1);
        report(&pending_reads, 1);
        return serve(node, unblock_on_request);
    }
    if (strcmp(mode, "host") == 0)
        return host(node, argv[0]);
    if (strcmp(mode, "statfs") == 0) {
        struct statfs s;
        statfs("/", &s);
        report(&s.f_bfree, 1);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "proc-stat") == 0) {
        int f = open("/proc/self/stat", O_RDONLY);
        char b[64] = {0};
        if (f >= 0)
            read(f, b, sizeof b - 1);
        report(b, 8);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "fionread") == 0 && argc > 3)
        return fionread(node, argv[3]);
    if (strcmp(mode, "datafile") == 0 && argc > 4)
        return datafile(node, argv[3], argv[4]);
    if (strcmp(mode, "clock-id") == 0) {
        struct timespec t;
        unsigned char state[2];
        errno = 0;
        clock_gettime(42, &t);
        state[0] = (unsigned char)errno;
        errno = 0;
        /* The CPU clock of pid 4242, as clock_getcpuclockid makes it. */
        clock_gettime((clockid_t)((~4242 << 3) | 2), &t);
        state[1] = (unsigned char)errno;
        report(state, sizeof state);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "int80") == 0) {
        long r;
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
        report(&r, 1);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "x32") == 0) {
        long r;
        /* __X32_SYSCALL_BIT | __NR_getpid; the syscall instruction
         * clobbers rcx and r11. */
        __asm__ volatile("syscall" : "=a"(r) : "a"(0x40000000L | 39) : "rcx", "r11", "memory");
        report(&r, 1);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "emfile") == 0) {
        struct rlimit r = {8, 8};
        if (setrlimit(RLIMIT_NOFILE, &r) != 0)
            return 2;
        unsigned char made = 0;
        int fds[20];
        errno = 0;
        while (made < 20 && (fds[made] = socket(AF_INET, SOCK_STREAM, 0)) >= 0)
            made++;
        unsigned char state[2] = {(unsigned char)errno, made};
        report(state, sizeof state);
        while (made > 0)
            close(fds[--made]);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "handoff-accept") == 0) {
        /* Descriptors up to 1019; the listener is 1020, and the connection
         * an ACCEPT hands out is 1021. */
        int f;
        while ((f = open("/dev/null", O_RDONLY)) >= 0 && f < 1019)
            ;
        return wait_in_accept(node);
    }
    if (strcmp(mode, "handoff") == 0) {
        /* Descriptors up to 1020, then a socketpair: its first end is fd
         * 1021, where the checker's filter lets sendmsg through to the
         * kernel (the pre-exec hand-off of the listener). */
        int f;
        while ((f = open("/dev/null", O_RDONLY)) >= 0 && f < 1020)
            ;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return 2;
        char b = 'x';
        struct iovec io = {&b, 1};
        struct msghdr m = {0};
        m.msg_iov = &io;
        m.msg_iovlen = 1;
        long r = sendmsg(sv[0], &m, 0);
        report(&r, 1);
        return wait_in_accept(node);
    }
    if (strcmp(mode, "dumpable") == 0) {
        prctl(PR_SET_DUMPABLE, 0);
        return wait_in_accept(node);
    }
    return make_and_wait(node, mode);
}
