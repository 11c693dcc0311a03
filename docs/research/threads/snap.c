// Prototype of "fork a parked multi-threaded node and re-create its threads
// in the child", under seccomp user notification as cmc uses it.
//
// One binary, two roles. The supervisor forks the target; the target
// installs a filter (NEW_LISTENER | WAIT_KILLABLE_RECV) that notifies
// read() on fds >= 100 (standing for cmc's modelled blocking calls), clone
// and clone3, and hands the listener over. The target's main thread starts
// two workers (pthread_create); each sets a TLS value, a sigaltstack, a
// signal mask, a thread name, puts patterns in xmm8 and r12, and blocks in
// a held read(100 + i) issued from inline asm that checks the registers
// after the call. Main blocks in read(100). Then:
//   capture: for each worker, the supervisor writes the mailbox, sends
//     SIGUSR1 to that thread (tgkill) and answers its held read with
//     -ERESTARTNOINTR; the handler copies its signal frame (ucontext and
//     xsave area), FS base, clear-child-tid and robust list head into a
//     slot; the read restarts and is held again.
//   fork: the same signal to main with mode FORK: the handler forks with a
//     raw clone(CLONE_PARENT); in the child it re-creates each captured
//     thread with clone(CLONE_VM|...|CLONE_THREAD|CLONE_SETTLS|
//     CLONE_CHILD_CLEARTID, stack = the slot's frame) whose child does
//     set_robust_list and rt_sigreturn at once: it re-issues its read.
//   run: the supervisor releases the child's threads one at a time in a
//     chosen order, so the log of who ran first is the order chosen; main
//     joins the workers (pthread_join, the CLONE_CHILD_CLEARTID futex) and
//     prints what each worker saw.
// The parked parent is forked twice (orders W1,W2 and W2,W1), then run.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define ERESTARTNOINTR 513
#define NT 3 /* main + 2 workers */

// ---------------------------------------------------------------- target
enum { MODE_NONE, MODE_CAPTURE, MODE_FORK };
struct mailbox { volatile int mode, slot; volatile long forks; volatile int recreate; };
static struct mailbox g_mb;

struct slot {
  uint64_t valid, fsbase, clear_tid, robust, xsize;
  uint64_t robust_for_tramp; // at uc - 16
  uint64_t pretcode;         // at uc - 8
  unsigned char uc[304];     // the kernel's struct ucontext
  unsigned char pad[64];
  unsigned char fp[4096] __attribute__((aligned(64)));
} __attribute__((aligned(64)));
static struct slot g_slots[NT];

static long raw6(long nr, long a, long b, long c, long d, long e) {
  long r;
  register long r10 __asm__("r10") = d, r8 __asm__("r8") = e;
  __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return r;
}

// clone whose child sets its robust list and returns through rt_sigreturn
// into the captured context. rdi flags, rsi stack (= &slot.uc), rdx ptid,
// rcx ctid, r8 tls.
long recreate(long flags, void *stack, void *ptid, void *ctid, long tls);
__asm__(".text\n.globl recreate\nrecreate:\n"
        "mov %rcx, %r10\n"
        "mov $56, %eax\n"
        "syscall\n"
        "test %rax, %rax\n"
        "jnz 1f\n"
        "mov -16(%rsp), %rdi\n" // robust list head
        "mov $24, %esi\n"
        "mov $273, %eax\n"
        "syscall\n"
        "mov $15, %eax\n" // rt_sigreturn: frame = rsp - 8
        "syscall\n"
        "ud2\n"
        "1: ret\n");

static void capture(struct slot *s, ucontext_t *uc) {
  unsigned char *src = (unsigned char *)uc;
  for (int i = 0; i < 304; i++) s->uc[i] = src[i];
  unsigned char *fp = (unsigned char *)uc->uc_mcontext.fpregs;
  uint32_t magic1 = *(uint32_t *)(fp + 464), ext = *(uint32_t *)(fp + 468);
  s->xsize = magic1 == 0x46505853 ? ext : 512; // FP_XSTATE_MAGIC1
  if (s->xsize > sizeof s->fp) s->xsize = 0;
  for (uint64_t i = 0; i < s->xsize; i++) s->fp[i] = fp[i];
  ((ucontext_t *)s->uc)->uc_mcontext.fpregs = (void *)s->fp;
  raw6(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, (long)&s->fsbase, 0, 0, 0);
  s->clear_tid = s->fsbase + 0x2d0; // &pd->tid in glibc 2.36 (clone3's child_tid)
  s->robust = s->fsbase + 0x2e0;    // &pd->robust_head (set_robust_list's)
  s->robust_for_tramp = s->robust;
  s->valid = 1;
}

