/*
 * early_lib: a shared library of early.c whose constructor runs before
 * the program's own (ld.so initialises libraries in dependency order, so it
 * may run before the preload's too): it reads a byte of /dev/urandom and
 * the real-time clock, which must be the checker's.
 */
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

uint8_t early_lib_random;
int64_t early_lib_seconds;

__attribute__((constructor)) static void early_lib_init(void)
{
    int f = open("/dev/urandom", O_RDONLY);
    if (f >= 0) {
        if (read(f, &early_lib_random, 1) != 1)
            early_lib_random = 0;
        close(f);
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    early_lib_seconds = t.tv_sec;
}
