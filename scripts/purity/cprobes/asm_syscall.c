/* A system call made by an `asm` statement: getpid, number 39. Expected:
 * [instruction:syscall] and [source:asm]. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    long ret;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT) {
        __asm__ volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
        s->last = (uint8_t)ret;
    }
}

PROBE_CORE("purity-asm-syscall");
