// Runs pthread_basic-like code under a filter that answers clone3 with ENOSYS.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/audit.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
static void *w(void *a) { return a; }
int main(void) {
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog p = { .len = 4, .filter = f };
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p)) { perror("seccomp"); return 1; }
  pthread_t t; void *r;
  int e = pthread_create(&t, NULL, w, (void *)42);
  pthread_join(t, &r);
  printf("pthread_create=%d joined %ld\n", e, (long)r);
  return 0;
}
