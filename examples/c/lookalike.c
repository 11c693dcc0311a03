/*
 * lookalike: programs that saw the checker's machine where a real run sees
 * its own (issue 26, the second round: what an adversarial review found
 * after the first fixes). Each is honest about its state; each was a pass,
 * a verdict that changed from run to run, or an answer no kernel gives.
 *
 *   lookalike NODE MODE
 *
 * Modes, by class:
 *   1 "dfree"     a request's error path frees a buffer twice: glibc aborts
 *                 (the preload's allocator let it pass).
 *   1 "fdcache"   reopens a descriptor through "//dev/fd/N" after the number
 *                 was reused for /etc/passwd, and aborts if it reads it (a
 *                 real run does; a path cache keyed by spelling did not).
 *   2 "incarnation" takes its incarnation from AT_RANDOM, makes it durable,
 *                 and aborts on a restart whose incarnation differs (every
 *                 exec has fresh bytes; every life had the same).
 *   2 "fresh"     reports what a program exec'd outside any sandbox sees:
 *                 PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS, PR_GET_TSC, whether an
 *                 alternate signal stack is set, and SIGQUIT's disposition
 *                 (the checker's process state leaked: its filter, its
 *                 no_new_privs, the stub's stack, a shell's ignored signals).
 *   3 "segvnest"  its SIGSEGV handler (no SA_NODEFER) faults again: the
 *                 kernel kills it (the handler ran again instead).
 *   3 "segvmask"  its SIGSEGV handler (sa_mask SIGUSR1) reports whether
 *                 SIGUSR1 and SIGSEGV are blocked while it runs, as the
 *                 kernel blocks them (neither was).
 *   3 "raisepid"  raises SIGUSR1 to a SA_SIGINFO handler and reports whether
 *                 si_pid was its own pid (it was the checker's real one).
 *   4 "cpu"       reports getcpu and, where the CPU has it, rdpid: the same
 *                 processor (getcpu said 0 whatever rdpid read).
 *   4 "procnlink" reports /proc's link count, which counts the machine's
 *                 processes (it changed with them).
 *   4 "peek PATH" opens PATH and reports its size (a node's own log,
 *                 named by a relative path, was not refused).
 *   4 "procself"  readlink("/proc/self") (it gave the real pid).
 *   4 "chdirproc" chdir("/proc/self"), then getcwd: the real pid.
 *   5 "edge"      reports the errno of getrandom with an unknown flag,
 *                 stat(NULL), openat of a descriptor it does not have and
 *                 fcntl of an unknown command.
 *   5 "raise63"   raises signal 63, the checker's.
 *   5 "smallalt"  sets an alternate signal stack of MINSIGSTKSZ and serves
 *                 requests (the snapshot handler's frame did not fit it).
 *
 * Unless a mode says otherwise it then accepts connections and reads one
 * byte from each, reporting {mode's bytes..., requests}.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmc.h"

static unsigned char state[16];
static unsigned state_len;

static void report(void)
{
    cmc_record_write(CMC_STATE_FD, state, state_len);
}

/* Serves requests: each byte read bumps the last byte of the state. */
static int serve(int node, void (*on_request)(char))
{
    int l = cmc_listen(node);
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
            if (on_request)
                on_request(b);
        }
        close(c);
    }
}

static void double_free(char b)
{
    /* volatile: the compiler would drop a malloc nothing reads. */
    char *volatile buf = malloc(32);
    buf[0] = b;
    if (b == 'e') {
        free(buf); /* the error path frees it ... */
    }
    free(buf); /* ... and so does the common one */
}

static int reads_root(const char *path, int fd)
{
    char link[32], buf[8] = {0};
    snprintf(link, sizeof link, path, fd);
    int again = open(link, O_RDONLY);
    if (again < 0)
        return 0;
    if (read(again, buf, 5) != 5)
        buf[0] = 0;
    close(again);
    return strncmp(buf, "root:", 5) == 0;
}

static void segv_again(int sig)
{
    (void)sig;
    /* Faults again: SIGSEGV is blocked while this handler runs. */
    *(volatile int *)8 = 1;
    _exit(3);
}

static void fault(char b)
{
    (void)b;
    *(volatile int *)8 = 1;
}

static char *guarded;
static volatile unsigned char masked[2];

static void segv_mask(int sig)
{
    (void)sig;
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    masked[0] = (unsigned char)sigismember(&now, SIGUSR1);
    masked[1] = (unsigned char)sigismember(&now, SIGSEGV);
    mprotect(guarded, 4096, PROT_READ | PROT_WRITE);
}

static volatile pid_t sender;

static void on_usr1(int sig, siginfo_t *info, void *ctx)
{
    (void)sig;
    (void)ctx;
    sender = info->si_pid;
}

