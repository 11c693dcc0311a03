/*
 * lookalike3: programs that saw the checker's machine where a real run sees
 * its own (issue 26, the third round of review). Each is honest about its
 * state; each read a placeholder, a real pid, the checker's own files or a
 * machine-wide counter, or had a call swallowed that a kernel honours.
 *
 *   lookalike3 NODE MODE [ARG]
 *
 * Modes, by the review's item:
 *   1 "fdfile DIR"  writes "hello" to DIR/f, reopens it through
 *                   /proc/self/fd/N and /dev/fd/N and reports whether each
 *                   reads "hello" back (the placeholder, /dev/null, read
 *                   nothing).
 *   1 "fdsocket"    reopens its listening socket through /proc/self/fd/N
 *                   and reports the errno (ENXIO on Linux; the placeholder
 *                   opened), and whether readlink names a socket.
 *   1 "fdpipe"      writes "hi" to a pipe and reopens its read end through
 *                   /proc/self/fd/N: reports whether the new end reads
 *                   "hi", whether readlink names a pipe, and the errno of
 *                   reopening an eventfd so (ENXIO on Linux).
 *   2 "pidlink"     opens /proc/self and reports whether the link of that
 *                   descriptor names getpid() (it named the real pid).
 *   2 "procfd"      opens /proc/self/cmdline and keeps it while it serves.
 *   3 "logpeek PATH CALL" stat, access or readlink of PATH (a node's log).
 *   4 "thp PATH"    opens PATH (a counter of transparent huge pages).
 *   4 "hugepage"    faults a huge page with MADV_HUGEPAGE, then reports
 *                   whether the setting "enabled" still reads.
 *   5 "pidproc"     reads its own arguments through /proc/<getpid()> and
 *                   reports whether it could and its second argument's
 *                   first byte.
 *   6 "tsc"         prctl(PR_SET_TSC, PR_TSC_SIGSEGV), then rdtsc: a real
 *                   run dies of SIGSEGV (the preload's emulation answered).
 *   6 "cpuid"       arch_prctl(ARCH_SET_CPUID, 0), then cpuid: likewise.
 *   6 "getcpuid"    reports arch_prctl(ARCH_GET_CPUID): 1 on Linux outside
 *                   any sandbox (the preload's faulting read 0).
 *   7 "auxv"        reads /proc/self/auxv and aborts if its AT_ENTRY is not
 *                   getauxval's (it was the start stub's).
 *   7 "getauxv"     prctl(PR_GET_AUXV) likewise.
 *
 * Unless a mode says otherwise it then accepts connections and reads one
 * byte from each, reporting {mode's bytes..., requests}.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmc.h"

#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif

static unsigned char state[16];
static unsigned state_len;

static void report(void)
{
    cmc_record_write(CMC_STATE_FD, state, state_len);
}

/* Serves requests on listener l: each byte read bumps the last byte of the
 * state. */
static int serve_on(int l)
{
    if (l < 0)
        return 2;
    state_len++;
    report();
    for (;;) {
        int c = accept(l, NULL, NULL);
        char b;
        if (c < 0)
            return 2;
        while (read(c, &b, 1) == 1) {
            state[state_len - 1]++;
            report();
        }
        close(c);
    }
}

static int serve(int node)
{
    return serve_on(cmc_listen(node));
}

/* Whether path, with fd in it, opens a file that reads "hello". */
static int reads_hello(const char *path, int fd)
{
    char link[64], buf[8] = {0};
    snprintf(link, sizeof link, path, fd);
    int again = open(link, O_RDONLY);
    if (again < 0)
        return 0;
    ssize_t n = read(again, buf, 5);
    close(again);
    return n == 5 && memcmp(buf, "hello", 5) == 0;
}

