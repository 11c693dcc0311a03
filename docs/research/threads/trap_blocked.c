#define _GNU_SOURCE
// SECCOMP_RET_TRAP on clone3 with a SIGSYS handler: pthread_create blocks
// every signal around clone3. What happens?
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <pthread.h>
#include <ucontext.h>
static void on_sys(int s, siginfo_t *i, void *c) { ((ucontext_t *)c)->uc_mcontext.gregs[REG_RAX] = -38; /* ENOSYS */ }
static void *w(void *a) { return a; }
int main(void) {
  struct sigaction sa = { .sa_sigaction = on_sys, .sa_flags = SA_SIGINFO };
  sigaction(SIGSYS, &sa, 0);
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = { 4, f };
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p);
  // Unblocked: the handler runs (raw clone3 with a bad size).
  long r = syscall(SYS_clone3, 0, 0);
  printf("raw clone3 with SIGSYS unblocked -> %ld (handler ran)\n", r); fflush(stdout);
  pthread_t t; void *x;
  int e = pthread_create(&t, 0, w, 0);
  printf("pthread_create -> %d\n", e);
  return 0;
}
