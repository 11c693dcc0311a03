/* The time-stamp counter through a compiler builtin: no call and no asm
 * in the source, one instruction in the code. Expected:
 * [instruction:rdtsc]. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_FIRE)
        s->last = (uint8_t)__builtin_ia32_rdtsc();
}

PROBE_CORE("purity-rdtsc");