/* AT_ENTRY in an auxiliary vector of n bytes, or 0. */
static unsigned long entry_of(const unsigned long *v, long n)
{
    for (long i = 0; i + 1 < n / 8 && v[i] != AT_NULL; i += 2)
        if (v[i] == AT_ENTRY)
            return v[i + 1];
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int node = atoi(argv[1]);
    const char *mode = argv[2];
    const char *arg = argc > 3 ? argv[3] : "";
    if (strcmp(mode, "fdfile") == 0) {
        char path[256];
        snprintf(path, sizeof path, "%s/f", arg);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "hello", 5) != 5)
            return 2;
        state[0] = (unsigned char)reads_hello("/proc/self/fd/%d", fd);
        state[1] = (unsigned char)reads_hello("/dev/fd/%d", fd);
        state_len = 2;
        return serve(node);
    }
    if (strcmp(mode, "fdsocket") == 0) {
        int l = cmc_listen(node);
        char link[64], name[64] = {0};
        snprintf(link, sizeof link, "/proc/self/fd/%d", l);
        errno = 0;
        int again = open(link, O_RDONLY);
        state[0] = again < 0 ? (unsigned char)errno : 0;
        state[1] = readlink(link, name, sizeof name - 1) > 0 && strncmp(name, "socket:[", 8) == 0;
        state_len = 2;
        return serve_on(l);
    }
    if (strcmp(mode, "fdpipe") == 0) {
        int p[2], e = eventfd(0, 0);
        char link[64], name[64] = {0}, buf[4] = {0};
        if (pipe(p) != 0 || e < 0 || write(p[1], "hi", 2) != 2)
            return 2;
        snprintf(link, sizeof link, "/proc/self/fd/%d", p[0]);
        int again = open(link, O_RDONLY | O_NONBLOCK);
        state[0] = again >= 0 && read(again, buf, 2) == 2 && memcmp(buf, "hi", 2) == 0;
        state[1] = readlink(link, name, sizeof name - 1) > 0 && strncmp(name, "pipe:[", 6) == 0;
        snprintf(link, sizeof link, "/proc/self/fd/%d", e);
        errno = 0;
        state[2] = open(link, O_RDONLY) < 0 ? (unsigned char)errno : 0;
        state_len = 3;
        return serve(node);
    }
    if (strcmp(mode, "pidlink") == 0) {
        int d = open("/proc/self", O_RDONLY | O_DIRECTORY);
        char link[64], name[64] = {0};
        snprintf(link, sizeof link, "/proc/self/fd/%d", d);
        state[0] = d >= 0 && readlink(link, name, sizeof name - 1) > 0 &&
                   strncmp(name, "/proc/", 6) == 0 && atoi(name + 6) == getpid();
        state_len = 1;
        return serve(node);
    }
    if (strcmp(mode, "procfd") == 0) {
        state[0] = open("/proc/self/cmdline", O_RDONLY) >= 0;
        state_len = 1;
        return serve(node);
    }
    if (strcmp(mode, "logpeek") == 0 && argc > 4) {
        struct stat st;
        char buf[64];
        int r = strcmp(argv[4], "stat") == 0     ? stat(arg, &st)
                : strcmp(argv[4], "access") == 0 ? access(arg, F_OK)
                                                 : (int)readlink(arg, buf, sizeof buf);
        state[0] = r == 0;
        state_len = 1;
        return serve(node);
    }
    if (strcmp(mode, "thp") == 0) {
        char buf[32] = {0};
        int fd = open(arg, O_RDONLY);
        state[0] = fd >= 0 && read(fd, buf, sizeof buf - 1) > 0;
        state_len = 1;
        return serve(node);
    }
    if (strcmp(mode, "hugepage") == 0) {
        size_t size = 4u << 20;
        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 2;
        char *a = (char *)(((unsigned long)p + (2ul << 20) - 1) & ~((2ul << 20) - 1));
        state[0] = madvise(a, 2u << 20, MADV_HUGEPAGE) == 0;
        a[0] = 1;
        char buf[64] = {0};
        int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);
        state[1] = fd >= 0 && read(fd, buf, sizeof buf - 1) > 0;
        state_len = 2;
        return serve(node);
    }
    if (strcmp(mode, "pidproc") == 0) {
        char path[64], buf[256] = {0};
        snprintf(path, sizeof path, "/proc/%d/cmdline", getpid());
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        const char *a = buf;
        for (int i = 0; i < 3 && a < buf + n; i++)
            a += strlen(a) + 1; /* argv[3] */
        state[0] = fd >= 0;
        state[1] = a < buf + n ? (unsigned char)a[0] : 0;
        state_len = 2;
        return serve(node);
    }
    if (strcmp(mode, "tsc") == 0) {
        unsigned lo, hi;
        state[0] = prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0;
        state_len = 1;
        report();
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        (void)lo;
        (void)hi;
        return serve(node);
    }
    if (strcmp(mode, "cpuid") == 0) {
        unsigned a = 0, b, c = 0, d;
        state[0] = syscall(SYS_arch_prctl, 0x1012 /* ARCH_SET_CPUID */, 0) == 0;
        state_len = 1;
        report();
        __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
        return serve(node);
    }
    if (strcmp(mode, "getcpuid") == 0) {
        state[0] = (unsigned char)syscall(SYS_arch_prctl, 0x1011 /* ARCH_GET_CPUID */, 0);
        state_len = 1;
        return serve(node);
    }
    if (strcmp(mode, "auxv") == 0) {
        unsigned long v[128] = {0};
        int fd = open("/proc/self/auxv", O_RDONLY);
        long n = fd < 0 ? -1 : (long)read(fd, v, sizeof v);
        state[0] = n > 0;
        state_len = 1;
        if (n > 0 && entry_of(v, n) != getauxval(AT_ENTRY))
            abort(); /* no kernel gives a process another's vector */
        return serve(node);
    }
    if (strcmp(mode, "getauxv") == 0) {
        unsigned long v[128] = {0};
        long n = prctl(PR_GET_AUXV, v, sizeof v, 0, 0);
        state[0] = n > 0;
        state_len = 1;
        if (n > 0 && entry_of(v, n) != getauxval(AT_ENTRY))
            abort();
        return serve(node);
    }
    return 2;
}