static void nothing(int sig)
{
    (void)sig;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int node = atoi(argv[1]);
    const char *mode = argv[2];
    if (strcmp(mode, "dfree") == 0)
        return serve(node, double_free);
    if (strcmp(mode, "fdcache") == 0) {
        int fd = open("/etc/hostname", O_RDONLY);
        reads_root("//dev/fd/%d", fd);
        close(fd);
        fd = open("/etc/passwd", O_RDONLY);
        state[0] = (unsigned char)reads_root("//dev/fd/%d", fd);
        state_len = 1;
        if (state[0])
            abort(); /* what a real run reaches */
        return serve(node, NULL);
    }
    if (strcmp(mode, "incarnation") == 0) {
        unsigned char inc[8], old[CMC_STATE_MAX];
        memcpy(inc, (void *)getauxval(AT_RANDOM), sizeof inc);
        int n = cmc_recover(old);
        state[0] = inc[0];
        state_len = 1;
        report();
        if (n == (int)sizeof inc && memcmp(old, inc, sizeof inc) != 0)
            abort(); /* the recovery path's bug, which a real restart reaches */
        cmc_record_write(CMC_DURABLE_FD, inc, sizeof inc);
        return serve(node, NULL);
    }
    if (strcmp(mode, "fresh") == 0) {
        int tsc = -1;
        stack_t ss;
        struct sigaction quit;
        prctl(PR_GET_TSC, &tsc, 0, 0, 0);
        sigaltstack(NULL, &ss);
        sigaction(SIGQUIT, NULL, &quit);
        state[0] = (unsigned char)prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        state[1] = (unsigned char)prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        state[2] = (unsigned char)tsc;
        state[3] = (ss.ss_flags & SS_DISABLE) != 0;
        state[4] = quit.sa_handler == SIG_DFL;
        state_len = 5;
        return serve(node, NULL);
    }
    if (strcmp(mode, "segvnest") == 0) {
        signal(SIGSEGV, segv_again);
        return serve(node, fault);
    }
    if (strcmp(mode, "segvmask") == 0) {
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = segv_mask;
        sigemptyset(&a.sa_mask);
        sigaddset(&a.sa_mask, SIGUSR1);
        sigaction(SIGSEGV, &a, NULL);
        guarded = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *(volatile char *)guarded = 1;
        state[0] = masked[0];
        state[1] = masked[1];
        state_len = 2;
        return serve(node, NULL);
    }
    if (strcmp(mode, "raisepid") == 0) {
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_sigaction = on_usr1;
        a.sa_flags = SA_SIGINFO;
        sigaction(SIGUSR1, &a, NULL);
        raise(SIGUSR1);
        state[0] = sender == getpid();
        state_len = 1;
        return serve(node, NULL);
    }
    if (strcmp(mode, "cpu") == 0) {
        unsigned cpu = 0, a, b, c, d;
        getcpu(&cpu, NULL);
        state[0] = (unsigned char)cpu;
        state[1] = 0xff;
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 22))) {
            unsigned long pid;
            __asm__ volatile("rdpid %0" : "=r"(pid));
            state[1] = (unsigned char)pid;
        }
        state_len = 2;
        return serve(node, NULL);
    }
    if (strcmp(mode, "procnlink") == 0) {
        struct stat st;
        state[0] = stat("/proc", &st) == 0 ? (unsigned char)st.st_nlink : 0;
        state_len = 1;
        return serve(node, NULL);
    }
    if (strcmp(mode, "peek") == 0 && argc > 3) {
        struct stat st = {0};
        int fd = open(argv[3], O_RDONLY);
        if (fd >= 0)
            fstat(fd, &st);
        state[0] = (unsigned char)st.st_size;
        state_len = 1;
        return serve(node, NULL);
    }
    if (strcmp(mode, "procself") == 0) {
        char buf[32] = {0};
        state[0] = (unsigned char)readlink("/proc/self", buf, sizeof buf);
        state_len = 1;
        return serve(node, NULL);
    }
    if (strcmp(mode, "chdirproc") == 0) {
        char buf[64] = {0};
        state[0] = chdir("/proc/self") == 0 && getcwd(buf, sizeof buf) != NULL;
        state_len = 1;
        return serve(node, NULL);
    }
    if (strcmp(mode, "edge") == 0) {
        char b[4];
        errno = 0;
        getrandom(b, sizeof b, 0x100);
        state[0] = (unsigned char)errno;
        errno = 0;
        syscall(SYS_stat, NULL, &(struct stat){0});
        state[1] = (unsigned char)errno;
        errno = 0;
        openat(999, "x", O_RDONLY);
        state[2] = (unsigned char)errno;
        errno = 0;
        fcntl(0, 9999);
        state[3] = (unsigned char)errno;
        state_len = 4;
        return serve(node, NULL);
    }
    if (strcmp(mode, "raise63") == 0) {
        signal(63, nothing);
        raise(63);
        return serve(node, NULL);
    }
    if (strcmp(mode, "smallalt") == 0) {
        static char stack[2048]; /* MINSIGSTKSZ, a sysconf in glibc 2.34 and later */
        stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
        struct sigaction a;
        memset(&a, 0, sizeof a);
        a.sa_handler = nothing;
        a.sa_flags = SA_ONSTACK;
        sigaltstack(&ss, NULL);
        sigaction(SIGUSR2, &a, NULL);
        return serve(node, NULL);
    }
    return 2;
}
