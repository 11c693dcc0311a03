/* The millisecond clock's regression program (cmc/tests/process_time.rs):
 * two waits of less than a second, each of which a run on Linux takes as
 * it asked. Each passed while the logical clock had whole seconds (a wait
 * ended at the next second, so ten 100 ms waits took ten seconds); the
 * review's `tick` and `tfd`.
 *
 *   cmc-example millis NODE MODE
 *
 *   "tick" node 1 dials node 0 and writes a byte every 200 ms; node 0
 *          counts the bytes that arrive in its first second (by
 *          CLOCK_MONOTONIC, polling for the time left) and aborts at three
 *          or more (natively about five arrive: 10 of 10 runs abort).
 *   "tfd"  node 0 arms a periodic timerfd of 250 ms, sleeps a second and
 *          reads the expirations, aborting at more than one (natively
 *          four: 10 of 10 abort). Node 1 only listens.
 *   "tfdget" node 0 sets a timerfd to 1.5 ms, every 1.5 ms, reads it back
 *          and aborts where it reads no more than it set, the interval
 *          exactly (natively 10 of 10). It passed while the setting was
 *          kept rounded up to a millisecond (the review's `tfdval`).
 *   Node 0 of each of these aborts on what Linux always gives (10 of 10
 *   native runs), and each passed before (the review of 0b000d2):
 *   "tfdleft" a timerfd set to 1.5 ms and read back at once has less left.
 *   "tfdabs" a non-blocking timerfd set, absolute, to the monotonic time
 *          just read has expired.
 *   "absnow" a sleep until the monotonic time just read returns at once
 *          (in less than 0.5 ms, in one of three tries).
 *   "selnow" a select of 1,500 µs on a pipe already readable writes back
 *          less than 1,500 µs.
 *   "cpulife" a life reads its CPU time and keeps it durably; after a
 *          crash, the next life reads less (a new process starts from
 *          none; natively, after kill -9 and a restart).
 *   "sent" node 1 reads the monotonic clock and sends what it read; node 0
 *          sets a non-blocking timerfd, absolute, to it, and aborts where
 *          it has expired (natively 10 of 10: one clock for every process).
 *          It passed while each node counted its own reads of the clock
 *          (the review's `clk`).
 *   "over" node 0 reads CLOCK_MONOTONIC around a 1 ms sleep and aborts if
 *          it took more than 1 ms (natively it always does, by the timer
 *          slack at least: 10 of 10 abort). It passed while a wait ended
 *          exactly on time (the review's `over`). Node 1 only listens.
 *   "rtt"  node 0 reads CLOCK_MONOTONIC twice and aborts if time passed
 *          between (natively it always does: 10 of 10 abort).
 *   "cpu"  node 0 reads its CPU time, spins a while without a call, reads
 *          it again and aborts if it grew (10 of 10).
 *          The last two passed while the clock stood still between
 *          TIMEOUTs and CPU time read 0 (the review's `misc` rtt and
 *          cpuclock). Node 1 only listens.

 * State: {node, phase, count}.
 */
#include <poll.h>
#include <sys/select.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cmc.h"

static void report(uint8_t a, uint8_t b, uint8_t c)
{
    uint8_t s[3] = {a, b, c};
    cmc_record_write(CMC_STATE_FD, s, 3);
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Node 1 of the modes where only node 0 acts. */
__attribute__((noreturn)) static int listen_only(void)
{
    int l = cmc_listen(1);
    report(1, 0, 0);
    for (;;)
        if (close(accept(l, NULL, NULL)) != 0)
            pause();
}

static int tick(int node)
{
    if (node == 0) {
        int l = cmc_listen(0);
        report(0, 0, 0);
        int c = accept(l, NULL, NULL);
        if (c < 0)
            return 3;
        long long end = now_ms() + 1000;
        uint8_t count = 0;
        report(0, 1, 0);
        for (long long left; (left = end - now_ms()) > 0;) {
            struct pollfd p = {c, POLLIN, 0};
            if (poll(&p, 1, (int)left) > 0) {
                char b[8];
                if (read(c, b, sizeof b) <= 0)
                    return 4;
                count += now_ms() < end;
            }
            report(0, 1, count);
        }
        report(0, 2, count);
        if (count >= 3)
            abort(); /* the path under test: a burst */
        pause();
        return 0;
    }
    report(1, 0, 0);
    int c = cmc_dial(0);
    if (c < 0)
        return 2;
    for (uint8_t i = 1; i <= 8; i++) {
        write(c, "h", 1);
        report(1, i, 0);
        struct timespec d = {0, 200 * 1000000};
        nanosleep(&d, NULL);
    }
    pause();
    return 0;
}

static int tfd(int node)
{
    if (node == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, 0);
        struct itimerspec its = {{0, 250000000}, {0, 250000000}};
        timerfd_settime(t, 0, &its, NULL);
        report(0, 0, 0);
        sleep(1);
        report(0, 1, 0);
        uint64_t e = 0;
        if (read(t, &e, 8) != 8)
            return 3;
        report(0, 2, (uint8_t)e);
        if (e > 1)
            abort(); /* the path under test: expirations to catch up */
        pause();
        return 0;
    }
    return listen_only();
}

