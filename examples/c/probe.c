/*
 * probe: reads everything a program could use to tell two runs apart and
 * reports it on fd 3, so that the tests can show the checker makes them
 * equal; and, given a mode as its second argument, misbehaves in one way
 * the checker must report as an error.
 *
 * Modes: (none) report time, random bytes and heap addresses, then wait in
 * accept() (and linger if the checker dies); "stall" block in sigsuspend(), a call the checker does not
 * model; "busy" loop without system calls; "sleep" call sleep(), which the
 * checker rejects at once; "thread" start a thread; "fork" fork a child;
 * "exec" exec /bin/true; "bigstate" report a 65-byte state; "bigdurable"
 * make a 65-byte record durable.
 *
 * Built -no-pie by the tests (cmc/tests/process_support): gcc -no-pie -I.
 */
#include "cmc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
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
    }
}

int main(int argc, char **argv)
{
    int node = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "";
    uint8_t one = (uint8_t)node;

    if (strcmp(mode, "stall") == 0) {
        sigset_t none;
        sigemptyset(&none);
        cmc_record_write(CMC_STATE_FD, &one, 1);
        sigsuspend(&none);
        return 0;
    }
    if (strcmp(mode, "busy") == 0) {
        cmc_record_write(CMC_STATE_FD, &one, 1);
        for (volatile int i = 0;; i++)
            ;
    }
    if (strcmp(mode, "sleep") == 0) {
        sleep(1);
        return 0;
    }
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