static void on_usr1(int sig, siginfo_t *si, void *ctx) {
  (void)sig, (void)si;
  if (g_mb.mode == MODE_CAPTURE) {
    capture(&g_slots[g_mb.slot], ctx);
  } else if (g_mb.mode == MODE_FORK) {
    long r = raw6(SYS_clone, CLONE_PARENT, 0, 0, 0, 0);
    if (r == 0) {
      g_mb.forks++;
      const long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                         CLONE_SETTLS | CLONE_CHILD_CLEARTID;
      for (int i = 1; i < NT && g_mb.recreate; i++) {
        struct slot *s = &g_slots[i];
        if (s->valid) recreate(flags, s->uc, 0, (void *)s->clear_tid, s->fsbase);
      }
    }
  }
}

static __thread long tls_val = -1;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char g_log[8];
static int g_nlog;

struct seen { long tls, xmm_ok, r12_ok, alt_ok, mask_ok, read; char name[16]; };
static struct seen g_seen[NT];

// read(fd) with xmm8 and r12 holding patterns across the syscall.
static long held_read(long fd, long *xmm_ok, long *r12_ok) {
  long r, x, q;
  char b;
  __asm__ volatile("movq %[pat], %%xmm8\n"
                   "mov %[pat], %%r12\n"
                   "syscall\n"
                   "movq %%xmm8, %[x]\n"
                   "mov %%r12, %[q]\n"
                   : "=a"(r), [x] "=r"(x), [q] "=r"(q)
                   : "a"((long)SYS_read), "D"(fd), "S"(&b), "d"(1L), [pat] "r"(0x5eed0000L + fd)
                   : "rcx", "r11", "r12", "xmm8", "memory");
  *xmm_ok = x == 0x5eed0000L + fd;
  *r12_ok = q == 0x5eed0000L + fd;
  return r;
}

static void *worker(void *arg) {
  long i = (long)arg;
  tls_val = 100 * i;
  char name[16];
  snprintf(name, sizeof name, "worker%ld", i);
  prctl(PR_SET_NAME, name);
  stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536};
  sigaltstack(&ss, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN + (int)i); // each worker its own mask
  if (i == 2 && getenv("SNAP_BLOCK")) sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  struct seen *s = &g_seen[i];
  s->read = held_read(100 + i, &s->xmm_ok, &s->r12_ok);
  s->tls = tls_val;
  stack_t now;
  sigaltstack(NULL, &now);
  s->alt_ok = now.ss_sp == ss.ss_sp && now.ss_size == ss.ss_size;
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, NULL, &cur);
  s->mask_ok = sigismember(&cur, SIGRTMIN + (int)i) && !sigismember(&cur, SIGRTMIN + 3 - (int)i);
  prctl(PR_GET_NAME, s->name);
  pthread_mutex_lock(&m);
  g_log[g_nlog++] = '0' + (char)i;
  pthread_mutex_unlock(&m);
  long dummy;
  held_read(200 + i, &dummy, &dummy); // "done": the supervisor sees it ran
  return (void *)(100 * i);
}

static int target(int sock) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 100, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = {.len = sizeof f / sizeof f[0], .filter = f};
  struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
  sigfillset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  int l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &p);
  if (l < 0) { perror("seccomp"); return 1; }
  char c = 0;
  struct iovec io = {&c, 1};
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct msghdr mh = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET, cm->cmsg_type = SCM_RIGHTS, cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &l, sizeof l);
  sendmsg(sock, &mh, 0);
  close(l);
  pthread_t t[NT];
  for (long i = 1; i < NT; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  long xo, ro;
  held_read(100, &xo, &ro); // main parks here
  void *r[NT];
  for (int i = 1; i < NT; i++) pthread_join(t[i], &r[i]);
  g_log[g_nlog] = 0;
  printf("  [pid %d, fork #%ld] order=%s main(xmm %ld r12 %ld)", getpid(), g_mb.forks, g_log, xo, ro);
  for (int i = 1; i < NT; i++)
    printf(" | w%d: ret=%ld tls=%ld xmm=%ld r12=%ld altstack=%ld mask=%ld name=%s", i, (long)r[i], g_seen[i].tls,
           g_seen[i].xmm_ok, g_seen[i].r12_ok, g_seen[i].alt_ok, g_seen[i].mask_ok, g_seen[i].name);
  printf("\n");
  fflush(stdout);
  return 0;
}