static int elapsed(int node, clockid_t which, long slept_ns)
{
    if (node == 0) {
        struct timespec a, b;
        report(0, 0, 0);
        clock_gettime(which, &a);
        if (slept_ns > 0) {
            struct timespec d = {0, slept_ns};
            nanosleep(&d, NULL);
        } else if (which != CLOCK_MONOTONIC) {
            for (volatile long i = 0; i < 50000000; i++) /* busy, no call */
                ;
        }
        clock_gettime(which, &b);
        report(0, 1, 0);
        long long passed = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        if (passed > slept_ns)
            abort(); /* the path under test: more time passed */
        pause();
        return 0;
    }
    return listen_only();
}

static int tfdget(int node)
{
    if (node == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, 0);
        struct itimerspec its = {{0, 1500000}, {0, 1500000}}, got;
        timerfd_settime(t, 0, &its, NULL);
        timerfd_gettime(t, &got);
        int back = got.it_interval.tv_sec == 0 && got.it_interval.tv_nsec == 1500000 && got.it_value.tv_sec == 0 &&
                   got.it_value.tv_nsec <= 1500000 && got.it_value.tv_nsec > 1000000;
        report(0, 1, (uint8_t)back);
        if (back)
            abort(); /* the path under test: read back as set */
        pause();
        return 0;
    }
    return listen_only();
}

static long long ns_of(struct timespec t)
{
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int seen(int node, const char *mode)
{
    if (node != 0)
        return listen_only();
    struct timespec a, b;
    int bug = 0;
    report(0, 0, 0);
    if (strcmp(mode, "tfdleft") == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, 0);
        struct itimerspec set = {{0, 0}, {0, 1500000}}, got;
        timerfd_settime(t, 0, &set, NULL);
        timerfd_gettime(t, &got);
        bug = got.it_value.tv_sec == 0 && got.it_value.tv_nsec < 1500000;
    } else if (strcmp(mode, "tfdabs") == 0) {
        int t = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
        clock_gettime(CLOCK_MONOTONIC, &a);
        struct itimerspec set = {{0, 0}, a};
        uint64_t e = 0;
        timerfd_settime(t, TFD_TIMER_ABSTIME, &set, NULL);
        bug = read(t, &e, 8) == 8 && e == 1;
    } else if (strcmp(mode, "absnow") == 0) {
        /* Three tries: a native run preempted between its two reads (a
         * loaded machine) takes longer once, not three times. */
        for (int i = 0; i < 3 && !bug; i++) {
            clock_gettime(CLOCK_MONOTONIC, &a);
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &a, NULL);
            clock_gettime(CLOCK_MONOTONIC, &b);
            bug = ns_of(b) - ns_of(a) < 500000;
        }
    } else if (strcmp(mode, "selnow") == 0) {
        int p[2];
        if (pipe(p) != 0 || write(p[1], "x", 1) != 1)
            return 3;
        fd_set r;
        FD_ZERO(&r);
        FD_SET(p[0], &r);
        struct timeval tv = {0, 1500};
        bug = select(p[0] + 1, &r, NULL, NULL, &tv) == 1 && tv.tv_sec == 0 && tv.tv_usec < 1500;
    } else if (strcmp(mode, "cpulife") == 0) {
        long long before = 0;
        unsigned char rec[9];
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        if (read(CMC_DURABLE_FD, rec, sizeof rec) == 9 && rec[0] == 8) {
            memcpy(&before, rec + 1, 8);
            bug = ns_of(a) < before;
        } else {
            for (int i = 0; i < 100; i++) /* a life that used some CPU time */
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
            before = ns_of(a);
            cmc_record_write(CMC_DURABLE_FD, (unsigned char *)&before, 8);
        }
    }
    report(0, 1, (uint8_t)bug);
    if (bug)
        abort(); /* the path under test: what Linux gives */
    pause();
    return 0;
}

static int sent(int node)
{
    struct timespec t;
    report((uint8_t)node, 0, 0);
    if (node == 1) {
        int c = cmc_dial(0);
        for (int i = 0; i < 5; i++)
            clock_gettime(CLOCK_MONOTONIC, &t);
        write(c, &t, sizeof t);
        report(1, 1, 0);
        pause();
        return 0;
    }
    int l = cmc_listen(0);
    int c = accept(l, NULL, NULL);
    if (read(c, &t, sizeof t) != sizeof t)
        return 3;
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    struct itimerspec at = {{0, 0}, t};
    uint64_t e = 0;
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &at, NULL);
    int expired = read(tfd, &e, 8) == 8;
    report(0, 1, (uint8_t)expired);
    if (expired)
        abort(); /* the path under test: the time another node read has passed */
    pause();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    int node = atoi(argv[1]);
    if (strcmp(argv[2], "tick") == 0)
        return tick(node);
    if (strcmp(argv[2], "tfd") == 0)
        return tfd(node);
    const char *seen_modes[] = {"tfdleft", "tfdabs", "absnow", "selnow", "cpulife"};
    for (unsigned i = 0; i < sizeof seen_modes / sizeof *seen_modes; i++)
        if (strcmp(argv[2], seen_modes[i]) == 0)
            return seen(node, argv[2]);
    if (strcmp(argv[2], "sent") == 0)
        return sent(node);
    if (strcmp(argv[2], "tfdget") == 0)
        return tfdget(node);
    if (strcmp(argv[2], "rtt") == 0)
        return elapsed(node, CLOCK_MONOTONIC, 0);
    if (strcmp(argv[2], "cpu") == 0)
        return elapsed(node, CLOCK_PROCESS_CPUTIME_ID, 0);
    if (strcmp(argv[2], "over") == 0)
        return elapsed(node, CLOCK_MONOTONIC, 1000000);
    return 1;
}
