/* An `asm` statement that assembles to nothing: no instruction for the
 * machine code walk to see, so only the source rules can. Expected:
 * [source:asm]. */
#include "probe.h"

static void probe_step(const struct cmc_ctx *ctx, void *state, const struct cmc_event *ev, struct cmc_effects *out)
{
    struct probe_state *s = state;
    (void)ctx;
    (void)out;
    if (ev->kind == CMC_EV_CLIENT) {
        asm volatile("" ::: "memory");
        s->count++;
    }
}

PROBE_CORE("purity-asm");