// ------------------------------------------------------------ supervisor
static int L;
static pid_t T;
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static struct seccomp_notif *N;
static void recv_one(void) {
  struct pollfd pf = {L, POLLIN, 0};
  if (poll(&pf, 1, 5000) != 1) { fprintf(stderr, "supervisor: no notification for 5 s\n"); exit(1); }
  memset(N, 0, sizeof *N);
  if (ioctl(L, SECCOMP_IOCTL_NOTIF_RECV, N)) { perror("RECV"); exit(1); }
}
static void respond(uint64_t id, long val, int err, int cont) {
  struct seccomp_notif_resp r = {.id = id, .val = val, .error = err, .flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0};
  if (ioctl(L, SECCOMP_IOCTL_NOTIF_SEND, &r)) perror("SEND");
}
static void poke(pid_t pid, void *at, const void *what, size_t n) {
  struct iovec lo = {(void *)what, n}, re = {at, n};
  if (process_vm_writev(pid, &lo, 1, &re, 1, 0) != (ssize_t)n) perror("process_vm_writev");
}

// A process's held calls, by thread: who (0 main, i worker), tid, notif id, fd.
struct held { int tid; uint64_t id; long fd; };
struct proc { pid_t pid; struct held h[NT]; int n; };

static int slot_of_fd(long fd) { return (int)(fd % 100); }

// Receives notifications until proc p has all NT threads held in reads of
// fds 100..; clones are continued.
static void settle(struct proc *p, double *t_clone) {
  while (p->n < NT) {
    recv_one();
    if (N->data.nr == SYS_clone || N->data.nr == SYS_clone3) {
      respond(N->id, 0, 0, 1);
      if (t_clone) *t_clone = now_us();
      continue;
    }
    long fd = (long)N->data.args[0];
    struct held h = {(int)N->pid, N->id, fd};
    p->h[slot_of_fd(fd)] = h;
    p->n++;
  }
}

// Releases thread `who` of p: answers its read, waits for its "done" read
// (workers) and answers that too.
static void release(struct proc *p, int who) {
  respond(p->h[who].id, 1, 0, 0);
  if (who == 0) return;
  recv_one();
  if (N->data.nr != SYS_read || (long)N->data.args[0] != 200 + who) {
    fprintf(stderr, "unexpected call %d fd %lld from %d\n", N->data.nr, N->data.args[0], N->pid);
    exit(1);
  }
  respond(N->id, 1, 0, 0);
  usleep(2000); // let it exit before the next is released (prototype only)
}

static void run(struct proc *p, const int *order) {
  for (int k = 0; k < NT - 1; k++) release(p, order[k]);
  release(p, 0);
  int st;
  waitpid(p->pid, &st, 0);
}

