// Is a thread's CLONE_CHILD_CLEARTID word (glibc's pd->tid) already 0 when
// its PIDFD_THREAD pidfd polls readable?
#define _GNU_SOURCE
#include <pthread.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <fcntl.h>
static volatile int tid;
static void *w(void *a) { tid = syscall(SYS_gettid); while (*(volatile int *)a == 0) ; return 0; }
int main(void) {
  int bad = 0, n = 20000;
  for (int k = 0; k < n; k++) {
    volatile int go = 0; tid = 0;
    pthread_t t; pthread_create(&t, 0, w, (void *)&go);
    while (!tid) ;
    int fd = syscall(SYS_pidfd_open, tid, O_EXCL /* PIDFD_THREAD */);
    if (fd < 0) { perror("pidfd_open PIDFD_THREAD"); return 1; }
    go = 1;
    struct pollfd p = { fd, POLLIN, 0 };
    poll(&p, 1, -1);
    if (*(volatile int *)((char *)t + 0x2d0) != 0) bad++;
    close(fd);
    pthread_join(t, 0);
  }
  printf("%d of %d: tid word not yet 0 when the thread pidfd was readable\n", bad, n);
}
