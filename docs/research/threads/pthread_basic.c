#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn = 0;
static __thread int tls = 7;
static void *worker(void *arg) {
  long id = (long)arg;
  tls = (int)id * 100;
  pthread_mutex_lock(&m);
  while (turn != id) pthread_cond_wait(&cv, &m);
  turn++;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&m);
  return (void *)(long)tls;
}
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
  pthread_mutex_lock(&m);
  turn = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&m);
  for (int i = 0; i < 2; i++) { void *r; pthread_join(t[i], &r); printf("joined %d -> %ld\n", i, (long)r); }
  return 0;
}
