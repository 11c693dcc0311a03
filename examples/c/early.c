/*
 * early: the program code that runs before main, where a template used to
 * run it once for every life of the node (issue 26, class 2): an IFUNC
 * resolver (during relocation, before any constructor) and a
 * .preinit_array function (before every constructor) that read the time
 * stamp counter, the monotonic clock and cpuid, a library's constructor
 * (early_lib.c) that reads /dev/urandom and the real-time clock, and
 * the stack canary and pointer guard, which ld.so takes from AT_RANDOM.
 * Under cmc each must be the checker's: the logical clock, the node's
 * random stream, RDRAND hidden, AT_RANDOM fixed by the node's number, and
 * each life reads them anew (a life after a CRASH at logical second t
 * reads t, not what a template read at 0).
 *
 *   early NODE   (linked with early_lib.so)
 *
 * Reports on fd 3: canary (8 bytes), pointer guard (8), preinit's
 * monotonic seconds (8), preinit's rdtsc (8), the resolver's rdtsc (8),
 * the resolver's cpuid RDRAND bit (1), the library's urandom byte (1), the
 * library's real-time seconds (8): 50 bytes. Then accepts connections,
 * reading one byte from each, for ever (so a TIMEOUT moves the clock).
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "cmc.h"

extern uint8_t early_lib_random;
extern int64_t early_lib_seconds;

static uint64_t resolver_tsc;
static uint8_t resolver_rdrand;
static int64_t preinit_seconds;
static uint64_t preinit_tsc;

static int answer(void)
{
    return 42;
}

static void *resolve_answer(void)
{
    unsigned a, b, c, d;
    resolver_tsc = __rdtsc();
    __cpuid(1, a, b, c, d);
    resolver_rdrand = (c >> 30) & 1;
    return (void *)answer;
}

int early_answer(void) __attribute__((ifunc("resolve_answer")));

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    preinit_seconds = t.tv_sec;
    preinit_tsc = __rdtsc();
}

__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **, char **) = preinit;

int main(int argc, char **argv)
{
    if (argc < 2 || early_answer() != 42)
        return 2;
    uint64_t canary, guard;
    __asm__ volatile("mov %%fs:0x28, %0" : "=r"(canary));
    __asm__ volatile("mov %%fs:0x30, %0" : "=r"(guard));
    uint8_t state[50];
    memcpy(state, &canary, 8);
    memcpy(state + 8, &guard, 8);
    memcpy(state + 16, &preinit_seconds, 8);
    memcpy(state + 24, &preinit_tsc, 8);
    memcpy(state + 32, &resolver_tsc, 8);
    state[40] = resolver_rdrand;
    state[41] = early_lib_random;
    memcpy(state + 42, &early_lib_seconds, 8);
    cmc_record_write(CMC_STATE_FD, state, sizeof state);
    int l = cmc_listen(atoi(argv[1]));
    for (;;) {
        int c = accept(l, NULL, NULL);
        char b;
        if (c < 0)
            return 2;
        while (read(c, &b, 1) == 1)
            ;
        close(c);
    }
}