int main(void) {
  int sv[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  T = fork();
  if (T == 0) { close(sv[0]); return target(sv[1]); }
  close(sv[1]);
  char c;
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec io = {&c, 1};
  struct msghdr mh = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  if (recvmsg(sv[0], &mh, 0) != 1) { fprintf(stderr, "no listener\n"); return 1; }
  memcpy(&L, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof L);
  struct seccomp_notif_sizes sz;
  syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz);
  N = calloc(1, sz.seccomp_notif);

  struct proc parent = {.pid = T};
  settle(&parent, NULL);
  printf("parked: main tid %d, workers %d %d (all held in reads)\n", parent.h[0].tid, parent.h[1].tid, parent.h[2].tid);

  // Capture each worker's context.
  double t0 = now_us();
  for (int i = 1; i < NT; i++) {
    struct mailbox mb = {MODE_CAPTURE, i, 0, 1};
    poke(T, &g_mb, &mb, sizeof mb);
    syscall(SYS_tgkill, T, parent.h[i].tid, SIGUSR1);
    respond(parent.h[i].id, 0, -ERESTARTNOINTR, 0);
    recv_one(); // the restarted read
    if ((int)N->pid != parent.h[i].tid || (long)N->data.args[0] != 100 + i) { fprintf(stderr, "capture: unexpected nr %d fd %lld from %d (want %d)\n", N->data.nr, N->data.args[0], N->pid, parent.h[i].tid); return 1; }
    parent.h[i].id = N->id;
    uint64_t v = 0;
    struct iovec lv = {&v, 8}, rv = {&g_slots[i].valid, 8};
    process_vm_readv(T, &lv, 1, &rv, 1, 0);
    if (!v) { printf("capture of worker %d: its call restarted without the handler (the signal is blocked)\n", i); return 2; }
  }
  double t1 = now_us();
  printf("captured 2 workers in %.0f us\n", t1 - t0);
  uint64_t xs;
  struct iovec lo = {&xs, 8}, re = {&g_slots[1].xsize, 8};
  process_vm_readv(T, &lo, 1, &re, 1, 0);
  printf("xsave area in the signal frame: %lu bytes\n", (unsigned long)xs);

  if (getenv("SNAP_BENCH")) {
    int rounds = atoi(getenv("SNAP_BENCH"));
    for (int rec = 1; rec >= 0; rec--) {
      double ts[1000];
      for (int k = 0; k < rounds; k++) {
        struct mailbox mb = {MODE_FORK, 0, 0, rec};
        poke(T, &g_mb, &mb, sizeof mb);
        double f0 = now_us();
        syscall(SYS_tgkill, T, parent.h[0].tid, SIGUSR1);
        respond(parent.h[0].id, 0, -ERESTARTNOINTR, 0);
        int reparked = 0, parked = 0;
        pid_t cp = 0;
        while (!reparked || parked < (rec ? NT : 1)) {
          recv_one();
          if (N->data.nr == SYS_clone || N->data.nr == SYS_clone3) { respond(N->id, 0, 0, 1); continue; }
          if ((int)N->pid == parent.h[0].tid) { parent.h[0].id = N->id; reparked = 1; continue; }
          if ((long)N->data.args[0] == 100) cp = (pid_t)N->pid;
          parked++;
        }
        ts[k] = now_us() - f0;
        kill(cp, SIGKILL);
        waitpid(cp, NULL, 0);
      }
      for (int a = 0; a < rounds; a++) for (int b = a + 1; b < rounds; b++) if (ts[b] < ts[a]) { double t = ts[a]; ts[a] = ts[b]; ts[b] = t; }
      printf("fork of the parked 3-thread process, %s: min %.0f us, median %.0f us (%d rounds)\n",
             rec ? "2 threads re-created" : "no thread re-created (1-thread child)", ts[0], ts[rounds / 2], rounds);
    }
    kill(T, SIGKILL);
    return 0;
  }
  static const int orders[2][2] = {{1, 2}, {2, 1}};
  for (int k = 0; k < 2; k++) {
    struct mailbox mb = {MODE_FORK, 0, 0, 1};
    poke(T, &g_mb, &mb, sizeof mb);
    double f0 = now_us();
    syscall(SYS_tgkill, T, parent.h[0].tid, SIGUSR1);
    respond(parent.h[0].id, 0, -ERESTARTNOINTR, 0);
    // The parent re-parks in read(100); the child's three threads park.
    struct proc child = {0};
    int reparked = 0;
    while (!reparked || child.n < NT) {
      recv_one();
      int nr = N->data.nr;
      if (nr == SYS_clone || nr == SYS_clone3) { respond(N->id, 0, 0, 1); continue; }
      long fd = (long)N->data.args[0];
      if ((int)N->pid == parent.h[0].tid) { parent.h[0].id = N->id; reparked = 1; continue; }
      struct held h = {(int)N->pid, N->id, fd};
      child.h[slot_of_fd(fd)] = h;
      child.n++;
      if (fd == 100) child.pid = (pid_t)N->pid;
    }
    double f1 = now_us();
    printf("fork #%d with 2 threads re-created: %.0f us; child pid %d, threads %d %d\n", k + 1, f1 - f0, child.pid,
           child.h[1].tid, child.h[2].tid);
    printf(" run in order w%d,w%d:\n", orders[k][0], orders[k][1]);
    run(&child, orders[k]);
  }
  printf(" the parked parent itself, in order w1,w2:\n");
  run(&parent, orders[0]);
  return 0;
}
